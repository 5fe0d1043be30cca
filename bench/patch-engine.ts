/**
 * Figures of the pure patch engine: printed, never asserted as timed tests.
 *
 *   node --import tsx bench/patch-engine.ts
 *
 * Each line reads `name: value (target) PASS|MISS`. Inputs are synthetic but shaped like code
 * (indented lines, repeated braces and blank lines) so the matcher meets real duplicate lines.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parsePatch, pathsToRead, planPatch, type FileState } from '../src/patch/index.js';

const enc = new TextEncoder();

/** A code-like file of `n` lines: every line unique except braces and blank lines. */
function codeFile(n: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 10;
    if (k === 0) lines.push(`function f${i}(a, b) {`);
    else if (k === 8) lines.push('}');
    else if (k === 9) lines.push('');
    else lines.push(`  const v${i} = a * ${i} + b; // step ${k}`);
  }
  return lines;
}

/** A Codex update of `path` with `chunks` evenly spread replacements (3 lines of context each side). */
function updatePatch(path: string, lines: readonly string[], chunks: number): string {
  const out = [`*** Update File: ${path}`];
  const step = Math.floor(lines.length / chunks);
  for (let c = 0; c < chunks; c++) {
    const at = c * step + Math.floor(step / 2);
    out.push('@@');
    for (let k = at - 3; k < at; k++) out.push(` ${lines[k]}`);
    out.push(`-${lines[at]}`, `+${lines[at]} // changed`);
    for (let k = at + 1; k <= at + 3; k++) out.push(` ${lines[k]}`);
  }
  return out.join('\n');
}

function wrap(body: string): string {
  return `*** Begin Patch\n${body}\n*** End Patch\n`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

// A collection before each timed run, so no run pays for the garbage of the one before it.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function time(fn: () => void, runs: number, warmup = 2): number {
  for (let i = 0; i < warmup; i++) fn();
  const ts: number[] = [];
  for (let i = 0; i < runs; i++) {
    collect();
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

/** Times two workloads alternately (a, b, a, b, …), so both see the same machine load; medians. */
function timePair(a: () => void, b: () => void, runs: number, warmup = 1): [number, number] {
  for (let i = 0; i < warmup; i++) {
    a();
    b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [fn, out] of (i % 2 === 0
      ? [
          [a, ta],
          [b, tb],
        ]
      : [
          [b, tb],
          [a, ta],
        ]) as [() => void, number[]][]) {
      collect();
      const t0 = performance.now();
      fn();
      out.push(performance.now() - t0);
    }
  }
  return [median(ta), median(tb)];
}

function planText(patch: string, files: Map<string, Uint8Array>): void {
  const parsed = parsePatch(patch);
  const snapshot = new Map<string, FileState>();
  for (const p of pathsToRead(parsed)) {
    const bytes = files.get(p);
    snapshot.set(p, bytes ? { kind: 'file', bytes, mode: '100644' } : { kind: 'missing' });
  }
  planPatch(parsed, snapshot);
}

function report(name: string, value: string, target: string, pass: boolean): void {
  process.stdout.write(`${name}: ${value} (${target}) ${pass ? 'PASS' : 'MISS'}\n`);
}

// 1. 200 chunks against a 10,000-line file: parse + plan, median of 20 runs.
{
  const lines = codeFile(10_000);
  const files = new Map([['big.js', enc.encode(`${lines.join('\n')}\n`)]]);
  const patch = wrap(updatePatch('big.js', lines, 200));
  const parsed = parsePatch(patch);
  const snapshot = new Map<string, FileState>([
    ['big.js', { kind: 'file', bytes: files.get('big.js') as Uint8Array, mode: '100644' }],
  ]);
  const planOnly = time(() => planPatch(parsed, snapshot), 20);
  const both = time(() => planText(patch, files), 20);
  report(
    'plan 200 chunks / 10,000-line file (median of 20, parse + plan)',
    `${both.toFixed(1)} ms`,
    'target <= 50 ms',
    both <= 50,
  );
  report(
    'plan 200 chunks / 10,000-line file (median of 20, plan only)',
    `${planOnly.toFixed(1)} ms`,
    'target <= 50 ms',
    planOnly <= 50,
  );
}

// 2. Parse time grows linearly: a 10 MB patch vs a 5 MB one.
{
  const make = (bytes: number): string => {
    const parts: string[] = [];
    let size = 0;
    for (let f = 0; size < bytes; f++) {
      const lines = codeFile(400).map((l) => l.replace(/v(\d+)/, `v$1_${f}`));
      const body =
        f % 3 === 0
          ? `*** Add File: add/${f}.js\n${lines.map((l) => `+${l}`).join('\n')}`
          : updatePatch(`src/${f}.js`, lines, 20);
      parts.push(body);
      size += body.length + 1;
    }
    return wrap(parts.join('\n'));
  };
  const five = make(5 * 1024 * 1024);
  const ten = make(10 * 1024 * 1024);
  const [t5, t10] = timePair(
    () => parsePatch(five),
    () => parsePatch(ten),
    9,
  );
  const ratio = t10 / t5;
  report(
    'parse 10 MB / 5 MB patch (median of 9, interleaved)',
    `${ratio.toFixed(2)}x (${t10.toFixed(0)} ms / ${t5.toFixed(0)} ms)`,
    'target <= 2.2x',
    ratio <= 2.2,
  );
}

// 3. Matching costs O(file lines): 50 chunks on 200,000 lines vs on 20,000 lines.
{
  const workload = (n: number): (() => void) => {
    const lines = codeFile(n);
    const files = new Map([['f.js', enc.encode(`${lines.join('\n')}\n`)]]);
    const patch = wrap(updatePatch('f.js', lines, 50));
    return () => planText(patch, files);
  };
  const [small, large] = timePair(workload(20_000), workload(200_000), 9, 2);
  const ratio = large / small;
  report(
    '50 chunks: 200,000-line / 20,000-line file (median of 9, interleaved)',
    `${ratio.toFixed(2)}x (${large.toFixed(1)} ms / ${small.toFixed(1)} ms)`,
    'target <= 10x',
    ratio <= 10,
  );
}
