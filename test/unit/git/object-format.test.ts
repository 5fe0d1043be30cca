/**
 * SHA-256 repositories (git/object-format.ts): the format is read from the repository's config,
 * raw trees of 32-byte ids parse and serialise to git's bytes, and loose objects, trees and index
 * updates written by hagent are the ones git writes (`git fsck` clean).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { objectFormat, hashObject } from '../../../src/git/object-format.js';
import { looseObjectStore, writeLooseObject } from '../../../src/git/loose.js';
import {
  parseRawTree,
  readCommitTrees,
  serializeTree,
  writeTreeWithChanges,
} from '../../../src/git/tree.js';
import { updateIndex } from '../../../src/git/objects.js';
import { isHagentError } from '../../../src/errors.js';
import { git, makeRepo, tempDir, writeFiles } from '../../helpers/index.js';

const t = suite('object format');

function sha256Repo(): string {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'a\n', 'd/b.txt': 'b\n', 'd/e/c.txt': 'c\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

t('the format comes from extensions.objectFormat; SHA-1 without it', () => {
  assert.is(objectFormat(path.join(sha256Repo(), '.git')), 'sha256');
  assert.is(objectFormat(path.join(makeRepo(), '.git')), 'sha1');
});

t("a SHA-256 tree parses into 64-digit ids and serialises back to git's bytes and id", () => {
  const repo = sha256Repo();
  const id = git(repo, 'rev-parse', 'HEAD:d');
  const raw = spawnSync('git', ['cat-file', 'tree', id], { cwd: repo }).stdout;
  const entries = parseRawTree(raw, 'sha256');
  assert.equal([...entries.keys()], ['b.txt', 'e']);
  assert.is(entries.get('b.txt')!.oid, git(repo, 'rev-parse', 'HEAD:d/b.txt'));
  assert.is(entries.get('e')!.mode, '40000');
  assert.ok(serializeTree(entries).equals(raw));
  assert.is(hashObject('tree', raw, 'sha256'), id);
});

t('a tree read with the wrong id length is refused, not looped over', () => {
  const repo = sha256Repo();
  const raw = spawnSync('git', ['cat-file', 'tree', git(repo, 'rev-parse', 'HEAD:d')], {
    cwd: repo,
  }).stdout;
  try {
    parseRawTree(raw.subarray(0, raw.length - 5), 'sha256');
    assert.unreachable('a truncated tree parsed');
  } catch (e) {
    assert.ok(isHagentError(e) && e.code === 'INTERNAL', String(e));
  }
});

t(
  'loose objects, trees and the index are written as git writes them in a SHA-256 repository',
  async () => {
    const repo = sha256Repo();
    const head = git(repo, 'rev-parse', 'HEAD');
    const store = await looseObjectStore(path.join(repo, '.git'), head);
    assert.ok(store);
    assert.is(store!.format, 'sha256');
    const blob = await writeLooseObject(store!, 'blob', Buffer.from('new\n'));
    writeFiles(repo, { 'd/e/n.txt': 'new\n' });
    assert.is(blob, git(repo, 'hash-object', 'd/e/n.txt'));
    const changes = [
      { path: 'd/e/n.txt', mode: '100644', oid: blob },
      { path: 'a.txt', mode: '0', oid: null },
    ];
    const viaStore = await writeTreeWithChanges(
      repo,
      head,
      changes,
      await readCommitTrees(
        repo,
        head,
        changes.map((c) => c.path),
        store,
      ),
      store,
    );
    const viaGit = await writeTreeWithChanges(repo, head, changes);
    assert.is(viaStore, viaGit);
    await updateIndex(repo, changes);
    assert.is(git(repo, 'write-tree'), viaGit, 'the index holds the same tree');
    git(repo, 'fsck', '--strict', '--no-dangling');
  },
);

t.run();
