/**
 * `hagent session list` keeps each session's summary (commits, land state, approval) in
 * `<git-common-dir>/hagent/summary-cache.json` under the refs it depends on. Through every step
 * that moves one of them — an apply, an approval, a land, the user's own commit on the target,
 * `land --undo`, `session update`, a commit made in the worktree outside hagent, another branch
 * checked out there — the list answered from the cache equals the list computed afresh, and says
 * what the step did.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  look,
  makeRepo,
  startSession,
  updatePatch,
  writeFiles,
} from '../helpers/index.js';

const t = suite('session list cache');

function list(repo: string): Record<string, any> {
  const r = hagent(repo, ['session', 'list', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  return Object.fromEntries(r.json.sessions.map((s: any) => [s.id, s]));
}

/** The list from the cache (written by a list just before), then afresh: they must agree. */
function checked(repo: string): Record<string, any> {
  list(repo);
  const cache = path.join(repo, '.git', 'hagent', 'summary-cache.json');
  assert.ok(existsSync(cache), 'a list writes the cache');
  const cached = list(repo);
  rmSync(cache);
  const fresh = list(repo);
  assert.equal(cached, fresh);
  return fresh;
}

const states = (l: Record<string, any>) =>
  Object.fromEntries(Object.entries(l).map(([id, s]) => [id, `${s.state} ${s.commits}`]));

t('the cached list follows every step that moves a ref it depends on', () => {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' });
  const s1 = startSession(repo, ['--name', 's1']);
  const s2 = startSession(repo, ['--name', 's2']);
  assert.equal(states(checked(repo)), { s1: 'empty 0', s2: 'empty 0' });

  assert.is(
    hagent(s1.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'ONE') }).status,
    0,
  );
  assert.is(
    hagent(s2.worktree, ['apply', '-'], { input: updatePatch('b.txt', 'bee', 'BEE') }).status,
    0,
  );
  assert.equal(states(checked(repo)), { s1: 'open 1', s2: 'open 1' });

  look(repo, 's1');
  assert.is(hagent(repo, ['review', '--session', 's1', '--approve']).status, 0);
  let l = checked(repo);
  assert.equal(states(l), { s1: 'approved 1', s2: 'open 1' });
  assert.is(l.s1.approved, true);

  assert.is(hagent(repo, ['land', '--session', 's1', '--yes']).status, 0);
  assert.equal(states(checked(repo)), { s1: 'landed 1', s2: 'open 1' });

  assert.is(hagent(repo, ['land', '--undo', '--session', 's1', '--yes']).status, 0);
  l = checked(repo);
  assert.equal(states(l), { s1: 'approved 1', s2: 'open 1' });

  assert.is(hagent(repo, ['land', '--session', 's1', '--yes']).status, 0);
  assert.equal(states(checked(repo)), { s1: 'landed 1', s2: 'open 1' });

  // The user commits on the target: s2's key moves with it (its target), its state holds.
  writeFiles(repo, { 'c.txt': 'sea\n' });
  git(repo, 'add', 'c.txt');
  git(repo, 'commit', '-q', '-m', 'user');
  assert.equal(states(checked(repo)), { s1: 'landed 1', s2: 'open 1' });

  assert.is(hagent(s2.worktree, ['session', 'update']).status, 0);
  assert.equal(states(checked(repo)), { s1: 'landed 1', s2: 'open 2' });

  // A commit made in s2's worktree outside hagent, then another branch checked out there.
  writeFiles(s2.worktree, { 'd.txt': 'dee\n' });
  git(s2.worktree, 'add', 'd.txt');
  git(s2.worktree, 'commit', '-q', '-m', 'by hand');
  l = checked(repo);
  assert.equal(states(l).s2, 'open 3');
  assert.is(l.s2.drift?.kind, 'outside-commits');
  git(s2.worktree, 'checkout', '-q', '-b', 'elsewhere');
  assert.equal(states(checked(repo)).s2, 'drifted 3');

  // An ended session leaves the cache.
  git(s2.worktree, 'checkout', '-q', 'hagent/s2');
  assert.is(
    hagent(repo, ['session', 'end', '--session', 's2', '--force', '--yes']).status,
    0,
    'end',
  );
  assert.equal(Object.keys(checked(repo)), ['s1']);
});

t.run();
