/**
 * sync: adopts edits made in a session worktree outside hagent (by hand, by a build, by the
 * agent's shell) into one commit marked as outside, so they become reviewable and undoable.
 * The same commit, limited to named paths and carrying its own op
 * and trailers, records what an agent's native tool wrote (agents/: one commit per tool call).
 */
import { HagentError } from '../errors.js';
import {
  changesHeldBy,
  diffTrees,
  parseRawDiff,
  treeOf,
  readRefs,
  sessionNotesRef,
  writeTree,
  stagedChanges,
  readTreeIntoIndexDetached,
  resetPathsTo,
  unmergedPaths,
} from '../git/index.js';
import { checkPath, type Policy } from '../policy/index.js';
import { loadConfig } from '../config/index.js';
import {
  guardTarget,
  outsideEdits,
  readSessionRefs,
  stageWorktree,
  retireRedoMoves,
  sessionRef,
  type ChangedFile,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { guardedWrite, runTransaction, type Recovery } from '../transaction/index.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  entriesAt,
  looseObjectStore,
  readCommitTrees,
  updateIndex,
  worktreeGitDirSync,
  writeBlobsFromPaths,
  writeCommit,
  writeLooseObject,
  writeTreeWithChanges,
  type PathChange,
} from '../git/index.js';
import { readEntry } from '../fsx/index.js';
import {
  concludeMerge,
  markersLeft,
  mergedTreeWith,
  moveConflictRecord,
  readConflictRecord,
  readMergeHead,
  readMergeState,
  unresolvedAfter,
  writtenInWorktree,
  type ConflictRecord,
} from '../update/index.js';

/** JSON of `hagent sync`. `commit` is null when there was nothing to adopt. */
export interface SyncResult {
  ok: true;
  session: string;
  commit: string | null;
  parent: string;
  files: ChangedFile[];
  /** Outside edits left out because the path policy refuses them (they stay pending). */
  skipped: { path: string; reason: string }[];
  /** The commit a merge in progress brought in, when this sync concluded it (`hagent session update`). */
  merged?: string;
  recovery?: Recovery;
}

/**
 * How adopted edits are recorded: the `Hagent-Op` trailer (also the journal's command name), the
 * subject's words, the body's opening line and any extra paragraph and trailers. `hagent sync`
 * adopts every outside edit as such; `hagent exec` and an agent's shell command adopt what the
 * command changed; an agent's native edit tool names its `paths`: only those are committed, so a
 * parallel call's write or the agent's own `git add` stays out, and its `note` (the edit itself)
 * is kept beside the commit.
 */
export interface AdoptAs {
  op: string;
  /** Words of the subject after `hagent: `, before the file list, e.g. `outside edits`. */
  title: string;
  /** The whole subject instead (an agent's tool call: `hagent: Write a.txt`). */
  subject?: string;
  /** The line before the file list in the body. */
  intro: string;
  /** A paragraph after the file list (e.g. the command that made the changes). */
  detail?: string;
  /** Trailers after `Hagent-Session` and `Hagent-Op`, e.g. `Hagent-Outside: true`. */
  trailers?: string[];
  /** The original text the journal keeps (hashed and redacted), e.g. the command. */
  journalText?: string;
  /** The journal entry's message, e.g. how the command ended (`exit 1`, `timed out …`). */
  journalMessage?: string;
  /** Only these worktree-relative paths are adopted. */
  paths?: readonly string[];
  /** Text kept as the commit's note (the session's notes ref, git/notes.ts). */
  note?: string;
  /** How long to wait for the session lock (default from config): agent hooks wait longer. */
  lockTimeoutMs?: number;
  /**
   * Asked under the session lock, with the files about to be committed, for more attribution:
   * trailers and note text added to the commit's (agents/hook.ts names the native edits of
   * parallel tool calls that the commit takes in, so they keep their tool). Null adds nothing.
   */
  attribute?: (
    files: readonly ChangedFile[],
  ) => Promise<{ trailers: string[]; note: string } | null>;
}

/** What `hagent sync` records: outside edits, marked as such. */
export const ADOPT_OUTSIDE: AdoptAs = {
  op: 'sync',
  title: 'outside edits',
  intro: 'Edits made in the session worktree outside hagent, adopted by hagent sync:',
  trailers: ['Hagent-Outside: true'],
};

/**
 * The first step of every way an agent's command comes in (`hagent exec`, the MCP exec tool, the
 * pre-tool hook of a shell call, directly or through the hook server): edits already pending in
 * the worktree (the human's, a build's) are adopted as their own outside commit before the
 * command runs, so the command's commit, and its undo, hold only what the command changed.
 * Checked without the lock first (a no-op sync would only add a journal line). `options` take
 * the lock's wait and the attribution of parallel tool calls (agents/hook.ts).
 * @returns the outside commit's result, or null when nothing was pending.
 * @throws HagentError as {@link syncSession}.
 */
export async function adoptPendingOutside(
  ctx: RepoContext,
  session: Session,
  env: Readonly<Record<string, string | undefined>> = {},
  options: Pick<AdoptAs, 'lockTimeoutMs' | 'attribute'> = {},
): Promise<SyncResult | null> {
  if ((await outsideEdits(session.worktree)).length === 0) return null;
  return syncSession(ctx, session, env, { ...ADOPT_OUTSIDE, ...options });
}

/**
 * Files hagent itself put in a session worktree (an agent's hook file, where the agent has no
 * per-run mechanism), listed in `<git-common-dir>/hagent/agents/<id>/owned.json`: never adopted.
 */
export function ownedFilesPath(commonDir: string, sessionId: string): string {
  return path.join(commonDir, 'hagent', 'agents', sessionId, 'owned.json');
}

/** The files of {@link ownedFilesPath} (worktree-relative); none when it is missing or unreadable. */
async function ownedFiles(commonDir: string, sessionId: string): Promise<string[]> {
  const raw = await fs.readFile(ownedFilesPath(commonDir, sessionId), 'utf8').catch(() => null);
  if (raw === null) return [];
  try {
    const list = JSON.parse(raw) as unknown;
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Commits every outside edit of the session worktree (modified, added, deleted; ignored files,
 * paths the policy denies and symlinks stay out and are reported as `skipped`) on the session branch, marked `Hagent-Op: sync` and `Hagent-Outside: true`, under
 * the session lock; journaled.
 * @throws HagentError LOCKED, TARGET_MOVED, SESSION_NOT_FOUND.
 */
export async function syncSession(
  ctx: RepoContext,
  session: Session,
  env: Readonly<Record<string, string | undefined>> = {},
  as: AdoptAs = ADOPT_OUTSIDE,
): Promise<SyncResult> {
  const config = await loadConfig(ctx, env, session.target);
  const journalText = as.journalText ?? as.note;
  const options = {
    timeoutMs: as.lockTimeoutMs ?? config.runtime.lockTimeoutMs,
    ...(journalText !== undefined ? { patch: journalText } : {}),
    ...(as.journalMessage !== undefined ? { message: as.journalMessage } : {}),
  };
  const { value, recovery } = await guardedWrite(
    guardTarget(ctx, session),
    as.op,
    options,
    async () => {
      const r = await syncLocked(ctx, session, config.policy, as);
      // `hagent sync` with nothing to adopt wrote nothing: it is no operation of the journal.
      const noop = as.op === ADOPT_OUTSIDE.op && r.commit === null;
      return {
        value: r,
        files: r.files.map((f) => f.path),
        head: r.commit ?? r.parent,
        ...(noop ? { journal: false } : {}),
      };
    },
  );
  if (recovery) value.recovery = recovery;
  return value;
}

async function syncLocked(
  ctx: RepoContext,
  session: Session,
  policy: Policy,
  as: AdoptAs,
): Promise<SyncResult> {
  const worktree = session.worktree;
  const { head, redo } = await readSessionRefs(ctx, session);
  const none = {
    ok: true as const,
    session: session.id,
    commit: null,
    parent: head,
    files: [],
    skipped: [],
  };
  if (as.paths) return syncPaths(ctx, session, policy, { ...as, redo }, head, as.paths);
  const pending = await outsideEdits(worktree);
  // A merge left by `hagent session update` (or the agent's git merge) is concluded here.
  const mergeHead = await readMergeHead(worktree, head);
  if (pending.length === 0 && !mergeHead) return none;
  const record = mergeHead ? await readConflictRecord(worktree, mergeHead, head) : null;
  if (mergeHead) {
    await assertConflictsResolved(worktree);
    if (record) await assertNoMarkersLeft(worktree, record);
  }
  // The same path policy as a patch (patch-language.md §5b): denied names are never hashed,
  // nested repositories go in as their files (session/snapshot.ts); symlinks stay out.
  // What the status just listed is staged (no second walk of every file); a file changed since
  // is left for the next sync, as one changed after it would be. hagent's own files stay out.
  const owned = new Set(await ownedFiles(ctx.commonDir, session.id));
  const pre = await stageWorktree(worktree, policy, {
    changes: pending
      .filter((f) => !owned.has(f.path))
      .map((f) => `${f.status === 'D' ? ' D' : ' M'} ${f.path}`),
  });
  const staged = await stagedChanges(worktree);
  // A denied path the agent staged itself (`git add -f .env`) is in both lists.
  const seen = new Set(pre.skipped.map((k) => k.path));
  let skipped = [...pre.skipped, ...policySkips(staged, policy).filter((k) => !seen.has(k.path))];
  if (mergeHead && skipped.length) skipped = await targetsOwn(worktree, mergeHead, staged, skipped);
  if (skipped.length) await resetSkipped(worktree, skipped, record);
  const tree = await writeTree(worktree);
  if (!mergeHead && tree === (await treeOf(worktree, head))) return { ...none, skipped };
  return commitSynced(ctx, session, { ...as, redo, mergeHead }, head, tree, skipped, () =>
    readTreeIntoIndexDetached(worktree, head),
  );
}

/**
 * The tool-call form: commits exactly `paths` (relative to the worktree) as they are on disk. The
 * tree is built from the head's trees and the files' blobs (git/tree.ts, in-process where the
 * object store allows), so nothing else of the worktree or of the index gets in, and no 20k-entry
 * index is read or written; the index then takes the same entries. Denied paths, symlinks and
 * folders stay out.
 */
async function syncPaths(
  ctx: RepoContext,
  session: Session,
  policy: Policy,
  as: AdoptAs & { redo?: string | null },
  head: string,
  paths: readonly string[],
): Promise<SyncResult> {
  const worktree = session.worktree;
  const none = {
    ok: true as const,
    session: session.id,
    commit: null,
    parent: head,
    files: [],
    skipped: [],
  };
  const rels = [...new Set(paths)];
  if (rels.length === 0) return none;
  // While a merge is in progress, a tool's write of a conflicted file is its resolution, as `git
  // add` is: the call after which nothing is conflicted concludes the merge (every conflicted
  // file it finds written goes in); one that leaves conflicts keeps its conflicted files out, as
  // the worktree holds them, and its commit goes under the merge, which follows the new head.
  const merge = await readMergeState(worktree, head);
  let mergeHead: string | null = null;
  const staged = new Set<string>();
  const leftOut = new Map<string, string>();
  if (merge && rels.some((p) => merge.conflicted.has(p))) {
    const written = await writtenInWorktree(worktree, merge, rels);
    const unresolved = await unresolvedAfter(worktree, merge, written);
    if (unresolved.length === 0) {
      mergeHead = merge.mergeHead;
      for (const p of written.keys()) {
        staged.add(p);
        if (!rels.includes(p)) rels.push(p);
      }
    } else {
      const why = `conflicted by the merge in progress, which still has conflicts: ${unresolved.map((u) => u.path).join(', ')}`;
      for (const p of rels) if (merge.conflicted.has(p)) leftOut.set(p, why);
    }
  }
  const store = await looseObjectStore(ctx.commonDir, head);
  const trees = await readCommitTrees(worktree, head, rels, store);
  const inHead = entriesAt(trees, rels);
  const changes: PathChange[] = [];
  const files: ChangedFile[] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const rel of rels) {
    if (leftOut.has(rel)) {
      skipped.push({ path: rel, reason: leftOut.get(rel)! });
      continue;
    }
    try {
      checkPath(rel, policy);
    } catch (e) {
      skipped.push({ path: rel, reason: (e as Error).message });
      continue;
    }
    const entry = await readEntry(worktree, rel);
    const before = inHead.get(rel);
    if (entry.kind === 'symlink') skipped.push({ path: rel, reason: 'a symbolic link' });
    else if (entry.kind === 'file') {
      const mode = entry.executable ? '100755' : '100644';
      const oid = store
        ? await writeLooseObject(store, 'blob', entry.bytes)
        : (await writeBlobsFromPaths(worktree, [rel]))[0]!;
      if (before?.oid === oid && before.mode === mode && !staged.has(rel)) continue;
      changes.push({ path: rel, mode, oid });
      files.push({ path: rel, status: before ? 'M' : 'A' });
    } else if (entry.kind === 'missing' && (before || staged.has(rel))) {
      changes.push({ path: rel, mode: before?.mode ?? '100644', oid: null });
      files.push({ path: rel, status: 'D' });
    }
  }
  if (changes.length === 0) return { ...none, skipped };
  const entries = changes.map((c) =>
    c.oid ? { path: c.path, mode: c.mode, oid: c.oid } : { path: c.path, mode: '0', oid: null },
  );
  // A merge is concluded with the merged index and these files, over both parents.
  const tree = mergeHead
    ? await mergedTreeWith(worktree, entries, `sync-${process.pid}`)
    : await writeTreeWithChanges(worktree, head, changes, trees, store);
  const r = await commitSynced(
    ctx,
    session,
    { ...as, mergeHead },
    head,
    tree,
    skipped,
    async () => undefined,
    mergeHead ? undefined : files,
  );
  // The index follows the commit on these paths only (git status stays clean there).
  await updateIndex(worktree, entries).catch(() => undefined);
  if (merge && !mergeHead && r.commit)
    await moveConflictRecord(worktree, merge, r.commit).catch(() => undefined);
  return r;
}

/** Staged changes the path policy refuses (patch-language.md §5b), and symlinks. */
function policySkips(
  staged: ReturnType<typeof parseRawDiff>,
  policy: Policy,
): { path: string; reason: string }[] {
  const skipped: { path: string; reason: string }[] = [];
  for (const c of staged) {
    if (c.newMode === '120000' && c.status !== 'D') {
      skipped.push({ path: c.path, reason: 'a symbolic link' });
      continue;
    }
    try {
      checkPath(c.path, policy);
    } catch (e) {
      skipped.push({ path: c.path, reason: (e as Error).message });
    }
  }
  return skipped;
}

/**
 * The skipped paths of a merge being concluded that are not the target's version: a denied path
 * (`.env`) the merge brings from the target as the target has it is the user's own, committed on
 * their branch, not an edit of the agent, so it goes into the merge commit; one the agent changed
 * stays out.
 */
async function targetsOwn(
  worktree: string,
  mergeHead: string,
  staged: ReturnType<typeof parseRawDiff>,
  skipped: { path: string; reason: string }[],
): Promise<{ path: string; reason: string }[]> {
  const paths = new Set(skipped.map((k) => k.path));
  const held = await changesHeldBy(
    worktree,
    mergeHead,
    staged.filter((c) => paths.has(c.path)),
  );
  return skipped.filter((k) => !held.has(k.path));
}

/**
 * Takes skipped paths out of what is committed: back to the head's version, or, while a merge
 * that `hagent session update` left is concluded, to what that merge made of them (the target's
 * version of a path only the target changed), unless the path was itself conflicted.
 */
async function resetSkipped(
  worktree: string,
  skipped: readonly { path: string; reason: string }[],
  record: ConflictRecord | null,
): Promise<void> {
  const conflicted = new Set(record?.files ?? []);
  const toMerged = record ? skipped.filter((k) => !conflicted.has(k.path)) : [];
  const toHead = skipped.filter((k) => !toMerged.includes(k));
  if (toMerged.length)
    await resetPathsTo(
      worktree,
      record!.tree,
      toMerged.map((k) => k.path),
    );
  if (toHead.length)
    await resetPathsTo(
      worktree,
      'HEAD',
      toHead.map((k) => k.path),
    );
}

const oneLine = (v: string) => v.replace(/[\r\n]+/g, ' ').slice(0, 500);

/** Writes the commit of `tree` on the session branch (compare-and-swap) with its message and note. */
async function commitSynced(
  ctx: RepoContext,
  session: Session,
  as: AdoptAs & { redo?: string | null; mergeHead?: string | null },
  head: string,
  tree: string,
  skipped: { path: string; reason: string }[],
  undoIndex: () => Promise<void>,
  known?: ChangedFile[],
): Promise<SyncResult> {
  const worktree = session.worktree;
  const files =
    known ??
    (await diffTrees(worktree, head, tree)).map((c) => ({ path: c.path, status: c.status }));
  const mergeHead = as.mergeHead ?? null;
  if (files.length === 0 && !mergeHead)
    throw new HagentError('INTERNAL', 'sync made an empty commit');
  const list = files.map((f) => `${f.status} ${f.path}`);
  let message: string;
  const extra = !mergeHead && as.attribute ? await as.attribute(files) : null;
  if (mergeHead) {
    message = mergeCommitMessage(session.id, mergeHead, as.op, files);
  } else {
    let subject = as.subject ?? `hagent: ${as.title} (${list.join(', ')})`;
    if (as.subject === undefined && subject.length > 72)
      subject = `hagent: ${as.title} (${files.length} file${files.length === 1 ? '' : 's'})`;
    if (subject.length > 72) subject = `${subject.slice(0, 71)}…`;
    const trailers = [
      `Hagent-Session: ${session.id}`,
      `Hagent-Op: ${as.op}`,
      ...[...(as.trailers ?? []), ...(extra?.trailers ?? [])].map(oneLine),
    ];
    message = `${subject}\n\n${as.intro}\n${list.map((l) => `- ${l}`).join('\n')}\n\n${as.detail ? `${as.detail}\n\n` : ''}${trailers.join('\n')}\n`;
  }
  // In-process where the repository allows (as apply does: git/commit-direct.ts), else with
  // git: each spawn is ~10-40 ms per hook.
  const store = await looseObjectStore(ctx.commonDir, head);
  const gitDir = store ? worktreeGitDirSync(worktree) : null;
  const made = await writeCommit(
    worktree,
    ctx.commonDir,
    gitDir,
    store,
    tree,
    mergeHead ? [head, mergeHead] : [head],
    message,
  );
  const commit = made.oid;
  const reflog = mergeHead
    ? 'hagent sync: merge concluded'
    : `hagent ${as.op}: ${as.subject ?? as.title}`.slice(0, 200);
  const note = as.note !== undefined || extra ? `${as.note ?? ''}${extra?.note ?? ''}` : undefined;
  const notesRef = sessionNotesRef(session.id);
  const notesParent =
    note === undefined
      ? null
      : ((await readRefs(worktree, ctx.commonDir, [notesRef])).get(notesRef) ?? null);
  const redo = as.redo === undefined ? (await readSessionRefs(ctx, session)).redo : as.redo;
  // The files are the worktree's already and the index holds them: the transaction moves the
  // session branch, retires the redo ref and adds the note, in one ref transaction.
  await runTransaction(
    ctx.commonDir,
    worktree,
    {
      kind: 'sync',
      session: session.id,
      message: reflog,
      worktrees: [],
      refs: [
        { ref: sessionRef(session), old: head, new: commit },
        ...retireRedoMoves(session, redo),
      ],
      note: note === undefined ? null : { ref: notesRef, parent: notesParent, commit, text: note },
      rollForward: false,
    },
    { cwd: worktree, commonDir: ctx.commonDir, gitDir, store },
    { rollback: () => undoIndex() },
  );
  if (mergeHead) await concludeMerge(worktree);
  return {
    ok: true,
    session: session.id,
    commit,
    parent: head,
    files,
    skipped,
    ...(mergeHead ? { merged: mergeHead } : {}),
  };
}

/**
 * The message of the commit that concludes a merge left in progress (by `hagent session update`
 * or the agent's own git merge): the same whichever command concludes it, `op` naming that
 * command (`sync`, `apply`); `files` are the changes against the session head; `trailers` come
 * after `Hagent-Session` and `Hagent-Op: update` (an apply's `Hagent-Patch-Sha256`). Pure.
 */
export function mergeCommitMessage(
  sessionId: string,
  mergeHead: string,
  op: string,
  files: readonly { status: string; path: string }[],
  trailers: readonly string[] = [],
): string {
  const list = files.map((f) => `- ${f.status} ${f.path}`).join('\n');
  return `hagent: merge ${mergeHead.slice(0, 12)} into session ${sessionId}, conflicts resolved\n\nConcluded by hagent ${op}:\n${list}\n\n${[`Hagent-Session: ${sessionId}`, 'Hagent-Op: update', ...trailers].join('\n')}\n`;
}

/**
 * Refuses to conclude a merge while a file the update left conflicted still holds a conflict
 * block: its unmerged entries can go without a resolution (`git reset -- FILE`, `git checkout --
 * FILE`), and the markers would then be committed as content. Only the recorded files are read;
 * a file that was never conflicted may hold marker-like lines.
 * @throws HagentError CONFLICT_MARKERS naming the files and lines.
 */
async function assertNoMarkersLeft(worktree: string, record: ConflictRecord): Promise<void> {
  const left = await markersLeft(worktree, record.files);
  if (left.length === 0) return;
  const where = left.map((l) => `${l.path}:${l.line}`);
  throw new HagentError(
    'CONFLICT_MARKERS',
    `${left.length} file${left.length === 1 ? '' : 's'} conflicted by the update still hold${left.length === 1 ? 's' : ''} conflict markers: ${where.join(', ')}`,
    { files: left.map((l) => l.path), path: left[0]!.path, line: left[0]!.line, markers: left },
    `in ${worktree}: resolve the <<<<<<< ======= >>>>>>> blocks at those lines, mark each file resolved with git add FILE, then run hagent sync again`,
  );
}

/**
 * Refuses to conclude a merge while the index still has unmerged entries: git's own rule — each
 * conflicted path is resolved by `git add` (or `git rm`) once its content is what it should be.
 * Content alone cannot tell (a binary file or a modify/delete conflict has no markers; a resolved
 * text may hold a line of seven `=`).
 * @throws HagentError MERGE_UNRESOLVED naming the files.
 */
async function assertConflictsResolved(worktree: string): Promise<void> {
  const unmerged = await unmergedPaths(worktree);
  if (unmerged.length) {
    throw new HagentError(
      'MERGE_UNRESOLVED',
      `${unmerged.length} conflicted file${unmerged.length === 1 ? ' is' : 's are'} not resolved yet: ${unmerged.join(', ')}`,
      { files: unmerged, path: unmerged[0]! },
      `in ${worktree}: edit each file to what it should be (remove the <<<<<<< ======= >>>>>>> markers), mark it resolved with git add FILE (git rm FILE to delete it), then run hagent sync again`,
    );
  }
}
