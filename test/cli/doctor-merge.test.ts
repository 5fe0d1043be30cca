/**
 * `hagent doctor` on a session whose `session update` left a merge in progress: the index holds
 * the merge (unmerged entries, files the merge brought, resolutions already `git add`ed), which
 * is not an index out of step with the head; doctor leaves it, and sync then concludes the merge.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('doctor during a merge');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

t('doctor keeps the index of a conflicted update, resolved part included', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'd.txt': 'd1\nd2\n', 'e.txt': 'e\n' });
  const s = startSession(repo, ['--name', 'm']);
  for (const [f, from, to] of [
    ['c.txt', 'l2', 'SESSION'],
    ['d.txt', 'd2', 'SESSION'],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: upd(f, from, to) });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  writeFileSync(path.join(repo, 'd.txt'), 'd1\nUSER\n');
  writeFileSync(path.join(repo, 'e.txt'), 'e on main\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', 'm', '--json']);
  assert.is(update.status, 0, update.stdout + update.stderr);
  assert.equal(update.json.conflicts, ['c.txt', 'd.txt']);
  writeFileSync(path.join(s.worktree, 'd.txt'), 'd1\nBOTH\n');
  git(s.worktree, 'add', 'd.txt');
  const index = git(s.worktree, 'ls-files', '-s');
  assert.match(git(s.worktree, 'ls-files', '-u'), /\tc\.txt$/m, 'c.txt unmerged');

  const doctor = hagent(repo, ['doctor', '--json']);
  assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
  assert.equal(
    doctor.json.findings.filter((f: any) => f.kind === 'index-out-of-step'),
    [],
    JSON.stringify(doctor.json.findings),
  );
  assert.is(git(s.worktree, 'ls-files', '-s'), index, 'the index is the merge as it was');

  writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
  git(s.worktree, 'add', 'c.txt');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.is(git(repo, 'show', 'hagent/m:d.txt'), 'd1\nBOTH');
  assert.is(git(repo, 'show', 'hagent/m:e.txt'), 'e on main');
});

t.run();
