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
  const now = await readRef(cwd, target);
  if (now !== last.commit) {
    const onTop =
      now && (await isAncestor(cwd, last.commit, now))
        ? await onelineCommits(cwd, `${last.commit}..${now}`)
        : [];
    throw new HagentError(
      'TARGET_MOVED',
      onTop.length
        ? `${branch} moved on since the land: ${onTop.length} commit${onTop.length === 1 ? '' : 's'} on top of ${last.commit.slice(0, 12)} (${onTop.join('; ')})`
        : `${branch} no longer holds the land commit ${last.commit.slice(0, 12)} at its tip`,
      { session: session.id, target, landCommit: last.commit, commits: onTop },
      `nothing was touched; revert it instead: git revert ${last.commit.slice(0, 12)}`,
    );
  }
  // Pushed: any remote-tracking branch holds it (an upstream can be unset; the push stays).
  const remotes = await remoteBranchesContaining(cwd, last.commit);
  if (remotes.length) {
    throw new HagentError(
      'LAND_PUSHED',
      `the land commit ${last.commit.slice(0, 12)} was pushed: ${remotes.map((r) => r.replace('refs/remotes/', '')).join(', ')} hold${remotes.length === 1 ? 's' : ''} it`,
      { session: session.id, target, landCommit: last.commit, remotes },
      `nothing was touched; undo it with a new commit on ${branch} instead: git revert ${last.commit.slice(0, 12)}`,
    );
  }
  const restored = await revParse(cwd, `${last.commit}^1`);
  const changed = await diffTrees(cwd, restored, last.commit);
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
  // The land base goes back with the target: to the land base before this land, or away.
  let landBaseMove: { ref: string; newOid: string; oldOid: string } | null = null;
  let deleteLandBase = false;
  if (last.landBase) {
    // Back to the land base before that land; the ref holds the newest one (the land-base chain
    // may go on past the land with records of changes the target held already).
    const current = (await readRef(cwd, landBaseRef(session)))!;
    const before = await revParse(cwd, `${last.landBase}^1`);
    if (before === session.base) deleteLandBase = true;
    else landBaseMove = { ref: landBaseRef(session), newOid: before, oldOid: current };
    last.landBase = current;
  }
  // One transaction (transaction/run.ts): the checkout's files first, then the target and the
  // land base in one ref transaction; a kill in between is put back by the next command.
  const restore = changed.filter((c) => !untouched.includes(c.path));
  await runTransaction(
    ctx.commonDir,
    cwd,
    {
      kind: 'land-undo',
      session: session.id,
      message: `hagent land --undo ${session.id}`,
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
                    await unstagePathsHolding(checkout, last.commit, restored, untouched);
                  },
                  revert: () =>
                    restorePathsFrom(
                      checkout,
                      last.commit,
                      restore.map((c) => c.path),
                    ),
                },
              },
            ]
          : [],
      refs: [
        { ref: target, old: last.commit, new: restored },
        ...(deleteLandBase ? [{ ref: landBaseRef(session), old: last.landBase, new: null }] : []),
        ...(landBaseMove
          ? [{ ref: landBaseMove.ref, old: landBaseMove.oldOid, new: landBaseMove.newOid }]
          : []),
      ],
      note: null,
      rollForward: false,
    },
    { cwd, commonDir: ctx.commonDir, gitDir: null, store: null },
  );
  const lands =
    session.lands[session.lands.length - 1]?.commit === last.commit
      ? session.lands.slice(0, -1)
      : session.lands;
  await writeSession(ctx.commonDir, { ...session, lands });
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
