/**
 * A merge in progress, as an apply sees it: which paths are conflicted, whether a patch resolves
 * every conflict (then its one commit concludes the merge), and the merged tree that commit
 * records.
 *
 * git's rule is kept: a conflicted path's current content is what the worktree holds (markers
 * and all), and writing it is resolving it, as `git add` is; the merge commit's tree is the
 * index once no path is unmerged. hagent adds one rule of its own, the one sync follows: a file
 * the update left conflicted (./conflicts.ts) that still holds a conflict block is not resolved,
 * whatever the index says.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  blobId,
  formatOfOid,
  writeTreeOfIndex,
  lsTree,
  updateIndex,
  worktreeGitDirSync,
  type ConflictStage,
  type IndexEntryUpdate,
  quitMerge,
  unmergedEntries,
  pathsDifferingFromIndex,
  writeIndexInfo,
  isAncestor,
} from '../git/index.js';
import {
  conflictBlockLine,
  markersLeft,
  readConflictRecord,
  removeConflictRecord,
  writeConflictRecord,
  type ConflictRecord,
} from './conflicts.js';

/** A merge in progress in a session worktree. */
export interface MergeState {
  /** The commit being merged (`MERGE_HEAD`). */
  mergeHead: string;
  /** What `hagent session update` recorded of it; null for a merge of the agent's own. */
  record: ConflictRecord | null;
  /** The unmerged index entries (stages 1–3), as `git ls-files -u` lists them. */
  stages: ConflictStage[];
  /** Every conflicted path: unmerged in the index, or recorded conflicted. */
  conflicted: Set<string>;
}

/** A conflicted path an apply would leave unresolved, and why. */
export interface Unresolved {
  path: string;
  /** `unmerged`: the patch does not write it; `markers`: it still holds a conflict block; `not added`: the index holds other bytes than the worktree. */
  reason: 'unmerged' | 'markers' | 'not added';
  line?: number;
}

/**
 * The commit being merged in `worktree` (`MERGE_HEAD`) over the session head `head`, or null
 * when no merge is in progress: one `readFile` when there is none, which is every apply outside
 * a merge. A `MERGE_HEAD` the head holds already is the trace of a concluding apply whose ref
 * move a recovery finished (transaction/recover.ts knows no merge): that merge is ended here, as
 * the apply would have ended it, instead of being concluded a second time.
 * @throws HagentError GIT_FAILED from git.
 */
export async function readMergeHead(worktree: string, head: string): Promise<string | null> {
  const gitDir = worktreeGitDirSync(worktree);
  if (!gitDir) return null;
  const text = await fs.readFile(path.join(gitDir, 'MERGE_HEAD'), 'utf8').catch(() => '');
  const mergeHead = /^[0-9a-f]{40,64}/.exec(text)?.[0] ?? null;
  if (mergeHead && (await isAncestor(worktree, mergeHead, head))) {
    await concludeMerge(worktree);
    return null;
  }
  return mergeHead;
}

/**
 * Ends the merge in progress once the session branch holds its merge commit, as `git commit`
 * does: `MERGE_HEAD`, `MERGE_MSG`, `MERGE_MODE` and hagent's conflict record go (the index and
 * the files are the merge commit's already). Used by every command that concludes a merge.
 * @throws HagentError GIT_FAILED from git.
 */
export async function concludeMerge(worktree: string): Promise<void> {
  await quitMerge(worktree);
  await removeConflictRecord(worktree);
}

/**
 * The merge in progress in `worktree` over the session head `head`, or null when there is none.
 * @throws HagentError GIT_FAILED from git.
 */
export async function readMergeState(worktree: string, head: string): Promise<MergeState | null> {
  const mergeHead = await readMergeHead(worktree, head);
  if (!mergeHead) return null;
  const [record, stages] = await Promise.all([
    readConflictRecord(worktree, mergeHead, head),
    unmergedEntries(worktree),
  ]);
  const conflicted = new Set([...stages.map((s) => s.path), ...(record?.files ?? [])]);
  return { mergeHead, record, stages, conflicted };
}

/**
 * What stays conflicted once a patch writes `written` (path → its new bytes, null: deleted):
 * every unmerged path it does not write; every conflicted path it writes with a conflict block
 * still in it; every recorded conflicted file it does not write that holds a conflict block on
 * disk, or whose index entry is not what the worktree holds (resolved by hand, never added).
 * Empty: the patch concludes the merge.
 * @throws HagentError GIT_FAILED from git.
 */
export async function unresolvedAfter(
  worktree: string,
  state: MergeState,
  written: ReadonlyMap<string, Uint8Array | null>,
): Promise<Unresolved[]> {
  const out: Unresolved[] = [];
  const unmerged = new Set(state.stages.map((s) => s.path));
  for (const p of unmerged) if (!written.has(p)) out.push({ path: p, reason: 'unmerged' });
  for (const [p, bytes] of written) {
    const line = bytes && state.conflicted.has(p) ? conflictBlockLine(Buffer.from(bytes)) : null;
    if (line !== null) out.push({ path: p, reason: 'markers', line });
  }
  const rest = (state.record?.files ?? []).filter((p) => !written.has(p) && !unmerged.has(p));
  if (rest.length) {
    for (const m of await markersLeft(worktree, rest))
      out.push({ path: m.path, reason: 'markers', line: m.line });
    const left = new Set(out.map((u) => u.path));
    const differ = await pathsDifferingFromIndex(worktree, rest);
    for (const p of differ) if (!left.has(p)) out.push({ path: p, reason: 'not added' });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * What a tool that writes files itself (an agent's native edit tool, recorded after its write)
 * has written of the merge's conflicted files: the conflicted ones among `touched`, and every
 * recorded conflicted file whose worktree bytes are no longer what the update left there (an
 * earlier such write, kept out while other conflicts remained), each with its bytes on disk
 * (null: deleted). An untouched binary or modify/delete conflict still holds what the update left,
 * so it is not taken as resolved.
 */
export async function writtenInWorktree(
  worktree: string,
  state: MergeState,
  touched: readonly string[],
): Promise<Map<string, Uint8Array | null>> {
  const paths = new Set(touched.filter((p) => state.conflicted.has(p)));
  const recorded = (state.record?.files ?? []).filter((p) => !paths.has(p));
  const left =
    state.record && recorded.length
      ? await lsTree(worktree, state.record.tree, recorded)
      : new Map<string, { oid: string }>();
  const disk = async (p: string) => fs.readFile(path.join(worktree, p)).catch(() => null);
  for (const p of recorded) {
    const bytes = await disk(p);
    const want = left.get(p);
    const same =
      bytes === null
        ? want === undefined
        : want !== undefined && blobId(bytes, formatOfOid(want.oid)) === want.oid;
    if (!same) paths.add(p);
  }
  const out = new Map<string, Uint8Array | null>();
  for (const p of paths) out.set(p, await disk(p));
  return out;
}

/**
 * Refuses an apply that writes a conflicted path but leaves a conflict: a merge commit is made
 * of every resolution at once, as `git commit` makes it, so one patch must resolve all of them.
 * @throws HagentError MERGE_UNRESOLVED naming the files still conflicted (and the marker lines).
 */
export function assertResolvedBy(
  worktree: string,
  sessionId: string,
  unresolved: readonly Unresolved[],
): void {
  if (unresolved.length === 0) return;
  const n = unresolved.length;
  const where = unresolved.map((u) =>
    u.reason === 'markers'
      ? `${u.path}:${u.line} (conflict markers)`
      : u.reason === 'unmerged'
        ? `${u.path} (not in the patch)`
        : `${u.path} (resolved but not added)`,
  );
  throw new HagentError(
    'MERGE_UNRESOLVED',
    `the patch resolves only part of the merge in progress: ${n} conflicted file${n === 1 ? '' : 's'} would stay conflicted: ${where.join(', ')}`,
    {
      files: unresolved.map((u) => u.path),
      path: unresolved[0]!.path,
      unresolved: unresolved.map((u) => ({ ...u })),
    },
    `nothing was written; one patch must resolve every conflicted file listed (git -C ${worktree} status lists them all): remove every <<<<<<< ======= >>>>>>> block; or resolve them by hand, git add each file, then hagent sync --session ${sessionId}`,
  );
}

/**
 * The tree of the merge commit an apply concludes: the worktree's index with the patch's entries
 * (`entries`; a stage-0 entry replaces a path's unmerged ones, as `git add` does), written from a
 * copy of the index so the real one is untouched until the apply publishes. The patch's new
 * blobs need not be stored yet (`--missing-ok`): the apply stores them before the ref moves.
 * @throws HagentError GIT_FAILED (an unmerged entry left: callers check {@link unresolvedAfter} first).
 */
export async function mergedTreeWith(
  worktree: string,
  entries: readonly IndexEntryUpdate[],
  tag: string,
): Promise<string> {
  const gitDir = worktreeGitDirSync(worktree);
  if (!gitDir)
    throw new HagentError('GIT_FAILED', `${worktree} has no .git file naming its git dir`, {
      worktree,
    });
  const copy = path.join(gitDir, `index.hagent-${tag}`);
  try {
    await fs.copyFile(path.join(gitDir, 'index'), copy);
    await updateIndex(worktree, entries, copy);
    return await writeTreeOfIndex(worktree, copy);
  } finally {
    await fs.rm(copy, { force: true });
  }
}

/**
 * Puts back the unmerged entries of `paths` (an apply that wrote them failed before its ref
 * moved), so `git status` shows the conflict again as the update left it.
 * @throws HagentError GIT_FAILED from git.
 */
export async function restoreUnmerged(
  worktree: string,
  state: MergeState,
  paths: Iterable<string>,
): Promise<void> {
  const wanted = new Set(paths);
  const stages = state.stages.filter((s) => wanted.has(s.path));
  if (stages.length) await writeUnmerged(worktree, stages);
}

/**
 * Replaces the index entries of the stages' paths (and of `clear`, the other paths a merge left
 * conflicted) by those unmerged entries, as git leaves them (`update-index -z --index-info`).
 */
export async function writeUnmerged(
  worktree: string,
  stages: readonly ConflictStage[],
  clear: readonly string[] = [],
): Promise<void> {
  if (stages.length === 0) return;
  const zero = '0'.repeat(stages[0]!.oid.length);
  const paths = [...new Set([...clear, ...stages.map((s) => s.path)])];
  const lines = [
    ...paths.map((p) => `0 ${zero}\t${p}\0`),
    ...stages.map((e) => `${e.mode} ${e.oid} ${e.stage}\t${e.path}\0`),
  ];
  await writeIndexInfo(worktree, lines.join(''));
}

/**
 * After an apply that left the merge in progress moved the session head from the record's head
 * to `head`, the record follows (it counts only over the head it names), so the files the update
 * left conflicted are still checked for markers when the merge is concluded.
 */
export async function moveConflictRecord(
  worktree: string,
  state: MergeState,
  head: string,
): Promise<void> {
  const gitDir = worktreeGitDirSync(worktree);
  if (gitDir && state.record)
    await writeConflictRecord(gitDir, {
      mergeHead: state.record.mergeHead,
      head,
      tree: state.record.tree,
      files: state.record.files,
    });
}
