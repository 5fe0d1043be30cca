/**
 * The cost of fsx's staged write (stage the temp files, publish them) on its own, for a patch of
 * 3 new files in folders 3 deep, then the same files changed: the median of 200 rounds each.
 * Writes go through folders opened by descriptor (fsx/anchor.ts); this is what that costs.
 * Run: node --import tsx bench/staged-write.ts
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { publishStaged, stageWrites, type TargetWrite } from '../src/fsx/index.js';

const ROUNDS = 200;
const root = mkdtempSync(path.join(os.tmpdir(), 'hagent-bench-stage-'));
const rels = ['a/b/c/one.ts', 'a/b/d/two.ts', 'a/e/f/three.ts'];
for (const r of rels) mkdirSync(path.join(root, path.dirname(r)), { recursive: true });

async function once(writes: TargetWrite[], txid: string): Promise<number> {
  const t0 = performance.now();
  const { staged, createdDirs } = await stageWrites(root, writes, txid, undefined, {
    fsync: false,
  });
  await publishStaged(root, staged, createdDirs, txid, { fsyncFolders: false });
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times: number[] = [];
let prev: Uint8Array | null = null;
for (let i = 0; i < ROUNDS; i++) {
  const bytes = Buffer.from(`export const v = ${i};\n`);
  const writes = rels.map((rel) => ({
    rel,
    bytes,
    mode: 0o644,
    expected: prev,
    expectedMode: 0o644,
  }));
  times.push(await once(writes, `b${i}`));
  prev = bytes;
}
console.log(
  `staged write of 3 files (no fsync), median of ${ROUNDS}: ${median(times).toFixed(3)} ms`,
);
rmSync(root, { recursive: true, force: true });
