/**
 * The shell guard's cost: guardCommand over the whole corpus (dangerous and everyday commands),
 * median and p95 per command in µs after a warm-up, and the cold cost of the first call (the
 * parser's load and first parse). Target: well under a millisecond per command (a hook or an
 * exec spends a hundred times that starting Node).
 *
 *   node --import tsx bench/guard.ts [rounds]
 */
import { guardCommand } from '../src/guard/index.js';
import { CORPUS_CTX, readCorpus } from '../test/unit/guard/corpus.js';

const rounds = Number(process.argv[2] ?? 20);
const all = [...readCorpus('dangerous.txt'), ...readCorpus('everyday.txt')];
const t0 = performance.now();
guardCommand('git status', CORPUS_CTX);
const first = performance.now() - t0;
for (const c of all) guardCommand(c, CORPUS_CTX);
const times: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const c of all) {
    const s = performance.now();
    guardCommand(c, CORPUS_CTX);
    times.push((performance.now() - s) * 1000);
  }
}
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
console.log(
  `guardCommand: median ${at(0.5).toFixed(0)} µs, p95 ${at(0.95).toFixed(0)} µs, max ${times.at(-1)!.toFixed(0)} µs per command over ${all.length} commands × ${rounds}; first call ${first.toFixed(1)} ms`,
);
