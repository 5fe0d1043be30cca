/**
 * The error codes the spawned CLI printed, for the check that every code of src/errors.ts is
 * produced through the CLI by some test (test/zz-error-codes.test.ts). Each helper that spawns
 * hagent hands its output here; the codes go, one a line, to the file named by HAGENT_CODES_LOG
 * (set by test/run.mjs). A code counts when it is printed as `error[CODE]` (stderr, hook and MCP
 * text) or as a JSON `"code": "CODE"` (a `--json` error, a journal entry).
 */
import { appendFileSync } from 'node:fs';

const CODE = /error\[([A-Z][A-Z_]+)\]|"code":\s*"([A-Z][A-Z_]+)"/g;

/** Appends every code found in `outputs` to $HAGENT_CODES_LOG; does nothing when it is unset. */
export function recordCodes(...outputs: (string | null | undefined)[]): void {
  const log = process.env.HAGENT_CODES_LOG;
  if (!log) return;
  const codes = new Set<string>();
  for (const out of outputs)
    for (const m of (out ?? '').matchAll(CODE)) codes.add((m[1] ?? m[2]) as string);
  if (codes.size) appendFileSync(log, `${[...codes].join('\n')}\n`);
}
