/**
 * A session started on a detached HEAD has no target branch: land, land --undo and session
 * update refuse it (DETACHED_TARGET, exit 1) and leave everything as it was; the hint's way out
 * (merge hagent/<id> yourself) works.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('land: a detached target');

function detachedSession(): { repo: string; worktree: string; head: string } {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  git(repo, 'checkout', '-q', '--detach');
  const s = startSession(repo, ['--name', 'd1']);
  assert.is(s.target, null, 'a session from a detached HEAD has no target');
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, worktree: s.worktree, head: git(repo, 'rev-parse', 'HEAD') };
}

t('land refuses a session without a target branch; merging hagent/<id> yourself works', () => {
  const { repo, head } = detachedSession();
  const r = hagent(repo, ['land', '--session', 'd1', '--yes', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'DETACHED_TARGET');
  assert.is(r.json.error.session, 'd1');
  assert.match(r.json.error.message, /session d1 has no target branch \(.*detached HEAD\)/);
  assert.match(r.json.error.hint, /merge hagent\/d1 yourself/);
  assert.is(git(repo, 'rev-parse', 'HEAD'), head, 'HEAD did not move');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
  const text = hagent(repo, ['land', '--session', 'd1', '--yes']);
  assert.is(text.status, 1);
  assert.match(text.stderr, /^error\[DETACHED_TARGET\]: session d1 has no target branch/);
  assert.match(text.stderr, /hint: .*merge hagent\/d1 yourself/);
  // The hint, followed: the work is on hagent/d1 and merges like any branch.
  git(repo, 'merge', '-q', '--ff-only', 'hagent/d1');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'two\n');
});

t('land --undo and session update refuse it too, with a hint of their own', () => {
  const { repo, worktree } = detachedSession();
  const branch = git(repo, 'rev-parse', 'hagent/d1');
  const undo = hagent(repo, ['land', '--undo', '--session', 'd1', '--yes', '--json']);
  assert.is(undo.status, 1, undo.stdout + undo.stderr);
  assert.is(undo.json.error.code, 'DETACHED_TARGET');
  assert.match(undo.json.error.message, /session d1 has no target branch/);
  assert.match(undo.json.error.hint, /no land to undo/);
  const update = hagent(worktree, ['session', 'update', '--json']);
  assert.is(update.status, 1, update.stdout + update.stderr);
  assert.is(update.json.error.code, 'DETACHED_TARGET');
  assert.match(update.json.error.message, /session d1 has no target branch/);
  assert.match(update.json.error.hint, /nothing to update it with; merge the branch you want/);
  assert.is(git(repo, 'rev-parse', 'hagent/d1'), branch, 'the session branch did not move');
  assert.is(git(worktree, 'status', '--porcelain'), '');
});

t.run();
