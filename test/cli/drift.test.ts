/**
 * The agent's own git commands in its worktree, through the real CLI: commits it made are
 * reported and policy-checked at land, a reset that drops hagent's commits keeps them reachable
 * and a reset past the base cannot land, a checkout of another branch is reported, and a rebase
 * onto the target does not count the user's commits as the session's.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('drift');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

function apply(worktree: string, patch: string): string {
  const r = hagent(worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return r.json.commit;
}

t(
  "the agent's git commit of protected paths is reported, and land refuses it until --allow-denied",
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'g']);
    apply(s.worktree, upd('a.txt', 'a', 'A'));
    mkdirSync(path.join(s.worktree, '.hagent', 'hooks'), { recursive: true });
    writeFileSync(path.join(s.worktree, '.env'), 'SECRET=1\n');
    writeFileSync(path.join(s.worktree, '.hagent', 'config.json'), '{}\n');
    writeFileSync(path.join(s.worktree, '.hagent', 'hooks', 'pre-apply'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(s.worktree, '.hagent', 'hooks', 'pre-apply'), 0o755);
    git(s.worktree, 'add', '-f', '.env', '.hagent');
    git(s.worktree, 'commit', '-qm', 'agent commit');
    const status = hagent(repo, ['session', 'status', 'g', '--json']).json;
    assert.is(status.drift.kind, 'outside-commits');
    assert.is(status.drift.commits.length, 1);
    const review = hagent(repo, ['review', '--session', 'g', '--json']).json;
    assert.equal(
      review.patches.map((p: any) => p.outside),
      [true, false],
    );
    assert.equal(review.files.map((f: any) => f.path).sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
      'a.txt',
    ]);
    const before = git(repo, 'rev-parse', 'main');
    const refused = hagent(repo, ['land', '--session', 'g', '--yes', '--json']);
    assert.is(refused.status, 1);
    assert.is(refused.json.error.code, 'LAND_DENIED');
    assert.equal(refused.json.error.files.sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
    ]);
    assert.match(refused.json.error.hint, /--allow-denied/);
    assert.is(git(repo, 'rev-parse', 'main'), before, 'nothing landed');
    assert.not.ok(existsSync(path.join(repo, '.env')));
    const partial = hagent(repo, ['review', '--session', 'g', '--approve', 'a.txt', '--json']);
    assert.is(partial.status, 0);
    const safe = hagent(repo, ['land', '--session', 'g', '--json']);
    assert.is(safe.status, 0, safe.stdout);
    assert.equal(safe.json.files, [{ path: 'a.txt', status: 'M' }], 'the approved safe part lands');
    assert.is(hagent(repo, ['review', '--session', 'g', '--approve', '--json']).status, 0);
    const forced = hagent(repo, ['land', '--session', 'g', '--allow-denied', '--json']);
    assert.is(forced.status, 0, forced.stdout);
    assert.equal(forced.json.allowedDenied.map((d: any) => d.path).sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
    ]);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'SECRET=1\n');
  },
);

t('a symlink committed by the agent is refused at land', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'l']);
  git(
    s.worktree,
    'update-index',
    '--add',
    '--cacheinfo',
    `120000,${git(s.worktree, 'hash-object', '-w', '--stdin', '--path=x')},link`,
  );
  git(s.worktree, 'commit', '-qm', 'a link');
  const r = hagent(repo, ['land', '--session', 'l', '--yes', '--json']);
  assert.is(r.json.error.code, 'LAND_DENIED');
  assert.equal(r.json.error.denied, [{ path: 'link', reason: 'a symbolic link' }]);
});

t(
  'a reset past the base keeps the dropped commits, cannot land, and the hint brings them back',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user commit');
    const s = startSession(repo, ['--name', 'r']);
    const mine = apply(s.worktree, upd('a.txt', 'a', 'A'));
    git(s.worktree, 'reset', '-q', '--hard', 'HEAD~2');
    const status = hagent(repo, ['session', 'status', 'r', '--json']).json;
    assert.is(status.drift.kind, 'rewound');
    assert.is(status.drift.pastBase, true);
    assert.is(status.drift.lastHead, mine);
    assert.is(
      git(repo, 'rev-parse', status.drift.keptAs),
      mine,
      'the dropped commit is kept reachable',
    );
    const land = hagent(repo, ['land', '--session', 'r', '--yes', '--json']);
    assert.is(land.json.error.code, 'SESSION_DRIFTED');
    assert.is(
      git(repo, 'ls-tree', '--name-only', 'main'),
      'a.txt\nu.txt',
      'the user commit is still on main',
    );
    const cmd = /git reset --hard ([0-9a-f]{12})/.exec(land.json.error.hint);
    assert.ok(cmd, land.json.error.hint);
    git(s.worktree, 'reset', '-q', '--hard', cmd![1]!);
    const again = hagent(repo, ['land', '--session', 'r', '--yes', '--json']);
    assert.is(again.status, 0, again.stdout);
    assert.equal(again.json.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(git(repo, 'ls-tree', '--name-only', 'main'), 'a.txt\nu.txt');
  },
);

t('a checkout of another branch in the worktree is reported', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'b']);
  git(s.worktree, 'checkout', '-q', '-b', 'agent-branch');
  const status = hagent(repo, ['session', 'status', 'b', '--json']).json;
  assert.is(status.drift.kind, 'other-branch');
  assert.is(status.drift.branch, 'refs/heads/agent-branch');
  assert.match(status.drift.hint, /git -C .* switch hagent\/b/);
  const human = hagent(repo, ['session', 'status', 'b']);
  assert.match(human.stdout, /moved outside hagent: its worktree has agent-branch checked out/);
  git(s.worktree, 'switch', '-q', '--detach');
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].drift.kind, 'detached');
});

t(
  "after the agent rebased onto the target, review and land hold only the session's own change",
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'u\n' });
    const s = startSession(repo, ['--name', 'rb']);
    apply(s.worktree, upd('a.txt', 'a', 'A'));
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'commit', '-qam', 'user commit');
    git(s.worktree, 'rebase', '-q', 'main');
    const review = hagent(repo, ['review', '--session', 'rb', '--json']).json;
    assert.is(review.since, 'target');
    assert.equal(
      review.files.map((f: any) => f.path),
      ['a.txt'],
    );
    assert.equal(review.patches.length, 1, "the user's commit is not a session patch");
    assert.is(review.drift.kind, 'rewound');
    assert.is(review.drift.pastBase, false);
    const land = hagent(repo, ['land', '--session', 'rb', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout);
    assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(readFileSync(path.join(repo, 'u.txt'), 'utf8'), 'user\n');
  },
);

t.run();
