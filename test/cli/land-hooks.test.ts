/**
 * The user's own git hooks apply to what `hagent land` brings, through the real CLI in real
 * repositories with real hook scripts: a secret-scanning pre-commit, commit-msg, a
 * reference-transaction hook that protects main, `core.hooksPath`, a target checked out nowhere,
 * `--no-verify` as git has it; session commits keep hooks off.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, look, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('land-hooks');
const human = { unsetEnv: ['HAGENT_AGENT'] };

/** Writes an executable hook script `name` into `folder`. */
function hook(folder: string, name: string, body: string): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, name), `#!/bin/sh\n${body}\n`);
  chmodSync(path.join(folder, name), 0o755);
}

/** A secret scanner as users write them: refuses a staged file holding `SECRET=`. */
const SECRET_SCANNER = `files=$(git diff --cached --name-only -G'SECRET=')
if [ -n "$files" ]; then echo "secret found in: $files" >&2; exit 1; fi`;

/** A repository, a session "s1" that added `file` with `text`, reviewed and approved. */
function approvedSession(file: string, text: string) {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 's1']);
  const r = hagent(s.worktree, ['apply', '-', '--yes'], {
    input: `*** Begin Patch\n*** Add File: ${file}\n+${text}\n*** End Patch\n`,
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  look(repo);
  const a = hagent(repo, ['review', '--approve'], human);
  assert.is(a.status, 0, a.stdout + a.stderr);
  return { repo, s };
}

t(
  'a secret-scanning pre-commit refuses the land: HOOK_REFUSED, nothing touched; --no-verify lands and says so',
  () => {
    const { repo, s } = approvedSession('settings.ini', 'SECRET=hunter2');
    const hooks = path.join(repo, '.git', 'hooks');
    hook(hooks, 'pre-commit', SECRET_SCANNER);
    // The session's own commits keep hooks off: the agent's edits are committed regardless.
    const edit = hagent(s.worktree, ['apply', '-'], {
      input: '*** Begin Patch\n*** Add File: more.ini\n+SECRET=x\n*** End Patch\n',
    });
    assert.is(edit.status, 0, edit.stdout + edit.stderr);
    look(repo);
    assert.is(hagent(repo, ['review', '--approve'], human).status, 0);
    const main = git(repo, 'rev-parse', 'main');
    const r = hagent(repo, ['land', '--json'], human);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'HOOK_REFUSED');
    assert.is(r.json.error.hook, 'pre-commit');
    assert.is(r.json.error.exitCode, 1);
    assert.match(r.json.error.output, /secret found in: more\.ini\s+settings\.ini/);
    assert.match(r.json.error.message, /your git hook pre-commit refused the land \(exit 1\)/);
    assert.match(r.json.error.hint, /--no-verify/);
    assert.is(git(repo, 'rev-parse', 'main'), main, 'main did not move');
    assert.not.ok(existsSync(path.join(repo, 'settings.ini')), 'the checkout was not touched');
    assert.is(git(repo, 'status', '--porcelain'), '', 'nor its index');
    const text = hagent(repo, ['land'], human);
    assert.match(text.stderr, /^error\[HOOK_REFUSED\]: .*secret found in: /m);
    // As git commit --no-verify: pre-commit skipped, the land records it.
    const forced = hagent(repo, ['land', '--no-verify', '--json'], human);
    assert.is(forced.status, 0, forced.stdout + forced.stderr);
    assert.equal(forced.json.hooks.skipped, ['pre-commit']);
    assert.match(git(repo, 'log', '-1', '--format=%B', 'main'), /^Hagent-No-Verify: pre-commit$/m);
  },
);

t(
  'commit-msg edits the land message, or refuses it; prepare-commit-msg and post-commit run as git runs them',
  () => {
    const { repo } = approvedSession('b.txt', 'bee');
    const hooks = path.join(repo, '.git', 'hooks');
    const log = path.join(tempDir(), 'hooks.log');
    hook(
      hooks,
      'commit-msg',
      `grep -q '^Ticket: ' "$1" || { echo "missing Ticket: line" >&2; exit 1; }`,
    );
    hook(hooks, 'prepare-commit-msg', `echo "prepare $2" >> '${log}'`);
    hook(hooks, 'post-commit', `echo "post $(git rev-parse HEAD)" >> '${log}'`);
    const refused = hagent(repo, ['land', '--json'], human);
    assert.is(refused.json.error.code, 'HOOK_REFUSED');
    assert.is(refused.json.error.hook, 'commit-msg');
    assert.match(refused.json.error.message, /missing Ticket: line/);
    hook(hooks, 'commit-msg', `printf '\\nTicket: HA-1\\n' >> "$1"`);
    const r = hagent(repo, ['land', '--json'], human);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(git(repo, 'log', '-1', '--format=%B', 'main'), /^Ticket: HA-1$/m);
    assert.equal(
      r.json.hooks.ran.map((h: { hook: string }) => h.hook),
      ['prepare-commit-msg', 'commit-msg', 'post-commit'],
    );
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.is(lines.at(-2), 'prepare message');
    assert.is(lines.at(-1), `post ${git(repo, 'rev-parse', 'main')}`);
  },
);

t(
  'a reference-transaction hook protecting main refuses the land, --no-verify too; it sees the target move',
  () => {
    const { repo } = approvedSession('b.txt', 'bee');
    const seen = path.join(tempDir(), 'ref.log');
    hook(
      path.join(repo, '.git', 'hooks'),
      'reference-transaction',
      `input=$(cat); echo "$1 $input" >> '${seen}'
if [ "$1" = prepared ] && echo "$input" | grep -q ' refs/heads/main$'; then
  echo "main is updated by the release process only" >&2; exit 1; fi`,
    );
    const main = git(repo, 'rev-parse', 'main');
    for (const extra of [[], ['--no-verify']]) {
      const r = hagent(repo, ['land', '--json', ...extra], human);
      assert.is(r.status, 1, r.stdout + r.stderr);
      assert.is(r.json.error.code, 'HOOK_REFUSED');
      assert.is(r.json.error.hook, 'reference-transaction');
      assert.match(r.json.error.output, /release process only/);
      assert.not.match(r.json.error.hint, /--no-verify/);
    }
    assert.is(git(repo, 'rev-parse', 'main'), main);
    assert.not.ok(existsSync(path.join(repo, 'b.txt')));
    const first = readFileSync(seen, 'utf8').split('\n')[0]!;
    assert.match(first, new RegExp(`^prepared ${main} [0-9a-f]{40} refs/heads/main$`));
    // A hook that lets main move sees prepared, then committed.
    hook(
      path.join(repo, '.git', 'hooks'),
      'reference-transaction',
      `echo "$1 $(cat)" >> '${seen}'`,
    );
    const ok = hagent(repo, ['land', '--json'], human);
    assert.is(ok.status, 0, ok.stdout + ok.stderr);
    const states = readFileSync(seen, 'utf8').trim().split('\n').slice(-2);
    assert.equal(
      states.map((l) => l.split(' ')[0]),
      ['prepared', 'committed'],
    );
    assert.match(states[1]!, new RegExp(` ${git(repo, 'rev-parse', 'main')} refs/heads/main$`));
  },
);

t(
  'core.hooksPath is the user’s; a target checked out nowhere gets the hooks in a worktree made for them',
  () => {
    const { repo } = approvedSession('settings.ini', 'SECRET=1');
    git(repo, 'config', 'core.hooksPath', '.githooks');
    hook(path.join(repo, '.githooks'), 'pre-commit', SECRET_SCANNER);
    git(repo, 'switch', '-q', '-c', 'elsewhere');
    const before = git(repo, 'worktree', 'list', '--porcelain');
    const r = hagent(repo, ['land', '--json'], human);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'HOOK_REFUSED');
    assert.match(r.json.error.path, /\.githooks\/pre-commit$/);
    assert.is(git(repo, 'worktree', 'list', '--porcelain'), before, 'the hooks worktree is gone');
    // A pre-commit that re-stages files would land what nobody reviewed: refused.
    hook(path.join(repo, '.githooks'), 'pre-commit', `echo x > extra.txt && git add extra.txt`);
    const restaged = hagent(repo, ['land', '--json'], human);
    assert.is(restaged.json.error.code, 'HOOK_REFUSED');
    assert.match(restaged.json.error.message, /changed the staged files/);
  },
);

t.run();
