/**
 * hagent benchmarks: each figure is measured side by side with the plain git commands doing the
 * same work, in one run, interleaved (the order alternates run by run), median of the runs.
 *
 *   node --import tsx bench/run.ts [--sizes 1000,20000,100000] [--runs N] [--hagent dist/hagent.cjs] [--verbose]
 *
 * Figures (the project's targets):
 *   1. session start            ≤ 1.3 × git worktree add -b <branch> <path> <commit> (pool empty)
 *   1b. session start recycled  ≤ 0.1 × git worktree add, a pooled worktree moved to a base a
 *      few files away (the usual case: the last session landed, the next starts from there)
 *   2. apply (3-file patch)     (hagent − node -e 0) ≤ 1.5 × (git apply --index + git commit)
 *   3. apply on 100k ÷ on 1k    ≤ 1.2
 *   4. land --yes               ≤ 2 × (git merge --squash + git commit)
 *   5. envelope: apply with the watcher and the staleness check ≤ 1.15 × apply with neither
 *      (both through the library face in a fresh process, bench/apply-driver.mjs)
 *   6. check and apply --dry-run of the same patch: wall time, beside node -e 0 (reported)
 *
 * Repositories are generated once per size by gen-repo.ts under os.tmpdir()/hagent-bench and put
 * back as generated before and after each size. Nothing is written inside this repository.
 * Wall time is `process.hrtime` around `spawnSync`; hyperfine is not needed. Each sample starts
 * after an untimed `sync` (see interleave).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BENCH_ENV,
  benchRoot,
  ensureRepo,
  filePaths,
  git,
  resetRepo,
  type BenchRepo,
} from './gen-repo.js';
import { makePatches, type Patches } from './patches.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');

// ---------------------------------------------------------------- arguments

interface Args {
  sizes: number[];
  runs: number | null;
  hagent: string;
  verbose: boolean;
  only: Set<string> | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    sizes: [1000, 20000, 100000],
    runs: null,
    hagent: path.join(ROOT, 'dist', 'hagent.cjs'),
    verbose: false,
    only: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const eq = a.indexOf('=');
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a.startsWith('--sizes'))
      args.sizes = value()
        .split(',')
        .map((s) => Number(s.trim().replace(/k$/i, '000')))
        .filter((n) => Number.isInteger(n) && n > 0);
    else if (a.startsWith('--runs')) args.runs = Number(value());
    else if (a.startsWith('--hagent')) args.hagent = path.resolve(value());
    else if (a.startsWith('--only')) args.only = new Set(value().split(','));
    else if (a === '--verbose' || a === '-v') args.verbose = true;
    else if (a === '--help' || a === '-h') {
      console.log(
        'usage: node --import tsx bench/run.ts [--sizes 1000,20000,100000] [--runs N] [--only start,recycle,apply,envelope,land] [--hagent dist/hagent.cjs] [--verbose]',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!args.sizes.length) throw new Error('--sizes names no size');
  args.sizes.sort((x, y) => x - y);
  return args;
}

const ARGS = parseArgs(process.argv.slice(2));
const wants = (fig: string): boolean => !ARGS.only || ARGS.only.has(fig);

/** Runs per figure: ≥ 5 (≥ 3 on 100k files), or --runs. */
function runsFor(n: number, small: number, large: number): number {
  return ARGS.runs ?? (n >= 100000 ? large : small);
}

// ---------------------------------------------------------------- timing

interface Timed {
  ms: number;
  stdout: string;
}

class CommandFailed extends Error {}

/** Runs one command and times it (wall, hrtime around spawnSync). Throws on a non-zero exit. */
function run(
  cmd: string,
  args: readonly string[],
  cwd: string,
  input?: string,
  env: NodeJS.ProcessEnv = {},
): Timed {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {
    cwd,
    env: { ...BENCH_ENV, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    ...(input === undefined ? { stdio: ['ignore', 'pipe', 'pipe'] } : { input }),
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new CommandFailed(
      `${path.basename(cmd)} ${args.join(' ')} (in ${cwd}) exited ${r.status}\n${String(r.stdout).trim().slice(0, 2000)}\n${String(r.stderr).trim().slice(0, 2000)}`,
    );
  }
  return { ms, stdout: String(r.stdout) };
}

function hagent(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Timed {
  return run(process.execPath, [ARGS.hagent, ...args], cwd, undefined, env);
}

function hagentJson<T>(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { ms: number; json: T } {
  const t = hagent(args, cwd, env);
  return { ms: t.ms, json: JSON.parse(t.stdout) as T };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Runs `rounds` rounds of the `contenders`, rotating which goes first each round, and returns
 * each contender's samples. `setup`/`teardown` run around every round, untimed. Before each
 * sample, untimed, `sync` writes back what the previous sample left dirty (git's 12.7 MB index at
 * 100k files), so that no contender's fsync waits for another's writes; page caches stay warm.
 */
function interleave(
  rounds: number,
  contenders: Record<string, (round: number) => number>,
  around: { setup?: (round: number) => void; teardown?: (round: number) => void } = {},
): Record<string, number[]> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    around.setup?.(r);
    for (let j = 0; j < names.length; j++) {
      const name = names[(r + j) % names.length]!;
      spawnSync('sync');
      samples[name]!.push(contenders[name]!(r));
    }
    around.teardown?.(r);
  }
  return samples;
}

// ---------------------------------------------------------------- reporting

const lines: string[] = [];
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

function verdict(name: string, hagentMs: number, gitMs: number, target: number, extra = ''): void {
  const ratio = hagentMs / gitMs;
  const line = `${name}: hagent ${fmt(hagentMs)}, git ${fmt(gitMs)}, ratio ${ratio.toFixed(2)} (target ≤ ${target}) ${ratio <= target ? 'PASS' : 'MISS'}${extra ? `  ${extra}` : ''}`;
  lines.push(line);
  console.log(line);
}

function failed(name: string, error: unknown): void {
  const msg = error instanceof Error ? error.message : String(error);
  const line = `${name}: ERROR ${msg.split('\n')[0]}`;
  lines.push(line);
  console.log(line);
  console.log(
    msg
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => `    ${l}`)
      .join('\n'),
  );
}

function detail(label: string, samples: Record<string, number[]>): void {
  if (!ARGS.verbose) return;
  for (const [k, xs] of Object.entries(samples))
    console.log(`    ${label} ${k}: ${xs.map((x) => x.toFixed(1)).join(' ')}`);
}

const sizeLabel = (n: number): string => (n >= 1000 ? `${n / 1000}k` : String(n));

// ---------------------------------------------------------------- the 3-file patch

// ---------------------------------------------------------------- figures

interface StartJson {
  id: string;
  worktree: string;
  recycled: boolean;
}

function commonDir(repo: BenchRepo): string {
  return path.join(repo.dir, '.git');
}

/** A plain git worktree beside hagent's, same file system, same depth. */
function gitWorktreePath(repo: BenchRepo, name: string): string {
  return path.join(commonDir(repo), 'bench-wt', name);
}

/** No pool: the sessions a figure ends are removed (unless it measures the pool). */
const NO_POOL: NodeJS.ProcessEnv = { HAGENT_POOL: '0' };

function endSession(repo: BenchRepo, session: StartJson, env: NodeJS.ProcessEnv = NO_POOL): void {
  const id = session.id;
  try {
    hagent(['session', 'end', id, '--force', '--yes', '--json'], repo.dir, env);
  } catch {
    // Fall back to plain git, so one broken command does not spoil the next runs.
    spawnSync('git', ['worktree', 'remove', '--force', session.worktree], {
      cwd: repo.dir,
      env: BENCH_ENV,
    });
    spawnSync('git', ['branch', '-D', `hagent/${id}`], { cwd: repo.dir, env: BENCH_ENV });
    rmSync(path.join(commonDir(repo), 'hagent', 'sessions', `${id}.json`), { force: true });
  }
}

function removeGitWorktree(repo: BenchRepo, wt: string, branch: string): void {
  git(['worktree', 'remove', '--force', wt], repo.dir);
  git(['branch', '-q', '-D', branch], repo.dir);
}

/**
 * Figure 1: session start vs git worktree add. The sessions it starts are kept (when `keep` is
 * given) with one applied patch each, for the land figure: that saves a checkout per land round,
 * which is most of the run time on 100k files. git's worktrees are then kept too until the figure
 * ends, so that both sides check out onto a file system in the same state: a checkout after a
 * removal reuses the inodes and blocks just freed (their bitmaps cached), a checkout beside kept
 * ones takes fresh ones, and on a slow disk that alone made one side 2.5 × slower.
 */
function benchStart(repo: BenchRepo, keep: StartJson[] | null): { hagent: number; git: number } {
  // An even number of rounds: each side goes first equally often (the later of a round's two
  // checkouts meets one more kept worktree).
  const rounds = runsFor(repo.n, 8, 4);
  const tag = `${Date.now().toString(36)}`;
  const gitKept: Array<[string, string]> = [];
  const samples = interleave(rounds, {
    hagent: (r) => {
      const id = `start-${tag}-${r}`;
      const t = hagentJson<StartJson>(['session', 'start', '--json', '--name', id], repo.dir);
      if (!t.json.worktree) throw new Error('session start printed no worktree');
      if (t.json.recycled) throw new Error('a cold start took a pooled worktree');
      if (keep) keep.push(t.json);
      else endSession(repo, t.json);
      return t.ms;
    },
    git: (r) => {
      const branch = `bench/start-${tag}-${r}`;
      const wt = gitWorktreePath(repo, `start-${tag}-${r}`);
      const t = run('git', ['worktree', 'add', '-b', branch, wt, repo.commit], repo.dir);
      if (keep) gitKept.push([wt, branch]);
      else removeGitWorktree(repo, wt, branch);
      return t.ms;
    },
  });
  for (const [wt, branch] of gitKept) removeGitWorktree(repo, wt, branch);
  detail('start', samples);
  return { hagent: median(samples.hagent!), git: median(samples.git!) };
}

/** Files the recycled-start figure changes on `main` between two sessions (a landed session's worth). */
const RECYCLE_CHANGED = 20;

/**
 * Figure 1b: session start with a recycled worktree vs git worktree add. Before each round,
 * untimed, `main` moves on by one commit changing RECYCLE_CHANGED files and adding one (as a
 * landed session would), and the pool holds the worktree the previous session ended with, at the
 * old base; hagent's start moves it to the new base. git's side checks out a new worktree of the
 * same commit, removed after. An ignored node_modules/ planted once must survive every round.
 */
function benchRecycle(repo: BenchRepo): { hagent: number; git: number } {
  const rounds = runsFor(repo.n, 8, 4);
  const tag = `${Date.now().toString(36)}`;
  const files = filePaths(repo.n)
    .filter((_, i) => i % Math.floor(repo.n / RECYCLE_CHANGED) === 0)
    .slice(0, RECYCLE_CHANGED);
  const pooled = { HAGENT_POOL: '1' };
  // Warm-up, untimed: a cold session, a dependency folder in it, ended into the pool.
  const session = hagentJson<StartJson>(
    ['session', 'start', '--json', '--name', `recycle-${tag}-w`],
    repo.dir,
    pooled,
  ).json;
  const exclude = path.join(repo.dir, '.git', 'info', 'exclude');
  if (!(existsSync(exclude) && readFileSync(exclude, 'utf8').includes('node_modules/')))
    writeFileSync(exclude, '\nnode_modules/\n', { flag: 'a' });
  mkdirSync(path.join(session.worktree, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(
    path.join(session.worktree, 'node_modules', 'dep', 'index.js'),
    'module.exports = 1;\n',
  );
  endSession(repo, session, pooled);
  let current: StartJson | null = null;
  const samples = interleave(
    rounds,
    {
      hagent: (r) => {
        const t = hagentJson<StartJson>(
          ['session', 'start', '--json', '--name', `recycle-${tag}-${r}`],
          repo.dir,
          pooled,
        );
        if (!t.json.recycled) throw new Error('session start did not take the pooled worktree');
        current = t.json;
        return t.ms;
      },
      git: (r) => {
        const branch = `bench/recycle-${tag}-${r}`;
        const wt = gitWorktreePath(repo, `recycle-${tag}-${r}`);
        const t = run('git', ['worktree', 'add', '-b', branch, wt, 'main'], repo.dir);
        removeGitWorktree(repo, wt, branch);
        return t.ms;
      },
    },
    {
      setup: (r) => {
        for (const f of files)
          writeFileSync(
            path.join(repo.dir, f),
            `${readFileSync(path.join(repo.dir, f), 'utf8')}round ${r}\n`,
          );
        writeFileSync(path.join(repo.dir, `recycle-${r}.txt`), `round ${r}\n`);
        git(['add', '-A', '--', ...files, `recycle-${r}.txt`], repo.dir);
        git(['commit', '-q', '-m', `recycle round ${r}`], repo.dir);
      },
      teardown: () => {
        const s: StartJson | null = current;
        if (!s) return;
        if (!existsSync(path.join(s.worktree, 'node_modules', 'dep', 'index.js')))
          throw new Error('node_modules did not survive the recycling');
        endSession(repo, s, pooled);
        current = null;
      },
    },
  );
  detail('recycle', samples);
  git(['reset', '-q', '--hard', repo.commit], repo.dir);
  return { hagent: median(samples.hagent!), git: median(samples.git!) };
}

interface ApplyFigures {
  hagent: number;
  node: number;
  git: number;
  envelope?: { full: number; bare: number; check: number; dryRun: number };
}

/** Figure 2: apply of a 3-file patch, commit included, vs node's floor and git apply + commit. */
function benchApply(repo: BenchRepo): ApplyFigures {
  const rounds = runsFor(repo.n, 9, 5);
  const id = `apply-${Date.now().toString(36)}`;
  const session = hagentJson<StartJson>(
    ['session', 'start', '--json', '--name', id],
    repo.dir,
  ).json;
  const branch = `bench/apply-${id}`;
  const gwt = gitWorktreePath(repo, id);
  git(['worktree', 'add', '-q', '-b', branch, gwt, repo.commit], repo.dir);
  try {
    const patches = makePatches(repo, gwt);
    const hagentApply = (which: 0 | 1): number => {
      const t = hagentJson<{ ok: boolean; commit: string | null }>(
        ['apply', patches.codex[which], '--json', '--yes'],
        session.worktree,
      );
      if (!t.json.ok || !t.json.commit)
        throw new Error(`hagent apply did not commit: ${JSON.stringify(t.json)}`);
      return t.ms;
    };
    const gitApply = (which: 0 | 1): number =>
      run('git', ['apply', '--index', patches.udiff[which]], gwt).ms +
      run('git', ['commit', '-q', '-m', 'x'], gwt).ms;
    // One untimed A + reverse on each side: warm caches, check that both patches apply.
    hagentApply(0);
    hagentApply(1);
    gitApply(0);
    gitApply(1);
    run(process.execPath, ['-e', '0'], repo.dir);
    // Round r applies A when r is even and its reverse when r is odd, so every round starts
    // from the state the previous one left, and the two sides always do the same change.
    const samples = interleave(rounds * 2, {
      hagent: (r) => hagentApply((r % 2) as 0 | 1),
      node: () => run(process.execPath, ['-e', '0'], repo.dir).ms,
      git: (r) => gitApply((r % 2) as 0 | 1),
    });
    detail('apply', samples);
    const out: ApplyFigures = {
      hagent: median(samples.hagent!),
      node: median(samples.node!),
      git: median(samples.git!),
    };
    if (wants('envelope')) out.envelope = benchEnvelope(session.worktree, patches, rounds);
    return out;
  } finally {
    endSession(repo, session);
    removeGitWorktree(repo, gwt, branch);
  }
}

/**
 * Figures 5 and 6, on the session and patches of figure 2. Every round starts where patch A
 * applies: check A and apply --dry-run A (nothing written), then apply A with the watcher and the
 * staleness check, then its reverse with neither (the driver's `full` and `bare`), so the two
 * sides always do the same amount of work (one change of three files).
 */
function benchEnvelope(
  worktree: string,
  patches: Patches,
  rounds: number,
): { full: number; bare: number; check: number; dryRun: number } {
  const driver = path.join(HERE, 'apply-driver.mjs');
  const drive = (which: 0 | 1, mode: 'full' | 'bare'): number =>
    run(process.execPath, [driver, worktree, patches.codex[which], mode], worktree).ms;
  drive(0, 'full');
  drive(1, 'bare'); // warm-up, and a check that both modes apply
  const samples: Record<string, number[]> = { full: [], bare: [], check: [], dryRun: [] };
  for (let r = 0; r < rounds * 2; r++) {
    samples.check!.push(hagent(['check', patches.codex[0], '--json'], worktree).ms);
    samples.dryRun!.push(
      hagent(['apply', patches.codex[0], '--dry-run', '--json', '--yes'], worktree).ms,
    );
    // Alternate which side applies A and which the reverse: both directions count for both.
    if (r % 2 === 0) {
      samples.full!.push(drive(0, 'full'));
      samples.bare!.push(drive(1, 'bare'));
    } else {
      samples.bare!.push(drive(0, 'bare'));
      samples.full!.push(drive(1, 'full'));
    }
  }
  detail('envelope', samples);
  return {
    full: median(samples.full!),
    bare: median(samples.bare!),
    check: median(samples.check!),
    dryRun: median(samples.dryRun!),
  };
}

/**
 * Figure 4: land --yes of a fresh one-patch session vs git merge --squash + git commit of its
 * branch. Both sides bring the same commit onto `main` and update its checkout. The figure is
 * not net of Node's start (`node -e 0`, measured beside it and printed): at 1k files that start
 * alone is several times git's whole job.
 */
function benchLand(
  repo: BenchRepo,
  ready: StartJson[],
): { hagent: number; git: number; node: number } {
  const rounds = runsFor(repo.n, 5, 3);
  const tag = Date.now().toString(36);
  const target = git(['rev-parse', 'HEAD'], repo.dir).trim();
  let patches: Patches | null = null;
  let id = '';
  let session: StartJson | null = null;
  const resetTarget = (): void => {
    git(['reset', '-q', '--hard', target], repo.dir);
  };
  const samples = interleave(
    rounds,
    {
      hagent: () => {
        const t = hagentJson<{ ok: boolean; commit: string }>(
          ['land', '--session', id, '--yes', '--json'],
          repo.dir,
        );
        if (!t.json.ok || !t.json.commit)
          throw new Error(`hagent land did not land: ${JSON.stringify(t.json)}`);
        const head = git(['rev-parse', 'HEAD'], repo.dir).trim();
        if (head !== t.json.commit)
          throw new Error(`after land HEAD is ${head}, not ${t.json.commit}`);
        resetTarget();
        return t.ms;
      },
      git: () => {
        const ms =
          run('git', ['merge', '--squash', `hagent/${id}`], repo.dir).ms +
          run('git', ['commit', '-q', '-m', 'x'], repo.dir).ms;
        resetTarget();
        return ms;
      },
      node: () => run(process.execPath, ['-e', '0'], repo.dir).ms,
    },
    {
      setup: (r) => {
        // A fresh session with one applied patch: one left by the start figure, or a new one.
        session =
          ready.shift() ??
          hagentJson<StartJson>(
            ['session', 'start', '--json', '--name', `land-${tag}-${r}`],
            repo.dir,
          ).json;
        id = session.id;
        patches ??= makePatches(repo, session.worktree);
        hagentJson(['apply', patches.codex[0], '--json', '--yes'], session.worktree);
      },
      teardown: () => {
        if (session) endSession(repo, session);
      },
    },
  );
  detail('land', samples);
  return {
    hagent: median(samples.hagent!),
    git: median(samples.git!),
    node: median(samples.node!),
  };
}

// ---------------------------------------------------------------- main

function version(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? String(r.stdout).trim().split('\n')[0]! : 'not found';
}

function machine(): void {
  const cpus = os.cpus();
  console.log('hagent benchmarks');
  console.log(
    `machine: ${cpus.length} cpus (${cpus[0]?.model.trim() ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}, load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `node ${process.version}, ${version('git', ['--version'])}, hagent ${version(process.execPath, [ARGS.hagent, '--version'])} (${path.relative(process.cwd(), ARGS.hagent) || ARGS.hagent})`,
  );
  console.log(`sizes: ${ARGS.sizes.map(sizeLabel).join(', ')}; repositories in ${benchRoot()}`);
  console.log('');
}

async function main(): Promise<void> {
  machine();
  const started = performance.now();
  const applyBySize = new Map<number, ApplyFigures>();
  for (const n of ARGS.sizes) {
    const repo = await ensureRepo(n, (s) => console.log(s));
    resetRepo(repo);
    console.log(`-- ${sizeLabel(n)} files`);
    const ready: StartJson[] = [];
    try {
      if (wants('start')) {
        try {
          const s = benchStart(repo, wants('land') ? ready : null);
          verdict(`session start (${sizeLabel(n)} files)`, s.hagent, s.git, 1.3);
        } catch (e) {
          failed(`session start (${sizeLabel(n)} files)`, e);
        }
      }
      if (wants('recycle')) {
        try {
          const s = benchRecycle(repo);
          verdict(
            `session start, recycled worktree, ${RECYCLE_CHANGED + 1} files changed since (${sizeLabel(n)} files)`,
            s.hagent,
            s.git,
            0.1,
          );
        } catch (e) {
          failed(`session start, recycled (${sizeLabel(n)} files)`, e);
        }
      }
      if (wants('apply')) {
        try {
          const a = benchApply(repo);
          applyBySize.set(n, a);
          verdict(
            `apply 3-file patch (${sizeLabel(n)} files, net of node floor ${fmt(a.node)}; raw ${fmt(a.hagent)})`,
            a.hagent - a.node,
            a.git,
            1.5,
          );
          if (a.envelope) {
            const e = a.envelope;
            const ratio = e.full / e.bare;
            const line = `apply envelope (${sizeLabel(n)} files): with watcher + staleness check ${fmt(e.full)}, with neither ${fmt(e.bare)}, ratio ${ratio.toFixed(2)} (target ≤ 1.15) ${ratio <= 1.15 ? 'PASS' : 'MISS'}`;
            const line2 = `check / apply --dry-run, 3-file patch (${sizeLabel(n)} files): check ${fmt(e.check)}, dry run ${fmt(e.dryRun)}, node -e 0 ${fmt(a.node)} (reported)`;
            lines.push(line, line2);
            console.log(line);
            console.log(line2);
          }
        } catch (e) {
          failed(`apply 3-file patch (${sizeLabel(n)} files)`, e);
        }
      }
      if (wants('land')) {
        try {
          const l = benchLand(repo, ready);
          verdict(`land (${sizeLabel(n)} files; node floor ${fmt(l.node)})`, l.hagent, l.git, 2);
        } catch (e) {
          failed(`land (${sizeLabel(n)} files)`, e);
        }
      }
    } finally {
      resetRepo(repo); // also drops the sessions still in `ready`
    }
  }
  if (applyBySize.size >= 2) {
    const small = Math.min(...applyBySize.keys());
    const large = Math.max(...applyBySize.keys());
    const a = applyBySize.get(large)!;
    const b = applyBySize.get(small)!;
    const ratio = a.hagent / b.hagent;
    const name = `apply scaling ${sizeLabel(large)} ÷ ${sizeLabel(small)} files`;
    const line = `${name}: hagent ${fmt(a.hagent)} vs ${fmt(b.hagent)}, ratio ${ratio.toFixed(2)} (target ≤ 1.2${large === 100000 && small === 1000 ? '' : ', set for 100k ÷ 1k'}) ${ratio <= 1.2 ? 'PASS' : 'MISS'}  (git apply+commit: ${fmt(a.git)} vs ${fmt(b.git)}, ratio ${(a.git / b.git).toFixed(2)})`;
    lines.push(line);
    console.log(line);
  }
  console.log('');
  console.log(`summary (${((performance.now() - started) / 1000).toFixed(0)} s):`);
  for (const l of lines) console.log(`  ${l}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
  process.exitCode = 1;
});
