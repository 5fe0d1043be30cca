/**
 * Lock acquire + release time: `withSessionLock` around an empty function, uncontended, on a
 * fresh temp common dir. Prints the median and p95 in ms over N runs (default 2000) after a warm-up.
 * Target: median ≤ 2 ms.
 *
 *   node --import tsx bench/lock.ts [runs]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withSessionLock } from '../src/lock/index.js';

const runs = Number(process.argv[2] ?? 2000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'hagent-bench-lock-'));
try {
  const noop = async () => undefined;
  for (let i = 0; i < 200; i++) await withSessionLock(dir, 'bench', { command: 'bench' }, {}, noop);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await withSessionLock(dir, 'bench', { command: 'bench' }, {}, noop);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  const median = at(0.5);
  console.log(
    `lock acquire+release: median ${median.toFixed(3)} ms, p95 ${at(0.95).toFixed(3)} ms over ${runs} runs (target ≤ 2 ms): ${median <= 2 ? 'ok' : 'OVER'}`,
  );
  process.exitCode = median <= 2 ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
