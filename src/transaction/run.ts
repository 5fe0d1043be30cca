/**
 * The one transaction every writing command runs (jj's `Transaction`: write objects nothing
 * points at, then publish by moving refs). In this order, each step's new state written before
 * the old is given up, so a kill at any instant leaves either nothing or something the next
 * command finishes or puts back (transaction/recover.ts):
 *
 * 1. objects: the command has written its blobs, trees and commits (unreferenced); the note
 *    commit is written here;
 * 2. record: the intent record, once, fsynced together with the staged temp files;
 * 3. files: published (fsx's compare-and-swap renames, or a checkout step);
 * 4. index: the changed paths' entries (git started with the ref transaction's, fed here);
 * 5. refs: every ref move of the command in one atomic `git update-ref --stdin` transaction;
 * 6. the record is removed (a session end first removes its worktree and metadata).
 *
 * A failure before step 5 puts back every file hagent wrote (never one someone else changed
 * since) and the index, and removes the record; nothing moved.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isHagentError } from '../errors.js';
import {
  discardStaged,
  fsyncPaths,
  publishStaged,
  restoreIfOurs,
  stageWrites,
  type Staged,
} from '../fsx/index.js';
import {
  moveRefs,
  openIndexUpdate,
  openRefTransaction,
  readRefs,
  updateIndex,
  writeNoteCommit,
  type NoteWriter,
  type RefMove,
  type RefTransactionProcess,
} from '../git/index.js';
import { trace } from '../trace/index.js';
import { indexEntriesOf, type TransactionPlan, type WorktreePlan } from './plan.js';
import { intentPath, removeIntent, writeIntent, type TxRecord } from './record.js';

/** Steps a command adds at fixed points of the run (the apply's checks of its own writes). */
export interface TransactionHooks {
  /** After the temp files are written, while they and the record are fsynced; may refuse. */
  staged?: (staged: readonly Staged[]) => Promise<void>;
  /** Just before the first file is published; may refuse (nothing is written yet). */
  beforePublish?: () => void | Promise<void>;
  /** After the files are published, before the index; may refuse (they are put back). */
  published?: () => Promise<void>;
  /** Extra undo when a later step fails (`indexed`: the index had been updated, and is put back). */
  rollback?: (indexed: boolean) => Promise<void>;
}

/** How {@link runTransaction} runs. */
export interface TransactionOptions {
  /** The transaction id (temp file names carry it); a fresh one by default. */
  txid?: string;
  /**
   * A kept `git update-ref --stdin` for the ref moves (a long-lived server's), instead of one
   * started for this transaction; its reflog line is its own.
   */
  refs?: RefTransactionProcess;
}

/** What {@link runTransaction} did. */
export interface TransactionOutcome {
  txid: string;
  /** Warnings (a note that could not be written: the commit stands without it). */
  warnings: string[];
  /** Resolves when the published files' folders are durable (awaited before reporting done). */
  durable: Promise<void>;
}

/** A fresh transaction id: the process id and 4 random bytes (temp file names carry it). */
export function newTxid(): string {
  return `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** The record of a plan (pure), with each staged file's temp name once known. */
export function recordOf(plan: TransactionPlan, txid: string, startedAt: Date): TxRecord {
  return {
    version: 2,
    kind: plan.kind,
    txid,
    session: plan.session,
    pid: process.pid,
    startedAt: startedAt.toISOString(),
    message: plan.message,
    worktrees: plan.worktrees.map((w) => ({
      path: w.path,
      owner: w.owner,
      files: w.files.map((f) => ({ rel: f.rel, prior: f.prior, next: f.next, tmp: null })),
    })),
    refs: plan.refs.map((r) => ({ ...r })),
    rollForward: plan.rollForward,
    ...(plan.merge ? { merge: plan.merge } : {}),
    ...(plan.end
      ? { end: { worktree: plan.end.worktree, sessionFile: plan.end.sessionFile } }
      : {}),
  };
}

/**
 * Each head a session branch `hagent/<id>` is given is kept as `refs/hagent/<id>/head` too, in
 * the same ref transaction: a commit hagent made stays reachable when the user deletes the
 * branch (docs/reliability.md, "No work lost"), and `hagent doctor` restores the branch from it.
 * A branch deleted by hagent itself keeps its last head there (session end's `ended` and gc
 * decide its fate). Pure.
 */
export function keptHeads(moves: readonly RefMove[]): RefMove[] {
  const out: RefMove[] = [];
  for (const m of moves) {
    const id = /^refs\/heads\/hagent\/(.+)$/.exec(m.ref)?.[1];
    const kept = id ? `refs/hagent/${id}/head` : null;
    if (kept && m.new && !moves.some((r) => r.ref === kept))
      out.push({ ref: kept, old: null, new: m.new, unchecked: true });
  }
  return out;
}

/**
 * Runs `plan` (module header). `commonDir`: the repository's git common dir; `cwd`: where git
 * runs the ref transaction (the session worktree); `objects`: where the note commit is written.
 * @throws HagentError TARGET_MOVED when a ref's compare-and-swap fails, EXTERNAL_EDIT from the
 *   publish, or whatever a hook or a checkout step throws; nothing of the plan stays then.
 */
export async function runTransaction(
  commonDir: string,
  cwd: string,
  plan: TransactionPlan,
  objects: NoteWriter,
  hooks: TransactionHooks = {},
  options: TransactionOptions = {},
): Promise<TransactionOutcome> {
  const txid = options.txid ?? newTxid();
  const warnings: string[] = [];
  const refs = [...plan.refs, ...keptHeads(plan.refs)];
  // 1. The note commit, unreferenced until the notes ref moves with the others.
  if (plan.note) {
    const n = plan.note;
    const made = await writeNoteCommit(objects, n.parent, n.commit, n.text).then(
      (oid) => oid,
      () => null,
    );
    if (made) refs.push({ ref: n.ref, old: n.parent, new: made });
    else warnings.push('the patch text could not be stored as a note');
  }
  const record = recordOf({ ...plan, refs }, txid, new Date());
  // git's start-up overlaps the steps below; it reads the moves only at step 5.
  const refTx = options.refs?.open(cwd) ?? openRefTransaction(cwd, plan.message);
  record.gitPid = refTx.pid;
  const bytes = plan.worktrees.filter((w) => w.publish.kind === 'bytes');
  if (bytes.length > 1) throw new Error('BUG: one worktree of staged bytes per transaction');
  // Likewise git's index update: it reads the index (and takes its lock) now, its entries at 4.
  const indexTx = bytes[0] ? openIndexUpdate(bytes[0].path) : null;
  const done: { w: WorktreePlan; published: boolean; indexed: boolean }[] = [];
  let durable: Promise<void> = Promise.resolve();
  let ending = false;
  try {
    // 2–3. Record and files.
    const staging = bytes[0];
    if (staging) {
      const step = { w: staging, published: false, indexed: false };
      done.push(step);
      const writes = staging.publish.kind === 'bytes' ? staging.publish.writes : [];
      const rec = record.worktrees[plan.worktrees.indexOf(staging)]!;
      const { staged, createdDirs } = await stageWrites(
        staging.path,
        writes,
        txid,
        async (tmps) => {
          tmps.forEach((tmp, i) => {
            const f = rec.files.find((x) => x.rel === writes[i]!.rel);
            if (f) f.tmp = tmp;
          });
          await writeIntent(commonDir, record, { durable: false });
        },
        { fsync: false },
      );
      trace('tx: staged');
      try {
        // One fsync wait for the record, its folder and every temp file.
        const file = intentPath(commonDir, plan.session);
        const synced = fsyncPaths([
          file,
          path.dirname(file),
          ...staged.flatMap((s) => (s.tmp ? [s.tmp] : [])),
        ]);
        synced.catch(() => undefined); // awaited below
        await hooks.staged?.(staged);
        await synced;
        trace('tx: durable');
        await hooks.beforePublish?.();
        const folders = await publishStaged(staging.path, staged, createdDirs, txid, {
          fsyncFolders: false,
        });
        step.published = true;
        durable = fsyncPaths(folders).catch(() => undefined);
        trace('tx: published');
      } catch (error) {
        await discardStaged(staged, createdDirs);
        throw error;
      }
      await hooks.published?.();
    } else {
      await writeIntent(commonDir, record);
    }
    if (plan.end) {
      ending = true;
      await plan.end.beforeRefs();
    }
    for (const w of plan.worktrees) {
      if (w.publish.kind !== 'checkout') continue;
      const step = { w, published: false, indexed: true };
      done.push(step);
      try {
        await w.publish.run();
      } catch (error) {
        // A refusal (DIRTY_TARGET) touched nothing; any other failure may have half written.
        step.published = !(isHagentError(error) && error.code === 'DIRTY_TARGET');
        throw error;
      }
      step.published = true;
    }
    // 4. Index.
    for (const step of done) {
      if (step.w.publish.kind !== 'bytes') continue;
      step.indexed = true;
      await indexTx!.commit(indexEntriesOf(step.w.files, 'next'));
      trace('tx: index updated');
    }
    // 5. Refs, all at once.
    try {
      await refTx.commit(refs);
    } catch (error) {
      // Only a failure in git's commit phase can have moved some refs (prepare moves none).
      const late =
        isHagentError(error) && /^fatal: commit: /m.test(String(error.details.stderr ?? ''));
      if (!late || !(await movedAnyway(commonDir, cwd, refs, warnings))) throw error;
    }
    trace('tx: refs moved');
  } catch (error) {
    await Promise.all([refTx.abort(), indexTx?.abort()]);
    // A session end that started is rolled forward by recovery: its record stays.
    const kept = (await rollback(done, hooks, error)) || ending;
    await durable;
    if (!kept) await removeIntent(commonDir, plan.session);
    throw error;
  }
  // 6. Done (a session end: its worktree and metadata go first; a failure keeps the record).
  if (plan.end) {
    await plan.end.afterRefs();
    await fs.rm(plan.end.sessionFile, { force: true });
  }
  await removeIntent(commonDir, plan.session);
  return { txid, warnings, durable };
}

/**
 * After git reported a failed ref transaction: git's files backend commits ref by ref, so a
 * failure late in its commit (a full disk while it writes a reflog) can leave some refs moved
 * although git says none did. Reads them back. Every checked ref at its new id (the notes ref
 * aside: it only keeps the patch text): the transaction happened (true; the refs git did not
 * finish are completed where they can be, and a warning says so). Otherwise the refs it did move are put back (a kept head to its branch's old id), so
 * that the refusal the caller reports holds (false).
 */
async function movedAnyway(
  commonDir: string,
  cwd: string,
  refs: readonly RefMove[],
  warnings: string[],
): Promise<boolean> {
  const moves = refs.filter((m) => m.old !== m.new && !m.verify);
  let now: Map<string, string | null>;
  try {
    now = await readRefs(
      cwd,
      commonDir,
      moves.map((m) => m.ref),
    );
  } catch {
    return false;
  }
  const at = (m: RefMove) => now.get(m.ref) ?? null;
  // The notes ref only keeps the patch text beside the commit (runTransaction step 1).
  const checked = moves.filter((m) => !m.unchecked && !m.ref.startsWith('refs/notes/'));
  if (checked.length && checked.every((m) => at(m) === m.new)) {
    const rest = moves.filter((m) => at(m) !== m.new);
    const completed = await moveRefs(cwd, rest, 'hagent: completed').then(
      () => true,
      () => false,
    );
    warnings.push(
      completed || !rest.some((m) => m.ref.startsWith('refs/notes/'))
        ? 'git reported an error after moving the refs (they moved)'
        : 'the patch text could not be stored as a note',
    );
    return true;
  }
  const back: RefMove[] = [];
  for (const m of moves) {
    if (at(m) !== m.new || m.new === null) continue;
    const branch = /^refs\/hagent\/(.+)\/head$/.exec(m.ref)?.[1];
    const prior = m.unchecked
      ? (moves.find((b) => b.ref === `refs/heads/hagent/${branch}`)?.old ?? null)
      : m.old;
    back.push({ ref: m.ref, old: m.new, new: prior });
  }
  if (back.length) await moveRefs(cwd, back, 'hagent: rolled back').catch(() => undefined);
  return false;
}

/**
 * Takes back what `done` published, newest first. @returns true when something could not be
 * taken back (the record then stays for recovery).
 */
async function rollback(
  done: readonly { w: WorktreePlan; published: boolean; indexed: boolean }[],
  hooks: TransactionHooks,
  error: unknown,
): Promise<boolean> {
  let kept = false;
  for (const { w, published, indexed } of [...done].reverse()) {
    if (w.publish.kind === 'bytes') {
      if (published) {
        const leftAlone = await restoreIfOurs(w.path, w.publish.writes);
        if (isHagentError(error) && leftAlone.length) error.details.leftAlone = leftAlone;
      }
      if (indexed)
        await updateIndex(w.path, indexEntriesOf(w.files, 'prior')).catch(() => undefined);
    } else if (published) {
      kept ||= !(await w.publish.revert().then(
        () => true,
        () => false,
      ));
    }
  }
  const indexed = done.some((d) => d.w.publish.kind === 'bytes' && d.indexed);
  if (hooks.rollback) await hooks.rollback(indexed).catch(() => undefined);
  return kept;
}
