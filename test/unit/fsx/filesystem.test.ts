/**
 * fsx's FileSystem scope (src/fsx/filesystem.ts): a file system given to withFileSystem serves
 * every fsx call inside that one operation and nothing outside it, even with operations running
 * side by side; writes loop over short writes and stop on a write that makes no progress.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  currentFileSystem,
  nodeFileSystem,
  withFileSystem,
  writeJsonFile,
  type FileSystem,
} from '../../../src/fsx/index.js';
import { writeAllSync } from '../../../src/fsx/filesystem.js';
import { FaultyFileSystem } from '../../helpers/faultfs.js';
import { tempDir } from '../../helpers/index.js';

const t = suite('fsx FileSystem scope');

t('the scope serves only the operation it wraps, also beside a concurrent one', async () => {
  const dir = tempDir();
  const full = new FaultyFileSystem([{ op: /^writeSync$/, errno: 'ENOSPC' }]);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const seen: FileSystem[] = [];
  const [faulty, healthy] = await Promise.allSettled([
    withFileSystem(full, async () => {
      await sleep(1);
      seen.push(currentFileSystem()); // 0: inside, before the other runs
      await sleep(6);
      seen.push(currentFileSystem()); // 2: inside, after it ran
      await writeJsonFile(path.join(dir, 'a.json'), { a: 1 });
    }),
    (async () => {
      await sleep(3);
      seen.push(currentFileSystem()); // 1: outside, while the scope is open
      await writeJsonFile(path.join(dir, 'b.json'), { b: 2 });
    })(),
  ]);
  assert.ok(seen[0] === full && seen[1] === nodeFileSystem && seen[2] === full, 'by identity');
  assert.is(faulty.status, 'rejected');
  assert.is((faulty as PromiseRejectedResult).reason.code, 'ENOSPC');
  assert.is(healthy.status, 'fulfilled');
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'b.json'), 'utf8')), { b: 2 });
  assert.ok(
    full.calls.every((c) => !c.path.endsWith('b.json')),
    'b.json never went through it',
  );
  assert.is(currentFileSystem(), nodeFileSystem, 'nothing is left set after the scope');
});

t('a JSON record is written whole through one-byte writes', async () => {
  const dir = tempDir();
  const fs = new FaultyFileSystem([], { shortWrites: 1 });
  await withFileSystem(fs, () => writeJsonFile(path.join(dir, 'r.json'), { key: 'value' }));
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')), { key: 'value' });
  assert.is(fs.calls.filter((c) => c.op === 'writeSync').length, '{\n  "key": "value"\n}\n'.length);
});

t('a write that makes no progress is an EIO, not an endless loop', () => {
  const stuck = { writeSync: () => 0 } as unknown as FileSystem;
  assert.throws(
    () => writeAllSync(stuck, 3, Buffer.from('x'), '/r.json'),
    (e: NodeJS.ErrnoException) => e.code === 'EIO' && e.path === '/r.json',
  );
});

t.run();
