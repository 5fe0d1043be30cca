/**
 * `hagent guard`: the shell guard's verdict through the real CLI, in a real session worktree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('guard');

t(
  'an everyday command is allowed (exit 0), a dangerous one blocked with GUARD_BLOCKED (exit 1)',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    // One word after -- is shell code (several are a program and its arguments, each quoted).
    const ok = hagent(s.worktree, ['guard', '--json', '--', 'npm test && rm -rf dist']);
    assert.is(ok.status, 0, ok.stdout + ok.stderr);
    assert.equal(ok.json, {
      ok: true,
      allowed: true,
      worktree: ok.json.worktree,
      command: 'npm test && rm -rf dist',
    });
    const no = hagent(s.worktree, ['guard', '--json', '--', 'rm -rf ~']);
    assert.is(no.status, 1);
    assert.is(no.json.ok, false);
    assert.is(no.json.allowed, false);
    assert.is(no.json.error.code, 'GUARD_BLOCKED');
    assert.is(no.json.error.rule, 'rm-outside');
    assert.is(no.json.error.command, 'rm -rf ~');
    assert.ok(no.json.error.message.includes(os.homedir()), no.json.error.message);
    assert.ok(no.json.error.hint.length > 0);
  },
);

t('the human form names the rule, the command and the hint on stderr', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, ['guard', '--', 'git', 'push', '--force']);
  assert.is(r.status, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /^error\[GUARD_BLOCKED\]: force-pushes/);
  assert.match(r.stderr, /rule: git-push-force/);
  assert.match(r.stderr, /command: git push --force/);
  assert.match(r.stderr, /hint: /);
  const ok = hagent(s.worktree, ['guard', '--', 'git', 'status']);
  assert.is(ok.status, 0);
  assert.is(ok.stdout, 'allowed: git status\n');
});

t(
  "a command aimed at the user's checkout is refused with a reason naming it and hagent land",
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    const r = hagent(s.worktree, ['guard', '--json', '--', `git -C ${repo} checkout -- .`]);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.rule, 'git-elsewhere');
    assert.match(r.json.error.message, /the user's checkout: it changes only through hagent land/);
    const hook = hagent(s.worktree, [
      'guard',
      '--json',
      '--',
      `echo x > ${path.join(repo, '.git', 'hooks', 'pre-commit')}`,
    ]);
    assert.is(hook.status, 1);
    assert.match(hook.json.error.message, /the repository's git folder/);
  },
);

t('the command is read from stdin when no words are given; an empty stdin is a usage error', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, ['guard', '--json'], {
    input: "cat <<'EOF' > notes.md\nrm -rf /\nEOF\n",
  });
  assert.is(r.status, 0, r.stdout);
  const bad = hagent(s.worktree, ['guard', '--json'], { input: 'echo x | sh -c "$(cat)"\n' });
  assert.is(bad.status, 1);
  assert.is(bad.json.error.rule, 'unresolved');
  const none = hagent(s.worktree, ['guard', '--json']);
  assert.is(none.status, 2);
  assert.is(none.json.error.code, 'USAGE');
});

t('--session from the user checkout guards that session; its target branch is protected', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(repo, ['guard', '--json', '--session', s.id, '--', 'git branch -D main']);
  assert.is(r.status, 1);
  assert.is(r.json.error.rule, 'git-protected-ref');
  assert.is(r.json.worktree, s.worktree);
  const mine = hagent(repo, [
    'guard',
    '--json',
    '--session',
    s.id,
    '--',
    `git branch -D ${s.branch}`,
  ]);
  assert.is(mine.json.error.rule, 'git-protected-ref');
  const other = hagent(repo, [
    'guard',
    '--json',
    '--session',
    s.id,
    '--',
    'git branch -D old-topic',
  ]);
  assert.is(other.status, 0);
  // The user's checkout is outside the session worktree.
  const reach = hagent(repo, [
    'guard',
    '--json',
    '--session',
    s.id,
    '--',
    `echo x > ${path.join(repo, 'README.md')}`,
  ]);
  assert.is(reach.json.error.rule, 'write-outside');
});

t('--dir takes any folder as the worktree; --dir with --session is a usage error', () => {
  const dir = tempDir();
  const inside = hagent(dir, ['guard', '--json', '--dir', '.', '--', 'rm -rf build']);
  assert.is(inside.status, 0);
  const up = hagent(dir, ['guard', '--json', '--dir', '.', '--', 'rm -rf ..']);
  assert.is(up.status, 1);
  const both = hagent(dir, ['guard', '--json', '--dir', '.', '--session', 'x', '--', 'ls']);
  assert.is(both.status, 2);
});

t(
  'guard.allow in the repository config relaxes a rule; the same file inside the session worktree does not',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    mkdirSync(path.join(s.worktree, '.hagent'), { recursive: true });
    writeFileSync(
      path.join(s.worktree, '.hagent', 'config.json'),
      JSON.stringify({ guard: { allow: ['git-push'] } }),
    );
    const before = hagent(s.worktree, ['guard', '--json', '--', 'git push origin HEAD']);
    assert.is(before.status, 1, 'a config written by the agent inside its worktree is not read');
    mkdirSync(path.join(repo, '.hagent'), { recursive: true });
    writeFileSync(
      path.join(repo, '.hagent', 'config.json'),
      JSON.stringify({ guard: { allow: ['git-push'] } }),
    );
    const after = hagent(s.worktree, ['guard', '--json', '--', 'git push origin HEAD']);
    assert.is(after.status, 0, after.stdout);
    const force = hagent(s.worktree, ['guard', '--json', '--', 'git push --force origin HEAD']);
    assert.is(force.status, 1, 'a force push stays refused');
    assert.is(force.json.error.rule, 'git-push-force');
  },
);

t('an unknown rule name in guard.allow is a config error naming the key', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    JSON.stringify({ guard: { allow: ['push'] } }),
  );
  const r = hagent(s.worktree, ['guard', '--json', '--', 'ls']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'CONFIG_INVALID');
  assert.match(r.json.error.message, /guard\.allow/);
});

t(
  "awk writing into the user's main checkout (even one under the temp folder) is refused as a write outside the worktree",
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    const target = path.join(repo, 'README.md');
    const r = hagent(s.worktree, ['exec', '--json', '--', `awk 'BEGIN{print "x" > "${target}"}'`]);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.rule, 'write-outside');
    assert.match(r.json.error.message, /^writes outside the session worktree/);
    assert.ok(r.json.error.message.includes(target), r.json.error.message);
  },
);

t.run();
