/**
 * Files hagent will never commit do not block `hagent session update`: a symlink (one pointing
 * outside the worktree) and a path the policy denies that is not git-ignored (`.env.local`) are
 * skipped by sync, so an update that refused while they were pending refused forever. Now the
 * update goes on, leaves them in place byte for byte and lists them in `leftInPlace`; a file
 * sync would commit still makes it refuse (STALE_FILE).
 */
import { readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, repoWithSession, tempDir } from '../helpers/index.js';

const t = suite('session update: files hagent never commits');

t('a symlink to outside and a denied .env.local are left in place; the update merges', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(repo, 'c.txt'), 'target\n');
  git(repo, 'add', 'c.txt');
  git(repo, 'commit', '-q', '-m', 'target moves');
  const outside = tempDir('hagent-outside-');
  symlinkSync(outside, path.join(s.worktree, 'link'));
  writeFileSync(path.join(s.worktree, '.env.local'), 'SECRET=1\n');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.equal(sync.json.skipped.map((k: { path: string }) => k.path).sort(), [
    '.env.local',
    'link',
  ]);
  const r = hagent(repo, ['session', 'update', '--session', 's1', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.commit);
  assert.equal(r.json.leftInPlace.map((k: { path: string }) => k.path).sort(), [
    '.env.local',
    'link',
  ]);
  assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'target\n');
  assert.is(readlinkSync(path.join(s.worktree, 'link')), outside);
  assert.is(readFileSync(path.join(s.worktree, '.env.local'), 'utf8'), 'SECRET=1\n');
  // Never committed: neither is in the session's tree.
  assert.is(git(s.worktree, 'ls-tree', '--name-only', 'HEAD', 'link', '.env.local'), '');
  const human = hagent(repo, ['session', 'update', '--session', 's1']);
  assert.is(human.status, 0, human.stderr);
});

t(
  'a file sync would commit still stops the update (STALE_FILE), the never-committed ones unnamed',
  () => {
    const { repo, s } = repoWithSession();
    writeFileSync(path.join(repo, 'c.txt'), 'target\n');
    git(repo, 'add', 'c.txt');
    git(repo, 'commit', '-q', '-m', 'target moves');
    writeFileSync(path.join(s.worktree, '.env.local'), 'SECRET=1\n');
    writeFileSync(path.join(s.worktree, 'notes.txt'), 'mine\n');
    const r = hagent(repo, ['session', 'update', '--session', 's1', '--json']);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'STALE_FILE');
    assert.equal(r.json.error.files, ['notes.txt']);
  },
);

t.run();
