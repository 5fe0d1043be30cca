/**
 * The intent record of a transaction (transaction/run.ts): one schema for every writing command,
 * written (fsynced) once, after the new objects and before the first file or ref changes, and
 * removed once every ref has moved. If hagent is killed in between, the record tells the next
 * command of the session what to finish or put back (transaction/recover.ts).
 *
 * A record of version 1 (apply and undo before this schema) is read too and seen as version 2.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { toHagentError } from '../errors.js';

/** Every kind of writing command, each recorded and recovered the same way. */
export const TX_KINDS = [
  'apply',
  'undo',
  'redo',
  'sync',
  'land',
  'land-undo',
  'update',
  'end',
] as const;
export type TxKind = (typeof TX_KINDS)[number];

const Side = z.nullable(z.object({ oid: z.string(), mode: z.string() }));

const FileSchema = z.object({
  /** Path relative to the worktree, `/`-separated. */
  rel: z.string(),
  /** Blob id and mode before (null: absent) and after (null: deleted). */
  prior: Side,
  next: Side,
  /** The staged temp file's name, relative to the worktree (bytes publishes only). */
  tmp: z.nullable(z.string()),
});

const WorktreeSchema = z.object({
  /** Absolute path of the worktree whose files change. */
  path: z.string(),
  /**
   * `session`: the session's own worktree (only hagent writes there under the session lock);
   * `checkout`: a user's checkout (a land's target): its locks are never removed by recovery.
   */
  owner: z.enum(['session', 'checkout']),
  files: z.array(FileSchema),
});

const RefSchema = z.object({
  ref: z.string(),
  old: z.nullable(z.string()),
  new: z.nullable(z.string()),
  unchecked: z.optional(z.boolean()),
});

export const RecordSchema = z.object({
  version: z.literal(2),
  kind: z.enum(TX_KINDS),
  txid: z.string(),
  session: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  /** The reflog line of the ref transaction (recovery reuses it). */
  message: z.string(),
  worktrees: z.array(WorktreeSchema),
  /** Every ref move of the command, made in one ref transaction. */
  refs: z.array(RefSchema),
  /**
   * When the refs have not moved but every file holds its new state: finish (true; the
   * session's own history) or put the files back (false; a user's checkout is never moved
   * forward by a later command).
   */
  rollForward: z.boolean(),
  /**
   * The process id of the ref transaction's git, which runs in a process group of its own and
   * may outlive a killed hagent by a moment: recovery waits for it before reading the refs.
   */
  gitPid: z.optional(z.nullable(z.number())),
  /**
   * A merge left in progress (a conflicted `session update`), which moves no ref: done when
   * `files[0]` (the worktree's MERGE_HEAD, written last) names `head`. Until then, recovery
   * puts the files and the index back and removes `files` (MERGE_HEAD, MERGE_MODE, MERGE_MSG,
   * the conflict record).
   */
  merge: z.optional(z.object({ head: z.string(), files: z.array(z.string()) })),
  /**
   * A session end (always rolled forward once recorded): its worktree folder is removed (or was
   * given to the pool), the refs move, then `sessionFile` (its metadata) is removed, in that
   * order; recovery finishes whichever steps are left.
   */
  end: z.optional(z.object({ worktree: z.string(), sessionFile: z.string() })),
});

export type TxRecord = z.infer<typeof RecordSchema>;
export type RecordFile = TxRecord['worktrees'][number]['files'][number];

/** Version 1: apply and undo's record before one schema served every command. */
const V1Schema = z.object({
  version: z.literal(1),
  txid: z.string(),
  session: z.string(),
  command: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  head: z.string(),
  commit: z.nullable(z.string()),
  message: z.string(),
  note: z.nullable(z.string()),
  targets: z.array(FileSchema),
});

/**
 * A version-1 record as version 2. Its commit may be unknown (null): `pending` then carries
 * what recovery needs to make it from the files (the message; the head is the ref's old id).
 */
export interface ReadRecord {
  record: TxRecord;
  pending: { message: string } | null;
}

/** `<git-common-dir>/hagent/tx/<session>.json`. */
export function intentPath(commonDir: string, session: string): string {
  return path.join(commonDir, 'hagent', 'tx', `${session}.json`);
}

/**
 * Writes the record atomically (rename), durably (fsync of the file and its folder) unless
 * `durable` is false: the caller then fsyncs {@link intentPath} and its folder before the first
 * file is published.
 */
export async function writeIntent(
  commonDir: string,
  record: TxRecord,
  options: { durable?: boolean } = {},
): Promise<void> {
  await writeJsonFile(intentPath(commonDir, record.session), record, options);
}

/**
 * Reads the pending record of a session: null when none, 'damaged' when its bytes are not a
 * record. A version-1 record is converted with the session's `worktree` and branch `ref`.
 * @throws HagentError IO_FAILED when the file cannot be read (the record stays).
 */
export async function readIntent(
  commonDir: string,
  session: string,
  v1?: { worktree: string; ref: string },
): Promise<ReadRecord | 'damaged' | null> {
  let raw: unknown;
  try {
    raw = await readJsonFile(intentPath(commonDir, session));
  } catch (e) {
    // Only bytes that are not a record are damage; a record that cannot be read now (EIO,
    // EACCES) is kept for the next command, which may read it.
    if (e instanceof SyntaxError) return 'damaged';
    throw toHagentError(e);
  }
  if (raw === null) return null;
  const parsed = RecordSchema.safeParse(raw);
  if (parsed.success) return { record: parsed.data, pending: null };
  const old = V1Schema.safeParse(raw);
  if (!old.success || !v1) return 'damaged';
  return fromV1(old.data, v1.worktree, v1.ref);
}

/** A version-1 record seen as version 2 (pure). */
function fromV1(o: z.infer<typeof V1Schema>, worktree: string, ref: string): ReadRecord {
  const kind: TxKind = o.command === 'undo' ? 'undo' : o.command === 'redo' ? 'redo' : 'apply';
  return {
    record: {
      version: 2,
      kind,
      txid: o.txid,
      session: o.session,
      pid: o.pid,
      startedAt: o.startedAt,
      message: `hagent ${kind}`,
      worktrees: [{ path: worktree, owner: 'session', files: o.targets }],
      refs: [{ ref, old: o.head, new: o.commit }],
      rollForward: true,
    },
    pending: o.commit === null ? { message: o.message } : null,
  };
}

/** Removes the record (missing is fine). */
export async function removeIntent(commonDir: string, session: string): Promise<void> {
  await fs.rm(intentPath(commonDir, session), { force: true });
}
