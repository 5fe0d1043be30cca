/**
 * The plan of a transaction: what one writing command will change, built by the command
 * without any write (pure description; the objects it names — blobs, trees, commits — are
 * written unreferenced before it is run), then run by transaction/run.ts.
 */
import type { TargetWrite } from '../fsx/index.js';
import type { IndexEntryUpdate, RefMove } from '../git/index.js';
import type { TxKind, RecordFile } from './record.js';

/** A blob id and mode (`100644`, `100755`, `120000`), or null for "absent". */
export type Side = { oid: string; mode: string } | null;

/** One file of a worktree the transaction changes: its state before and after. */
export interface FileChange {
  rel: string;
  prior: Side;
  next: Side;
}

/**
 * How a worktree's files get their new state:
 * - `bytes`: hagent's own staged writes (fsx: temp files, compare-and-swap renames), then the
 *   index entries of the changed paths;
 * - `checkout`: a step that writes files and index together (git's `read-tree -m -u`), with the
 *   step that takes it back (used when a later step fails before the refs move).
 */
export type Publish =
  | { kind: 'bytes'; writes: TargetWrite[] }
  | { kind: 'checkout'; run: () => Promise<void>; revert: () => Promise<void> };

/** One worktree's part of a plan. `owner` as in the record (record.ts). */
export interface WorktreePlan {
  path: string;
  owner: 'session' | 'checkout';
  files: FileChange[];
  publish: Publish;
}

/** The note a plan attaches: `text` on `commit`, in `ref` (a notes ref) whose commit is `parent` now. */
export interface NotePlan {
  ref: string;
  parent: string | null;
  commit: string;
  text: string;
}

/** Everything one writing command changes (module header). */
export interface TransactionPlan {
  kind: TxKind;
  session: string;
  /** The reflog line of the ref transaction. */
  message: string;
  worktrees: WorktreePlan[];
  /** Every ref move of the command; made in one atomic ref transaction, after the files. */
  refs: RefMove[];
  note: NotePlan | null;
  /** See the record's `rollForward` (record.ts). */
  rollForward: boolean;
  /** See the record's `merge` (record.ts): a merge left in progress, with no ref to move. */
  merge?: { head: string; files: string[] };
  /**
   * A session end (the record's `end`, record.ts): `beforeRefs` runs once the record is
   * written (the worktree into the pool), `afterRefs` once the refs moved (the worktree
   * removed); then `sessionFile` is removed. From the record on, a failure keeps the record and
   * recovery rolls the end forward: nothing of a session is lost by that, its work is kept by
   * the ref moves.
   */
  end?: {
    worktree: string;
    sessionFile: string;
    beforeRefs: () => Promise<void>;
    afterRefs: () => Promise<void>;
  };
}

/** The index entries that give `files` their `side` state (absent: removed from the index). Pure. */
export function indexEntriesOf(
  files: readonly (FileChange | RecordFile)[],
  side: 'prior' | 'next',
): IndexEntryUpdate[] {
  return files.map((f) => {
    const s = f[side];
    return s ? { path: f.rel, mode: s.mode, oid: s.oid } : { path: f.rel, mode: '0', oid: null };
  });
}

/**
 * File changes between two trees' raw diff (`git diff-tree --raw`): an all-zero mode is
 * "absent". Pure.
 */
export function changesOfDiff(
  diff: readonly {
    path: string;
    oldMode: string;
    oldOid: string;
    newMode: string;
    newOid: string;
  }[],
): FileChange[] {
  const side = (mode: string, oid: string): Side => (/^0+$/.test(mode) ? null : { oid, mode });
  return diff.map((c) => ({
    rel: c.path,
    prior: side(c.oldMode, c.oldOid),
    next: side(c.newMode, c.newOid),
  }));
}

/**
 * Whether the files a transaction will change still hold what it was planned from (jj's
 * `WorkingCopyFreshness`): a value, not a throw, so the command words the refusal
 * (STALE_FILE) with what it knows.
 */
export type Freshness = { kind: 'fresh' } | { kind: 'stale'; paths: string[] };
