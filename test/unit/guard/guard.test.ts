/**
 * guardCommand's contract beyond the corpus: the verdict's shape, relaxations, the rule for
 * reset --hard, real symlinks and scratch folders on disk, and that it never throws.
 */
import fc from 'fast-check';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GUARD_RULE_NAMES, guardCommand, type GuardContext } from '../../../src/guard/index.js';
import { git, tempDir } from '../../helpers/index.js';
import { CORPUS_CTX as CTX, MACHINE_CTX } from './corpus.js';

const test = suite('guard');

test('an allowed command gives exactly {allowed: true}; a refusal gives every field', () => {
  assert.equal(guardCommand('npm test', CTX), { allowed: true });
  const v = guardCommand('echo ok && bash -c "git push -f"', CTX);
  assert.equal(Object.keys(v).sort(), ['allowed', 'code', 'command', 'hint', 'reason', 'rule']);
  if (v.allowed) throw new Error('allowed');
  assert.is(v.code, 'GUARD_BLOCKED');
  assert.is(v.rule, 'git-push-force');
  assert.is(v.command, 'git push -f', 'the nested command is named as it would run');
  assert.ok(GUARD_RULE_NAMES.includes(v.rule as never));
});

test('allow relaxes exactly the rules it names', () => {
  const ctx: GuardContext = { ...CTX, allow: ['git-push'] };
  assert.equal(guardCommand('git push origin HEAD', ctx), { allowed: true });
  const force = guardCommand('git push --force origin HEAD', ctx);
  assert.is(force.allowed ? '' : force.rule, 'git-push-force');
  assert.is(
    (guardCommand('git push && rm -rf ~', ctx) as { rule: string }).rule,
    'rm-outside',
    'later commands are still checked',
  );
});

test('reset --hard passes at HEAD (a discard of uncommitted edits) and is refused at any other revision', () => {
  for (const ok of [
    'git reset --hard',
    'git reset --hard HEAD',
    'git reset --hard @',
    'git reset -q --hard HEAD',
    'git reset HEAD~1',
    'git reset --soft HEAD~2',
  ])
    assert.equal(guardCommand(ok, CTX), { allowed: true }, ok);
  for (const no of [
    'git reset --hard HEAD~1',
    'git reset --hard main',
    'git reset --keep HEAD^',
    'git reset --hard "$R"',
  ])
    assert.is(guardCommand(no, CTX).allowed, false, no);
});

test('discards inside the worktree pass; the same discards pointed at the user checkout do not', () => {
  for (const ok of [
    'git restore .',
    'git checkout -- .',
    'git clean -fdx',
    'rm -rf src',
    'git stash',
    'git stash pop',
  ])
    assert.equal(guardCommand(ok, CTX), { allowed: true }, ok);
  for (const no of [
    'git -C /home/dev/shop restore .',
    'cd /home/dev/shop && git checkout -- .',
    'GIT_WORK_TREE=/home/dev/shop git clean -fdx',
  ])
    assert.is(guardCommand(no, CTX).allowed, false, no);
});

test('the target branch given in protectedBranches is protected; other branches are not', () => {
  const ctx: GuardContext = { ...CTX, protectedBranches: ['develop'] };
  assert.is(guardCommand('git branch -D develop', ctx).allowed, false);
  assert.is(guardCommand('git branch -D main', ctx).allowed, true);
  assert.is(guardCommand('git branch -D hagent/other', ctx).allowed, false, 'hagent/* always');
});

test('a symlink in the worktree that points at the home folder is followed for rm -rf link/ but rm link removes only the link', () => {
  const root = tempDir();
  const home = path.join(root, 'home');
  const wt = path.join(root, 'wt');
  mkdirSync(home);
  mkdirSync(wt);
  symlinkSync(home, path.join(wt, 'link'));
  const ctx: GuardContext = { worktree: wt, home };
  assert.is(guardCommand('rm -rf link/', ctx).allowed, false);
  assert.is(guardCommand('echo x > link/.bashrc', ctx).allowed, false);
  assert.equal(guardCommand('rm link', ctx), { allowed: true });
});

test('scratch writes in the temp folder pass, unless the folder is inside a git checkout', () => {
  const scratch = tempDir();
  const repo = tempDir();
  git(repo, 'init', '-q');
  const ctx: GuardContext = { worktree: tempDir(), home: '/home/dev' };
  assert.equal(guardCommand(`echo x > ${scratch}/out.log && rm -f ${scratch}/out.log`, ctx), {
    allowed: true,
  });
  assert.is(guardCommand(`echo x > ${repo}/README.md`, ctx).allowed, false);
  assert.is(guardCommand(`rm -rf ${repo}`, ctx).allowed, false);
  // A glob in the temp folder is judged by what it matches: here the checkout.
  assert.is(
    guardCommand(`rm -rf ${path.dirname(repo)}/${path.basename(repo).slice(0, -2)}*`, ctx).allowed,
    false,
  );
  assert.is(
    guardCommand(`rm -rf ${path.dirname(repo)}/*`, ctx).allowed,
    false,
    'everything in the temp folder',
  );
  assert.equal(guardCommand(`rm -rf ${scratch}/build-*`, ctx), { allowed: true });
});

test('a refusal of what is not the session says whose it is: the user checkout, the git folder, the other sessions', () => {
  const reason = (c: string): string => {
    const v = guardCommand(c, MACHINE_CTX);
    return v.allowed ? '(allowed)' : v.reason;
  };
  assert.match(
    reason('git -C /home/dev/src/shop checkout -- .'),
    /\(the user's checkout: it changes only through hagent land\)$/,
  );
  assert.match(
    reason('echo x > ~/src/shop/src/a.ts'),
    /user's checkout: it changes only through hagent land/,
  );
  assert.match(
    reason('cp hook.sh /home/dev/src/shop/.git/hooks/pre-commit'),
    /repository's git folder/,
  );
  assert.match(reason('rm -rf ../s2'), /session worktrees: each session changes only its own/);
  assert.match(
    reason('cd .. && rm -rf s2'),
    /session worktrees: each session changes only its own/,
  );
});

test("the tools' package caches in the home folder are scratch; the rest of it, and the cache folder holding the sessions, are not", () => {
  for (const ok of [
    'rm -rf ~/.npm/_cacache',
    'rm -rf ~/.npm',
    'rm -rf ~/.cache/pip',
    'rm -rf ~/go/pkg/mod/cache',
    'rm -rf ~/.cargo/registry/cache',
  ])
    assert.equal(guardCommand(ok, MACHINE_CTX), { allowed: true }, ok);
  for (const no of ['rm -rf ~/.cache', 'rm -rf ~/.cache/hagent', 'rm ~/.npmrc', 'rm -rf ~/.cargo'])
    assert.is(guardCommand(no, MACHINE_CTX).allowed, false, no);
});

test('git runs in a scratch clone in the temp folder, not in the user checkout there nor its git folder', () => {
  const checkout = tempDir();
  git(checkout, 'init', '-q');
  const clone = tempDir();
  git(clone, 'init', '-q');
  const ctx: GuardContext = {
    worktree: tempDir(),
    home: '/home/dev',
    checkout,
    gitDir: path.join(checkout, '.git'),
  };
  assert.equal(guardCommand(`cd ${clone} && git checkout -b x && git log -1`, ctx), {
    allowed: true,
  });
  assert.equal(guardCommand(`git -C ${clone} reset --hard`, ctx), { allowed: true });
  for (const no of [
    `git -C ${checkout} status`,
    `cd ${checkout} && git stash`,
    `git --git-dir=${checkout}/.git log`,
    `git -C ${checkout}/.git log`,
  ])
    assert.is(guardCommand(no, ctx).allowed, false, no);
  assert.is(
    guardCommand(`git -C ${clone} reset --hard`, { ...ctx, worktree: path.join(clone, 'wt') })
      .allowed,
    false,
    'a folder holding the worktree is not scratch',
  );
});

test('a path list made by a lister is judged where the lister looked, in $(...) as through xargs', () => {
  for (const ok of [
    "sed -i 's/a/b/' $(git ls-files '*.ts')",
    "sed -i 's/a/b/' $(grep -rl a src)",
    "rm -f $(git diff --name-only | grep '\\.orig$' | sort -u)",
    "rm $(find . -name '*.orig')",
    "git ls-files | grep '\\.snap$' | xargs rm -f",
  ])
    assert.equal(guardCommand(ok, MACHINE_CTX), { allowed: true }, ok);
  for (const no of [
    'rm -f $(grep -rl a /home/dev/src/shop)',
    'grep -rl a /home/dev/src/shop | xargs rm -f',
    'rm -f $(cat list.txt)',
    'git diff HEAD~1 | xargs rm -f',
    'git ls-files | grep a /etc/passwd | xargs rm -f',
    'rm -rf $(find . -name .git)',
    `find ${MACHINE_CTX.worktree} -maxdepth 0 | xargs rm -rf`,
  ])
    assert.is(guardCommand(no, MACHINE_CTX).allowed, false, no);
});

test('it never throws, whatever the input', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (s) => {
      const v = guardCommand(s, CTX);
      return v.allowed === true || v.code === 'GUARD_BLOCKED';
    }),
    { numRuns: 2000 },
  );
  const deep = `${'$(echo '.repeat(300)}x${')'.repeat(300)}`;
  assert.is(typeof guardCommand(deep, CTX).allowed, 'boolean');
  assert.is(
    guardCommand(`${'bash -c "'.repeat(1)}${'eval '.repeat(40)}rm -rf ~"`, CTX).allowed,
    false,
  );
});

test('an interpreter one-liner that writes outside the worktree is refused as a write, one that deletes as a deletion', () => {
  for (const cmd of [
    `awk 'BEGIN{print "x" > "/home/dev/shop/README.md"}'`,
    `python3 -c 'open("/etc/hosts","w").write("")'`,
    `node -e "require('fs').writeFileSync('/home/dev/x', '')"`,
    `perl -e 'open(F, ">/home/dev/.bashrc")'`,
  ]) {
    const v = guardCommand(cmd, CTX);
    assert.is(v.allowed ? '' : v.rule, 'write-outside', cmd);
    assert.match(v.allowed ? '' : v.reason, /^writes outside/, cmd);
  }
  const del = guardCommand(`python3 -c "import os; os.remove('/etc/hosts')"`, CTX);
  assert.is(del.allowed ? '' : del.rule, 'rm-outside');
  assert.match(del.allowed ? '' : del.reason, /^deletes/);
  assert.ok(guardCommand(`awk '{ print > "out.txt" }' a.log`, CTX).allowed);
});

test.run();
