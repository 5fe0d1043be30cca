/**
 * session update: brings the current target into a session, the way out of a land conflict.
 *
 * A clean merge is made without touching anything but the files it changes: the merged tree from
 * `git merge-tree --write-tree`, the worktree moved to it with `read-tree -m -u`, then a merge
 * commit (parents: the session head, the target) and a compare-and-swap of the session branch.
 * A merge with conflicts is left to the agent as git would leave it — conflict markers in the
 * files and a merge in progress (`git merge --no-commit`) — and `hagent sync` concludes it as the
 * merge commit once the markers are gone. The next land then starts from that target commit
 * (session/landed.ts), so only what the session changed since lands.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { addNote, checkoutTreeDelta, commitTree, diffTrees, gitText, looseObjectStore, mergeTrees, parseMergeTree, readNote, readRef, runGit, treeOf, updateRefCas, worktreeGitDirSync } from '../git/index.js';
import { sessionPatchRange } from '../review/index.js';
import { loadConfig } from '../config/index.js';
import { guardTarget, isAncestor, outsideEdits, retireRedo, sessionHead, sessionRef, type ChangedFile, type RepoContext, type Session } from '../session/index.js';
import { guardedWrite, type Recovery } from '../transaction/index.js';

/** JSON of `hagent session update`. */
export interface UpdateResult {
  ok: true;
  session: string;
  target: string;
  /** The target commit brought in. */
  merged: string;
  /** The merge commit on the session branch; null when up to date or when conflicts wait for the agent. */
  commit: string | null;
  parent: string;
  /** Files the merge changed in the worktree. */
  files: ChangedFile[];
  /** Files with conflict markers: resolve them in the worktree, then `hagent sync`. */
  conflicts: string[];
  upToDate: boolean;
  recovery?: Recovery;
}

/** True while a merge is in progress in the worktree (`MERGE_HEAD` in its git dir). */
export function mergeInProgress(worktree: string): boolean {
  const gitDir = worktreeGitDirSync(worktree);
  return !!gitDir && existsSync(path.join(gitDir, 'MERGE_HEAD'));
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
export async function updateSession(ctx: RepoContext, session: Session, options: UpdateOptions = {}): Promise<UpdateResult> {
  const config = await loadConfig(ctx, options.env ?? {});
  const { value, recovery } = await guardedWrite(guardTarget(ctx, session), options.rebase ? 'update --rebase' : 'update', { timeoutMs: config.runtime.lockTimeoutMs }, async () => {
    const r = await updateLocked(ctx, session, !!options.rebase);
    return { value: r, files: r.files.map((f) => f.path), head: r.commit ?? r.parent };
  });
  if (recovery) value.recovery = recovery;
  return value;
}

async function updateLocked(ctx: RepoContext, session: Session, rebase: boolean): Promise<UpdateResult> {
  const worktree = session.worktree;
  if (!session.target) throw new HagentError('DETACHED_TARGET', `session ${session.id} has no target branch (it was started on a detached HEAD)`, { session: session.id }, 'there is nothing to update it with; merge the branch you want yourself');
  const target = session.target;
  const branch = target.replace('refs/heads/', '');
  const [head, merged] = await Promise.all([sessionHead(ctx, session), readRef(ctx.cwd, target)]);
  if (!merged) throw new HagentError('TARGET_MOVED', `target branch ${target} no longer exists`, { target }, 'recreate the branch, then update again');
  const base = { ok: true as const, session: session.id, target, merged, parent: head, files: [], conflicts: [] };
  if (mergeInProgress(worktree)) {
    throw new HagentError('MERGE_IN_PROGRESS', `a merge is in progress in ${worktree}`, { session: session.id, worktree }, `resolve the conflicts in the files git lists (git -C ${worktree} status), then run hagent sync --session ${session.id} to conclude it`);
  }
  if (await isAncestor(ctx.cwd, merged, head)) return { ...base, commit: null, upToDate: true };
  const pending = await outsideEdits(worktree);
  if (pending.length) {
    throw new HagentError('STALE_FILE', `session ${session.id} has ${pending.length} outside edit${pending.length === 1 ? '' : 's'} pending (${pending.map((p) => p.path).join(', ')})`, { session: session.id, path: pending[0]!.path, files: pending.map((p) => p.path) }, `keep them first with hagent sync --session ${session.id} (or drop them), then update again`);
  }
  if (rebase) return rebaseLocked(ctx, session, head, merged, base);
  const r = await runGit(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', head, merged], { cwd: worktree, allowFailure: true });
  if (r.exitCode !== 0 && r.exitCode !== 1) throw new HagentError('GIT_FAILED', `git merge-tree failed: ${r.stderr.trim()}`, { stderr: r.stderr.trim() });
  if (r.exitCode === 1) {
    // Left as git leaves a merge: markers in the files, MERGE_HEAD; `hagent sync` concludes it.
    await runGit(['merge', '--no-ff', '--no-commit', '--no-edit', merged], { cwd: worktree, allowFailure: true });
    if (!mergeInProgress(worktree)) throw new HagentError('GIT_FAILED', `git merge of ${branch} did not start in ${worktree}`, { worktree });
    const unmerged = await runGit(['diff', '--name-only', '-z', '--diff-filter=U'], { cwd: worktree });
    const conflicts = unmerged.stdout.toString('utf8').split('\0').filter(Boolean);
    const changed = await diffTrees(worktree, head, await treeOf(worktree, merged));
    return { ...base, commit: null, upToDate: false, files: changed.map((c) => ({ path: c.path, status: c.status })), conflicts: conflicts.length ? conflicts : parseMergeTree(r.stdout).conflicts };
  }
  const { tree } = parseMergeTree(r.stdout);
  const headTree = await treeOf(worktree, head);
  const changes = await diffTrees(worktree, headTree, tree);
  const message = `hagent: merge ${branch} into session ${session.id}\n\nBrings ${branch} at ${merged.slice(0, 12)} into the session (hagent session update).\n\nHagent-Session: ${session.id}\nHagent-Op: update\n`;
  const commit = await commitTree(worktree, tree, [head, merged], message);
  await checkoutTreeDelta(worktree, headTree, tree);
  try {
    await updateRefCas(worktree, sessionRef(session), commit, head, `hagent update: merged ${branch}`);
  } catch (error) {
    await checkoutTreeDelta(worktree, tree, headTree).catch(() => undefined);
    throw error;
  }
  await retireRedo(worktree, session);
  return { ...base, commit, upToDate: false, files: changes.map((c) => ({ path: c.path, status: c.status })) };
}

/**
 * Replays the session's own commits (first-parent, since its base or last land, leaving out what
 * the target holds) one by one on the target, each as the three-way merge of the target-so-far
 * and the commit over its parent — in memory, nothing written until every one is clean. Then the
 * worktree moves to the new head's tree and the branch by compare-and-swap; the old head stays
 * reachable as `refs/hagent/<id>/rebased/<old head>`. Each replayed commit keeps its message
 * (and so its trailers); its note is copied.
 * @throws HagentError LAND_CONFLICT naming the commit and files; nothing was written.
 */
async function rebaseLocked(ctx: RepoContext, session: Session, head: string, onto: string, result: Omit<UpdateResult, 'commit' | 'upToDate'>): Promise<UpdateResult> {
  const worktree = session.worktree;
  const branch = result.target.replace('refs/heads/', '');
  const range = await sessionPatchRange(ctx, session, head);
  const commits = (await gitText(['rev-list', '--reverse', '--first-parent', ...range], { cwd: ctx.cwd })).split('\n').filter(Boolean);
  const store = await looseObjectStore(ctx.commonDir, head);
  let tip = onto;
  let tipTree = await treeOf(worktree, onto);
  const replayed: { from: string; to: string }[] = [];
  for (const c of commits) {
    const [parentTree, tree] = await Promise.all([treeOf(worktree, `${c}^1`), treeOf(worktree, c)]);
    const m = await mergeTrees(ctx.cwd, store, parentTree, tipTree, tree);
    if (!m.clean) {
      throw new HagentError('LAND_CONFLICT', `the session's commit ${c.slice(0, 12)} does not replay on ${branch}: conflicts in ${m.conflicts.join(', ')}`, { session: session.id, commit: c, files: m.conflicts }, `nothing was written; merge instead: hagent session update --session ${session.id} (it leaves conflict markers to resolve)`);
    }
    if (m.tree === tipTree) continue; // already on the target
    const message = await gitText(['log', '-1', '--format=%B', c], { cwd: ctx.cwd });
    tip = await commitTree(worktree, m.tree, [tip], `${message}\n`);
    tipTree = m.tree;
    replayed.push({ from: c, to: tip });
  }
  const headTree = await treeOf(worktree, head);
  const changes = await diffTrees(worktree, headTree, tipTree);
  await runGit(['update-ref', '--create-reflog', '-m', 'hagent: session head before a rebase', `refs/hagent/${session.id}/rebased/${head}`, head, ''], { cwd: ctx.cwd, allowFailure: true });
  await checkoutTreeDelta(worktree, headTree, tipTree);
  try {
    await updateRefCas(worktree, sessionRef(session), tip, head, `hagent update: rebased on ${branch}`);
  } catch (error) {
    await checkoutTreeDelta(worktree, tipTree, headTree).catch(() => undefined);
    throw error;
  }
  await Promise.all(replayed.map(async (r) => {
    const note = await readNote(ctx.cwd, r.from);
    if (note !== null) await addNote(ctx.cwd, r.to, note);
  }));
  await retireRedo(worktree, session);
  return { ...result, commit: tip, upToDate: false, files: changes.map((c) => ({ path: c.path, status: c.status })) };
}
