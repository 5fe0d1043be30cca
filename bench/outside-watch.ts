/**
 * Figures of the outside watch (not a test): what noting the user's main checkout before a shell
 * command and comparing after costs (exec/outside.ts: `rev-parse`, `status --untracked-files=all
 * --ignored=matching` and `for-each-ref` per snapshot, `diff-index --cached` only when the index
 * moved), in process, on a 20k-file repository; then the ways of listing the checkout's files it
 * was chosen from: `git diff-files` (tracked only, what it ran before), the `git status` it runs,
 * `git ls-files` for untracked and ignored files, and a stat walk of the checkout in Node.
 *   npm run build && node --import tsx bench/outside-watch.ts [--files 20000] [--runs 15]
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { outsideChangeSince, snapshotOutside } from '../src/exec/outside.js';
import { openRepo, resolveSession } from '../src/session/index.js';
import { BENCH_ENV, ensureRepo, resetRepo } from './gen-repo.js';

const BIN = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  '..',
  'dist',
  'hagent.cjs',
);
const files = Number(process.argv[process.argv.indexOf('--files') + 1] ?? '') || 20_000;
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] ?? '') || 15;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const repo = await ensureRepo(files, (s) => process.stderr.write(`${s}\n`));
resetRepo(repo);
const start = spawnSync(
  process.execPath,
  [BIN, 'session', 'start', '--name', 'bench-outside', '--json'],
  { cwd: repo.dir, env: BENCH_ENV, encoding: 'utf8' },
);
if (start.status !== 0 && !/exists/.test(start.stderr + start.stdout))
  throw new Error(start.stderr);
const ctx = await openRepo(repo.dir);
const session = await resolveSession(ctx, 'bench-outside');

const snap: number[] = [];
const compare: number[] = [];
await snapshotOutside(ctx, session); // warm the file-system cache
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  const before = await snapshotOutside(ctx, session);
  snap.push(performance.now() - t);
  t = performance.now();
  const change = await outsideChangeSince(ctx, session, before);
  compare.push(performance.now() - t);
  if (change) throw new Error(`unexpected change: ${change.message}`);
}
console.log(
  `outside watch, ${files} files, median of ${runs}: snapshot ${median(snap).toFixed(1)} ms, compare ${median(compare).toFixed(1)} ms, per command ${(median(snap) + median(compare)).toFixed(1)} ms`,
);

/** Every entry below `dir` but `.git`, each lstat'ed: what a stat snapshot of the checkout reads. */
async function statWalk(dir: string, out: string[]): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    if (e.name === '.git') continue;
    const p = path.join(dir, e.name);
    const st = await fs.lstat(p);
    out.push(`${st.size}:${st.mtimeMs}`);
    if (e.isDirectory()) await statWalk(p, out);
  }
}
const gitIn = (args: string[]) =>
  spawnSync('git', ['-c', 'core.fsmonitor=false', ...args], {
    cwd: repo.dir,
    env: { ...BENCH_ENV, GIT_OPTIONAL_LOCKS: '0' },
  });
const ways: [string, () => unknown][] = [
  ['git diff-files', () => gitIn(['diff-files', '--name-only', '-z'])],
  [
    'git status -uall --ignored=matching',
    () => gitIn(['status', '--porcelain', '-z', '-uall', '--ignored=matching']),
  ],
  [
    'git ls-files (untracked, ignored)',
    () => {
      gitIn(['ls-files', '-z', '-o', '-i', '--exclude-standard', '--directory']);
      gitIn(['ls-files', '-z', '-o', '--exclude-standard']);
    },
  ],
  ['stat walk (Node)', () => statWalk(repo.dir, [])],
];
for (const [name, run] of ways) {
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await run();
    xs.push(performance.now() - t);
  }
  console.log(`  ${name}: ${median(xs).toFixed(1)} ms`);
}
