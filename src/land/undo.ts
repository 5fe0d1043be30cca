/**
 * land --undo: takes a session's last land off its target.
 *
 * Only while the target still points at the land commit: the target moves back to the commit
 * before it by compare-and-swap, in one ref transaction with the session's land base (back to
 * what it was before that land), so the session is approved and not landed again and `hagent
 * land` lands it again. In a checked-out target only the files that still hold the landed bytes
 * are put back; a file changed since keeps its bytes and is listed. A land that reached the
 * target's upstream (it was pushed) is refused: undoing it here would rewrite published history.
 */
import { HagentError } from '../errors.js';
import {
  diffTrees,
  dirtyPaths,
  listWorktrees,
  readRef,
  restorePathsFrom,
  unstagePathsHolding,
  isAncestor,
  firstParentChainWithParents,
  onelineCommits,
  remoteBranchesContaining,
  revParse,
  type TreeChange,
} from '../git/index.js';
import {
  landBaseRef,
  readSession,
  writeSession,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { guardTarget } from '../session/index.js';
import { changesOfDiff, guardedWrite, runTransaction } from '../transaction/index.js';
import { loadConfig } from '../config/index.js';
import { withLandTarget } from './target-lock.js';
import { readEntry } from '../fsx/index.js';

/** JSON of `hagent land --undo`. */
export interface LandUndoResult {
  ok: true;
  session: string;
  target: string;
  /** The land commit taken off the target. */
  undone: string;
  /** Where the target points now: the commit before the land. */
  restored: string;
  /** The files the land had changed. */
  files: { path: string; status: string }[];
  /** Files of a checked-out target that changed since the land: left as they are. */
  untouched: string[];
  updatedWorktree: string | null;
}

/**
 * The land commit of a session's last land, and the land base to go back to: walking the land
 * base's first parents to the newest one that has a land commit as second parent (a land that
 * only recorded changes the target held already moved no target); else the last land record.
 */
async function lastLandCommit(
  ctx: RepoContext,
  session: Session,
): Promise<{ commit: string; landBase: string | null } | null> {
  const ref = await readRef(ctx.cwd, landBaseRef(session));
  if (ref) {
    // Each line: a land base and its parents (first: the land base before it, or the session base).
    const chain = await firstParentChainWithParents(ctx.cwd, ref, session.base);
    for (const [landBase, , landed] of chain) {
      if (landed) return { commit: landed, landBase: landBase! };
    }
    return null;
  }
  const last = session.lands[session.lands.length - 1];
  return last ? { commit: last.commit, landBase: null } : null;
}

/**
 * Undoes the last land of a session, under the session lock; journaled.
 * @throws HagentError NOTHING_TO_LAND (no land to undo), TARGET_MOVED (commits on top of the land
 *   commit, listed; or a compare-and-swap lost), LAND_PUSHED (the target's upstream holds it),
 *   DETACHED_TARGET, DIRTY_TARGET (the target is checked out in several worktrees).
 */
export async function undoLand(
  ctx: RepoContext,
  session: Session,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<LandUndoResult> {
  const config = await loadConfig(ctx, env);
  const timeoutMs = config.runtime.lockTimeoutMs;
  const { value } = await withLandTarget(ctx.commonDir, session, 'land --undo', timeoutMs, () =>
    guardedWrite(
      guardTarget(ctx, session),
      'land --undo',
      { timeoutMs, withoutWorktree: true },
      async () => {
        const r = await undoLandLocked(ctx, await readSession(ctx.commonDir, session.id));
        return { value: r, files: r.files.map((f) => f.path), head: r.restored };
      },
    ),
  );
  return value;
}

async function undoLandLocked(ctx: RepoContext, session: Session): Promise<LandUndoResult> {
  const cwd = ctx.cwd;
  if (!session.target)
    throw new HagentError(
      'DETACHED_TARGET',
      `session ${session.id} has no target branch`,
      { session: session.id },
      'there is no land to undo',
    );
  const target = session.target;
  const branch = target.replace('refs/heads/', '');
  const last = await lastLandCommit(ctx, session);
  if (!last)
    throw new HagentError(
      'NOTHING_TO_LAND',
      `session ${session.id} has no land to undo`,
      { session: session.id },
      'hagent session list shows what has landed',
    );
  const restored = await revParse(cwd, `${last.commit}^1`);
  const { changed, files, checkout, untouched } = await undoScope(ctx, {
    session: session.id,
    target,
    tip: last.commit,
    first: last.commit,
    restored,
  });
  const refMoves = await landBaseUndo(ctx, session, last);
  // One transaction (transaction/run.ts): the checkout's files first, then the target and the
  // land base in one ref transaction; a kill in between is put back by the next command.
  await runUndoTransaction(ctx, {
    session: session.id,
    message: `hagent land --undo ${session.id}`,
    checkout,
    changed,
    untouched,
    landCommit: last.commit,
    restored,
    refs: [{ ref: target, old: last.commit, new: restored }, ...refMoves],
  });
  await dropLandRecord(ctx, session, last.commit);
  return {
    ok: true,
    session: session.id,
    target,
    undone: last.commit,
    restored,
    files,
    untouched,
    updatedWorktree: checkout,
  };
}

/**
 * The paths of a land (`changed`: restored → land commit) that putting back would lose
 * something of the user's, in the checkout `checkout`, sorted: those changed since the land
 * (staged or not, untracked or ignored at the path), those with a changed, untracked or ignored
 * file below them (a folder the user made where the land deleted a file), and those that
 * cannot be reached without going through something else than a folder: a symbolic link, or a
 * file that is not itself one of the land's files taken away by this undo.
 * @throws HagentError GIT_FAILED.
 */
async function reusedOrChanged(
  checkout: string,
  changed: readonly { path: string; status: string }[],
): Promise<string[]> {
  const paths = changed.map((c) => c.path);
  const dirty = await dirtyPaths(checkout, paths);
  const out = new Set(dirty.filter((p) => paths.includes(p)));
  // Files the undo removes (the land added them) and that hold the land's bytes: in the way of nothing.
  const goes = new Set(
    changed.filter((c) => c.status === 'A' && !out.has(c.path)).map((c) => c.path),
  );
  for (const p of paths) {
    if (out.has(p)) continue;
    if (dirty.some((d) => d.startsWith(`${p}/`))) {
      out.add(p);
      continue;
    }
    const entry = await readEntry(checkout, p);
    if (
      (entry.kind === 'directory' && !paths.some((q) => q.startsWith(`${p}/`))) ||
      entry.kind === 'symlink' ||
      entry.kind === 'other' ||
      (entry.kind === 'missing' && entry.underFile !== undefined && !goes.has(entry.underFile))
    )
      out.add(p);
  }
  return [...out].sort();
}

/** A ref move of an undo's transaction (`new: null` deletes). */
interface RefMove {
  ref: string;
  old: string | null;
  new: string | null;
}

/**
 * The land base's move back with the target (session/landed.ts): to the land base before the
 * land `last`, or away when that was the session's base. The ref holds the newest land base
 * (the chain may go on past the land with records of changes the target held already).
 */
async function landBaseUndo(
  ctx: RepoContext,
  session: Session,
  last: { commit: string; landBase: string | null },
): Promise<RefMove[]> {
  if (!last.landBase) return [];
  const ref = landBaseRef(session);
  const current = (await readRef(ctx.cwd, ref))!;
  const before = await revParse(ctx.cwd, `${last.landBase}^1`);
  return [{ ref, old: current, new: before === session.base ? null : before }];
}

/**
 * Runs an undo as one transaction: the checkout's files that still hold the landed bytes back to
 * `restored` (a file changed since keeps its bytes and loses the land's index entry), then every
 * ref in one ref transaction.
 */
async function runUndoTransaction(
  ctx: RepoContext,
  undo: {
    session: string;
    message: string;
    checkout: string | null;
    changed: TreeChange[];
    untouched: string[];
    landCommit: string;
    restored: string;
    refs: RefMove[];
  },
): Promise<void> {
  const { checkout, restored, landCommit, untouched } = undo;
  const restore = undo.changed.filter((c) => !untouched.includes(c.path));
  await runTransaction(
    ctx.commonDir,
    ctx.cwd,
    {
      kind: 'land-undo',
      session: undo.session,
      message: undo.message,
      worktrees:
        checkout && (restore.length || untouched.length)
          ? [
              {
                path: checkout,
                owner: 'checkout',
                files: changesOfDiff(restore).map((f) => ({ ...f, prior: f.next, next: f.prior })),
                publish: {
                  kind: 'checkout',
                  run: async () => {
                    await restorePathsFrom(
                      checkout,
                      restored,
                      restore.map((c) => c.path),
                    );
                    // A file changed since keeps its bytes, but not the land's index entry:
                    // left staged, the landed change would go into the user's next commit.
                    await unstagePathsHolding(checkout, landCommit, restored, untouched);
                  },
                  revert: () =>
                    restorePathsFrom(
                      checkout,
                      landCommit,
                      restore.map((c) => c.path),
                    ),
                },
              },
            ]
          : [],
      refs: undo.refs,
      note: null,
      rollForward: false,
    },
    { cwd: ctx.cwd, commonDir: ctx.commonDir, gitDir: null, store: null },
  );
}

/** The session record's list of lands without `commit` when it is the last (display only). */
async function dropLandRecord(ctx: RepoContext, session: Session, commit: string): Promise<void> {
  const fresh = await readSession(ctx.commonDir, session.id);
  const lands =
    fresh.lands[fresh.lands.length - 1]?.commit === commit ? fresh.lands.slice(0, -1) : fresh.lands;
  await writeSession(ctx.commonDir, { ...fresh, lands });
}

/**
 * What an undo of the lands `first`..`tip` (one land: both the same) changes and where, checked
 * first: the target still ends at `tip`, no remote-tracking branch holds `first` (a later land
 * of the chain holds it too), one checkout of the target at most; then the files the lands
 * changed (`restored` → `tip`) and, in the checkout, those changed since that keep their bytes.
 * @throws HagentError TARGET_MOVED (commits on top, listed), LAND_PUSHED, DIRTY_TARGET.
 */
async function undoScope(
  ctx: RepoContext,
  undo: { session: string; target: string; tip: string; first: string; restored: string },
): Promise<{
  changed: TreeChange[];
  files: { path: string; status: string }[];
  checkout: string | null;
  untouched: string[];
}> {
  const cwd = ctx.cwd;
  const { target, tip, first } = undo;
  const branch = target.replace('refs/heads/', '');
  const now = await readRef(cwd, target);
  if (now !== tip) {
    const onTop =
      now && (await isAncestor(cwd, tip, now)) ? await onelineCommits(cwd, `${tip}..${now}`) : [];
    throw new HagentError(
      'TARGET_MOVED',
      onTop.length
        ? `${branch} moved on since the land: ${onTop.length} commit${onTop.length === 1 ? '' : 's'} on top of ${tip.slice(0, 12)} (${onTop.join('; ')})`
        : `${branch} no longer holds the land commit ${tip.slice(0, 12)} at its tip`,
      { session: undo.session, target, landCommit: tip, commits: onTop },
      `nothing was touched; revert it instead: git revert ${first === tip ? tip.slice(0, 12) : `${undo.restored.slice(0, 12)}..${tip.slice(0, 12)}`}`,
    );
  }
  // Pushed: any remote-tracking branch holds it (an upstream can be unset; the push stays).
  const remotes = await remoteBranchesContaining(cwd, first);
  if (remotes.length) {
    throw new HagentError(
      'LAND_PUSHED',
      `the land commit ${first.slice(0, 12)} was pushed: ${remotes.map((r) => r.replace('refs/remotes/', '')).join(', ')} hold${remotes.length === 1 ? 's' : ''} it`,
      { session: undo.session, target, landCommit: first, remotes },
      `nothing was touched; undo it with a new commit on ${branch} instead: git revert ${first === tip ? first.slice(0, 12) : `${undo.restored.slice(0, 12)}..${tip.slice(0, 12)}`}`,
    );
  }
  const changed = await diffTrees(cwd, undo.restored, tip);
  const files = changed.map((c) => ({ path: c.path, status: c.status }));
  const worktrees = (await listWorktrees(cwd, ctx.commonDir)).filter((w) => w.branch === target);
  if (worktrees.length > 1) {
    throw new HagentError(
      'DIRTY_TARGET',
      `${target} is checked out in ${worktrees.length} worktrees; hagent updates only one`,
      { files: [], worktrees: worktrees.map((w) => w.path) },
      'switch all but one of them to another branch, then undo again; nothing was touched',
    );
  }
  const checkout = worktrees[0]?.path ?? null;
  // Files changed since the land (staged or not, or in the way) keep their bytes; so does a
  // path the user reused (a folder where the land deleted a file, a file or link on the way).
  const untouched = checkout ? await reusedOrChanged(checkout, changed) : [];
  return { changed, files, checkout, untouched };
}

/** JSON of `hagent land --undo` right after a train. */
export interface TrainUndoResult {
  ok: true;
  train: true;
  target: string;
  /** The sessions whose lands were taken back, in the train's order. */
  sessions: string[];
  /** The train's land commits, in order. */
  undone: string[];
  /** Where the target points now: the commit before the train's first land. */
  restored: string;
  files: { path: string; status: string }[];
  untouched: string[];
  updatedWorktree: string | null;
}

/**
 * Takes a whole train back (land/train.ts): the target from its last land commit to the commit
 * before its first, every session's land base back, the checkout's files back (those changed
 * since keep their bytes and are listed) — one transaction, one compare-and-swap. Only while the
 * target still ends at the train's last land, the lands are still one chain and each is still its
 * session's last land; else nothing is touched.
 * @throws HagentError TARGET_MOVED, LAND_PUSHED, DIRTY_TARGET, NOTHING_TO_LAND (a session's last
 *   land is no longer the train's: undo one by one with --session).
 */
export async function undoTrain(
  ctx: RepoContext,
  train: {
    target: string;
    lands: readonly { session: string; previous: string; commit: string }[];
  },
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<TrainUndoResult> {
  const config = await loadConfig(ctx, env, train.target);
  const timeoutMs = config.runtime.lockTimeoutMs;
  const lastLand = train.lands[train.lands.length - 1];
  if (!lastLand)
    throw new HagentError('NOTHING_TO_LAND', 'the train landed nothing', {}, 'nothing to undo');
  const top = await readSession(ctx.commonDir, lastLand.session);
  const { value } = await withLandTarget(ctx.commonDir, top, 'land --undo', timeoutMs, () =>
    guardedWrite(
      guardTarget(ctx, top),
      'land --undo',
      { timeoutMs, withoutWorktree: true },
      async () => {
        const r = await undoTrainLocked(ctx, train);
        return { value: r, files: r.files.map((f) => f.path), head: r.restored };
      },
    ),
  );
  return value;
}

async function undoTrainLocked(
  ctx: RepoContext,
  train: {
    target: string;
    lands: readonly { session: string; previous: string; commit: string }[];
  },
): Promise<TrainUndoResult> {
  const cwd = ctx.cwd;
  const lands = train.lands;
  const tip = lands[lands.length - 1]!.commit;
  const restored = lands[0]!.previous;
  // Still one chain: each land's first parent is the land before it.
  for (const [i, land] of lands.entries()) {
    const parent = await revParse(cwd, `${land.commit}^1`);
    if (parent !== land.previous || (i > 0 && land.previous !== lands[i - 1]!.commit))
      throw new HagentError(
        'TARGET_MOVED',
        `the train's lands on ${train.target.replace('refs/heads/', '')} are no longer one chain (at session ${land.session})`,
        { target: train.target, session: land.session },
        'nothing was touched; take the lands back one by one: hagent land --undo --session ID',
      );
  }
  const sessions: Session[] = [];
  const refMoves: RefMove[] = [];
  for (const land of lands) {
    const session = await readSession(ctx.commonDir, land.session);
    const last = await lastLandCommit(ctx, session);
    if (last?.commit !== land.commit)
      throw new HagentError(
        'NOTHING_TO_LAND',
        `session ${land.session}'s last land is no longer the train's (${land.commit.slice(0, 12)})`,
        { session: land.session, target: train.target },
        'nothing was touched; take the lands back one by one: hagent land --undo --session ID',
      );
    sessions.push(session);
    refMoves.push(...(await landBaseUndo(ctx, session, last)));
  }
  const { changed, files, checkout, untouched } = await undoScope(ctx, {
    session: lands[lands.length - 1]!.session,
    target: train.target,
    tip,
    first: lands[0]!.commit,
    restored,
  });
  await runUndoTransaction(ctx, {
    session: lands[lands.length - 1]!.session,
    message: `hagent land --undo (train: ${lands.map((l) => l.session).join(' ')})`,
    checkout,
    changed,
    untouched,
    landCommit: tip,
    restored,
    refs: [{ ref: train.target, old: tip, new: restored }, ...refMoves],
  });
  for (const [i, session] of sessions.entries())
    await dropLandRecord(ctx, session, lands[i]!.commit);
  return {
    ok: true,
    train: true,
    target: train.target,
    sessions: lands.map((l) => l.session),
    undone: lands.map((l) => l.commit),
    restored,
    files,
    untouched,
    updatedWorktree: checkout,
  };
}
