/**
 * Figures of the overlap radar (src/radar/), not a test: N open sessions (default 20) of 3 changed
 * files each on a generated repository (default 20,000 files), neighbouring sessions sharing a
 * file (half of them on the same lines), then:
 *   - `hagent session list --json` (the radar of every session: overlaps, target overlaps and the
 *     land prediction), cold (the radar and summary caches removed before each round) and warm (cached);
 *     target ≤ 300 ms warm;
 *   - the hot-path check an edit goes through (`checkOverlap`, in-process as the MCP server and
 *     the hook server run it), warm and with one other session's head moved;
 *   - `hagent apply` of a one-line patch with `"overlap": "off"` and `"warn"`, side by side.
 * Each figure is the median of `--rounds` rounds (default 7, at least 5), interleaved.
 * With `--base-bin DIST/hagent.cjs` (a build of another commit, e.g. the one before the radar),
 * `session list --json` of that build is timed too, interleaved, on the same sessions.
 *   npm run build && node --import tsx bench/radar.ts [--files 20000 --sessions 20 --rounds 7 --keep]
 * (`--keep` leaves the sessions in the cached repository, for a look at them afterwards.)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_ENV, ensureRepo, filePaths, git, resetRepo } from './gen-repo.js';
import { openRepo, listSessions } from '../src/session/index.js';
import { checkOverlap } from '../src/radar/index.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = path.join(ROOT, 'dist', 'hagent.cjs');
const argOf = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const files = Number(argOf('files', '20000'));
const sessions = Number(argOf('sessions', '20'));
const rounds = Math.max(5, Number(argOf('rounds', '7')));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const baseBin = argOf('base-bin', '');

function hagent(
  cwd: string,
  args: string[],
  input = '',
  bin = BIN,
): { out: string; wallMs: number } {
  const started = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    env: BENCH_ENV,
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const wallMs = performance.now() - started;
  if (r.status !== 0) throw new Error(`hagent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return { out: r.stdout, wallMs };
}

/**
 * A unified diff replacing line `n` (1-based) of each file with itself plus `suffix`, with up to
 * three lines of context each side: a generated file repeats lines, and the diff's line numbers
 * settle which copy is meant.
 */
function lineDiff(dir: string, edits: readonly { file: string; n: number }[], suffix: string) {
  return edits
    .map(({ file, n }) => {
      const lines = git(['show', `main:${file}`], dir).split('\n');
      const from = Math.max(1, n - 3);
      const to = Math.min(lines.length - 1, n + 3);
      const body: string[] = [];
      for (let i = from; i <= to; i++)
        if (i === n) body.push(`-${lines[i - 1]}`, `+${lines[i - 1]}${suffix}`);
        else body.push(` ${lines[i - 1]}`);
      const count = to - from + 1;
      return `--- a/${file}\n+++ b/${file}\n@@ -${from},${count} +${from},${count} @@\n${body.join('\n')}\n`;
    })
    .join('');
}

const repo = await ensureRepo(files, (s) => console.log(s));
resetRepo(repo);
const all = filePaths(files);
const pick = (i: number) => all[(i * 997) % all.length]!;

console.log(`radar bench: ${sessions} sessions × 3 files on ${files} files, ${rounds} rounds`);
const setupStarted = performance.now();
const worktrees: string[] = [];
for (let i = 0; i < sessions; i++) {
  const s = JSON.parse(hagent(repo.dir, ['session', 'start', '--name', `r${i}`, '--json']).out) as {
    worktree: string;
  };
  worktrees.push(s.worktree);
  // Own files 2i and 2i+1, and a file shared with a neighbour: sessions 4k and 4k+1 change
  // other lines of it, 4k+2 and 4k+3 the same line.
  const shared = pick(1000 + Math.floor(i / 2));
  const own = [pick(2 * i), pick(2 * i + 1)];
  const patch = lineDiff(
    repo.dir,
    [...own, shared].map((file, k) => ({ file, n: k === 2 && i % 4 === 1 ? 4 : 2 })),
    ` (r${i})`,
  );
  hagent(s.worktree, ['apply', '-'], patch);
}
console.log(`  setup ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);

const caches = ['radar-cache.json', 'summary-cache.json'].map((f) =>
  path.join(repo.dir, '.git', 'hagent', f),
);
const ctx = await openRepo(worktrees[1]!);
const list = await listSessions(ctx.commonDir);
const me = list.find((s) => s.id === 'r1')!;
const mover = worktrees[3]!;
const sharedFile = pick(1000); // r0 and r1 changed it
const before = git(['show', `main:${sharedFile}`], repo.dir);
const edit = {
  path: sharedFile,
  before,
  after: before.replace(/\n([^\n]*)\n/, '\n$1 (edit)\n'),
};
const config = path.join(repo.dir, '.hagent', 'config.json');
const setMode = (mode: string) => {
  mkdirSync(path.dirname(config), { recursive: true });
  writeFileSync(config, JSON.stringify({ overlap: mode }));
};

const cold: number[] = [];
const warm: number[] = [];
const checkWarm: number[] = [];
const checkMoved: number[] = [];
const applyOff: number[] = [];
const applyWarn: number[] = [];
const baseList: number[] = [];
const floor: number[] = [];
let summary = '';
for (let r = 0; r < rounds; r++) {
  for (const c of caches) rmSync(c, { force: true });
  cold.push(hagent(repo.dir, ['session', 'list', '--json']).wallMs);
  const w = hagent(repo.dir, ['session', 'list', '--json']);
  warm.push(w.wallMs);
  floor.push(hagent(repo.dir, ['--version']).wallMs);
  if (baseBin) baseList.push(hagent(repo.dir, ['session', 'list', '--json'], '', baseBin).wallMs);
  if (r === 0) {
    const s = JSON.parse(w.out).sessions as {
      overlaps: { linesOverlap: boolean }[];
      prediction: { outcome: string } | null;
    }[];
    const overlaps = s.flatMap((x) => x.overlaps);
    summary = `${overlaps.length} overlaps (${overlaps.filter((o) => o.linesOverlap).length} on lines), predictions: ${s.filter((x) => x.prediction?.outcome === 'clean').length} clean`;
  }
  let t = performance.now();
  const warnings = await checkOverlap(ctx, me, [edit], 'warn');
  checkWarm.push(performance.now() - t);
  if (warnings.length === 0) throw new Error('the check found no overlap on a shared line');
  // Another session moves: its change is read from git again, the others' from the cache.
  hagent(
    mover,
    ['apply', '-'],
    lineDiff(repo.dir, [{ file: pick(3000 + r), n: 6 }], ` (round ${r})`),
  );
  t = performance.now();
  await checkOverlap(ctx, me, [edit], 'warn');
  checkMoved.push(performance.now() - t);
  // apply of one line in session r5, overlap off and warn, interleaved.
  for (const mode of r % 2 ? ['off', 'warn'] : ['warn', 'off']) {
    setMode(mode);
    const p = lineDiff(repo.dir, [{ file: pick(10), n: 8 }], ` (apply ${r})`);
    const took = hagent(worktrees[5]!, ['apply', '-'], p).wallMs;
    (mode === 'off' ? applyOff : applyWarn).push(took);
    hagent(worktrees[5]!, ['undo']);
  }
}
rmSync(path.dirname(config), { recursive: true, force: true });

console.log(`  ${summary}`);
console.log(`session list --json, ${sessions} sessions (median of ${rounds}):`);
console.log(
  `  warm (radar cached):  ${ms(median(warm))}   target ≤ 300 ms: ${median(warm) <= 300 ? 'met' : 'NOT met'}`,
);
console.log(`  cold (cache removed): ${ms(median(cold))}`);
console.log(`  hagent --version, the process's floor: ${ms(median(floor))}`);
if (baseBin) console.log(`  the build at ${baseBin} (no radar): ${ms(median(baseList))}`);
console.log(`hot-path check (checkOverlap, in-process, ${sessions - 1} other sessions):`);
console.log(
  `  warm: ${ms(median(checkWarm))}   one other session moved: ${ms(median(checkMoved))}`,
);
console.log(
  `hagent apply of one line: overlap off ${ms(median(applyOff))}, warn ${ms(median(applyWarn))} (+${ms(median(applyWarn) - median(applyOff))})`,
);
if (!process.argv.includes('--keep')) resetRepo(repo);
