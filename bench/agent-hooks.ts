/**
 * Figures of the agent hooks (not a test): the cost of one native edit going through hagent's
 * hooks (the PreToolUse process, the write, the PostToolUse process with its commit) on a
 * 20k-file repository, and of a hook outside any hagent session, each beside `node -e 0`.
 * `--against OTHER/hagent.cjs` times another build in the same runs, interleaved (its own
 * session in the same repository), so two builds compare on the same machine load.
 * Beside each wall-clock median, the CPU time (user + system, the hooks' git processes included)
 * of the processes, a mean over the runs: on a loaded machine it moves much less than the wall
 * clock (Linux only: read from /proc, in clock ticks).
 *   npm run build && node --import tsx bench/agent-hooks.ts [--files 20000] [--runs 15] [--against BIN]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_ENV, ensureRepo, filePaths, resetRepo } from './gen-repo.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = path.join(ROOT, 'dist', 'hagent.cjs');
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const files = arg('files', 20_000);
const runs = arg('runs', 15);
const againstAt = process.argv.indexOf('--against');
const against = againstAt > 0 ? path.resolve(process.argv[againstAt + 1]!) : null;

/** CPU ms (user + system) of this process's waited-for children so far; null off Linux. */
function childrenCpu(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state (field 3), in ticks of 10 ms.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

/** Runs `fn`, adding its children's CPU ms to `into` (when known). */
function cpu(into: number[], fn: () => void): void {
  const before = childrenCpu();
  fn();
  const after = childrenCpu();
  if (before !== null && after !== null) into.push(after - before);
}

function timed(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

function run(args: string[], cwd: string, input = ''): void {
  const r = spawnSync(args[0]!, args.slice(1), { cwd, env: BENCH_ENV, input, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 2)
    throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const repo = await ensureRepo(files, (s) => process.stderr.write(`${s}\n`));
resetRepo(repo);
const target = filePaths(files)[Math.floor(files / 2)]!;

/** One build under test: its session, and its timings. */
interface Subject {
  label: string;
  bin: string;
  wt: string;
  pre: number[];
  post: number[];
  edit: number[];
  outside: number[];
  /** CPU ms of the edit's two hook processes (with their git processes), per run. */
  editCpu: number[];
}

function subject(label: string, bin: string, name: string): Subject {
  const start = spawnSync(process.execPath, [bin, 'session', 'start', '--name', name, '--json'], {
    cwd: repo.dir,
    env: BENCH_ENV,
    encoding: 'utf8',
  });
  if (start.status !== 0) throw new Error(start.stderr);
  const wt = (JSON.parse(start.stdout) as { worktree: string }).worktree;
  // Warm-up: the V8 code cache and the file-system cache.
  run([process.execPath, bin, 'hook', 'claude'], wt, '{}');
  return { label, bin, wt, pre: [], post: [], edit: [], outside: [], editCpu: [] };
}

const subjects = [
  subject('this build', BIN, 'bench-hooks'),
  ...(against ? [subject('against', against, 'bench-hooks-against')] : []),
];
for (let i = 0; i < 3; i++) run([process.execPath, '-e', '0'], repo.dir);

const node: number[] = [];
const nodeCpu: number[] = [];
for (let i = 0; i < runs; i++) {
  cpu(nodeCpu, () => node.push(timed(() => run([process.execPath, '-e', '0'], repo.dir))));
  for (const s of subjects) {
    const abs = path.join(s.wt, target);
    const input = { file_path: abs, content: `edit ${i}\n` };
    const event = (name: string) =>
      JSON.stringify({
        hook_event_name: name,
        cwd: s.wt,
        tool_name: 'Write',
        tool_use_id: `toolu_${i}`,
        tool_input: input,
      });
    let pre = 0;
    let post = 0;
    cpu(s.editCpu, () =>
      s.edit.push(
        timed(() => {
          pre = timed(() =>
            run([process.execPath, s.bin, 'hook', 'claude'], s.wt, event('PreToolUse')),
          );
          writeFileSync(abs, input.content);
          post = timed(() =>
            run([process.execPath, s.bin, 'hook', 'claude'], s.wt, event('PostToolUse')),
          );
        }),
      ),
    );
    s.pre.push(pre);
    s.post.push(post);
    s.outside.push(
      timed(() =>
        run(
          [process.execPath, s.bin, 'hook', 'claude'],
          repo.dir,
          JSON.stringify({
            hook_event_name: 'PreToolUse',
            cwd: repo.dir,
            tool_name: 'Write',
            tool_input: { file_path: path.join(repo.dir, target), content: 'x' },
          }),
        ),
      ),
    );
  }
}
const commits = subjects.map((s) =>
  spawnSync(
    'git',
    [
      'rev-list',
      '--count',
      `main..hagent/${s === subjects[0] ? 'bench-hooks' : 'bench-hooks-against'}`,
    ],
    { cwd: repo.dir, encoding: 'utf8' },
  ).stdout.trim(),
);
resetRepo(repo);
const n = median(node);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const nCpu = nodeCpu.length ? mean(nodeCpu) : null;
const x = (v: number) => `${v.toFixed(1)} ms  (${(v / n).toFixed(2)} x node -e 0)`;
console.log(`agent hooks, ${files} files, ${runs} runs (medians)`);
console.log(
  `  node -e 0:                                   ${n.toFixed(1)} ms${nCpu !== null ? `; CPU ${nCpu.toFixed(1)} ms` : ''}`,
);
for (const [k, s] of subjects.entries()) {
  console.log(
    `${s.label}${against ? ` (${path.relative(process.cwd(), s.bin) || s.bin})` : ''}, ${commits[k]} commits made`,
  );
  console.log(`  native edit through hooks (pre+write+post):  ${x(median(s.edit))}`);
  if (nCpu && s.editCpu.length)
    console.log(
      `    in CPU time (both hook processes):         ${mean(s.editCpu).toFixed(1)} ms  (${(mean(s.editCpu) / nCpu).toFixed(2)} x node -e 0's)`,
    );
  console.log(`    PreToolUse process:                        ${x(median(s.pre))}`);
  console.log(`    PostToolUse process (the commit):          ${x(median(s.post))}`);
  console.log(`  hook outside any session:                    ${x(median(s.outside))}`);
}
