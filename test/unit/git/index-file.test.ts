/**
 * updateIndexFile against real git: every setup is made twice from one repository state, the same
 * updates go through `git update-index -z --index-info` in one copy and updateIndexFile in the
 * other, and the two indexes must agree — byte for byte where git keeps no cache of its own — and
 * read cleanly (`git ls-files`, `git fsck --cache`). Indexes updateIndexFile must leave to git
 * stay untouched.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lutimesSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateIndexFile } from '../../../src/git/index-file.js';
import {
  SPLIT_INDEX_MIN_BYTES,
  splitLargeIndex,
  type IndexEntryUpdate,
} from '../../../src/git/objects.js';
import { GIT_ENV, git, makeRepo, tempDir, writeFiles } from '../../helpers/index.js';
import { prng } from '../../helpers/random.js';

const test = suite('updateIndexFile');

/** Runs git with the pinned test environment; `input` goes to stdin. */
function run(
  cwd: string,
  args: string[],
  input = '',
  env: Record<string, string> = {},
): { status: number; stdout: Buffer; stderr: string } {
  const r = spawnSync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV, ...env },
    input,
    maxBuffer: 1 << 28,
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

/** What git reports (no optional locks): stdout and stderr of a command that must succeed. */
function report(cwd: string, ...args: string[]): string {
  const r = run(cwd, args, '', { GIT_OPTIONAL_LOCKS: '0' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return `${r.stdout.toString('latin1')}${r.stderr ? `\n--- stderr\n${r.stderr}` : ''}`;
}

/** stdout of a git command that must succeed with nothing on stderr. */
function out(cwd: string, ...args: string[]): string {
  const r = run(cwd, args, '', { GIT_OPTIONAL_LOCKS: '0' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  assert.is(r.stderr, '', `git ${args.join(' ')} complained`);
  return r.stdout.toString('latin1');
}

const indexOf = (repo: string) => path.join(repo, '.git', 'index');

/** The same input objects.ts updateIndex gives `git update-index -z --index-info`. */
function gitUpdateIndex(repo: string, updates: readonly IndexEntryUpdate[]): void {
  const input = updates
    .map((u) =>
      u.oid === null ? `0 ${'0'.repeat(40)}\t${u.path}\0` : `${u.mode} ${u.oid}\t${u.path}\0`,
    )
    .join('');
  const r = run(repo, ['update-index', '-z', '--index-info'], input);
  if (r.status !== 0) throw new Error(`update-index failed: ${r.stderr}`);
}

/** Writes `text` as a blob into the repository's objects; its id. */
function blob(repo: string, text: string): string {
  return run(repo, ['hash-object', '-w', '--stdin'], text).stdout.toString('utf8').trim();
}

/**
 * Moves every tracked file's mtime 100 s into the past and refreshes the index, so that no entry
 * is racy: git then smudges nothing either, and the two indexes can be compared byte for byte.
 */
function settle(repo: string): void {
  const past = Date.now() / 1000 - 100;
  for (const rel of out(repo, 'ls-files', '-z').split('\0').filter(Boolean)) {
    try {
      lutimesSync(path.join(repo, rel), past, past);
    } catch {
      // not in the worktree: no stat data to settle
    }
  }
  run(repo, ['update-index', '-q', '--refresh']);
}

/** Two copies of `repo` (timestamps kept): the first for git, the second for updateIndexFile. */
function twins(repo: string): [string, string] {
  const copies = [
    path.join(tempDir('hagent-index-'), 'git'),
    path.join(tempDir('hagent-index-'), 'ours'),
  ] as const;
  for (const c of copies)
    cpSync(repo, c, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  return [copies[0], copies[1]];
}

/** An index file cut into its parts (gitformat-index.txt), version 2/3 only. */
interface ParsedIndex {
  version: number;
  entries: Buffer[];
  names: string[];
  extensions: Map<string, Buffer>;
  trailer: Buffer;
}

function parseIndex(bytes: Buffer): ParsedIndex {
  assert.is(bytes.toString('latin1', 0, 4), 'DIRC');
  const version = bytes.readUInt32BE(4);
  const count = bytes.readUInt32BE(8);
  const entries: Buffer[] = [];
  const names: string[] = [];
  let p = 12;
  for (let i = 0; i < count; i++) {
    const flags = bytes.readUInt16BE(p + 60);
    const nameAt = p + 62 + (flags & 0x4000 ? 2 : 0);
    const nul = bytes.indexOf(0, nameAt);
    const size = (nameAt - p + (nul - nameAt) + 8) & ~7;
    entries.push(bytes.subarray(p, p + size));
    names.push(bytes.toString('utf8', nameAt, nul));
    p += size;
  }
  const extensions = new Map<string, Buffer>();
  while (p < bytes.length - 20) {
    const size = bytes.readUInt32BE(p + 4);
    extensions.set(bytes.toString('latin1', p, p + 4), bytes.subarray(p + 8, p + 8 + size));
    p += 8 + size;
  }
  assert.is(p, bytes.length - 20, 'extensions end at the trailer');
  return { version, entries, names, extensions, trailer: bytes.subarray(p) };
}

/** The cache-tree as `path → entry count` (-1: invalid), in file order. */
function cacheTree(data: Buffer): [string, number][] {
  const out: [string, number][] = [];
  let k = 0;
  const node = (prefix: string) => {
    const nul = data.indexOf(0, k);
    const name = data.toString('utf8', k, nul);
    const lf = data.indexOf(0x0a, nul);
    const [count, subtrees] = data
      .toString('latin1', nul + 1, lf)
      .split(' ')
      .map(Number) as [number, number];
    const at = prefix === '' && name === '' ? '' : prefix === '' ? name : `${prefix}/${name}`;
    out.push([at, count]);
    k = lf + 1 + (count >= 0 ? 20 : 0);
    for (let i = 0; i < subtrees; i++) node(at);
  };
  node('');
  assert.is(k, data.length);
  return out;
}

/** Writes an index file from parts, with its SHA-1 trailer. */
function writeIndexFile(
  repo: string,
  version: number,
  entries: Buffer[],
  extensions: Buffer[],
): void {
  const header = Buffer.alloc(12);
  header.write('DIRC', 0, 'latin1');
  header.writeUInt32BE(version, 4);
  header.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([header, ...entries, ...extensions]);
  writeFileSync(indexOf(repo), Buffer.concat([body, createHash('sha1').update(body).digest()]));
}

/** git reads `repo`'s index without complaint: ls-files, and fsck with the index (checksum, order). */
function readsCleanly(repo: string): void {
  out(repo, 'ls-files', '-s');
  const fsck = run(repo, ['fsck', '--no-dangling', '--cache', '--no-progress']);
  assert.is(fsck.status, 0, `fsck: ${fsck.stdout.toString('utf8')}${fsck.stderr}`);
  assert.is(fsck.stderr, '', 'fsck is quiet');
}

/**
 * Everything git says about the two copies agrees; with `warnings` false, what it prints on
 * stderr is left out (an untracked cache git kept and no longer trusts in a copied repository).
 */
function sameForGit(theirs: string, ours: string, warnings = true): void {
  readsCleanly(ours);
  for (const args of [
    ['ls-files', '-s', '-z'],
    ['ls-files', '--debug'],
    ['status', '--porcelain=v1', '-z', '--untracked-files=all'],
    ['diff', '--cached', '--no-color'],
    ['write-tree'],
  ]) {
    const say = (repo: string) =>
      warnings ? report(repo, ...args) : report(repo, ...args).split('\n--- stderr\n')[0];
    assert.is(say(ours), say(theirs), `git ${args.join(' ')}`);
  }
}

/**
 * Applies `updates` with git in one copy of `repo` and with updateIndexFile in the other, checks
 * git agrees on both, and returns the two index files (read before any other git command).
 * `exact`: the files must be equal byte for byte.
 */
async function compare(
  repo: string,
  updates: IndexEntryUpdate[],
  exact = true,
): Promise<{ theirs: ParsedIndex; ours: ParsedIndex; oursDir: string }> {
  const [theirs, ours] = twins(repo);
  gitUpdateIndex(theirs, updates);
  assert.ok(await updateIndexFile(indexOf(ours), updates), 'updated in-process');
  assert.not.ok(existsSync(`${indexOf(ours)}.lock`), 'no lock left');
  const a = readFileSync(indexOf(theirs));
  const b = readFileSync(indexOf(ours));
  if (exact) assert.ok(a.equals(b), 'byte for byte what git writes');
  const parsed = { theirs: parseIndex(a), ours: parseIndex(b), oursDir: ours };
  assert.equal(parsed.ours.names, parsed.theirs.names, 'same paths');
  assert.ok(
    parsed.ours.entries.every((e, i) => e.equals(parsed.theirs.entries[i]!)),
    'same entries, byte for byte',
  );
  assert.equal(
    parsed.ours.extensions.get('TREE'),
    parsed.theirs.extensions.get('TREE'),
    'same cache-tree',
  );
  sameForGit(theirs, ours, exact);
  return parsed;
}

/** A settled repository with nested folders and a valid cache-tree. */
function nestedRepo(): string {
  const repo = makeRepo({
    'README.md': '# demo\n',
    'src/a.ts': 'export const a = 1;\n',
    'src/deep/x/y/z.ts': 'export const z = 1;\n',
    'src/deep/x/w.ts': 'export const w = 1;\n',
    'src/other/o.ts': 'export const o = 1;\n',
    'lib/l.ts': 'export const l = 1;\n',
    'bin/run.sh': '#!/bin/sh\necho run\n',
  });
  settle(repo);
  git(repo, 'write-tree');
  return repo;
}

/** Asserts updateIndexFile leaves `repo`'s index to git: false, the file untouched, no lock. */
async function leftToGit(repo: string, updates: IndexEntryUpdate[]): Promise<void> {
  const before = readFileSync(indexOf(repo));
  const mtime = statSync(indexOf(repo)).mtimeMs;
  assert.is(await updateIndexFile(indexOf(repo), updates), false);
  assert.ok(readFileSync(indexOf(repo)).equals(before), 'index untouched');
  assert.is(statSync(indexOf(repo)).mtimeMs, mtime, 'not rewritten');
  assert.not.ok(existsSync(`${indexOf(repo)}.lock`), 'no lock left');
  // and git does the job
  gitUpdateIndex(repo, updates);
  readsCleanly(repo);
}

test('a changed file in a plain repository: byte for byte what git writes', async () => {
  const repo = makeRepo({ 'README.md': '# demo\n', 'a.txt': 'a\n' });
  settle(repo);
  await compare(repo, [{ path: 'a.txt', mode: '100644', oid: blob(repo, 'changed\n') }]);
});

test('a change deep in one subtree invalidates its ancestors only; sibling subtrees stay valid', async () => {
  const repo = nestedRepo();
  const before = cacheTree(parseIndex(readFileSync(indexOf(repo))).extensions.get('TREE')!);
  assert.ok(
    before.every(([, n]) => n >= 0),
    'the cache-tree starts valid',
  );
  const { ours, oursDir } = await compare(repo, [
    { path: 'src/deep/x/y/z.ts', mode: '100644', oid: blob(repo, 'changed\n') },
  ]);
  const after = new Map(cacheTree(ours.extensions.get('TREE')!));
  for (const p of ['', 'src', 'src/deep', 'src/deep/x', 'src/deep/x/y'])
    assert.is(after.get(p), -1, `${p || 'root'} invalidated`);
  for (const p of ['src/other', 'lib', 'bin']) assert.ok(after.get(p)! >= 0, `${p} still valid`);
  // git rebuilds exactly the tree it would have written without any cache
  const fresh = out(oursDir, 'write-tree').trim();
  assert.is(out(oursDir, 'ls-tree', '-r', fresh).includes('src/deep/x/y/z.ts'), true);
});

test('a new file in a new folder, a removal, and both in one call', async () => {
  const repo = nestedRepo();
  await compare(repo, [{ path: 'new/dir/file.txt', mode: '100644', oid: blob(repo, 'new\n') }]);
  await compare(repo, [{ path: 'src/other/o.ts', mode: '100644', oid: null }]);
  await compare(repo, [
    { path: 'src/deep/x/w.ts', mode: '100644', oid: null },
    { path: 'src/deep/x/v.ts', mode: '100644', oid: blob(repo, 'v\n') },
    { path: 'zzz.txt', mode: '100644', oid: blob(repo, 'last\n') },
    { path: '0first.txt', mode: '100644', oid: blob(repo, 'first\n') },
  ]);
});

test('removing a whole folder drops its subtree from the cache-tree as git does', async () => {
  const repo = nestedRepo();
  const { ours } = await compare(repo, [
    { path: 'src/deep/x/y/z.ts', mode: '100644', oid: null },
    { path: 'src/deep/x/w.ts', mode: '100644', oid: null },
  ]);
  assert.ok(!ours.names.some((n) => n.startsWith('src/deep/')));
});

test('mode 100755 and a symlink (120000)', async () => {
  const repo = nestedRepo();
  await compare(repo, [
    { path: 'src/a.ts', mode: '100755', oid: blob(repo, 'export const a = 1;\n') },
  ]);
  symlinkSync('a.ts', path.join(repo, 'src', 'link.ts'));
  await compare(repo, [{ path: 'src/link.ts', mode: '120000', oid: blob(repo, 'a.ts') }]);
});

test('paths sort by bytes: a-b, a.b, a/b, ab, a0, and a UTF-8 name', async () => {
  const repo = makeRepo({ 'm.txt': 'm\n' });
  settle(repo);
  const o = blob(repo, 'x\n');
  const names = ['ab', 'a/b', 'a.b', 'a-b', 'a0', 'a/b-c', 'é.txt', 'z/é', 'A'];
  const { ours } = await compare(
    repo,
    names.map((p) => ({ path: p, mode: '100644', oid: o })),
  );
  assert.equal(ours.names, [
    'A',
    'a-b',
    'a.b',
    'a/b',
    'a/b-c',
    'a0',
    'ab',
    'm.txt',
    'z/é',
    'é.txt',
  ]);
});

test('a name longer than 0xFFF bytes: length field saturated, name read to its NUL', async () => {
  const repo = makeRepo({ 'm.txt': 'm\n' });
  settle(repo);
  const long = Array.from({ length: 25 }, (_, i) => `${i}`.padStart(3, '0') + 'd'.repeat(197)).join(
    '/',
  );
  assert.ok(long.length > 0xfff);
  const { ours, oursDir } = await compare(repo, [
    { path: long, mode: '100644', oid: blob(repo, 'long\n') },
  ]);
  assert.ok(ours.names.includes(long));
  // and updated again, now that the index holds a saturated entry to copy
  const [theirs2, ours2] = twins(oursDir);
  const more = [{ path: 'n.txt', mode: '100644', oid: blob(oursDir, 'n\n') }];
  gitUpdateIndex(theirs2, more);
  assert.ok(await updateIndexFile(indexOf(ours2), more));
  assert.ok(readFileSync(indexOf(ours2)).equals(readFileSync(indexOf(theirs2))));
});

test('an intent-to-add entry (v3 extended flags): kept as is, and replaced (back to v2 as git does)', async () => {
  const repo = nestedRepo();
  writeFiles(repo, { 'ita.txt': 'ita\n' });
  git(repo, 'add', '-N', 'ita.txt');
  settle(repo);
  assert.is(parseIndex(readFileSync(indexOf(repo))).version, 3);
  const kept = await compare(repo, [{ path: 'lib/l.ts', mode: '100644', oid: blob(repo, 'l2\n') }]);
  assert.is(kept.ours.version, 3);
  const replaced = await compare(repo, [
    { path: 'ita.txt', mode: '100644', oid: blob(repo, 'ita\n') },
  ]);
  assert.is(replaced.ours.version, 2);
  assert.is(replaced.theirs.version, 2);
});

test('a skip-worktree entry (v3): kept as is, and replaced', async () => {
  const repo = nestedRepo();
  git(repo, 'update-index', '--skip-worktree', 'lib/l.ts');
  settle(repo);
  assert.is(parseIndex(readFileSync(indexOf(repo))).version, 3);
  assert.is(
    (await compare(repo, [{ path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a8\n') }])).ours
      .version,
    3,
  );
  assert.is(
    (await compare(repo, [{ path: 'lib/l.ts', mode: '100644', oid: blob(repo, 'l8\n') }])).ours
      .version,
    2,
  );
});

test('seeded random batches of adds, changes and removals: what git writes, every time', async () => {
  const files: Record<string, string> = {};
  const dirs = ['', 'a/', 'a/b/', 'a/b-c/', 'a.d/', 'ab/', 'z/y/x/'];
  for (let i = 0; i < 120; i++)
    files[`${dirs[i % dirs.length]}f${i % 17}-${i}.txt`] = `file ${i}\n`;
  const repo = makeRepo(files);
  settle(repo);
  git(repo, 'write-tree');
  const tracked = Object.keys(files);
  for (let seed = 1; seed <= 6; seed++) {
    const random = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const updates = new Map<string, IndexEntryUpdate>();
    for (let i = 0, n = 1 + Math.floor(random() * 25); i < n; i++) {
      const roll = random();
      const p = roll < 0.6 ? pick(tracked) : `${pick(dirs)}${pick(['n', 'a-', 'b.', 'new/'])}${i}`;
      const mode = pick(['100644', '100644', '100755', '120000']);
      updates.set(p, { path: p, mode, oid: roll < 0.3 ? null : blob(repo, `seed ${seed} ${i}\n`) });
    }
    await compare(repo, [...updates.values()]);
  }
});

/**
 * A repository whose index has 10,000 entries (~0.9 MB: the file is read in several buffers) and a
 * valid cache-tree, made with `update-index --index-info` (no files in the worktree).
 */
function largeRepo(): { repo: string; paths: string[] } {
  const repo = makeRepo({ 'README.md': '# large\n' });
  settle(repo);
  const o = blob(repo, 'same\n');
  const paths: string[] = [];
  for (let i = 0; i < 10000; i++)
    paths.push(`dir${String(i % 40).padStart(2, '0')}/sub${i % 7}/file-${i}.txt`);
  const r = run(
    repo,
    ['update-index', '--add', '-z', '--index-info'],
    paths.map((p) => `100644 ${o}\t${p}\0`).join(''),
  );
  assert.is(r.status, 0, r.stderr);
  git(repo, 'write-tree');
  assert.ok(readFileSync(indexOf(repo)).length > 3 * 256 * 1024);
  return { repo, paths };
}

test('a large index read in several buffers: changes, folder swaps and clashes across buffer ends', async () => {
  const { repo, paths } = largeRepo();
  const random = prng(7);
  const updates = new Map<string, IndexEntryUpdate>();
  for (let i = 0; i < 40; i++) {
    const p =
      random() < 0.7
        ? paths[Math.floor(random() * paths.length)]!
        : `dir${String(Math.floor(random() * 40)).padStart(2, '0')}/new-${i}.txt`;
    updates.set(p, {
      path: p,
      mode: '100644',
      oid: random() < 0.3 ? null : blob(repo, `large ${i}\n`),
    });
  }
  await compare(repo, [...updates.values()]);
  // a whole folder becomes a file: the folders whose entries lie across the first buffer ends
  // (updateIndexFile reads 256 KiB at a time)
  const bytes = readFileSync(indexOf(repo));
  const folders = new Set<string>();
  for (const at of [256 * 1024, 512 * 1024, 768 * 1024]) {
    const name = bytes.toString(
      'latin1',
      bytes.indexOf('dir', at - 200, 'latin1'),
      bytes.indexOf('dir', at - 200, 'latin1') + 5,
    );
    folders.add(name.slice(3));
  }
  assert.is(folders.size, 3);
  for (const k of folders) {
    const under = paths.filter((p) => p.startsWith(`dir${k}/`));
    const swap: IndexEntryUpdate[] = [
      ...under.map((p) => ({ path: p, mode: '100644', oid: null })),
      { path: `dir${k}`, mode: '100644', oid: blob(repo, `dir${k}\n`) },
    ];
    await compare(repo, swap);
    const before = readFileSync(indexOf(repo));
    for (const keep of [under[0]!, under[under.length - 1]!]) {
      assert.is(
        await updateIndexFile(
          indexOf(repo),
          swap.filter((u) => u.path !== keep),
        ),
        false,
        `${keep} is kept below the new file dir${k}`,
      );
      assert.ok(readFileSync(indexOf(repo)).equals(before));
    }
  }
});

test('untracked cache (UNTR) and fsmonitor (FSMN) are dropped; git agrees on everything else', async () => {
  const repo = nestedRepo();
  writeFiles(repo, {
    'untracked.txt': 'u\n',
    '.git/fsmonitor.sh': '#!/bin/sh\nprintf "token\\0/\\0"\n',
  });
  run(repo, ['update-index', '--untracked-cache']);
  git(repo, 'config', 'core.fsmonitor', '.git/fsmonitor.sh');
  git(repo, 'config', 'core.fsmonitorHookVersion', '2');
  spawnSync('chmod', ['+x', path.join(repo, '.git', 'fsmonitor.sh')]);
  git(repo, 'status', '--porcelain');
  const exts = [...parseIndex(readFileSync(indexOf(repo))).extensions.keys()];
  assert.ok(exts.includes('UNTR') && exts.includes('FSMN'), `extensions: ${exts.join(' ')}`);
  const { ours } = await compare(
    repo,
    [{ path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a2\n') }],
    false,
  );
  assert.equal([...ours.extensions.keys()], ['TREE']);
});

test('resolve-undo (REUC) is kept: byte for byte what git writes', async () => {
  const repo = conflictRepo();
  writeFiles(repo, { 'c.txt': 'resolved\n' });
  git(repo, 'add', 'c.txt');
  settle(repo);
  assert.ok(parseIndex(readFileSync(indexOf(repo))).extensions.has('REUC'));
  const { ours } = await compare(repo, [
    { path: 'other.txt', mode: '100644', oid: blob(repo, 'o\n') },
  ]);
  assert.ok(ours.extensions.has('REUC'));
});

test('racy entries are smudged: a same-size change in the same second is still seen', async () => {
  const repo = makeRepo({ 'README.md': '# demo\n' });
  const t = Math.floor(Date.now() / 1000) - 50; // a whole second, in the past
  writeFiles(repo, { 'racy.txt': 'aaaa\n' });
  utimesSync(path.join(repo, 'racy.txt'), t + 0.25, t + 0.25);
  git(repo, 'add', 'racy.txt');
  utimesSync(indexOf(repo), t + 0.75, t + 0.75); // the index written in the same second, later
  assert.ok(
    await updateIndexFile(indexOf(repo), [
      { path: 'other.txt', mode: '100644', oid: blob(repo, 'o\n') },
    ]),
  );
  assert.match(out(repo, 'ls-files', '--debug', 'racy.txt'), /size: 0\b/);
  writeFiles(repo, { 'racy.txt': 'bbbb\n' }); // same size
  utimesSync(path.join(repo, 'racy.txt'), t + 0.25, t + 0.25); // same mtime
  assert.match(out(repo, 'status', '--porcelain=v1'), /^AM racy\.txt$/m);
  readsCleanly(repo);
});

test('entries older than the index are not smudged', async () => {
  const repo = nestedRepo();
  const { ours } = await compare(repo, [
    { path: 'lib/l.ts', mode: '100644', oid: blob(repo, 'l2\n') },
  ]);
  const readme = ours.entries[ours.names.indexOf('README.md')]!;
  assert.is(readme.readUInt32BE(36), '# demo\n'.length);
});

test('an all-zero trailer (index.skipHash) is written as zeros', async () => {
  const repo = nestedRepo();
  const [theirs, ours] = twins(repo);
  for (const r of [theirs, ours]) {
    const bytes = readFileSync(indexOf(r));
    bytes.fill(0, bytes.length - 20);
    writeFileSync(indexOf(r), bytes);
  }
  const updates = [{ path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a3\n') }];
  gitUpdateIndex(theirs, updates);
  assert.ok(await updateIndexFile(indexOf(ours), updates));
  const a = readFileSync(indexOf(theirs));
  const b = readFileSync(indexOf(ours));
  assert.ok(
    b.subarray(b.length - 20).every((x) => x === 0),
    'zeros written',
  );
  assert.ok(
    a.subarray(0, a.length - 20).equals(b.subarray(0, b.length - 20)),
    'the rest as git writes it',
  );
  out(ours, 'ls-files', '-s');
});

test('removing a path that is not there, without a cache-tree: nothing to write, true', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const { entries, extensions } = parseIndex(readFileSync(indexOf(repo)));
  assert.equal([...extensions.keys()], ['TREE']);
  writeIndexFile(repo, 2, entries, []); // without it
  const before = readFileSync(indexOf(repo));
  assert.ok(
    await updateIndexFile(indexOf(repo), [{ path: 'missing.txt', mode: '100644', oid: null }]),
  );
  assert.ok(readFileSync(indexOf(repo)).equals(before));
  assert.not.ok(existsSync(`${indexOf(repo)}.lock`));
});

/** A repository in the middle of a merge with a conflict on c.txt. */
function conflictRepo(): string {
  const repo = makeRepo({ 'c.txt': 'base\n', 'other.txt': 'other\n' });
  git(repo, 'checkout', '-q', '-b', 'side');
  writeFiles(repo, { 'c.txt': 'side\n' });
  git(repo, 'commit', '-q', '-am', 'side');
  git(repo, 'checkout', '-q', 'main');
  writeFiles(repo, { 'c.txt': 'main\n' });
  git(repo, 'commit', '-q', '-am', 'main');
  run(repo, ['merge', '-q', 'side']);
  assert.match(out(repo, 'ls-files', '-u'), /c\.txt/);
  return repo;
}

test('left to git: conflict stages', async () => {
  const repo = conflictRepo();
  await leftToGit(repo, [{ path: 'other.txt', mode: '100644', oid: blob(repo, 'o\n') }]);
});

test('left to git: version 4', async () => {
  const v4 = nestedRepo();
  run(v4, ['update-index', '--index-version', '4']);
  assert.is(readFileSync(indexOf(v4)).readUInt32BE(4), 4);
  await leftToGit(v4, [{ path: 'src/a.ts', mode: '100644', oid: blob(v4, 'a4\n') }]);
});

test('a wrong old trailer checksum is not looked at, as git does not; an unknown required extension is left to git', async () => {
  const repo = nestedRepo();
  const bytes = readFileSync(indexOf(repo));
  bytes[bytes.length - 1]! ^= 1;
  writeFileSync(indexOf(repo), bytes);
  out(repo, 'ls-files'); // git reads it without a word
  assert.is(
    await updateIndexFile(indexOf(repo), [
      { path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a5\n') },
    ]),
    true,
  );
  assert.is(out(repo, 'ls-files', '-s', 'src/a.ts').split(' ')[1], blob(repo, 'a5\n'));
  out(repo, 'fsck', '--no-dangling'); // the new index carries a right checksum

  const other = nestedRepo();
  const { version, entries, extensions } = parseIndex(readFileSync(indexOf(other)));
  const tree = extensions.get('TREE')!;
  const treeExt = Buffer.concat([Buffer.from('TREE', 'latin1'), Buffer.alloc(4), tree]);
  treeExt.writeUInt32BE(tree.length, 4);
  writeIndexFile(other, version, entries, [treeExt, Buffer.from('abcd\0\0\0\x01\x07', 'latin1')]);
  const before = readFileSync(indexOf(other));
  assert.is(
    await updateIndexFile(indexOf(other), [
      { path: 'src/a.ts', mode: '100644', oid: blob(other, 'a6\n') },
    ]),
    false,
  );
  assert.ok(readFileSync(indexOf(other)).equals(before));
});

test('left to git: index.lock held (and kept as it is), a symlinked index, no index at all', async () => {
  const repo = nestedRepo();
  writeFileSync(`${indexOf(repo)}.lock`, 'someone else\n');
  const before = readFileSync(indexOf(repo));
  assert.is(
    await updateIndexFile(indexOf(repo), [
      { path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a7\n') },
    ]),
    false,
  );
  assert.is(readFileSync(`${indexOf(repo)}.lock`, 'utf8'), 'someone else\n');
  assert.ok(readFileSync(indexOf(repo)).equals(before));

  const linked = nestedRepo();
  const elsewhere = path.join(tempDir(), 'index');
  cpSync(indexOf(linked), elsewhere);
  rmSync(indexOf(linked));
  symlinkSync(elsewhere, indexOf(linked));
  assert.is(
    await updateIndexFile(indexOf(linked), [
      { path: 'src/a.ts', mode: '100644', oid: blob(linked, 'a9\n') },
    ]),
    false,
    'a symbolic link: git locks its target',
  );

  const bare = tempDir();
  assert.is(
    await updateIndexFile(path.join(bare, 'index'), [
      { path: 'a', mode: '100644', oid: 'a'.repeat(40) },
    ]),
    false,
  );
  assert.not.ok(existsSync(path.join(bare, 'index.lock')));
});

test('left to git: a path both a file and a leading folder, duplicate paths, odd paths and modes', async () => {
  const file = (repo: string, p: string) => ({ path: p, mode: '100644', oid: blob(repo, 'x\n') });
  let repo = nestedRepo();
  await leftToGit(repo, [file(repo, 'README.md/inner.txt')]); // a file becomes a folder
  repo = nestedRepo();
  await leftToGit(repo, [file(repo, 'lib')]); // a folder becomes a file
  repo = nestedRepo();
  await leftToGit(repo, [file(repo, 'n'), file(repo, 'n/m')]);
  // no clash when the other side goes in the same call
  repo = nestedRepo();
  await compare(repo, [{ path: 'lib/l.ts', mode: '100644', oid: null }, file(repo, 'lib')]);
  repo = nestedRepo();
  await compare(repo, [
    { path: 'README.md', mode: '100644', oid: null },
    file(repo, 'README.md/inner.txt'),
  ]);
  const plain = nestedRepo();
  const o = blob(plain, 'x\n');
  for (const updates of [
    [
      { path: 'a.txt', mode: '100644', oid: o },
      { path: 'a.txt', mode: '100644', oid: null },
    ],
    [{ path: '.git/config', mode: '100644', oid: o }],
    [{ path: 'x/.GIT/y', mode: '100644', oid: o }],
    [{ path: 'x/../y', mode: '100644', oid: o }],
    [{ path: 'x//y', mode: '100644', oid: o }],
    [{ path: 'git~1/y', mode: '100644', oid: o }],
    [{ path: 'sub', mode: '160000', oid: o }],
    [{ path: 'z', mode: '100644', oid: '0'.repeat(40) }],
  ]) {
    const before = readFileSync(indexOf(plain));
    assert.is(await updateIndexFile(indexOf(plain), updates), false, JSON.stringify(updates));
    assert.ok(readFileSync(indexOf(plain)).equals(before));
  }
});

/** The sharedindex.* files of a repository's git dir, with their bytes. */
function sharedFiles(repo: string): Map<string, Buffer> {
  const dir = path.join(repo, '.git');
  return new Map(
    readdirSync(dir)
      .filter((f) => f.startsWith('sharedindex.'))
      .map((f) => [f, readFileSync(path.join(dir, f))]),
  );
}

/**
 * compare() on a split index: also no new shared index on either side (git would write one past
 * splitIndex.maxPercentChange), the shared index untouched, and the result still split.
 */
async function compareSplit(repo: string, updates: IndexEntryUpdate[]): Promise<ParsedIndex> {
  const before = sharedFiles(repo);
  const { ours, oursDir } = await compare(repo, updates);
  assert.ok(ours.extensions.has('link'), 'still a split index');
  const after = sharedFiles(oursDir);
  assert.equal([...after.keys()], [...before.keys()], 'the same shared index');
  for (const [f, bytes] of after) assert.ok(bytes.equals(before.get(f)!), `${f} untouched`);
  gitUpdateIndex(repo, updates); // the next round starts from this state
  return ours;
}

/** A settled repository of `n` files in a few folders, its index split (an empty split file). */
function splitRepo(n: number): { repo: string; paths: string[] } {
  const files: Record<string, string> = {};
  const dirs = ['', 'a/', 'a/b/', 'a/b-c/', 'a.d/', 'ab/', 'z/y/x/'];
  for (let i = 0; i < n; i++) files[`${dirs[i % dirs.length]}f${i % 17}-${i}.txt`] = `file ${i}\n`;
  const repo = makeRepo(files);
  settle(repo);
  git(repo, 'write-tree');
  const r = run(repo, ['update-index', '--split-index']);
  assert.is(r.status, 0, r.stderr);
  assert.ok(parseIndex(readFileSync(indexOf(repo))).extensions.has('link'));
  return { repo, paths: Object.keys(files) };
}

test('split index: a change, an addition and a removal, then changes of those again: byte for byte what git writes', async () => {
  const repo = nestedRepo();
  // enough entries that two added ones stay below git's 20 % (past it git writes a new shared index)
  const filler = blob(repo, 'filler\n');
  gitUpdateIndex(
    repo,
    Array.from({ length: 30 }, (_, i) => ({ path: `fill/f${i}`, mode: '100644', oid: filler })),
  );
  run(repo, ['update-index', '--split-index']);
  await compareSplit(repo, [
    { path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a2\n') },
    { path: 'src/new/n.ts', mode: '100755', oid: blob(repo, 'n\n') },
    { path: 'lib/l.ts', mode: '0', oid: null },
  ]);
  // the replacement replaced again, the added entry changed, a deleted path added back, another removal
  await compareSplit(repo, [
    { path: 'src/a.ts', mode: '100644', oid: blob(repo, 'a3\n') },
    { path: 'src/new/n.ts', mode: '100644', oid: blob(repo, 'n2\n') },
    { path: 'lib/l.ts', mode: '100644', oid: blob(repo, 'l2\n') },
    { path: 'bin/run.sh', mode: '0', oid: null },
  ]);
  // git's own refresh writes the split file too (stat data of the touched files): read and kept
  writeFileSync(path.join(repo, 'src/other/o.ts'), 'export const o = 2;\n');
  run(repo, ['status', '--porcelain']);
  run(repo, ['add', 'src/other/o.ts']);
  settle(repo); // no racy entry left: git smudges only the racy ones whose file changed, hagent all
  assert.ok(parseIndex(readFileSync(indexOf(repo))).extensions.has('link'), 'git kept it split');
  // the replacement, the added entry and the re-added path removed; a path that is not there
  await compareSplit(repo, [
    { path: 'src/a.ts', mode: '0', oid: null },
    { path: 'src/new/n.ts', mode: '0', oid: null },
    { path: 'lib/l.ts', mode: '0', oid: null },
    { path: 'nope', mode: '0', oid: null },
  ]);
});

test('split index: seeded random rounds of adds, changes and removals on one index, every round what git writes', async () => {
  const { repo, paths } = splitRepo(400);
  const dirs = ['', 'a/', 'a/b/', 'a.d/', 'z/y/x/', 'new/'];
  for (let seed = 1; seed <= 8; seed++) {
    const random = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const updates = new Map<string, IndexEntryUpdate>();
    for (let i = 0, n = 1 + Math.floor(random() * 12); i < n; i++) {
      const roll = random();
      const p = roll < 0.7 ? pick(paths) : `${pick(dirs)}n${seed}-${i}`;
      updates.set(p, {
        path: p,
        mode: pick(['100644', '100644', '100755']),
        oid: roll < 0.25 ? null : blob(repo, `seed ${seed} ${i}\n`),
      });
    }
    await compareSplit(repo, [...updates.values()]);
  }
});

test('split index: a folder of 200 entries removed (runs of ones in the delete bitmap), then one entry back', async () => {
  const files: Record<string, string> = { 'keep.txt': 'k\n' };
  for (let i = 0; i < 200; i++) files[`d/f${String(i).padStart(3, '0')}`] = `${i}\n`;
  for (let i = 0; i < 800; i++) files[`e/f${i}`] = 'e\n';
  const repo = makeRepo(files);
  settle(repo);
  git(repo, 'write-tree');
  run(repo, ['update-index', '--split-index']);
  // deletions never count toward git's 20 % of added entries; the one re-added entry stays below it
  await compareSplit(
    repo,
    Object.keys(files)
      .filter((p) => p.startsWith('d/'))
      .map((p) => ({ path: p, mode: '0', oid: null })),
  );
  await compareSplit(repo, [{ path: 'd/f100', mode: '100644', oid: blob(repo, 'back\n') }]);
});

test('split index: racy entries of the shared index join the split file smudged; git still sees a same-size change', async () => {
  const repo = nestedRepo();
  run(repo, ['update-index', '--split-index']);
  // make src/a.ts racy: its mtime the split index file's second
  const now = statSync(indexOf(repo)).mtime;
  writeFileSync(path.join(repo, 'src/a.ts'), 'export const a = 2;\n'); // same size, other bytes
  utimesSync(path.join(repo, 'src/a.ts'), now, now);
  assert.ok(
    await updateIndexFile(indexOf(repo), [
      { path: 'lib/l.ts', mode: '100644', oid: blob(repo, 'l9\n') },
    ]),
  );
  readsCleanly(repo);
  assert.match(out(repo, 'status', '--porcelain'), / M src\/a\.ts/);
});

test('split index: left to git past 20 % added entries, and with a missing shared index', async () => {
  const { repo } = splitRepo(20);
  const many = Array.from({ length: 6 }, (_, i) => ({
    path: `more/m${i}`,
    mode: '100644',
    oid: blob(repo, `${i}\n`),
  }));
  await leftToGit(repo, many);
  const { repo: lost } = splitRepo(20);
  for (const f of sharedFiles(lost).keys()) rmSync(path.join(lost, '.git', f));
  const before = readFileSync(indexOf(lost));
  assert.is(
    await updateIndexFile(indexOf(lost), [{ path: 'x', mode: '100644', oid: blob(lost, 'x\n') }]),
    false,
  );
  assert.ok(readFileSync(indexOf(lost)).equals(before), 'index untouched');
});

test('splitLargeIndex: a large index is split once (git reads the same entries), a small one and core.splitIndex=false are left alone', async () => {
  const repo = makeRepo({ 'README.md': '# large\n' });
  const o = blob(repo, 'same\n');
  gitUpdateIndex(
    repo,
    Array.from({ length: 30000 }, (_, i) => ({
      path: `d${i % 50}/f-${i}.txt`,
      mode: '100644',
      oid: o,
    })),
  );
  assert.ok(statSync(indexOf(repo)).size >= SPLIT_INDEX_MIN_BYTES);
  const entries = out(repo, 'ls-files', '-s');
  const small = makeRepo({ 'a.txt': 'a\n' });
  assert.not.ok(await splitLargeIndex(small), 'a small index stays as it is');
  const refused = makeRepo({ 'a.txt': 'a\n' });
  git(refused, 'config', 'core.splitIndex', 'false');
  gitUpdateIndex(
    refused,
    Array.from({ length: 30000 }, (_, i) => ({ path: `d/f-${i}`, mode: '100644', oid: o })),
  );
  assert.not.ok(await splitLargeIndex(refused), 'core.splitIndex=false is kept');
  assert.ok(await splitLargeIndex(repo));
  assert.ok(parseIndex(readFileSync(indexOf(repo))).extensions.has('link'), 'split');
  assert.is(out(repo, 'ls-files', '-s'), entries, 'the same entries');
  assert.not.ok(await splitLargeIndex(repo), 'once');
  readsCleanly(repo);
});

test.run();
