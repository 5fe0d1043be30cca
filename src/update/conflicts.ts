/**
 * What a session update left conflicted, kept beside `MERGE_HEAD` until the merge is concluded.
 *
 * git forgets a conflict as soon as its unmerged index entries go — `git add`, but also
 * `git reset -- FILE` or `git checkout -- FILE` — and a sync would then commit the conflict
 * markers as content. The record (`<worktree git dir>/HAGENT_MERGE_CONFLICTS`) lists the paths
 * the update left with markers, so sync can refuse while one of them still holds a conflict
 * block, and the merged tree, so a path the policy keeps out of the merge falls back to what the
 * merge made of it. It counts only for the merge whose `MERGE_HEAD` and session head it names
 * (after a `git merge --abort` and a merge of the agent's own it is stale, then ignored).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { worktreeGitDirSync } from '../git/index.js';

/** Name of the record in the worktree's git dir. */
const RECORD = 'HAGENT_MERGE_CONFLICTS';

/** The file of {@link writeConflictRecord} in the worktree's git dir `gitDir`. */
export function conflictRecordPath(gitDir: string): string {
  return path.join(gitDir, RECORD);
}

/** The record of a merge left by `hagent session update`. */
export interface ConflictRecord {
  version: 1;
  /** The target commit being merged (`MERGE_HEAD`). */
  mergeHead: string;
  /** The session head the merge is on. */
  head: string;
  /** The merged tree the update checked out (conflict markers in it). */
  tree: string;
  /** The paths left conflicted. */
  files: string[];
}

/** Writes the record of the merge the update leaves in `gitDir` (the worktree's git dir). */
export async function writeConflictRecord(
  gitDir: string,
  record: Omit<ConflictRecord, 'version'>,
): Promise<void> {
  await fs.writeFile(path.join(gitDir, RECORD), `${JSON.stringify({ version: 1, ...record })}\n`);
}

/** The record of the merge in progress in `worktree`, or null when none names `mergeHead` over `head`. */
export async function readConflictRecord(
  worktree: string,
  mergeHead: string,
  head: string,
): Promise<ConflictRecord | null> {
  const gitDir = worktreeGitDirSync(worktree);
  if (!gitDir) return null;
  const raw = await fs.readFile(path.join(gitDir, RECORD), 'utf8').catch(() => null);
  if (raw === null) return null;
  try {
    const r = JSON.parse(raw) as Partial<ConflictRecord>;
    if (
      r.version !== 1 ||
      r.mergeHead !== mergeHead ||
      r.head !== head ||
      typeof r.tree !== 'string' ||
      !Array.isArray(r.files)
    )
      return null;
    return {
      version: 1,
      mergeHead,
      head,
      tree: r.tree,
      files: r.files.filter((f): f is string => typeof f === 'string'),
    };
  } catch {
    return null;
  }
}

/** Removes the record of `worktree` (the merge was concluded, or a new one starts). */
export async function removeConflictRecord(worktree: string): Promise<void> {
  const gitDir = worktreeGitDirSync(worktree);
  if (gitDir) await fs.rm(path.join(gitDir, RECORD), { force: true });
}

/**
 * The 1-based line of the first conflict block in `text` — a `<<<<<<<` line, later a `=======`
 * line, later a `>>>>>>>` line (seven or more of each, as `conflict-marker-size` allows) — or
 * null. One line of seven `=` (a reStructuredText heading) is no conflict. Pure.
 */
export function conflictBlockLine(text: Buffer): number | null {
  const lines = text.toString('latin1').split('\n');
  let start: number | null = null;
  let middle = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (/^<{7,}(?: |$)/.test(line)) {
      start = i + 1;
      middle = false;
    } else if (start !== null && /^={7,}$/.test(line)) middle = true;
    else if (start !== null && middle && /^>{7,}(?: |$)/.test(line)) return start;
  }
  return null;
}

/** The recorded conflicted files of `worktree` that still hold a conflict block, with its line; deleted files are resolved. */
export async function markersLeft(
  worktree: string,
  files: readonly string[],
): Promise<{ path: string; line: number }[]> {
  const out: { path: string; line: number }[] = [];
  for (const rel of files) {
    const bytes = await fs.readFile(path.join(worktree, rel)).catch(() => null);
    const line = bytes ? conflictBlockLine(bytes) : null;
    if (line !== null) out.push({ path: rel, line });
  }
  return out;
}
