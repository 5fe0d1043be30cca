/**
 * Putting chosen paths of a checkout, files and index entries both, to their state in a
 * commit (`git restore --staged --worktree`), for land --undo: git writes each file in its
 * checked-out form (filters, end of line) and removes the paths the commit lacks.
 */
import { literalPathspec } from './plumbing.js';
import { runGit } from './run.js';

/**
 * Gives `paths` of the checkout `cwd` their state in `source` (files and index entries).
 * @throws HagentError GIT_FAILED from git.
 */
export async function restorePathsFrom(
  cwd: string,
  source: string,
  paths: readonly string[],
): Promise<void> {
  if (paths.length === 0) return;
  await runGit(
    [
      'restore',
      `--source=${source}`,
      '--staged',
      '--worktree',
      '--',
      ...paths.map(literalPathspec),
    ],
    { cwd },
  );
}
