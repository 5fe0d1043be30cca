/**
 * apply watches its targets for outside writes; when no watch can start (the inotify watch limit
 * is reached) it refuses with WATCH_FAILED and writes nothing, and `--no-watch`, the hint, applies
 * the patch without watching (recorded as `watched: false`). The limit is set to 0 inside a user
 * namespace of the CLI's own (Linux ≥ 5.11 counts inotify watches per user namespace), so nothing
 * outside the test is touched.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordCodes } from '../helpers/codes.js';
import { BIN, GIT_ENV, git, makeRepo, startSession } from '../helpers/index.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('apply: the watcher');

// `$0 "$@"` runs the CLI once the limit is 0; the script itself is constant.
const LIMIT_ZERO = 'echo 0 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"';
const probe = spawnSync(
  'unshare',
  ['--user', '--map-root-user', 'sh', '-c', LIMIT_ZERO, process.execPath, '-e', ''],
  { encoding: 'utf8' },
);
const cannot =
  probe.status === 0
    ? undefined
    : `cannot lower the inotify limit in a user namespace here: ${(probe.stderr || String(probe.error)).trim()}`;

/** `hagent ARGS` with no inotify watch available. */
function withoutWatches(cwd: string, args: string[], input: string) {
  const r = spawnSync(
    'unshare',
    ['--user', '--map-root-user', 'sh', '-c', LIMIT_ZERO, process.execPath, BIN, ...args],
    { cwd, input, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' },
  );
  recordCodes(r.stdout, r.stderr);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: JSON.parse(r.stdout) };
}

testOrSkip(
  t,
  'apply: the watcher',
  cannot,
)('no watch can start: WATCH_FAILED, nothing written; --no-watch (the hint) applies', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo);
  const head = git(s.worktree, 'rev-parse', 'HEAD');
  const patch = '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n';
  const r = withoutWatches(s.worktree, ['apply', '-', '--json'], patch);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'WATCH_FAILED');
  assert.match(r.json.error.message, /cannot watch the patch's files for outside writes: ENOSPC/);
  assert.match(r.json.error.hint, /inotify watch limit is reached/);
  assert.match(r.json.error.hint, /--no-watch/);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\n', 'nothing written');
  assert.is(git(s.worktree, 'rev-parse', 'HEAD'), head, 'no commit');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const ok = withoutWatches(s.worktree, ['apply', '-', '--json', '--no-watch'], patch);
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  assert.is(ok.json.watched, false);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'two\n');
});

t.run();
