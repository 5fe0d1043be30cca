/**
 * Loose objects written in-process (git/loose.ts) are the objects git would write: same ids,
 * readable by `git cat-file`, clean under `git fsck`; and the trees built by
 * writeTreeWithChanges through them equal the trees `git mktree` writes.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  looseObjectStore,
  objectId,
  readLooseObject,
  writeLooseObject,
} from '../../../src/git/loose.js';
import { readCommitTrees, writeTreeWithChanges } from '../../../src/git/tree.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('loose objects');

t("a blob written in-process has git's id, reads back byte for byte and passes fsck", async () => {
  const repo = makeRepo();
  const head = git(repo, 'rev-parse', 'HEAD');
  const store = await looseObjectStore(path.join(repo, '.git'), head);
  assert.ok(store, 'a plain repository takes direct writes');
  const bytes = Buffer.from('hello\r\nworld\0\xff end', 'latin1');
  const oid = await writeLooseObject(store!, 'blob', bytes);
  writeFileSync(path.join(repo, 'probe.bin'), bytes);
  assert.is(oid, git(repo, 'hash-object', '--no-filters', 'probe.bin'), 'the id git computes');
  assert.is(oid, objectId('blob', bytes));
  const back = spawnSync('git', ['cat-file', 'blob', oid], { cwd: repo }).stdout;
  assert.ok(Buffer.compare(back, bytes) === 0, 'git reads back the exact bytes');
  git(repo, 'fsck', '--strict', '--no-dangling');
  const dir = path.join(repo, '.git', 'objects', oid.slice(0, 2));
  assert.equal(
    readdirSync(dir).filter((n) => n.startsWith('tmp_obj_')),
    [],
    'no temp file left',
  );
  assert.is(statSync(path.join(dir, oid.slice(2))).mode & 0o222, 0, "read-only like git's objects");
});

t('writing an object that exists already keeps the first file and succeeds', async () => {
  const repo = makeRepo({ 'a.txt': 'same\n' });
  const store = (await looseObjectStore(path.join(repo, '.git'), git(repo, 'rev-parse', 'HEAD')))!;
  const oid = git(repo, 'rev-parse', 'HEAD:a.txt');
  const file = path.join(repo, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  const before = statSync(file).ino;
  assert.is(await writeLooseObject(store, 'blob', Buffer.from('same\n')), oid);
  assert.is(statSync(file).ino, before);
});

t(
  'trees written in-process equal the trees git mktree writes, for names that sort tricky',
  async () => {
    const files: Record<string, string> = {
      'a-b': '1',
      'a/b': '2',
      'a.b': '3',
      ab: '4',
      'a/c/d.txt': '5',
      'z z/q': '6',
      'é/ü.txt': '7',
    };
    const repo = makeRepo(files);
    const head = git(repo, 'rev-parse', 'HEAD');
    const store = (await looseObjectStore(path.join(repo, '.git'), head))!;
    const blob = await writeLooseObject(store, 'blob', Buffer.from('new\n'));
    const changes = [
      { path: 'a/c/e.txt', mode: '100644', oid: blob },
      { path: 'a.b', mode: '100755', oid: blob },
      { path: 'a/b', mode: '100644', oid: null },
      { path: 'a-', mode: '120000', oid: blob },
      { path: 'é/ü.txt', mode: '100644', oid: null },
    ];
    const direct = await writeTreeWithChanges(repo, head, changes, undefined, store);
    const viaGit = await writeTreeWithChanges(repo, head, changes);
    assert.is(direct, viaGit);
    git(repo, 'fsck', '--strict', '--no-dangling');
    assert.is(
      git(repo, 'ls-tree', '-r', '--name-only', direct),
      ['a-', 'a-b', 'a.b', 'a/c/d.txt', 'a/c/e.txt', 'ab', 'z z/q'].join('\n'),
    );
  },
);

t('a shared (group-writable) repository, or an id of another format, is left to git', async () => {
  const repo = makeRepo();
  const head = git(repo, 'rev-parse', 'HEAD');
  const objects = path.join(repo, '.git', 'objects');
  chmodSync(objects, 0o2775);
  assert.is(await looseObjectStore(path.join(repo, '.git'), head), null);
  chmodSync(objects, 0o755);
  assert.ok(await looseObjectStore(path.join(repo, '.git'), head));
  assert.is(await looseObjectStore(path.join(repo, '.git'), 'a'.repeat(64)), null);
  const empty = path.join(repo, 'not-a-repo');
  mkdirSync(empty);
  assert.is(await looseObjectStore(empty, head), null);
});

t(
  "loose objects read back in-process; head trees read in-process equal cat-file's, loose or packed",
  async () => {
    const repo = makeRepo({ 'a/b/c.txt': 'c\n', 'a/d.txt': 'd\n', 'top.txt': 't\n', f: 'file\n' });
    const head = git(repo, 'rev-parse', 'HEAD');
    const store = (await looseObjectStore(path.join(repo, '.git'), head))!;
    const bytes = Buffer.from('x\0y');
    const oid = await writeLooseObject(store, 'blob', bytes);
    const back = readLooseObject(store, oid)!;
    assert.is(back.type, 'blob');
    assert.ok(back.content.equals(bytes));
    assert.is(readLooseObject(store, 'f'.repeat(40)), null, 'absent');
    const paths = ['a/b/c.txt', 'a/new/x.txt', 'f/under-a-file.txt', 'top.txt', 'n/e/w.txt'];
    const viaGit = await readCommitTrees(repo, head, paths);
    const direct = await readCommitTrees(repo, head, paths, store);
    assert.equal(
      [...direct].map(([d, m]) => [d, [...m]]),
      [...viaGit].map(([d, m]) => [d, [...m]]),
    );
    git(repo, 'gc', '-q', '--prune=now');
    assert.is(readLooseObject(store, head), null, 'packed now');
    const afterGc = await readCommitTrees(repo, head, paths, store);
    assert.equal(
      [...afterGc].map(([d, m]) => [d, [...m]]),
      [...viaGit].map(([d, m]) => [d, [...m]]),
      'falls back to cat-file',
    );
  },
);

t('a repository with replace refs is not read directly', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  git(
    repo,
    'replace',
    head,
    git(repo, 'commit-tree', git(repo, 'rev-parse', 'HEAD^{tree}'), '-m', 'other'),
  );
  const store = (await looseObjectStore(path.join(repo, '.git'), head))!;
  assert.is(store.readable, false);
  assert.is(readLooseObject(store, head), null);
});

t.run();
