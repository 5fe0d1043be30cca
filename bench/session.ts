/**
 * Figures of a whole agent session (not a test): the real Claude Code, driven by a scripted model
 * on loopback (test/helpers/model-server.ts), makes 12 tool calls — 4 Write, 4 Edit, 4 Bash that
 * change files — in a generated repository, three ways side by side, interleaved round by round
 * so a load change hits each alike:
 *   - plain: `git worktree add` of a branch, then Claude Code in it (timed from the worktree add);
 *   - `hagent run claude --no-sandbox` (session start, the hooks, a commit per edit, the summary);
 *   - `hagent run claude` with its sandbox (bubblewrap; skipped where it cannot run).
 * Reported per size: the median wall time of each, hagent / plain (target ≤ 1.15) and sandbox on
 * / off (target ≤ 1.05), with hagent's own time per tool call. Every run is checked: each tool
 * call answered without error and, under hagent, one commit per file-changing call.
 *   npm run bench:session [-- --files 1000,20000 --rounds 3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { agentBinary, agentEnv } from '../test/helpers/agents.js';
import { startModelServer, type Step } from '../test/helpers/model-server.js';
import { probeSandbox } from '../src/sandbox/index.js';
import { BENCH_ENV, benchRoot, ensureRepo, filePaths, git, resetRepo } from './gen-repo.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = path.join(ROOT, 'dist', 'hagent.cjs');
const argOf = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = argOf('files', '1000,20000').split(',').map(Number);
const rounds = Number(argOf('rounds', '3'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const CALLS = 12;

const found = agentBinary('claude');
if ('skip' in found) {
  console.log(`Claude Code: ${found.skip}; nothing to measure`);
  process.exit(0);
}
const claude = found;
const sandbox = probeSandbox(process.env);

/** The 12 calls: in each of 4 rounds a Write of a new file, an Edit of it, a Bash that changes a tracked file. */
function script(tracked: readonly string[]): Step[] {
  const steps: Step[] = [];
  for (let i = 1; i <= 4; i++) {
    steps.push(
      (wd) => ({
        calls: [
          {
            id: `toolu_w${i}`,
            name: 'Write',
            input: { file_path: `${wd}/agent-${i}.txt`, content: `line one ${i}\nline two\n` },
          },
        ],
      }),
      (wd) => ({
        calls: [
          {
            id: `toolu_e${i}`,
            name: 'Edit',
            input: {
              file_path: `${wd}/agent-${i}.txt`,
              old_string: `line one ${i}`,
              new_string: `line ONE ${i}`,
            },
          },
        ],
      }),
      {
        calls: [
          {
            id: `toolu_b${i}`,
            name: 'Bash',
            input: { command: `echo "appended ${i}" >> '${tracked[i - 1]}'`, description: 'x' },
          },
        ],
      },
    );
  }
  return [...steps, { text: 'All done.' }];
}

const CLAUDE_ARGS = [
  '-p',
  'make the scripted edits',
  '--dangerously-skip-permissions',
  '--output-format',
  'json',
];

/** Runs a command without blocking this process (the model server answers from it). */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number; out: string; err: string }>((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ status: code ?? -1, out, err }));
  });
}

type Side = 'plain' | 'hagent' | 'sandbox';

/** One session of `side` in `dir`; returns its wall time in ms, after checking what it did. */
async function session(side: Side, dir: string, tag: string, tracked: string[]): Promise<number> {
  const server = await startModelServer(script(tracked));
  try {
    const env: NodeJS.ProcessEnv = {
      ...BENCH_ENV,
      ...agentEnv('claude', server.url, claude.bin),
      GIT_AUTHOR_DATE: '',
      GIT_COMMITTER_DATE: '',
    };
    let wall: number;
    let r: { status: number; out: string; err: string };
    if (side === 'plain') {
      const wt = path.join(benchRoot(), 'worktrees', `plain-${tag}`);
      const t = performance.now();
      const add = spawnSync('git', ['worktree', 'add', '-q', '-b', `plain-${tag}`, wt], {
        cwd: dir,
        env,
      });
      if (add.status !== 0) throw new Error(`git worktree add: ${add.stderr}`);
      r = await run(claude.bin, CLAUDE_ARGS, wt, env);
      wall = performance.now() - t;
    } else {
      const t = performance.now();
      r = await run(
        process.execPath,
        [
          BIN,
          'run',
          'claude',
          '--name',
          `${side}-${tag}`,
          '--json',
          ...(side === 'hagent' ? ['--no-sandbox'] : []),
          '--',
          ...CLAUDE_ARGS,
        ],
        dir,
        env,
      );
      wall = performance.now() - t;
      const tail = r.out.slice(r.out.lastIndexOf('\n{') + 1);
      const summary = JSON.parse(tail) as { sandbox: { on: boolean } };
      if (summary.sandbox.on !== (side === 'sandbox'))
        throw new Error(`${side}: the run's sandbox was ${summary.sandbox.on ? 'on' : 'off'}`);
      const commits = git(['rev-list', '--count', `main..hagent/${side}-${tag}`], dir).trim();
      if (Number(commits) !== CALLS)
        throw new Error(
          `${side}: ${commits} commits, wanted ${CALLS}\n${(r.err + r.out).slice(-2000)}`,
        );
    }
    if (r.status !== 0)
      throw new Error(`${side} exited ${r.status}\n${(r.err + r.out).slice(-2000)}`);
    const failed = [...server.results.values()].filter((x) => x.isError);
    if (server.results.size !== CALLS || failed.length)
      throw new Error(
        `${side}: ${server.results.size} tool results, ${failed.length} errors: ${failed.map((f) => `${f.id} ${f.text}`).join('; ')}`,
      );
    return wall;
  } finally {
    await server.close();
  }
}

console.log('hagent session benchmark: real Claude Code, 12 tool calls (4 Write, 4 Edit, 4 Bash)');
console.log(
  `sides: plain, hagent run --no-sandbox, hagent run${sandbox.available ? '' : ` (sandbox: ${sandbox.reason}; not measured)`}; ${rounds} rounds, interleaved`,
);
const summary: string[] = [];
for (const n of sizes) {
  const repo = await ensureRepo(n, (t) => process.stderr.write(`${t}\n`));
  resetRepo(repo);
  const all = filePaths(n);
  const tracked = [0.2, 0.4, 0.6, 0.8].map((f) => all[Math.floor(n * f)]!);
  const sides: Side[] = sandbox.available ? ['plain', 'hagent', 'sandbox'] : ['plain', 'hagent'];
  const times = new Map<Side, number[]>(sides.map((s) => [s, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round.
    const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
    for (const side of order) {
      const ms = await session(side, repo.dir, `${n}-${round}`, tracked);
      times.get(side)!.push(ms);
      process.stderr.write(
        `  ${n} files, round ${round + 1}: ${side} ${(ms / 1000).toFixed(2)} s\n`,
      );
    }
  }
  resetRepo(repo);
  const m = (s: Side) => median(times.get(s)!);
  const plain = m('plain');
  const ours = m('hagent');
  const lines = [
    `${n} files: plain ${(plain / 1000).toFixed(2)} s, hagent run --no-sandbox ${(ours / 1000).toFixed(2)} s: ratio ${(ours / plain).toFixed(2)} (target ≤ 1.15) ${ours / plain <= 1.15 ? 'PASS' : 'MISS'}; hagent's own time per tool call ${((ours - plain) / CALLS).toFixed(0)} ms`,
  ];
  if (sandbox.available) {
    const walled = m('sandbox');
    lines.push(
      `${n} files: hagent run (sandbox) ${(walled / 1000).toFixed(2)} s: sandbox on / off ${(walled / ours).toFixed(2)} (target ≤ 1.05) ${walled / ours <= 1.05 ? 'PASS' : 'MISS'}; on / plain ${(walled / plain).toFixed(2)}`,
    );
  }
  for (const l of lines) console.log(l);
  summary.push(...lines);
}
rmSync(path.join(benchRoot(), 'worktrees'), { recursive: true, force: true });
console.log(`\nsummary:\n${summary.map((l) => `  ${l}`).join('\n')}`);
