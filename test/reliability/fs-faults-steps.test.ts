/**
 * Every write step of apply, undo, land, sync, session start and session end, failed in turn
 * with each errno a real disk gives at that step: ENOSPC (full), EROFS (read-only), EACCES
 * (permission), EIO (device). The steps are the file-system calls fsx makes, counted on a run
 * without faults, so a new step is covered without touching this file. Whatever step fails, the
 * command is refused as IO_FAILED with that errno, exit 1 and a hint to run it again, the
 * repository exactly as before (files, indexes, refs, worktrees, hagent's records) and nothing
 * left behind, and it then succeeds; or it completes, when the step is one it may pass over
 * (a folder fsync). In-process through fsx's injected file system: no root, no tmpfs, no chattr.
 * What this cannot reach (git's own processes, hagent's loose objects and locks, written with
 * node:fs directly) is the real full disk of faults.test.ts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { endSession, openRepo, readSession, startSession } from '../../src/index.js';
import type { RepoContext } from '../../src/session/index.js';
import { syncSession } from '../../src/sync/index.js';
import {
  FaultyFileSystem,
  MUTATING,
  captureState,
  leftovers,
  stateDiff,
  type FsCall,
} from '../helpers/faultfs.js';
import {
  assertWorktreeAtHead,
  commands,
  fixture,
  underFaults,
  type Fixture,
} from '../helpers/faultfs-fixture.js';
import { git } from '../helpers/index.js';
import { fsckProblem } from '../helpers/repo-checks.js';

const t = suite('file-system faults at every write step');

/** The errnos a real disk gives at each kind of step. */
const ERRNOS: [RegExp, string[]][] = [
  [
    /^(open|openSync|mkdir|mkdirSync|rename|renameSync|link|copyFile)$/,
    ['ENOSPC', 'EROFS', 'EACCES', 'EIO'],
  ],
  [/^(handle\.write|writeSync)$/, ['ENOSPC', 'EIO']],
  [/^(handle\.sync|fsyncSync)$/, ['ENOSPC', 'EIO']],
  [/^(rm|rmSync|rmdir|chmod|handle\.chmod)$/, ['EROFS', 'EACCES', 'EIO']],
];

const errnosOf = (op: string) => ERRNOS.find(([re]) => re.test(op))?.[1] ?? [];

/** One writing command under test: how to run it, to check it done, and to undo it. */
interface Command {
  name: string;
  /** The fixture in the state just before the command. */
  prepare: () => Promise<Fixture>;
  run: (fx: Fixture) => Promise<unknown>;
  /** Asserts the command's effect is there, whole. */
  done: (fx: Fixture, label: string) => void;
  /** Brings the fixture back to the state before the command; without it, a fixture a fault. */
  reset?: (fx: Fixture) => Promise<void>;
  /**
   * A window the command still leaves open: failures matching `failure` are set apart and
   * printed, not counted; once none is left the test fails, so the entry goes with the fix.
   */
  gap?: { failure: RegExp; why: string };
}

const SECOND = 'second';
const main = new Map<string, RepoContext>();
const mainCtx = async (fx: Fixture) => {
  if (!main.has(fx.repo)) main.set(fx.repo, await openRepo(fx.repo));
  return main.get(fx.repo)!;
};
const session = (fx: Fixture) => readSession(fx.ctx.commonDir, fx.id);
/**
 * `git worktree list` without hagent's pool of spare worktrees: a cache, of which a refused
 * start may have consumed one entry (taken back, it is removed, not pooled again).
 */
const worktrees = (fx: Fixture) =>
  git(fx.repo, 'worktree', 'list', '--porcelain')
    .split('\n\n')
    .filter((block) => !/^worktree .*\/\.pool\//m.test(block))
    .join('\n\n');
const applied = async () => {
  const fx = await fixture();
  await commands.apply(fx);
  return fx;
};
const outsideEdit = (fx: Fixture, k: number) =>
  writeFileSync(path.join(fx.worktree, 'a.txt'), `edited outside ${k}\n`);
let edits = 0;

const COMMANDS: Command[] = [
  {
    name: 'apply',
    prepare: fixture,
    run: (fx) => commands.apply(fx),
    done: assertWorktreeAtHead,
    reset: async (fx) => void (await commands.undo(fx)),
  },
  {
    name: 'undo',
    prepare: applied,
    run: (fx) => commands.undo(fx),
    done: assertWorktreeAtHead,
    reset: async (fx) => void (await commands.redo(fx)),
  },
  {
    name: 'land',
    prepare: applied,
    run: (fx) => commands.land(fx),
    done: (fx, label) => {
      const head = git(fx.repo, 'rev-parse', `refs/heads/hagent/${fx.id}`);
      assert.is(
        git(fx.repo, 'rev-parse', 'main^{tree}'),
        git(fx.repo, 'rev-parse', `${head}^{tree}`),
        label,
      );
      assert.is(git(fx.repo, 'status', '--porcelain', '--untracked-files=all'), '', label);
    },
  },
  {
    name: 'sync',
    prepare: async () => {
      const fx = await fixture();
      outsideEdit(fx, edits++);
      return fx;
    },
    run: async (fx) => syncSession(fx.ctx, await session(fx)),
    done: assertWorktreeAtHead,
    reset: async (fx) => outsideEdit(fx, edits++),
  },
  {
    name: 'session start',
    prepare: fixture,
    run: async (fx) => startSession(await mainCtx(fx), { name: SECOND, env: process.env }),
    done: (fx, label) => {
      assert.ok(
        existsSync(path.join(fx.ctx.commonDir, 'hagent', 'sessions', `${SECOND}.json`)),
        label,
      );
      assert.match(worktrees(fx), `branch refs/heads/hagent/${SECOND}`, label);
    },
    reset: async (fx) => void (await endSession(await mainCtx(fx), SECOND, { env: process.env })),
  },
  {
    name: 'session end',
    prepare: async () => {
      const fx = await fixture();
      await startSession(await mainCtx(fx), { name: SECOND, env: process.env });
      return fx;
    },
    run: async (fx) => endSession(await mainCtx(fx), SECOND, { env: process.env }),
    done: (fx, label) => {
      assert.not.match(worktrees(fx), `hagent/${SECOND}`, label);
      assert.not.ok(
        existsSync(path.join(fx.ctx.commonDir, 'hagent', 'sessions', `${SECOND}.json`)),
        label,
      );
    },
    reset: async (fx) =>
      void (await startSession(await mainCtx(fx), { name: SECOND, env: process.env })),
  },
];

/** The write steps of one healthy run of `c` (the fixture is put back after). */
async function writeSteps(c: Command): Promise<FsCall[]> {
  const fx = await c.prepare();
  const fs = new FaultyFileSystem([], { skipSyncs: true });
  assert.equal(await underFaults(fs, () => c.run(fx)), { kind: 'ok' }, `${c.name}: healthy run`);
  return fs.calls.filter((call) => MUTATING.test(call.op) && errnosOf(call.op).length);
}

interface Tally {
  steps: number;
  runs: number;
  refused: number;
  completed: number;
  failures: string[];
  /** Failures of the command's known gap, apart. */
  known: string[];
}

/** Fails each write step of `c` with each of its errnos; see the module comment. */
async function sweepSteps(c: Command): Promise<Tally> {
  const steps = await writeSteps(c);
  const fresh = !c.reset;
  let fx = await c.prepare();
  const tally: Tally = {
    steps: steps.length,
    runs: 0,
    refused: 0,
    completed: 0,
    failures: [],
    known: [],
  };
  for (const step of steps) {
    for (const errno of errnosOf(step.op)) {
      if (fresh && tally.runs > 0) fx = await c.prepare();
      tally.runs++;
      const label = `${c.name}: ${errno} at step ${step.n} (${step.op} ${path.basename(step.path)})`;
      const before = captureState(fx.repo, fx.worktree);
      const wtBefore = worktrees(fx);
      const fs = new FaultyFileSystem([{ at: step.n, errno }], { skipSyncs: true });
      const out = await underFaults(fs, () => c.run(fx));
      const fail = (what: string) =>
        (c.gap?.failure.test(what) ? tally.known : tally.failures).push(`${label}: ${what}`);
      if (fs.failed.length === 0) fail('the step was never reached (the run took another path)');
      if (out.kind === 'refused') {
        tally.refused++;
        if (out.code !== 'IO_FAILED' || out.errno !== errno || out.exit !== 1)
          fail(`refused as ${out.code} ${String(out.errno)} exit ${out.exit}`);
        if (!/run the command again/.test(out.hint)) fail(`the hint leads nowhere: ${out.hint}`);
        const changed = stateDiff(captureState(fx.repo, fx.worktree), before);
        if (changed) fail(`refused but ${changed}`);
        if (worktrees(fx) !== wtBefore)
          fail(`refused but the worktrees changed:\n${worktrees(fx)}`);
        try {
          await withHealthy(() => c.run(fx));
        } catch (error) {
          fail(`the next run failed: ${(error as Error).message}`);
          if (!fresh) return tally;
          continue;
        }
      } else tally.completed++;
      const left = leftovers(fx.repo, fx.worktree);
      if (left.length) fail(`left behind ${left.join(', ')}`);
      try {
        c.done(fx, label);
      } catch (error) {
        fail((error as Error).message);
      }
      if (c.reset) await withHealthy(() => c.reset!(fx));
    }
  }
  const f = fsckProblem(fx.repo);
  if (f) tally.failures.push(`${c.name}: at the end: ${f}`);
  return tally;
}

/** Runs a library call on a healthy file system that skips fsyncs (the tests never lose power). */
function withHealthy<T>(fn: () => Promise<T>): Promise<T> {
  return underFaults(new FaultyFileSystem([], { skipSyncs: true }), fn).then((out) => {
    if (out.kind === 'refused') throw new Error(`refused as ${out.code}: ${out.hint}`);
    return undefined as T;
  });
}

for (const c of COMMANDS) {
  t(`${c.name}: ENOSPC, EROFS, EACCES and EIO at each write step are refused cleanly`, async () => {
    const tally = await sweepSteps(c);
    console.log(
      `  ${c.name}: ${tally.steps} write steps, ${tally.runs} faults, ${tally.refused} refused, ${tally.completed} passed over`,
    );
    assert.equal(tally.failures.slice(0, 5), [], tally.failures.slice(0, 5).join('\n'));
    assert.ok(tally.steps > 0 && tally.refused > 0, `${c.name}: nothing was swept`);
    if (!c.gap) return;
    console.log(`  KNOWN GAP: ${c.name}: ${c.gap.why}; ${tally.known.length} faults:`);
    console.log(`    ${tally.known.map((k) => k.split('\n')[0]).join('\n    ')}`);
    assert.ok(
      tally.known.length > 0,
      `${c.name}: the known gap is closed: remove it from the test`,
    );
  });
}

t.run();
