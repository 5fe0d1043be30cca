/**
 * The merge files and lock files src/git writes and removes (git/merge-state.ts, git/locks.ts):
 * git itself reads the merge they leave (`git rev-parse MERGE_HEAD`, `git merge --quit`), and a
 * lock is removed only when it was made since the given time and is old enough.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  mergeStateFiles,
  quitMerge,
  removeMergeState,
  writeMergeState,
} from '../../../src/git/merge-state.js';
import { removeLockMadeSince } from '../../../src/git/locks.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('merge state and locks');

t('writeMergeState leaves a merge git sees; quitMerge ends it', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  const gitDir = path.join(repo, '.git');
  await writeMergeState(gitDir, { head, mode: 'no-ff', message: 'Merge it\n' });
  const [mergeHead, mode, msg] = mergeStateFiles(gitDir);
  assert.is(readFileSync(mergeHead!, 'utf8'), `${head}\n`);
  assert.is(readFileSync(mode!, 'utf8'), 'no-ff');
  assert.is(readFileSync(msg!, 'utf8'), 'Merge it\n');
  assert.is(git(repo, 'rev-parse', 'MERGE_HEAD'), head);
  await quitMerge(repo);
  assert.not.ok(existsSync(mergeHead!));
});

t('removeMergeState removes every merge file, missing ones too', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const gitDir = path.join(repo, '.git');
  const head = git(repo, 'rev-parse', 'HEAD');
  await writeMergeState(gitDir, { head, mode: 'no-ff', message: 'm\n' });
  await removeMergeState(gitDir);
  for (const f of mergeStateFiles(gitDir)) assert.not.ok(existsSync(f), f);
  await removeMergeState(gitDir);
});

t('removeLockMadeSince removes a stale lock only when made since the given time', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const lock = path.join(repo, '.git', 'index.lock');
  const now = Date.now();
  writeFileSync(lock, '');
  const old = (now - 60_000) / 1000;
  utimesSync(lock, old, old);
  await removeLockMadeSince(lock, now, 2000);
  assert.ok(existsSync(lock), 'a lock older than the transaction stays');
  await removeLockMadeSince(lock, now - 120_000, 2000);
  assert.not.ok(existsSync(lock), 'a stale lock made since the transaction goes');
  await removeLockMadeSince(lock, now, 2000);
});

t.run();
