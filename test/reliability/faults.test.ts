/**
 * Proven under faults: short versions of bench/reliability/run.ts (same scenarios,
 * smaller counts, from bench/reliability/r1-kill.ts … r5-paths.ts, io-diskfull.ts): kill -9,
 * concurrent writers, an outside writer, hostile patches, hostile paths and a real full disk.
 * Each scenario returns its failures; none is expected. Full, read-only, immutable and failing
 * files are injected without root in fs-faults.test.ts, fs-faults-steps.test.ts and
 * fs-sweep.test.ts; the real full disk (a tmpfs, as root; skipped otherwise) is kept for what
 * injection cannot reach: git's own processes and hagent's direct writes into .git.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Figure } from '../../bench/reliability/common.js';
import { runDiskFull } from '../../bench/reliability/io-diskfull.js';
import { runR1 } from '../../bench/reliability/r1-kill.js';
import { runR2 } from '../../bench/reliability/r2-concurrency.js';
import { runR3 } from '../../bench/reliability/r3-outside.js';
import { runR4 } from '../../bench/reliability/r4-fuzz.js';
import { runR5 } from '../../bench/reliability/r5-paths.js';
import { skipped } from '../helpers/skip.js';

const t = suite('reliability under faults');

const SEED = Number(process.env.HAGENT_FAULT_SEED ?? 11);

/** Known bugs are asserted in bugs.test.ts; here they are set aside so the other checks still run. */
const EXIT3 = /exit 3 \(INTERNAL\) instead of a refusal/;

function expectClean(f: Figure, setAside: RegExp | null = null): void {
  const failures = setAside ? f.failures.filter((x) => !setAside.test(x)) : f.failures;
  assert.equal(failures.slice(0, 5), [], `${f.line}\n${failures.slice(0, 5).join('\n')}`);
}

t(
  'R1: applies killed with SIGKILL at random moments are finished or undone, never half-applied',
  async () => {
    const f = await runR1({ applies: 20, seed: SEED, fsckEvery: 10 });
    expectClean(f);
    assert.is(f.counts.applies, 20);
    assert.is(f.counts.halfApplied, 0);
    assert.is(f.counts.tempFilesLeft, 0);
  },
);

t(
  'R2: concurrent writers on one session: every success is in the head, every failure LOCKED or STALE_FILE',
  async () => {
    const f = await runR2({ processes: 4, patchesEach: 4, seed: SEED });
    expectClean(f);
    assert.is(f.counts.silent, 0);
    assert.is(f.counts.exit3, 0);
    assert.ok((f.counts.ok ?? 0) > 0, f.line);
  },
);

t(
  'R3: an outside writer during applies: overlaps refused, outside bytes kept, hagent writes kept',
  async () => {
    const f = await runR3({ applies: 15, seed: SEED });
    expectClean(f);
    assert.is(f.counts.outsideLost, 0);
    assert.is(f.counts.hagentLost, 0);
  },
);

t('R4: hostile patches: no internal error, nothing written on refusal', async () => {
  // watchShare 0: with the watcher on, an empty patch never settles (bugs.test.ts, BUG 1).
  const f = await runR4({ patches: 300, seed: SEED, cliEvery: 60, parallel: 2, watchShare: 0 });
  expectClean(f);
  assert.is(f.counts.internal, 0);
  assert.is(f.counts.writesOnRefusal, 0);
});

t('R5: hostile paths are PATH_DENIED through the CLI and nothing is written', async () => {
  const f = await runR5({ moveAndDeleteAll: false, concurrency: 4 });
  expectClean(f);
  assert.ok((f.counts.paths ?? 0) >= 40, f.line);
  assert.is(f.counts.denied, f.counts.attempts);
});

const DISK_FULL =
  'I/O: disk full mid-transaction: applied whole or refused with everything restored';
t(DISK_FULL, async () => {
  const f = await runDiskFull({ steps: 8, stepBytes: 24_576 });
  if (f.skipped) return skipped(DISK_FULL, f.skipped);
  expectClean(f, EXIT3);
  assert.is(f.counts.restored, f.counts.refused, f.line);
});

t.run();
