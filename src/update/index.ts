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
import { checkoutTreeDelta, commitTree, diffTrees, parseMergeTree, readRef, runGit, treeOf, updateRefCas, worktreeGitDirSync } from '../git/index.js';
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

/**
 * Merges the session's target into the session, under the session lock; journaled.
 * @throws HagentError DETACHED_TARGET, TARGET_MOVED (the target is gone, or the branch moved
 *   meanwhile), STALE_FILE (outside edits pending: sync them first), MERGE_IN_PROGRESS.
 */
export async function updateSession(ctx: RepoContext, session: Session, env: Readonly<Record<string, string | undefined>> = {}): Promise<UpdateResult> {
  const config = await loadConfig(ctx, env);
  const { value, recovery } = await guardedWrite(guardTarget(ctx, session), 'update', { timeoutMs: config.runtime.lockTimeoutMs }, async () => {
    const r = await updateLocked(ctx, session);
    return { value: r, files: r.files.map((f) => f.path), head: r.commit ?? r.parent };
  });
  if (recovery) value.recovery = recovery;
  return value;
}

async function updateLocked(ctx: RepoContext, session: Session): Promise<UpdateResult> {
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
