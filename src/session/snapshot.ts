/**
 * The one way hagent stages what a worktree holds into an index, for every command that turns
 * the worktree's files into a commit (sync, exec and the agents' shell hooks through sync; a
 * forced `session end` and a discarded pooled worktree, which keep the uncommitted files). Two
 * rules no such commit may break (docs/reliability.md, "No work lost"):
 *
 * - What the path policy refuses (`.env`, keys) is never hashed: it never becomes a git object,
 *   not even an unreferenced one; it is listed as skipped with the policy's reason.
 * - A repository nested in the worktree (`git init sub`, a vendored clone, a scaffolder that runs
 *   git init) is taken as its files, never as a gitlink: a gitlink names a commit of the nested
 *   repository that the session's repository does not have, so a land would put a dangling
 *   entry on the user's branch and the files would exist only in the worktree. Its files are
 *   those its own ignore rules keep, less what the worktree's ignore rules ignore; its `.git`
 *   stays out.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isTempName } from '../fsx/index.js';
import {
  ignoredPaths,
  nestedRepoFiles,
  stageExactPaths,
  worktreeChanges,
  type WorktreeAt,
} from '../git/index.js';
import { deniedReason, type Policy } from '../policy/index.js';

/** What {@link stageWorktree} left out and found. */
export interface StagedWorktree {
  /** Changed paths the policy refuses, each with its reason: not staged, never hashed. */
  skipped: { path: string; reason: string }[];
  /** Repositories nested in the worktree (their folders), staged as ordinary files. */
  nested: string[];
}

/** How deep repositories nested in nested repositories are followed. */
const NESTED_DEPTH = 8;

/**
 * Stages every change of the worktree under `pathspecs` (default all) into its index, or into
 * `indexFile`: modified, added and deleted files, the files of nested repositories; not what
 * git ignores, not hagent's temp files, not what `policy` refuses. `changes`: the worktree's
 * status records (`XY path`, a nested repository as `?? dir/`) the caller has just read, instead
 * of reading them again.
 * @throws HagentError GIT_FAILED.
 */
export async function stageWorktree(
  at: string | WorktreeAt,
  policy: Policy,
  options: { pathspecs?: readonly string[]; indexFile?: string; changes?: readonly string[] } = {},
): Promise<StagedWorktree> {
  const worktree = typeof at === 'string' ? at : at.worktree;
  const records =
    options.changes ?? (await worktreeChanges(at, options.pathspecs ?? ['.'], options.indexFile));
  const deletions: string[] = [];
  const files: string[] = [];
  const nested: string[] = [];
  for (const rec of records) {
    const rel = rec.slice(3);
    if (rel.endsWith('/')) nested.push(rel.slice(0, -1));
    else if (!isTempName(path.posix.basename(rel)))
      (rec.slice(0, 2).includes('D') ? deletions : files).push(rel);
  }
  const inNested = await nestedFiles(worktree, nested);
  const ignored = new Set(inNested.length ? await ignoredPaths(worktree, inNested) : []);
  files.push(...inNested.filter((p) => !ignored.has(p)));
  const skipped: { path: string; reason: string }[] = [];
  const allowed = (p: string) => {
    const reason = deniedReason(p, policy);
    if (reason) skipped.push({ path: p, reason });
    return reason === null;
  };
  // Deletions first: a file that replaced a folder (or the reverse) goes in after the old entries.
  await stageExactPaths(
    at,
    [...deletions.filter(allowed), ...files.filter(allowed)],
    options.indexFile,
  );
  return { skipped, nested };
}

/** The files of the nested repositories `dirs` (worktree-relative), nested ones followed too. */
async function nestedFiles(
  worktree: string,
  dirs: readonly string[],
  depth = 0,
): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    const inner: string[] = [];
    for (const rel of await nestedRepoFiles(path.join(worktree, dir))) {
      if (rel.endsWith('/')) inner.push(`${dir}/${rel.slice(0, -1)}`);
      else if (!isTempName(path.posix.basename(rel))) out.push(`${dir}/${rel}`);
    }
    if (inner.length && depth < NESTED_DEPTH)
      out.push(...(await nestedFiles(worktree, inner, depth + 1)));
  }
  return out;
}

/**
 * The repositories nested in a worktree (worktree-relative folders): those git lists as
 * untracked folders, and folders of its files that hold a `.git` (a nested repository whose
 * files a sync already committed). Their own history exists only there, so a session end asks
 * the human before removing them. Ignored folders are not looked into. Never throws.
 */
export async function nestedRepositories(worktree: string): Promise<string[]> {
  const found = new Set<string>();
  const dirs = new Set<string>();
  for (const rel of await nestedRepoFiles(worktree)) {
    if (rel.endsWith('/')) found.add(rel.slice(0, -1));
    else
      for (let d = path.posix.dirname(rel); d !== '.' && !dirs.has(d); d = path.posix.dirname(d))
        dirs.add(d);
  }
  await Promise.all(
    [...dirs].map(async (d) => {
      if (
        await fs.lstat(path.join(worktree, d, '.git')).then(
          () => true,
          () => false,
        )
      )
        found.add(d);
    }),
  );
  return [...found].sort();
}
