/**
 * Figures of the agent hooks (not a test): the cost of one native edit going through hagent's
 * hooks (the PreToolUse process, the write, the PostToolUse process with its commit) on a
 * 20k-file repository, and of a hook outside any hagent session, each beside `node -e 0`.
 *   npm run build && node --import tsx bench/agent-hooks.ts [--files 20000] [--runs 15]
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
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

function timed(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

function run(args: string[], cwd: string, input = ''): void {
  const r = spawnSync(args[0]!, args.slice(1), { cwd, env: BENCH_ENV, input, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 2) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const repo = await ensureRepo(files, (s) => process.stderr.write(`${s}\n`));
resetRepo(repo);
const start = spawnSync(process.execPath, [BIN, 'session', 'start', '--name', 'bench-hooks', '--json'], { cwd: repo.dir, env: BENCH_ENV, encoding: 'utf8' });
if (start.status !== 0) throw new Error(start.stderr);
const wt = (JSON.parse(start.stdout) as { worktree: string }).worktree;
const target = filePaths(files)[Math.floor(files / 2)]!;

// Warm-up: the V8 code cache and the file-system cache.
for (let i = 0; i < 3; i++) run([process.execPath, '-e', '0'], wt);
run([process.execPath, BIN, 'hook', 'claude'], wt, '{}');

const node: number[] = [];
const edit: number[] = [];
const outside: number[] = [];
for (let i = 0; i < runs; i++) {
  node.push(timed(() => run([process.execPath, '-e', '0'], wt)));
  const abs = path.join(wt, target);
  const input = { file_path: abs, content: `edit ${i}\n` };
  const event = (name: string) => JSON.stringify({ hook_event_name: name, cwd: wt, tool_name: 'Write', tool_use_id: `toolu_${i}`, tool_input: input });
  edit.push(timed(() => {
    run([process.execPath, BIN, 'hook', 'claude'], wt, event('PreToolUse'));
    writeFileSync(abs, input.content);
    run([process.execPath, BIN, 'hook', 'claude'], wt, event('PostToolUse'));
  }));
  outside.push(timed(() => run([process.execPath, BIN, 'hook', 'claude'], repo.dir, JSON.stringify({ hook_event_name: 'PreToolUse', cwd: repo.dir, tool_name: 'Write', tool_input: { file_path: path.join(repo.dir, target), content: 'x' } }))));
}
const commits = spawnSync('git', ['rev-list', '--count', 'main..hagent/bench-hooks'], { cwd: repo.dir, encoding: 'utf8' }).stdout.trim();
resetRepo(repo);
const n = median(node);
const e = median(edit);
const o = median(outside);
console.log(`agent hooks, ${files} files, ${runs} runs (medians), ${commits} commits made`);
console.log(`  node -e 0:                                   ${n.toFixed(1)} ms`);
console.log(`  native edit through hooks (pre+write+post):  ${e.toFixed(1)} ms  (${(e / n).toFixed(2)} x node -e 0)`);
console.log(`  hook outside any session:                    ${o.toFixed(1)} ms  (${(o / n).toFixed(2)} x node -e 0)`);
