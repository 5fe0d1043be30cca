/**
 * The suite's one way to report a test that cannot run here: it is skipped, never passed.
 *
 * `skipped(name, reason)` prints `SKIPPED: <name> — <reason>` and appends one JSON line
 * `{name, reason, runtime}` to the file named by `HAGENT_SKIP_LOG` (set by test/run.mjs), which
 * counts skips apart from passes and, when `CI` is set, fails the run on any skip not listed in
 * `HAGENT_ALLOWED_SKIPS`. Two forms:
 * - static, decided while the file loads: `testOrSkip(test, reason)` registers nothing with uvu
 *   for each test when `reason` is set, and records each one as skipped;
 * - at run time, from inside a test that found what it needs missing: `return skipped(name, why)`.
 *   uvu counts that test as passed; run.mjs takes it back out of the passes (`runtime: true`).
 */
import { appendFileSync } from 'node:fs';
import type { Callback, Test } from 'uvu';

/** Records `name` as skipped for `reason`: one printed line and one line in HAGENT_SKIP_LOG. */
export function skipped(name: string, reason: string, runtime = true): void {
  process.stdout.write(`  SKIPPED: ${name} — ${reason}\n`);
  const log = process.env.HAGENT_SKIP_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ name, reason, runtime })}\n`);
}

/**
 * `test` itself when `reason` is undefined; otherwise a stand-in with the same call shape that
 * registers nothing and records every test given to it (as `<title>: <name>`) skipped for `reason`.
 */
export function testOrSkip(test: Test, title: string, reason: string | undefined): Test {
  if (reason === undefined) return test;
  const skip = ((name: string, _fn?: Callback) =>
    skipped(`${title}: ${name}`, reason, false)) as Test;
  skip.only = skip;
  skip.skip = skip;
  skip.before = test.before;
  skip.after = test.after;
  skip.run = test.run;
  return skip;
}
