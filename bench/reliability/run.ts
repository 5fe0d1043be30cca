/**
 * Reliability figures ("proven under faults"), long runs through the real CLI:
 *
 *   node --import tsx bench/reliability/run.ts [--quick] [--only R1,R2,R3,R4,R5,IO] [--seed N]
 *
 * R1 kill -9 (200 applies), R2 concurrent writers (8 × 50), R3 outside writer (100 applies),
 * R4 hostile patches (10,000), R5 hostile paths (≥ 40), I/O faults (disk full on a tmpfs; the
 * file-system faults hagent's own writes meet are injected by test/reliability/fs-*.test.ts).
 * One file per figure beside this one (r1-kill.ts … r5-paths.ts, io-diskfull.ts).
 * `--quick` divides the counts by 10. Each figure is one line;
 * failures follow it, indented. The last line is `N passed, N failed` (one per figure); exit 1
 * when any failed. Needs the built CLI (`node scripts/build.mjs`). Nothing is written inside
 * this repository.
 */
import type { Figure } from './common.js';
import { runDiskFull } from './io-diskfull.js';
import { runR1 } from './r1-kill.js';
import { runR2 } from './r2-concurrency.js';
import { runR3 } from './r3-outside.js';
import { runR4 } from './r4-fuzz.js';
import { runR5 } from './r5-paths.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyArg = argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set((argv[onlyArg + 1] ?? '').split(',')) : null;
const seedArg = argv.indexOf('--seed');
const seed = seedArg >= 0 ? Number(argv[seedArg + 1]) : Date.now() % 100000;
const scale = (n: number) => (quick ? Math.max(1, Math.round(n / 10)) : n);

const figures: [string, () => Promise<Figure>][] = [
  ['R1', () => runR1({ applies: scale(200), seed, fsckEvery: 20 })],
  ['R2', () => runR2({ processes: 8, patchesEach: scale(50), seed })],
  ['R3', () => runR3({ applies: scale(100), seed })],
  ['R4', () => runR4({ patches: scale(10_000), seed, cliEvery: 100, parallel: 4 })],
  ['R5', () => runR5({ moveAndDeleteAll: !quick })],
  ['IO', () => runDiskFull({ steps: quick ? 8 : 26, stepBytes: quick ? 24_576 : 8192 })],
];

console.log(`hagent reliability (seed ${seed}${quick ? ', --quick' : ''})`);
let passed = 0;
let failed = 0;
for (const [id, run] of figures) {
  if (only && !only.has(id)) continue;
  const t0 = Date.now();
  let f: Figure;
  try {
    f = await run();
  } catch (e) {
    f = {
      id,
      line: `${id}: crashed`,
      counts: {},
      failures: [e instanceof Error ? (e.stack ?? e.message) : String(e)],
      notes: [],
    };
  }
  console.log(`${f.line}  [${((Date.now() - t0) / 1000).toFixed(0)} s]`);
  if (f.skipped) console.log(`SKIPPED: ${id} — ${f.skipped}`);
  for (const n of f.notes) console.log(`  note: ${n}`);
  for (const x of f.failures.slice(0, 20))
    console.log(`  FAIL: ${x.split('\n').join('\n        ')}`);
  if (f.failures.length > 20) console.log(`  … and ${f.failures.length - 20} more failures`);
  if (f.failures.length) failed++;
  else passed++;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
