/**
 * The files of a merge in progress in a worktree's git dir (`MERGE_HEAD`, `MERGE_MODE`,
 * `MERGE_MSG`): written, listed, removed and ended here, so no module outside src/git writes
 * git's own files.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { runGit } from './run.js';

/** The paths of a merge's files in `gitDir`: `MERGE_HEAD` first, then `MERGE_MODE`, `MERGE_MSG`. */
export function mergeStateFiles(gitDir: string): string[] {
  return ['MERGE_HEAD', 'MERGE_MODE', 'MERGE_MSG'].map((f) => path.join(gitDir, f));
}

/**
 * Leaves a merge of `head` in progress in `gitDir`: `MERGE_MODE` and `MERGE_MSG` first, then
 * `MERGE_HEAD` LAST and by a rename, since it is the file that makes the merge in progress (a
 * reader never sees half of it). @throws the fs error of a failed write.
 */
export async function writeMergeState(
  gitDir: string,
  state: { head: string; mode: string; message: string },
): Promise<void> {
  const [mergeHead, mode, msg] = mergeStateFiles(gitDir) as [string, string, string];
  await fs.writeFile(mode, state.mode);
  await fs.writeFile(msg, state.message);
  const tmp = `${mergeHead}.hagent-${process.pid}`;
  await fs.writeFile(tmp, `${state.head}\n`);
  await fs.rename(tmp, mergeHead);
}

/** Removes the merge's files from `gitDir` (missing ones are fine). */
export async function removeMergeState(gitDir: string): Promise<void> {
  await Promise.all(mergeStateFiles(gitDir).map((f) => fs.rm(f, { force: true })));
}

/** Ends the merge in progress, keeping index and files (`git merge --quit`). @throws GIT_FAILED. */
export async function quitMerge(cwd: string): Promise<void> {
  await runGit(['merge', '--quit'], { cwd });
}
