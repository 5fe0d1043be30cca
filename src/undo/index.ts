/**
 * undo: moves a session back N applied patches (or forward again with redo), updating only the
 * affected files in its worktree. Undone commits stay reachable under `refs/hagent/<id>/redo`;
 * every move is a compare-and-swap ref update with a reflog entry (design.md invariant 4).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  blobId,
  formatOfOid,
  objectFormatAt,
  storedBlobIdsOf,
  checkoutTreeDelta,
  diffTrees,
  firstParentChain,
  lsTree,
  readRef,
  type RefMove,
  isAncestor,
} from '../git/index.js';
import { readEntry } from '../fsx/index.js';
import {
  guardTarget,
  redoRef,
  sessionHead,
  sessionRef,
  type RepoContext,
  type Session,
} from '../session/index.js';
import {
  changesOfDiff,
  guardedWrite,
  runTransaction,
  type Freshness,
  type Recovery,
} from '../transaction/index.js';
import { loadConfig } from '../config/index.js';
import { mergeWaiting } from '../update/index.js';

/** JSON of `hagent undo` / `hagent undo --redo`. Commits are ids; `files` changed in the worktree. */
export interface UndoResult {
  ok: true;
  session: string;
  direction: 'undo' | 'redo';
  from: string;
  to: string;
  steps: number;
  commits: string[];
  files: { path: string; status: string }[];
  /** Commits that `hagent undo --redo` can still bring back. */
  redoable: number;
  /** What hagent finished or undid of an interrupted earlier transaction, if any. */
  recovery?: Recovery;
}

/**
 * Whether every one of `paths` on disk is as in the session head (else an outside edit would be
 * overwritten): `stale` lists those that are not. A folder on disk where the head has a folder
 * is fresh when the move names files under it (they are checked themselves); git's checkout
 * keeps untracked files in it.
 */
async function freshness(
  worktree: string,
  head: string,
  paths: readonly string[],
): Promise<Freshness> {
  const stale: string[] = [];
  const inHead = await lsTree(worktree, head, paths);
  const entries = await Promise.all(paths.map((p) => readEntry(worktree, p)));
  const files = paths.flatMap((p, i) => {
    const e = entries[i]!;
    return e.kind === 'file' ? [{ path: p, bytes: e.bytes }] : [];
  });
  const ids = await storedBlobIdsOf(worktree, files, await objectFormatAt(worktree));
  for (const [i, p] of paths.entries()) {
    const e = entries[i]!;
    const want = inHead.get(p);
    let fresh: boolean;
    // A folder where `from` has a folder (a file of the move turns it into a file or back): its
    // files are checked one by one as paths of the move themselves.
    if (want === undefined && e.kind === 'directory')
      fresh = paths.some((q) => q.startsWith(`${p}/`));
    else if (want === undefined) fresh = e.kind === 'missing';
    else if (want.mode === '120000') {
      // A symlink in the head: fresh only if the link is still there with the same target.
      const target = await fs.readlink(path.join(worktree, p)).catch(() => null);
      fresh = target !== null && blobId(Buffer.from(target), formatOfOid(want.oid)) === want.oid;
    } else
      fresh =
        e.kind === 'file' &&
        ids.get(p) === want.oid &&
        (e.executable ? '100755' : '100644') === want.mode;
    if (!fresh) stale.push(p);
  }
  return stale.length ? { kind: 'stale', paths: stale } : { kind: 'fresh' };
}

/** @throws HagentError STALE_FILE naming the first stale path (and all of them in `files`). */
function assertFresh(f: Freshness): void {
  if (f.kind === 'fresh') return;
  throw new HagentError(
    'STALE_FILE',
    `${f.paths[0]} has outside edits that the move would overwrite`,
    { path: f.paths[0]!, files: f.paths },
    'run hagent session status; commit or drop the outside edits first',
  );
}

/**
 * Refuses to move the session while a merge waits in its worktree (`MERGE_HEAD` not yet in the
 * head: `session update` stopped at conflicts, or the agent's own `git merge`). Moving the head
 * under it would check out files without the conflicts, and the next sync would record the
 * merge as resolved with the target's side dropped.
 * @throws HagentError MERGE_IN_PROGRESS with the conflicted files and how to conclude or abort.
 */
async function assertNoMergeWaiting(
  session: Session,
  head: string,
  command: 'undo' | 'redo',
): Promise<void> {
  const merge = await mergeWaiting(session, head);
  if (!merge) return;
  throw new HagentError(
    'MERGE_IN_PROGRESS',
    `a merge is in progress in ${session.worktree}: ${command} would drop its conflicts`,
    {
      session: session.id,
      worktree: session.worktree,
      mergeHead: merge.mergeHead,
      conflicted: merge.conflicted,
      unresolved: merge.unresolved,
    },
    `${merge.hint}; then ${command === 'undo' ? 'hagent undo' : 'hagent undo --redo'} again`,
  );
}

/**
 * Moves the session from `from` to `to` as one transaction: the worktree's changed files and
 * index (git's checkout of the tree difference), then the session branch and `redoMoves` (the
 * redo ref) in one ref transaction, so a kill never loses the redo ref.
 * @throws HagentError MERGE_IN_PROGRESS (a merge waits in the worktree), STALE_FILE (outside
 *   edits on a path the move changes), TARGET_MOVED.
 */
async function move(
  ctx: RepoContext,
  session: Session,
  from: string,
  to: string,
  direction: 'undo' | 'redo',
  steps: number,
  redoMoves: RefMove[],
): Promise<{ files: { path: string; status: string }[] }> {
  await assertNoMergeWaiting(session, from, direction);
  const changes = await diffTrees(ctx.cwd, from, to);
  const worktree = session.worktree;
  assertFresh(
    await freshness(
      worktree,
      from,
      changes.map((c) => c.path),
    ),
  );
  await runTransaction(
    ctx.commonDir,
    worktree,
    {
      kind: direction,
      session: session.id,
      message: `hagent ${direction} ${steps}`,
      worktrees: [
        {
          path: worktree,
          owner: 'session',
          files: changesOfDiff(changes),
          publish: {
            kind: 'checkout',
            run: () => checkoutTreeDelta(worktree, from, to, true),
            revert: () => checkoutTreeDelta(worktree, to, from, true),
          },
        },
      ],
      refs: [{ ref: sessionRef(session), old: from, new: to }, ...redoMoves],
      note: null,
      rollForward: true,
    },
    { cwd: worktree, commonDir: ctx.commonDir, gitDir: null, store: null },
  );
  return { files: changes.map((c) => ({ path: c.path, status: c.status })) };
}

/**
 * Moves the session back `steps` applied patches (default 1), under the session lock, after
 * recovering an interrupted transaction; journaled.
 * @throws HagentError UNDO_PAST_BASE (fewer patches than asked), MERGE_IN_PROGRESS (a merge
 *   waits in the worktree), STALE_FILE, TARGET_MOVED.
 */
export async function undo(
  ctx: RepoContext,
  session: Session,
  steps = 1,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<UndoResult> {
  return guarded(ctx, session, 'undo', env, () => undoLocked(ctx, session, steps));
}

/** Runs an undo or redo inside the writing envelope (lock, recovery, journal). */
async function guarded(
  ctx: RepoContext,
  session: Session,
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  body: () => Promise<UndoResult>,
): Promise<UndoResult> {
  const config = await loadConfig(ctx, env);
  const { value, recovery } = await guardedWrite(
    guardTarget(ctx, session),
    command,
    { timeoutMs: config.runtime.lockTimeoutMs },
    async () => {
      const r = await body();
      return { value: r, files: r.files.map((f) => f.path), head: r.to };
    },
  );
  if (recovery) value.recovery = recovery;
  return value;
}

async function undoLocked(ctx: RepoContext, session: Session, steps: number): Promise<UndoResult> {
  if (!Number.isInteger(steps) || steps < 1)
    throw new HagentError(
      'USAGE',
      'undo takes a positive whole number of steps',
      { steps: String(steps) },
      'e.g. hagent undo 2',
    );
  const head = await sessionHead(ctx, session);
  const chain = await firstParentChain(ctx.cwd, session.base, head);
  if (steps > chain.length) {
    throw new HagentError(
      'UNDO_PAST_BASE',
      `session ${session.id} has ${chain.length} applied patch${chain.length === 1 ? '' : 'es'}; cannot undo ${steps}`,
      { session: session.id, available: chain.length },
      chain.length ? `undo at most ${chain.length}` : 'nothing to undo: the session is at its base',
    );
  }
  const to = steps === chain.length ? session.base : chain[steps]!;
  // The redo ref keeps the furthest undone head: it stays when it is ahead of this head, else it
  // takes this head; either way it moves with the session branch.
  const redo = await readRef(ctx.cwd, redoRef(session));
  const keep = redo !== null && (await isAncestor(ctx.cwd, head, redo));
  const furthest = keep ? redo! : head;
  const { files } = await move(
    ctx,
    session,
    head,
    to,
    'undo',
    steps,
    keep ? [] : [{ ref: redoRef(session), old: redo, new: head }],
  );
  const redoable = (await firstParentChain(ctx.cwd, to, furthest)).length;
  return {
    ok: true,
    session: session.id,
    direction: 'undo',
    from: head,
    to,
    steps,
    commits: chain.slice(0, steps),
    files,
    redoable,
  };
}

/**
 * Brings back `steps` undone patches (default 1).
 * @throws HagentError NOTHING_TO_REDO (no undone patch, or a new apply came since),
 *   MERGE_IN_PROGRESS, STALE_FILE.
 */
export async function redo(
  ctx: RepoContext,
  session: Session,
  steps = 1,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<UndoResult> {
  return guarded(ctx, session, 'undo --redo', env, () => redoLocked(ctx, session, steps));
}

async function redoLocked(ctx: RepoContext, session: Session, steps: number): Promise<UndoResult> {
  if (!Number.isInteger(steps) || steps < 1)
    throw new HagentError(
      'USAGE',
      'redo takes a positive whole number of steps',
      { steps: String(steps) },
      'e.g. hagent undo --redo 2',
    );
  const head = await sessionHead(ctx, session);
  const furthest = await readRef(ctx.cwd, redoRef(session));
  const forward =
    furthest && (await isAncestor(ctx.cwd, head, furthest))
      ? (await firstParentChain(ctx.cwd, head, furthest)).reverse()
      : [];
  if (forward.length === 0)
    throw new HagentError(
      'NOTHING_TO_REDO',
      `session ${session.id} has nothing to redo`,
      { session: session.id },
      'redo brings back patches removed by hagent undo, until the next apply',
    );
  if (steps > forward.length)
    throw new HagentError(
      'NOTHING_TO_REDO',
      `only ${forward.length} undone patch${forward.length === 1 ? '' : 'es'} can be redone`,
      { session: session.id, available: forward.length },
      `redo at most ${forward.length}`,
    );
  const to = forward[steps - 1]!;
  // Redone to the furthest undone head: nothing is left to redo, and the ref goes with the move.
  const { files } = await move(
    ctx,
    session,
    head,
    to,
    'redo',
    steps,
    to === furthest ? [{ ref: redoRef(session), old: furthest, new: null }] : [],
  );
  return {
    ok: true,
    session: session.id,
    direction: 'redo',
    from: head,
    to,
    steps,
    commits: forward.slice(0, steps).reverse(),
    files,
    redoable: forward.length - steps,
  };
}
