/**
 * Figures of the agent hooks (not a test): the cost of one native edit going through hagent's
 * hooks (the PreToolUse process, the write, the PostToolUse process with its commit) on a
 * 20k-file repository, and of a hook outside any hagent session, each beside `node -e 0`.
 * Measured the way an agent meets them: `hagent run claude` (this build, its hook server
 * listening) starts a stand-in agent (agent-hooks-driver.mjs) that runs the hook command of its
 * `--settings` file, run after run, interleaved: through the server (the environment as `hagent
 * run` gives it), and in-process (the socket variable removed: each hook process handles its
 * event itself, as without a server or when it falls back), in the same session.
 * `--against OTHER/hagent.cjs` times another build in-process in the same runs (its own session
 * in the same repository), so two builds compare on the same machine load.
 * Beside each wall-clock median, the CPU time (user + system, the hooks' git processes included;
 * through the server, the server's own CPU too) of the processes, a mean over the runs: on a
 * loaded machine it moves much less than the wall clock (Linux only: read from /proc, in clock
 * ticks).
 *   npm run build && node --import tsx bench/agent-hooks.ts [--files 20000] [--runs 15] [--against BIN]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_ENV, ensureRepo, HAGENT_BIN, numberArg, filePaths, resetRepo } from './gen-repo.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = HAGENT_BIN;
const arg = numberArg;
const files = arg('files', 20_000);
const runs = arg('runs', 15);
const againstAt = process.argv.indexOf('--against');
const against = againstAt > 0 ? path.resolve(process.argv[againstAt + 1]!) : null;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const repo = await ensureRepo(files, (t) => process.stderr.write(`${t}\n`));
resetRepo(repo);
const targets = [0.5, 0.25].map((f) => filePaths(files)[Math.floor(files * f)]!);

function startSession(bin: string, name: string): string {
  const r = spawnSync(process.execPath, [bin, 'session', 'start', '--name', name, '--json'], {
    cwd: repo.dir,
    env: BENCH_ENV,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { worktree: string }).worktree;
}

/** One way of running the hooks under test, as the driver takes it. */
interface Subject {
  key: string;
  label: string;
  bin: string;
  wt: string;
  target: string;
  server: boolean;
}
const wt = startSession(BIN, 'bench-hooks');
const subjects: Subject[] = [
  {
    key: 'srv',
    label: "through hagent run's hook server",
    bin: BIN,
    wt,
    target: targets[0]!,
    server: true,
  },
  {
    key: 'inp',
    label: 'in-process (each hook process on its own)',
    bin: BIN,
    wt,
    target: targets[1]!,
    server: false,
  },
  ...(against
    ? [
        {
          key: 'ag',
          label: `against ${path.relative(process.cwd(), against) || against}, in-process`,
          bin: against,
          wt: startSession(against, 'bench-hooks-against'),
          target: targets[0]!,
          server: false,
        },
      ]
    : []),
];
const scratch = mkdtempSync(path.join(os.tmpdir(), 'hagent-bench-hooks-'));
const planFile = path.join(scratch, 'plan.json');
const out = path.join(scratch, 'out.json');
writeFileSync(planFile, JSON.stringify({ bin: BIN, repo: repo.dir, runs, out, subjects }));
const launched = spawnSync(
  process.execPath,
  // The stand-in writes its timings outside the worktree: no sandbox (bench/sandbox.ts measures it).
  [BIN, 'run', 'claude', '--no-sandbox', '--session', 'bench-hooks', '--json'],
  {
    cwd: repo.dir,
    env: {
      ...BENCH_ENV,
      HAGENT_CLAUDE_BIN: path.join(ROOT, 'bench', 'agent-hooks-driver.mjs'),
      HAGENT_BENCH_PLAN: planFile,
    },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
if (launched.status !== 0) throw new Error(`hagent run exited ${launched.status}`);
interface Timed extends Subject {
  pre: number[];
  post: number[];
  edit: number[];
  outside: number[];
  editCpu: number[];
}
const r = JSON.parse(readFileSync(out, 'utf8')) as {
  node: number[];
  nodeCpu: number[];
  subjects: Timed[];
};
rmSync(scratch, { recursive: true, force: true });
const commits = (session: string) =>
  spawnSync('git', ['rev-list', '--count', `main..hagent/${session}`], {
    cwd: repo.dir,
    encoding: 'utf8',
  }).stdout.trim();
const made = {
  main: commits('bench-hooks'),
  against: against ? commits('bench-hooks-against') : '',
};
resetRepo(repo);
const n = median(r.node);
const nCpu = r.nodeCpu.length ? mean(r.nodeCpu) : null;
const x = (v: number) => `${v.toFixed(1)} ms  (${(v / n).toFixed(2)} x node -e 0)`;
const load = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
console.log(`agent hooks, ${files} files, ${runs} runs (medians), load average ${load}`);
console.log(
  `  node -e 0:                                   ${n.toFixed(1)} ms${nCpu !== null ? `; CPU ${nCpu.toFixed(1)} ms` : ''}`,
);
console.log(
  `  commits made: ${made.main} in bench-hooks${against ? `, ${made.against} in bench-hooks-against` : ''} (3 warm-up edits per subject)`,
);
for (const s of r.subjects) {
  console.log(s.label);
  console.log(`  native edit through hooks (pre+write+post):  ${x(median(s.edit))}`);
  if (nCpu && s.editCpu.length)
    console.log(
      `    in CPU time (both hook processes${s.server ? ', the server' : ''}):${s.server ? '' : '         '} ${mean(s.editCpu).toFixed(1)} ms  (${(mean(s.editCpu) / nCpu).toFixed(2)} x node -e 0's)`,
    );
  console.log(`    PreToolUse process:                        ${x(median(s.pre))}`);
  console.log(`    PostToolUse process (the commit):          ${x(median(s.post))}`);
  console.log(`  hook outside any session:                    ${x(median(s.outside))}`);
}
