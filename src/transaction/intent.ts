/**
 * The intent record of a writing transaction: written (fsynced) before the first file changes,
 * removed after the commit is published. If hagent is killed in between, the record tells the
 * next command what to finish or undo (issue: safety envelope §3).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';

const Side = z.nullable(z.object({ oid: z.string(), mode: z.string() }));

export const IntentSchema = z.object({
  version: z.literal(1),
  txid: z.string(),
  session: z.string(),
  command: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  /** Session head the transaction started from. */
  head: z.string(),
  /** The commit, once written (before the ref moves). */
  commit: z.nullable(z.string()),
  message: z.string(),
  note: z.nullable(z.string()),
  targets: z.array(
    z.object({ rel: z.string(), prior: Side, next: Side, tmp: z.nullable(z.string()) }),
  ),
  /**
   * Refs that move with the session ref (undo's redo ref): `old` → `oid` (null: deleted), made
   * right after it, by the command or by the recovery that completes it.
   */
  refs: z.optional(
    z.array(
      z.object({ ref: z.string(), oid: z.nullable(z.string()), old: z.nullable(z.string()) }),
    ),
  ),
});

export type Intent = z.infer<typeof IntentSchema>;

/** `<git-common-dir>/hagent/tx/<session>.json`. */
export function intentPath(commonDir: string, session: string): string {
  return path.join(commonDir, 'hagent', 'tx', `${session}.json`);
}

/**
 * Writes the intent atomically (rename), durably (fsync of the file and its folder) unless
 * `durable` is false: the caller then fsyncs {@link intentPath} and its folder before the first
 * file is published.
 */
export async function writeIntent(
  commonDir: string,
  intent: Intent,
  options: { durable?: boolean } = {},
): Promise<void> {
  await writeJsonFile(intentPath(commonDir, intent.session), intent, options);
}

/** Reads the pending intent of a session; null when none. A damaged record is returned as 'damaged'. */
export async function readIntent(
  commonDir: string,
  session: string,
): Promise<Intent | 'damaged' | null> {
  let raw: unknown;
  try {
    raw = await readJsonFile(intentPath(commonDir, session));
  } catch {
    return 'damaged';
  }
  if (raw === null) return null;
  const parsed = IntentSchema.safeParse(raw);
  return parsed.success ? parsed.data : 'damaged';
}

/** Removes the intent record (missing is fine). */
export async function removeIntent(commonDir: string, session: string): Promise<void> {
  await fs.rm(intentPath(commonDir, session), { force: true });
}
