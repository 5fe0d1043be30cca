/**
 * Figures of the land train (issue 24): side by side in one run, interleaved round by round (the
 * order alternates), medians of the rounds.
 *   - `hagent land s0 … s19` (20 sessions × 3 files, no gate) on a generated repository of 20k
 *     files, against the same 20 `git merge --squash hagent/sN` + `git commit` run by one shell
 *     script in the same checkout. Target: ≤ 1.5 ×.
 *   - A single `hagent land sN` with this build, and with a previous build when given
 *     (`--previous path/to/dist/hagent.cjs`): no slower than before.
 * Between runs (untimed) the train is taken back with `hagent land --undo` and git's commits
 * with `git reset --hard`, so every round lands the same sessions onto the same commit.
 *   npm run bench:train [-- --files 20000 --rounds 3 --previous /tmp/prev/dist/hagent.cjs
 *     --only train,single]
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_ENV, ensureRepo, filePaths, git, resetRepo } from './gen-repo.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = path.join(ROOT, 'dist', 'hagent.cjs');
const argOf = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const n = Number(argOf('files', '20000'));
const rounds = Math.max(3, Number(argOf('rounds', '3')));
const previous = argOf('previous', '');
const only = new Set(argOf('only', 'train,single').split(','));
const SESSIONS = 20;
const FILES_EACH = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function run(cmd: string, args: string[], cwd: string): { ms: number; out: string } {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: BENCH_ENV, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return { ms, out: r.stdout };
}
const hagent = (cwd: string, args: string[], bin = BIN) =>
  run(process.execPath, [bin, ...args], cwd);

const repo = await ensureRepo(n, (t) => process.stderr.write(`${t}\n`));
resetRepo(repo);
const dir = repo.dir;
const start = repo.commit;
try {
  // 20 approved sessions, each a line added at the end of 3 files of its own.
  const paths = filePaths(n);
  const ids = Array.from({ length: SESSIONS }, (_, i) => `t${i}`);
  const t0 = performance.now();
  for (const [i, id] of ids.entries()) {
    const s = JSON.parse(hagent(dir, ['session', 'start', '--name', id, '--json']).out);
    for (let f = 0; f < FILES_EACH; f++) {
      const rel = paths[(i * FILES_EACH + f) * 97]!;
      appendFileSync(path.join(s.worktree, rel), `edited by session ${id}\n`);
    }
    hagent(dir, ['sync', '--session', id, '--json']);
    hagent(dir, ['review', '--stat', '--session', id, '--json']);
    hagent(dir, ['review', '--session', id, '--approve', '--json']);
  }
  process.stdout.write(
    `${n} files: ${SESSIONS} sessions × ${FILES_EACH} files made in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${rounds} rounds, interleaved\n`,
  );
  const script = ids
    .map((id) => `git merge --squash -q hagent/${id} >/dev/null && git commit -q -m 'land ${id}'`)
    .join(' && ');
  const sides = {
    train: () => {
      const r = hagent(dir, ['land', ...ids, '--json']);
      const json = JSON.parse(r.out);
      if (!json.ok || json.landed.length !== SESSIONS) throw new Error(r.out.slice(0, 2000));
      hagent(dir, ['land', '--undo', '--json']);
      if (git(['rev-parse', 'main'], dir).trim() !== start) throw new Error('undo left main moved');
      return r.ms;
    },
    git: () => {
      const r = run('bash', ['-c', script], dir);
      const count = git(['rev-list', '--count', `${start}..main`], dir).trim();
      if (count !== String(SESSIONS)) throw new Error(`git made ${count} commits`);
      git(['reset', '-q', '--hard', start], dir);
      return r.ms;
    },
  };
  const times: Record<string, number[]> = { train: [], git: [] };
  for (let round = 0; round < (only.has('train') ? rounds : 0); round++) {
    const order = round % 2 ? (['git', 'train'] as const) : (['train', 'git'] as const);
    for (const side of order) {
      spawnSync('sync');
      times[side]!.push(sides[side]());
    }
  }
  const [train, plain] = [median(times.train!), median(times.git!)];
  if (only.has('train'))
    process.stdout.write(
      `train of ${SESSIONS}: hagent ${train.toFixed(0)} ms, git merge --squash + commit ×${SESSIONS} ${plain.toFixed(0)} ms: ${(train / plain).toFixed(2)} × (target ≤ 1.5)\n` +
        `  runs: hagent ${times.train!.map((x) => x.toFixed(0)).join(' ')}; git ${times.git!.map((x) => x.toFixed(0)).join(' ')}\n`,
    );

  // A single land: this build, and the previous one when given.
  const builds: [string, string][] = [['this build', BIN]];
  if (previous) builds.push(['previous build', path.resolve(previous)]);
  const single: Record<string, number[]> = Object.fromEntries(builds.map(([k]) => [k, []]));
  for (let round = 0; round < (only.has('single') ? rounds : 0); round++) {
    const order = round % 2 ? [...builds].reverse() : builds;
    for (const [name, bin] of order) {
      spawnSync('sync');
      // --session: the previous build knows no session named without it.
      const id = ids[round % SESSIONS]!;
      single[name]!.push(hagent(dir, ['land', '--session', id, '--json'], bin).ms);
      hagent(dir, ['land', '--undo', '--json']);
    }
  }
  process.stdout.write(
    `single land: ${builds.map(([k]) => `${k} ${median(single[k]!).toFixed(0)} ms (${single[k]!.map((x) => x.toFixed(0)).join(' ')})`).join('; ')}\n`,
  );
} finally {
  resetRepo(repo);
}
