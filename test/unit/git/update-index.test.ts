/**
 * updateIndex (git/objects.ts) lets git write the index: a version-4 index stays version 4, a
 * large one becomes a split index on first use (unless the repository says core.splitIndex=false),
 * and the index then holds exactly what git's own update of a copy holds.
 */
import { copyFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SPLIT_INDEX_MIN_BYTES, updateIndex } from '../../../src/git/objects.js';
import { git, makeRepo } from '../../helpers/index.js';
import { spawnSync } from 'node:child_process';

const t = suite('update index');

/** A repository whose index holds `n` extra entries (one blob, long paths), without files. */
function bigIndex(n: number): { repo: string; blob: string } {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const blob = git(repo, 'hash-object', '-w', 'a.txt');
  const dir = 'some/rather/deep/folder/of/generated/sources/for/the/index';
  const input = Array.from({ length: n }, (_, i) => `100644 ${blob}\t${dir}/file-${i}.txt\0`);
  const r = spawnSync('git', ['update-index', '-z', '--index-info'], {
    cwd: repo,
    input: input.join(''),
  });
  assert.is(r.status, 0, String(r.stderr));
  return { repo, blob };
}

const shared = (repo: string) =>
  readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('sharedindex.'));

/** The same updates through git on a copy of the index (GIT_INDEX_FILE): its listing. */
function viaGitCopy(repo: string, input: string): string {
  const copy = path.join(repo, '.git', 'index-reference');
  copyFileSync(path.join(repo, '.git', 'index'), copy);
  const env = { ...process.env, GIT_INDEX_FILE: copy };
  spawnSync('git', ['update-index', '-z', '--index-info'], { cwd: repo, input, env });
  const opts = { cwd: repo, env, encoding: 'utf8', maxBuffer: 1 << 30 } as const;
  return spawnSync('git', ['ls-files', '-s'], opts).stdout;
}

t('a large index becomes a split index on first use, and holds what git would', async () => {
  const { repo, blob } = bigIndex(24_000);
  assert.ok(statSync(path.join(repo, '.git', 'index')).size >= SPLIT_INDEX_MIN_BYTES);
  assert.equal(shared(repo), []);
  const updates = [
    { path: 'new/one.txt', mode: '100644', oid: blob },
    { path: 'a.txt', mode: '100755', oid: blob },
    {
      path: 'some/rather/deep/folder/of/generated/sources/for/the/index/file-7.txt',
      mode: '0',
      oid: null,
    },
  ];
  const input = updates
    .map((u) => `${u.oid ? u.mode : '0'} ${u.oid ?? '0'.repeat(40)}\t${u.path}\0`)
    .join('');
  const expected = viaGitCopy(repo, input);
  await updateIndex(repo, updates);
  assert.is(shared(repo).length, 1, 'git wrote a shared index');
  assert.ok(statSync(path.join(repo, '.git', 'index')).size < SPLIT_INDEX_MIN_BYTES);
  const listing = spawnSync('git', ['ls-files', '-s'], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  }).stdout;
  assert.ok(listing === expected, "the same entries as git's own update of a copy");
  // The next update keeps it split, and git reads it.
  await updateIndex(repo, [{ path: 'new/two.txt', mode: '100644', oid: blob }]);
  assert.match(git(repo, 'ls-files', '-s', 'new'), /new\/two\.txt/);
  assert.is(shared(repo).length, 1);
  git(repo, 'fsck', '--cache', '--no-dangling');
});

t('core.splitIndex=false keeps the index whole', async () => {
  const { repo, blob } = bigIndex(24_000);
  git(repo, 'config', 'core.splitIndex', 'false');
  await updateIndex(repo, [{ path: 'new/one.txt', mode: '100644', oid: blob }]);
  assert.equal(shared(repo), []);
  assert.match(git(repo, 'ls-files', '-s', 'new'), /new\/one\.txt/);
});

t('a version-4 index (feature.manyFiles) is updated by git and stays version 4', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' });
  git(repo, 'config', 'feature.manyFiles', 'true');
  git(repo, 'update-index', '--index-version', '4');
  const blob = git(repo, 'hash-object', '-w', 'a.txt');
  await updateIndex(repo, [
    { path: 'd/c.txt', mode: '100644', oid: blob },
    { path: 'a.txt', mode: '0', oid: null },
  ]);
  assert.is(git(repo, 'ls-files'), 'd/b.txt\nd/c.txt');
  const header = spawnSync('head', ['-c', '8', path.join(repo, '.git', 'index')]).stdout;
  assert.is(header.readUInt32BE(4), 4, 'still index version 4');
});

t.run();
