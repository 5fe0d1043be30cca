/** Removing a session worktree and forgetting removed ones, for session end. */
import { runGit } from './run.js';

/**
 * Removes the worktree at `worktree` (`git worktree remove --force`: its files, its git dir).
 * @throws HagentError GIT_FAILED from git.
 */
export async function removeWorktree(cwd: string, worktree: string): Promise<void> {
  await runGit(['worktree', 'remove', '--force', worktree], { cwd });
}

/** Forgets worktrees whose folder is gone (`git worktree prune`). @throws HagentError GIT_FAILED. */
export async function pruneWorktrees(cwd: string): Promise<void> {
  await runGit(['worktree', 'prune'], { cwd });
}
