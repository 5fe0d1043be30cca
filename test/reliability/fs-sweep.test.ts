/**
 * The sweep: one command run once per file-system call it makes, the Nth call failing (EIO),
 * for every N — apply, undo, redo and land. Whatever call fails, the command either completes
 * (the call was one it may pass over, such as removing an emptied folder) or is refused as
 * IO_FAILED with the repository exactly as before and nothing left behind; either way the same
 * command then succeeds on the healthy file system. The calls are counted on a run without
 * faults first, so a new call in fsx is swept without touching this file.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  FaultyFileSystem,
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

const t = suite('file-system fault sweep');

type Command = (fx: Fixture) => Promise<unknown>;

/** How many fsx calls `run` makes on a healthy file system (then undone by `reset`). */
async function countCalls(fx: Fixture, run: Command, reset: Command): Promise<FsCall[]> {
  const fs = new FaultyFileSystem([], { skipSyncs: true });
  assert.equal(await underFaults(fs, () => run(fx)), { kind: 'ok' }, 'the healthy run');
  await reset(fx);
  return fs.calls;
}

interface Tally {
  calls: number;
  refused: number;
  completed: number;
  failures: string[];
  /** Failures at a call of a known gap (see {@link KnownGap}), apart. */
  known: string[];
}

/**
 * A window the transaction still leaves open: a failure at a call matching `call`
 * (`op path`) is set apart and printed, not counted; once no such call fails any more the test
 * fails, so the entry is removed with the fix.
 */
interface KnownGap {
  call: RegExp;
  why: string;
}

/**
 * Fails call N of `run`, for N = 1 … the calls of a healthy run, and checks the outcome (see
 * the module comment). `prepare` gives the fixture for one N (shared when `reset` brings it back).
 */
async function sweep(
  prepare: () => Promise<Fixture>,
  run: Command,
  reset: Command,
  shared: boolean,
  gap?: KnownGap,
): Promise<Tally> {
  let fx = await prepare();
  const calls = await countCalls(fx, run, reset);
  if (!shared) fx = await prepare();
  const tally: Tally = { calls: calls.length, refused: 0, completed: 0, failures: [], known: [] };
  for (let n = 1; n <= calls.length; n++) {
    if (!shared && n > 1) fx = await prepare();
    const before = captureState(fx.repo, fx.worktree);
    const fs = new FaultyFileSystem([{ at: n, errno: 'EIO' }], { skipSyncs: true });
    const out = await underFaults(fs, () => run(fx));
    const hit = fs.failed[0];
    const label = `call ${n} (${hit ? `${hit.op} ${hit.path}` : 'not reached'})`;
    const failuresBefore = tally.failures.length;
    const setAside = () => {
      if (gap && hit && gap.call.test(`${hit.op} ${hit.path}`))
        tally.known.push(...tally.failures.splice(failuresBefore));
    };
    if (out.kind === 'refused') {
      tally.refused++;
      if (out.code !== 'IO_FAILED' || out.errno !== 'EIO' || out.exit !== 1)
        tally.failures.push(
          `${label}: refused as ${out.code} ${String(out.errno)} exit ${out.exit}`,
        );
      if (!/run the command again/.test(out.hint))
        tally.failures.push(`${label}: the hint does not lead anywhere: ${out.hint}`);
      const changed = stateDiff(captureState(fx.repo, fx.worktree), before);
      if (changed) tally.failures.push(`${label}: refused but ${changed}`);
      const left = leftovers(fx.repo, fx.worktree);
      if (left.length) tally.failures.push(`${label}: left behind ${left.join(', ')}`);
      try {
        await run(fx);
      } catch (error) {
        tally.failures.push(`${label}: the next run failed: ${(error as Error).message}`);
        setAside();
        if (shared) return tally;
        continue;
      }
    } else tally.completed++;
    const left = leftovers(fx.repo, fx.worktree);
    if (left.length) tally.failures.push(`${label}: done but left behind ${left.join(', ')}`);
    try {
      assertWorktreeAtHead(fx, label);
    } catch (error) {
      tally.failures.push((error as Error).message);
    }
    setAside();
    if (shared) await reset(fx);
  }
  return tally;
}

function report(what: string, tally: Tally, gap?: KnownGap): void {
  console.log(
    `  ${what}: ${tally.calls} calls failed one by one, ${tally.refused} refused, ${tally.completed} completed`,
  );
  assert.equal(tally.failures.slice(0, 5), [], tally.failures.slice(0, 5).join('\n'));
  assert.ok(tally.calls > 0 && tally.refused > 0, what);
  if (!gap) return;
  console.log(`  KNOWN GAP: ${what}: ${gap.why}\n    ${tally.known.join('\n    ')}`);
  assert.ok(tally.known.length > 0, `${what}: the known gap is closed: remove it from the test`);
}

t('apply: a failure at every call is refused cleanly or passed over', async () => {
  const tally = await sweep(fixture, (fx) => commands.apply(fx), commands.undo, true);
  report('apply', tally);
});

t('undo and redo: a failure at every call is refused cleanly or passed over', async () => {
  const applied = async () => {
    const fx = await fixture();
    await commands.apply(fx);
    return fx;
  };
  report('undo', await sweep(applied, commands.undo, commands.redo, true));
  const undone = async () => {
    const fx = await applied();
    await commands.undo(fx);
    return fx;
  };
  report('redo', await sweep(undone, commands.redo, commands.undo, true));
});

t(
  'land (target checked out): a failure at every call is refused cleanly or passed over',
  async () => {
    const ready = async () => {
      const fx = await fixture();
      await commands.apply(fx);
      return fx;
    };
    report('land', await sweep(ready, commands.land, async () => undefined, false));
  },
);

t.run();
