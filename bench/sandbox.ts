/**
 * Figures of the sandbox (not a test): what starting a command inside a session's sandbox costs
 * over the same `bash -c true` outside it — interleaved rounds (outside, inside, inside, outside,
 * …, so a load change hits both alike), the median of the paired differences — and what
 * preparing the sandbox before a command and settling it after cost (src/sandbox/).
 *   npm run bench:sandbox [-- --runs 60]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  probeSandbox,
  sandboxedEnv,
  sandboxFor,
  sandboxSettings,
  settleSandbox,
  type SandboxLaunch,
} from '../src/sandbox/index.js';

const BIN = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  '..',
  'dist',
  'hagent.cjs',
);
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] ?? '') || 60;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const probe = probeSandbox(process.env);
if (!probe.available) {
  console.log(`sandbox: ${probe.reason}; nothing to measure`);
  process.exit(0);
}
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  GIT_CONFIG_GLOBAL: '/dev/null',
  XDG_CACHE_HOME: '',
  HAGENT_WORKTREE_ROOT: 'git-dir',
};
const dir = mkdtempSync(path.join(os.tmpdir(), 'hagent-bench-sandbox-'));
try {
  const sh = (args: string[]) => {
    const r = spawnSync(args[0]!, args.slice(1), { cwd: dir, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  sh(['git', 'init', '-q', '--initial-branch=main']);
  sh(['git', 'commit', '-q', '--allow-empty', '-m', 'initial']);
  const s = JSON.parse(
    sh([process.execPath, BIN, 'session', 'start', '--name', 'bench', '--json']),
  );
  const target = { commonDir: path.join(dir, '.git'), session: { id: s.id, worktree: s.worktree } };
  const settings = sandboxSettings(undefined);
  const launchNow = async (): Promise<SandboxLaunch> => {
    const c = await sandboxFor(target, settings, process.env);
    if (!c.on) throw new Error(c.reason);
    return c.launch;
  };
  const launch = await launchNow();
  const inside = sandboxedEnv(process.env, launch);
  const time = (argv: string[], e: NodeJS.ProcessEnv): number => {
    const t = performance.now();
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: s.worktree, env: e, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
    return performance.now() - t;
  };
  const plain = ['bash', '-c', 'true'];
  const walled = [...launch.argv, ...plain];
  for (let i = 0; i < 5; i++) (time(plain, process.env), time(walled, inside)); // warm up
  const outs: number[] = [];
  const ins: number[] = [];
  const diffs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const first = i % 2 === 0;
    const a = first ? time(plain, process.env) : 0;
    const b = time(walled, inside);
    const c = first ? 0 : time(plain, process.env);
    outs.push(a || c);
    ins.push(b);
    diffs.push(b - (a || c));
  }
  const prep: number[] = [];
  const settle: number[] = [];
  for (let i = 0; i < Math.min(runs, 30); i++) {
    let t = performance.now();
    const l = await launchNow();
    prep.push(performance.now() - t);
    t = performance.now();
    await settleSandbox(l);
    settle.push(performance.now() - t);
  }
  const f = (x: number) => x.toFixed(1);
  console.log(
    `sandbox, median of ${runs} interleaved rounds: bash -c true ${f(median(outs))} ms outside, ${f(median(ins))} ms inside, difference ${f(median(diffs))} ms (target ≤ 15 ms); prepare ${f(median(prep))} ms, settle ${f(median(settle))} ms (nothing to move)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
