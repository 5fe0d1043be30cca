/**
 * session update: brings the current target into a session, the way out of a land conflict.
 *
 * A clean merge is made without touching anything but the files it changes: the merged tree from
 * `git merge-tree --write-tree`, the worktree moved to it with `read-tree -m -u`, then a merge
 * commit (parents: the session head, the target) and a compare-and-swap of the session branch.
 * Its merge base is the session's land base, not the common ancestor. A merge with conflicts is
 * left to the agent as git would leave it — conflict markers in the files, unmerged index
 * entries, `MERGE_HEAD` — and `hagent sync` concludes it as the merge commit once every conflict
 * is resolved with `git add`, or an apply whose patch resolves every conflict does, its one commit
 * the merge commit (./resolve.ts). The next land then starts from that target commit
 * (session/landed.ts), so only what the session changed since lands.
 */
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { cappedList } from '../output/index.js';
import {
  checkoutTreeDelta,
  commitTree,
  diffTrees,
  looseObjectStore,
  lsTree,
  mergeTrees,
  mergeTreesForWorktree,
  pathsInTheWay,
  readRef,
  readRefs,
  readSessionNote,
  sessionNotesRef,
  writeNoteCommit,
  type RefMove,
  treeOf,
  updateIndex,
  worktreeGitDirSync,
  writeTreeWithChanges,
  unmergedEntries,
  type ConflictStage,
  type TreeChange,
  mergeBase,
  mergeStateFiles,
  removeMergeState,
  writeMergeState,
  isAncestor,
  shortId,
  newestMerge,
  firstParentsOldestFirst,
  commitMessageOf,
} from '../git/index.js';
import { loadConfig } from '../config/index.js';
import { checkPath, type Policy } from '../policy/index.js';
import {
  guardTarget,
  headChange,
  outsideEdits,
  readLandBase,
  readSessionRefs,
  retireRedoMoves,
  sessionHead,
  sessionRef,
  sessionStatus,
  treeIds,
  type ChangedFile,
  type RepoContext,
  type Session,
} from '../session/index.js';
import {
  changesOfDiff,
  guardedWrite,
  indexEntriesOf,
  runTransaction,
  type Recovery,
} from '../transaction/index.js';
import {
  conflictRecordPath,
  markersLeft,
  readConflictRecord,
  writeConflictRecord,
} from './conflicts.js';

export {
  conflictBlockLine,
  markersLeft,
  readConflictRecord,
  removeConflictRecord,
  type ConflictRecord,
} from './conflicts.js';
export {
  assertResolvedBy,
  concludeMerge,
  mergedTreeWith,
  moveConflictRecord,
  readMergeHead,
  readMergeState,
  restoreUnmerged,
  unresolvedAfter,
  writtenInWorktree,
  type MergeState,
  type Unresolved,
} from './resolve.js';
import { writeUnmerged } from './resolve.js';
export {
  updateAllRefusal,
  updateAllSessions,
  type SessionUpdateReport,
  type UpdateAllResult,
  type UpdateOutcome,
} from './all.js';

/** JSON of `hagent session update`. */
export interface UpdateResult {
  ok: true;
  session: string;
  target: string;
  /** The target commit brought in. */
  merged: string;
  /**
   * The merge commit on the session branch; null when up to date or when conflicts wait for the
   * agent.
   */
  commit: string | null;
  parent: string;
  /** Files the merge changed in the worktree. */
  files: ChangedFile[];
  /**
   * Files with conflict markers: resolve them in the worktree and `git add` them, then `hagent
   * sync`; or resolve them all in one apply.
   */
  conflicts: string[];
  upToDate: boolean;
  /**
   * Files in the worktree hagent never commits (a symlink, a path the policy denies), left in
   * place untouched by the update; absent when there are none.
   */
  leftInPlace?: { path: string; reason: string }[];
  recovery?: Recovery;
}

/**
 * The refusal an update that stopped at conflicts ends with: the merge is left in progress in
 * the worktree (MERGE_HEAD, markers, unmerged entries) for the user or agent to resolve, so the
 * command did not finish its job and exits 1. `MERGE_UNRESOLVED` is the code `hagent sync` gives
 * for the same state; `details.files` lists every conflicted file (the message names the first
 * ones). The hint names both ways on: conclude with sync (or one apply), or give up the merge
 * with git's own `merge --abort` (hagent committed nothing, so the session is as before).
 */
export function conflictsRefusal(r: UpdateResult, worktree: string): HagentError {
  const n = r.conflicts.length;
  return new HagentError(
    'MERGE_UNRESOLVED',
    `merging ${r.target.replace('refs/heads/', '')} into session ${r.session} stopped at ${n} conflicted file${n === 1 ? '' : 's'}: ${cappedList(r.conflicts)}`,
    { session: r.session, worktree, files: [...r.conflicts] },
    resolveHint(worktree, r.session),
  );
}

/** How to finish a merge left with conflicts in `worktree`, or give it up (git's own abort). */
function resolveHint(worktree: string, session: string): string {
  return `in ${worktree} edit each file to the lines you want (remove the <<<<<<< ======= >>>>>>> markers) and git add it, then run hagent sync --session ${session} to conclude the merge (or resolve them all in one hagent apply); to give the merge up instead: git -C ${worktree} merge --abort`;
}

/** True while a merge is in progress in the worktree (`MERGE_HEAD` in its git dir). */
export function mergeInProgress(worktree: string): boolean {
  const gitDir = worktreeGitDirSync(worktree);
  return !!gitDir && existsSync(path.join(gitDir, 'MERGE_HEAD'));
}

/** A merge waiting in a session worktree, as `hagent session status` shows it. */
export interface MergeWaiting {
  /** The commit being merged (`MERGE_HEAD`). */
  mergeHead: string;
  /** True when `hagent session update` left it (its conflict record names it); false: the agent's own `git merge`. */
  byUpdate: boolean;
  /** Every path the merge left conflicted (unmerged, or recorded by the update). */
  conflicted: string[];
  /** Those still unresolved: unmerged in the index, or still holding a conflict block. */
  unresolved: string[];
  /** How to finish it, or give it up. */
  hint: string;
}

/**
 * The merge in progress in a session's worktree over its head, read only (nothing concluded or
 * cleaned up: a `MERGE_HEAD` the head holds already is the trace of a concluded merge, and counts
 * as none); null when there is none.
 * @throws HagentError GIT_FAILED.
 */
export async function mergeWaiting(
  session: Pick<Session, 'id' | 'worktree'>,
  head: string,
): Promise<MergeWaiting | null> {
  const worktree = session.worktree;
  const gitDir = worktreeGitDirSync(worktree);
  if (!gitDir) return null;
  const text = await fs.readFile(path.join(gitDir, 'MERGE_HEAD'), 'utf8').catch(() => '');
  const mergeHead = /^[0-9a-f]{40,64}/.exec(text)?.[0] ?? null;
  if (!mergeHead || (await isAncestor(worktree, mergeHead, head))) return null;
  const [record, stages] = await Promise.all([
    readConflictRecord(worktree, mergeHead, head),
    unmergedEntries(worktree),
  ]);
  const unmerged = [...new Set(stages.map((st) => st.path))];
  const conflicted = [...new Set([...unmerged, ...(record?.files ?? [])])].sort();
  const marked = await markersLeft(
    worktree,
    (record?.files ?? []).filter((f) => !unmerged.includes(f)),
  );
  const unresolved = [...new Set([...unmerged, ...marked.map((m) => m.path)])].sort();
  const s = session.id;
  const hint = unresolved.length
    ? resolveHint(worktree, s)
    : `every conflict is resolved: conclude the merge with hagent sync --session ${s}; to give it up instead: git -C ${worktree} merge --abort`;
  return { mergeHead, byUpdate: record !== null, conflicted, unresolved, hint };
}

/**
 * `sessionStatus` with the merge waiting in the session's worktree ({@link mergeWaiting}; null
 * when none): what `hagent session status` and the MCP `status` tool report.
 * @throws HagentError SESSION_NOT_FOUND, GIT_FAILED.
 */
export async function sessionStatusWithMerge(ctx: RepoContext, id?: string) {
  const s = await sessionStatus(ctx, id);
  return { ...s, merge: s.worktreeExists && s.head ? await mergeWaiting(s, s.head) : null };
}

/** Options of {@link updateSession}. */
export interface UpdateOptions {
  /** Replay the session's patches on the target instead of merging it (`--rebase`). */
  rebase?: boolean;
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Merges the session's target into the session (or, with `rebase`, replays the session's
 * patches on it), under the session lock; journaled.
 * @throws HagentError DETACHED_TARGET, TARGET_MOVED (the target is gone, or the branch moved
 *   meanwhile), STALE_FILE (outside edits pending: sync them first), MERGE_IN_PROGRESS,
 *   LAND_CONFLICT (rebase only: a patch does not replay cleanly; nothing was written).
 */
export async function updateSession(
  ctx: RepoContext,
  session: Session,
  options: UpdateOptions = {},
): Promise<UpdateResult> {
  const config = await loadConfig(ctx, options.env ?? {});
  const { value, recovery } = await guardedWrite(
    guardTarget(ctx, session),
    options.rebase ? 'update --rebase' : 'update',
    { timeoutMs: config.runtime.lockTimeoutMs },
    async () => {
      const r = await updateLocked(ctx, session, !!options.rebase, config.policy);
      return { value: r, files: r.files.map((f) => f.path), head: r.commit ?? r.parent };
    },
  );
  if (recovery) value.recovery = recovery;
  return value;
}

/**
 * Outside edits pending in the worktree get their own commit (hagent sync) before an update
 * mixes the target's changes into the files. What sync never commits — a symlink, a path the
 * policy denies — cannot be synced, so it does not block: it stays in place, untouched (read-tree
 * leaves files it does not change alone, and refuses over one it would), and is reported.
 * @returns the pending files left in place, with why hagent never commits them.
 * @throws HagentError STALE_FILE naming the files sync would commit.
 */
async function assertNoPendingEdits(
  session: Session,
  policy: Policy,
): Promise<{ path: string; reason: string }[]> {
  const left: { path: string; reason: string }[] = [];
  const pending = [];
  for (const p of await outsideEdits(session.worktree)) {
    const reason = await neverCommitted(session.worktree, p.path, policy);
    if (reason) left.push({ path: p.path, reason });
    else pending.push(p);
  }
  if (!pending.length) return left;
  throw new HagentError(
    'STALE_FILE',
    `session ${session.id} has ${pending.length} outside ` +
      `edit${pending.length === 1 ? '' : 's'} pending (${pending.map((p) => p.path).join(', ')})`,
    { session: session.id, path: pending[0]!.path, files: pending.map((p) => p.path) },
    `keep them first with hagent sync --session ${session.id} (or drop them), then update again`,
  );
}

/** Why sync never commits worktree path `rel` (sync/policySkips' rule), or null when it does. */
async function neverCommitted(
  worktree: string,
  rel: string,
  policy: Policy,
): Promise<string | null> {
  try {
    checkPath(rel, policy);
  } catch (e) {
    return (e as Error).message;
  }
  const st = await fs.lstat(path.join(worktree, rel)).catch(() => null);
  return st?.isSymbolicLink() ? 'a symbolic link' : null;
}

/**
 * The merge base is what the session and the target agree on: their common ancestor with what
 * the session has landed since (session/landed.ts) on top — a line the user changed after a
 * land is the user's change, not a conflict — and the ancestor alone for a session started on
 * another branch, whose files the target never had.
 * Returns that tree-ish and the loose object store of the head (for the merge).
 */
async function agreedBase(ctx: RepoContext, session: Session, head: string, merged: string) {
  const [landBase, store, common] = await Promise.all([
    readLandBase(ctx, session, head),
    looseObjectStore(ctx.commonDir, head),
    mergeBase(ctx.cwd, head, merged).then((mb) => mb || session.base),
  ]);
  let agreed = landBase.since === 'target' ? landBase.treeish : common;
  if (landBase.since === 'landed') {
    const landedChanges = await diffTrees(ctx.cwd, session.base, landBase.treeish);
    if (landedChanges.length)
      agreed = await writeTreeWithChanges(ctx.cwd, common, landedChanges.map(headChange));
  }
  return { agreed, store };
}

async function updateLocked(
  ctx: RepoContext,
  session: Session,
  rebase: boolean,
  policy: Policy,
): Promise<UpdateResult> {
  const worktree = session.worktree;
  if (!session.target)
    throw new HagentError(
      'DETACHED_TARGET',
      `session ${session.id} has no target branch (it was started on a detached HEAD)`,
      { session: session.id },
      'there is nothing to update it with; merge the branch you want yourself',
    );
  const target = session.target;
  const branch = target.replace('refs/heads/', '');
  const [head, merged] = await Promise.all([sessionHead(ctx, session), readRef(ctx.cwd, target)]);
  if (!merged)
    throw new HagentError(
      'TARGET_MOVED',
      `target branch ${target} no longer exists`,
      { target },
      'recreate the branch, then update again',
    );
  const base: Omit<UpdateResult, 'commit' | 'upToDate'> = {
    ok: true as const,
    session: session.id,
    target,
    merged,
    parent: head,
    files: [],
    conflicts: [],
  };
  if (mergeInProgress(worktree)) {
    throw new HagentError(
      'MERGE_IN_PROGRESS',
      `a merge is in progress in ${worktree}`,
      { session: session.id, worktree },
      `resolve the conflicts in the files git lists (git -C ${worktree} status) and git add them, then run hagent sync --session ${session.id} to conclude it; or apply one patch that resolves them all; or give it up: git -C ${worktree} merge --abort`,
    );
  }
  if (await isAncestor(ctx.cwd, merged, head)) return { ...base, commit: null, upToDate: true };
  const left = await assertNoPendingEdits(session, policy);
  if (left.length) base.leftInPlace = left;
  if (rebase) return rebaseLocked(ctx, session, head, merged, base);
  const { agreed, store } = await agreedBase(ctx, session, head, merged);
  const [baseTree, headTree, targetTree] = await treeIds(ctx.cwd, [agreed, head, merged]);
  // Conflict markers are labelled as `git merge <branch>` in the worktree labels them.
  const baseLabel = await shortId(ctx.cwd, agreed);
  const m = await mergeTreesForWorktree(ctx.cwd, store, baseTree!, headTree!, targetTree!, {
    ours: 'HEAD',
    theirs: branch,
    base: baseLabel,
  });
  const tree = m.tree;
  const changes = await diffTrees(worktree, headTree!, tree);
  await assertNothingInTheWay(session, changes);
  if (!m.clean) {
    await leaveMergeInProgress(
      ctx,
      worktree,
      { head, merged },
      branch,
      headTree!,
      tree,
      m.conflicts,
      m.stages,
      { base: baseTree!, ours: headTree!, theirs: targetTree! },
      session.id,
    );
    return {
      ...base,
      commit: null,
      upToDate: false,
      files: changes.map((c) => ({ path: c.path, status: c.status })),
      conflicts: m.conflicts,
    };
  }
  const message =
    `hagent: merge ${branch} into session ${session.id}\n\n` +
    `Brings ${branch} at ${merged.slice(0, 12)} into the session (hagent session update).\n\n` +
    `Hagent-Session: ${session.id}\nHagent-Op: update\n`;
  const commit = await commitTree(worktree, tree, [head, merged], message);
  await moveSession(
    ctx,
    session,
    headTree!,
    tree,
    [{ ref: sessionRef(session), old: head, new: commit }],
    `hagent update: merged ${branch}`,
  );
  return {
    ...base,
    commit,
    upToDate: false,
    files: changes.map((c) => ({ path: c.path, status: c.status })),
  };
}

/**
 * Refuses, before anything is written, a worktree change that `read-tree -m -u` would make over
 * a file that is not the session's: an untracked or ignored file (a build output, a local
 * settings file) at a path the target now tracks. git's own merge overwrites an ignored one.
 * @throws HagentError DIRTY_TARGET naming the paths.
 */
async function assertNothingInTheWay(
  session: Session,
  changes: readonly TreeChange[],
): Promise<void> {
  const inTheWay = await pathsInTheWay(session.worktree, changes);
  if (inTheWay.length === 0) return;
  const n = inTheWay.length;
  throw new HagentError(
    'DIRTY_TARGET',
    `the update would overwrite ${n} untracked or ignored file${n === 1 ? '' : 's'} in the ` +
      `worktree of session ${session.id}: ${inTheWay.join(', ')}`,
    { session: session.id, files: inTheWay, path: inTheWay[0]!, worktree: session.worktree },
    `nothing was written; in ${session.worktree}, move ${n === 1 ? 'it' : 'them'} out of the ` +
      `worktree (or delete ${n === 1 ? 'it' : 'them'}), then run hagent session update --session ` +
      `${session.id} again: the target's version${n === 1 ? '' : 's'} then ` +
      `take${n === 1 ? 's' : ''} ${n === 1 ? 'its' : 'their'} place`,
  );
}

/**
 * Leaves a conflicted merge in the worktree as `git merge` would: the merged tree checked out
 * (conflict markers in text files), the unmerged index entries git writes for each conflict
 * (`stages`: 1 the merge base's, 2 the session's, 3 the target's; for a rename/modify conflict
 * all three at the new path), and `MERGE_HEAD` naming the target commit, so `git status` shows
 * the conflicts, `git checkout --ours/--theirs` and `git add` resolve them and `hagent sync`
 * concludes the merge. The conflicted paths are recorded beside it (./conflicts.ts).
 * @throws HagentError DIRTY_TARGET (git refused to update the worktree), LAND_CONFLICT (a file
 *   where the other side has a folder), GIT_FAILED.
 */
async function leaveMergeInProgress(
  ctx: RepoContext,
  worktree: string,
  { head, merged }: { head: string; merged: string },
  branch: string,
  headTree: string,
  tree: string,
  conflicts: readonly string[],
  stages: readonly ConflictStage[],
  trees: { base: string; ours: string; theirs: string },
  sessionId: string,
): Promise<void> {
  const [base, ours, theirs] = await Promise.all(
    [trees.base, trees.ours, trees.theirs].map((t) => lsTree(ctx.cwd, t, conflicts)),
  );
  // A path no side has is one git made up to keep both sides (a file where the other side has a
  // folder: `dir~<commit>`): git's stages cannot say that conflict, so it is refused, not
  // half-left.
  const madeUp = conflicts.filter((p) => ![base, ours, theirs].some((m) => m!.has(p)));
  if (madeUp.length) {
    throw new HagentError(
      'LAND_CONFLICT',
      `merging ${branch} into the session meets a file where the other side has a folder: ` +
        `${madeUp.join(', ')}`,
      { files: [...madeUp] },
      `nothing was written; in ${worktree}, move or remove the file or folder in the way (then ` +
        `hagent sync), and update again`,
    );
  }
  const gitDir = worktreeGitDirSync(worktree);
  if (!gitDir)
    throw new HagentError('GIT_FAILED', `${worktree} has no .git file naming its git dir`, {
      worktree,
    });
  const files = changesOfDiff(await diffTrees(worktree, headTree, tree));
  const mergeFiles = [...mergeStateFiles(gitDir), conflictRecordPath(gitDir)];
  const removeMergeFiles = () =>
    Promise.all([
      removeMergeState(gitDir),
      fs.rm(conflictRecordPath(gitDir), { force: true }),
    ]).then(() => undefined);
  // No ref moves: MERGE_HEAD, written last, is the step that makes the merge in progress (the
  // record's `merge`); until it holds `merged`, recovery puts the files and the index back.
  await runTransaction(
    ctx.commonDir,
    worktree,
    {
      kind: 'update',
      session: sessionId,
      message: `hagent update: merging ${branch}`,
      worktrees: [
        {
          path: worktree,
          owner: 'session',
          files,
          publish: {
            kind: 'checkout',
            run: async () => {
              await checkoutTreeDelta(worktree, headTree, tree);
              await writeUnmerged(worktree, stages, conflicts);
              await writeConflictRecord(gitDir, {
                mergeHead: merged,
                head,
                tree,
                files: [...conflicts],
              });
              // MERGE_HEAD last: it makes the merge in progress (git/merge-state.ts).
              await writeMergeState(gitDir, {
                head: merged,
                mode: 'no-ff',
                message:
                  `Merge branch '${branch}' into the session\n\n` +
                  `# Conflicts:\n${conflicts.map((c) => `#\t${c}\n`).join('')}`,
              });
            },
            revert: async () => {
              await removeMergeFiles();
              await updateIndex(worktree, indexEntriesOf(files, 'next'));
              await checkoutTreeDelta(worktree, tree, headTree);
            },
          },
        },
      ],
      refs: [],
      note: null,
      rollForward: false,
      merge: { head: merged, files: mergeFiles },
    },
    { cwd: worktree, commonDir: ctx.commonDir, gitDir: null, store: null },
  );
}

/**
 * Replays the session's own commits (first-parent, since its base, leaving out what the target
 * holds) one by one on the target, each as the three-way merge of the target-so-far
 * and the commit over its parent — in memory, nothing written until every one is clean. Then the
 * worktree moves to the new head's tree and the branch by compare-and-swap; the old head stays
 * reachable as `refs/hagent/<id>/rebased/<old head>`. Each replayed commit keeps its message
 * (and so its trailers); its note is copied.
 * @throws HagentError LAND_CONFLICT naming the commit and files; nothing was written.
 */
async function rebaseLocked(
  ctx: RepoContext,
  session: Session,
  head: string,
  onto: string,
  result: Omit<UpdateResult, 'commit' | 'upToDate'>,
): Promise<UpdateResult> {
  const worktree = session.worktree;
  const branch = result.target.replace('refs/heads/', '');
  // Replaying commits is right only for plain history that never landed: a commit replayed on a
  // target that changed its landed lines since (a revert, an edit) or a merge commit replayed as
  // its first-parent diff would bring back what the user took out. The merge knows better.
  const [landBase, merges] = await Promise.all([
    readLandBase(ctx, session, head),
    newestMerge(ctx.cwd, `${session.base}..${head}`),
  ]);
  if (landBase.since !== 'base' || merges) {
    throw new HagentError(
      'LAND_CONFLICT',
      `session ${session.id} ${merges ? 'has merge commits' : 'has landed work'}, which a ` +
        `rebase would replay wrongly`,
      { session: session.id },
      `merge instead: hagent session update --session ${session.id}`,
    );
  }
  // Every commit since the base, not since the last land: a partial land leaves work in commits
  // before it, and a commit whose change is on the target already replays as nothing.
  const commits = await firstParentsOldestFirst(ctx.cwd, `${session.base}..${head}`, [onto]);
  const store = await looseObjectStore(ctx.commonDir, head);
  let tip = onto;
  let tipTree = await treeOf(worktree, onto);
  const replayed: { from: string; to: string }[] = [];
  for (const c of commits) {
    const [parentTree, tree] = await Promise.all([treeOf(worktree, `${c}^1`), treeOf(worktree, c)]);
    const m = await mergeTrees(ctx.cwd, store, parentTree, tipTree, tree);
    if (!m.clean) {
      throw new HagentError(
        'LAND_CONFLICT',
        `the session's commit ${c.slice(0, 12)} does not replay on ${branch}: conflicts in ` +
          `${m.conflicts.join(', ')}`,
        { session: session.id, commit: c, files: m.conflicts },
        `nothing was written; merge instead: hagent session update --session ${session.id} ` +
          `(without --rebase: it leaves the conflicts to resolve in the worktree, then hagent ` +
          `sync --session ${session.id})`,
      );
    }
    if (m.tree === tipTree) continue; // already on the target
    const message = await commitMessageOf(ctx.cwd, c);
    tip = await commitTree(worktree, m.tree, [tip], `${message}\n`);
    tipTree = m.tree;
    replayed.push({ from: c, to: tip });
  }
  const headTree = await treeOf(worktree, head);
  const changes = await diffTrees(worktree, headTree, tipTree);
  await assertNothingInTheWay(session, changes);
  // The replayed commits keep their notes: note commits chained in the session's notes ref,
  // written before anything moves, and the ref moved with the session branch.
  const notesRef = sessionNotesRef(session.id);
  const notesOld = (await readRefs(worktree, ctx.commonDir, [notesRef])).get(notesRef) ?? null;
  let notesNew = notesOld;
  const writer = {
    cwd: worktree,
    commonDir: ctx.commonDir,
    gitDir: store ? worktreeGitDirSync(worktree) : null,
    store,
  };
  for (const r of replayed) {
    const note = await readSessionNote(ctx.cwd, session.id, r.from);
    if (note !== null) notesNew = await writeNoteCommit(writer, notesNew, r.to, note);
  }
  await moveSession(
    ctx,
    session,
    headTree,
    tipTree,
    [
      { ref: sessionRef(session), old: head, new: tip },
      // The head before the rebase stays reachable (named after itself: no compare-and-swap).
      { ref: `refs/hagent/${session.id}/rebased/${head}`, old: null, new: head, unchecked: true },
      { ref: notesRef, old: notesOld, new: notesNew },
    ],
    `hagent update: rebased on ${branch}`,
  );
  return {
    ...result,
    commit: tip,
    upToDate: false,
    files: changes.map((c) => ({ path: c.path, status: c.status })),
  };
}

/**
 * Brings the session from `fromTree` to `toTree` as one transaction: the worktree's changed
 * files and index (git's checkout of the difference), then `refs` with the redo ref retired,
 * in one ref transaction (transaction/run.ts).
 * @throws HagentError DIRTY_TARGET (git refused the checkout), TARGET_MOVED.
 */
async function moveSession(
  ctx: RepoContext,
  session: Session,
  fromTree: string,
  toTree: string,
  refs: RefMove[],
  message: string,
): Promise<void> {
  const worktree = session.worktree;
  const { redo } = await readSessionRefs(ctx, session);
  await runTransaction(
    ctx.commonDir,
    worktree,
    {
      kind: 'update',
      session: session.id,
      message,
      worktrees: [
        {
          path: worktree,
          owner: 'session',
          files: changesOfDiff(await diffTrees(worktree, fromTree, toTree)),
          publish: {
            kind: 'checkout',
            run: () => checkoutTreeDelta(worktree, fromTree, toTree),
            revert: () => checkoutTreeDelta(worktree, toTree, fromTree),
          },
        },
      ],
      refs: [...refs, ...retireRedoMoves(session, redo)],
      note: null,
      rollForward: true,
    },
    { cwd: worktree, commonDir: ctx.commonDir, gitDir: null, store: null },
  );
}
