/**
 * apply: one agent patch, end to end, as one sequence (style.md §5 "Transactions like jj's"):
 * parse → policy (paths) → snapshot (lstat every component) → staleness → plan (pure) →
 * limits and confirmation → write all-or-nothing → commit (blobs verified, index, tree, commit,
 * compare-and-swap ref update) → note with the patch text.
 * A failure before the ref moves restores every file; nothing half-done (design.md invariant 1).
 */
import { createHash } from 'node:crypto';
import { HagentError } from '../errors.js';
import {
  addNote, blobId, commitTree, lsTree, readRef, readTreeIntoIndex, runGit, updateIndex, updateRefCas, writeBlobsFromPaths, writeTree,
  type IndexEntryUpdate,
} from '../git/index.js';
import { readEntry, writeAllOrNothing, type FileWrite } from '../fsx/index.js';
import { parsePatch, pathsToRead, planPatch } from '../patch/index.js';
import type { FileMode, FileState, Leniency, MatchLevel, ParsedPatch, PatchOp, Plan, PlannedFile } from '../patch/types.js';
import { checkLimits, checkPath, confirmationReasons, type ChangeSize, type Policy } from '../policy/index.js';
import { loadConfig } from '../config/index.js';
import { redoRef, sessionHead, sessionRef, type RepoContext, type Session } from '../session/index.js';

/** What a confirmation prompt is shown (patch-language.md §5b). */
export interface ConfirmationRequest {
  reasons: string[];
  files: FileResult[];
  preview: string;
}

/** Options of {@link applyPatch}. */
export interface ApplyOptions {
  patchText: string;
  /** `--yes`: confirm risky patches without asking. */
  yes?: boolean;
  /** `--dry-run`: plan and check everything, write nothing. */
  dryRun?: boolean;
  /** Overrides the repository's configured policy (tests, library callers). */
  policy?: Policy;
  /** Environment for the policy overrides (HAGENT_MAX_FILES, …). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Asks a human (TTY only); absent means no one can be asked. Resolves true for yes. */
  confirm?: (request: ConfirmationRequest) => Promise<boolean>;
}

/** One file of a result (patch-language.md §7). Counts are lines. */
export interface FileResult {
  path: string;
  op: 'add' | 'update' | 'delete' | 'move';
  from?: string;
  added: number;
  removed: number;
  level?: MatchLevel;
}

/** Success of `hagent apply --json` (patch-language.md §7). `commit` is null on a dry run. */
export interface ApplyResult {
  ok: true;
  session: string;
  commit: string | null;
  parent: string;
  dryRun: boolean;
  files: FileResult[];
  leniencies: Leniency[];
  warnings: string[];
}

/**
 * Normalizes and policy-checks every op path (and a heredoc's `cd DIR`) before planning.
 * @throws HagentError PATH_DENIED. Rule: patch-language.md §5b.
 */
export function checkOpPaths(parsed: ParsedPatch, policy: Policy): ParsedPatch {
  const cwd = parsed.cwd ? checkPath(parsed.cwd, { ...policy, deniedPaths: [], suffixes: { mode: 'deny', list: [] } }) : '';
  const ops = parsed.ops.map((op): PatchOp => {
    const path = checkPath(op.path, policy, cwd);
    if (op.kind === 'update' && op.moveTo !== undefined) return { ...op, path, moveTo: checkPath(op.moveTo, policy, cwd) };
    return { ...op, path };
  });
  return { ...parsed, ops };
}

/** The §7 JSON of one planned file. */
export function fileResult(f: PlannedFile): FileResult {
  const r: FileResult = { path: f.path, op: f.op, added: f.added, removed: f.removed };
  if (f.from !== undefined) r.from = f.from;
  if (f.level !== undefined) r.level = f.level;
  return r;
}

function modeBits(mode: FileMode): number {
  return mode === '100755' ? 0o755 : 0o644;
}

/**
 * Reads what the planner needs from `worktree`, refusing a symlink in any path component.
 * @throws HagentError PATH_DENIED naming the symlinked component (patch-language.md §5b).
 */
export async function readSnapshot(worktree: string, paths: readonly string[]): Promise<Map<string, FileState>> {
  const snapshot = new Map<string, FileState>();
  await Promise.all(paths.map(async (p) => {
    const e = await readEntry(worktree, p);
    if (e.kind === 'symlink') {
      throw new HagentError('PATH_DENIED', `${p}: ${e.component} is a symbolic link`, { path: p, component: e.component }, 'hagent never writes through a symlink; name the real file inside the worktree');
    }
    if (e.kind === 'file') snapshot.set(p, { kind: 'file', bytes: e.bytes, mode: e.executable ? '100755' : '100644' });
    else snapshot.set(p, { kind: e.kind });
  }));
  return snapshot;
}

/**
 * Staleness (design.md invariant 3): every path's on-disk state must equal its state in the
 * session head: same blob id and mode, or absent in both.
 * @throws HagentError STALE_FILE naming the path and both blob ids.
 */
async function assertFresh(worktree: string, head: string, snapshot: ReadonlyMap<string, FileState>): Promise<void> {
  const paths = [...snapshot.keys()];
  const inHead = await lsTree(worktree, head, paths);
  for (const p of paths) {
    const disk = snapshot.get(p)!;
    const entry = inHead.get(p);
    const diskBlob = disk.kind === 'file' ? blobId(disk.bytes) : null;
    if (disk.kind === 'directory' || disk.kind === 'other') continue; // the planner refuses these with its own code
    if (entry === undefined && diskBlob === null) continue;
    if (entry !== undefined && diskBlob === entry.oid && disk.kind === 'file' && disk.mode === entry.mode) continue;
    if (entry !== undefined && entry.type !== 'blob') continue;
    const what = entry === undefined ? 'is not in the session head (created outside hagent)' : diskBlob === null ? 'was deleted outside hagent' : diskBlob === entry.oid ? 'had its mode changed outside hagent' : 'was changed outside hagent';
    throw new HagentError('STALE_FILE', `${p} ${what} since the session's last commit`, { path: p, headBlob: entry?.oid ?? null, diskBlob }, 'run hagent session status to see outside edits; re-read the file and rebuild the patch from its current content');
  }
}

/** Size of a plan for limits and confirmation, from the computed per-file counts (patch-language.md §5b). */
function changeSize(plan: Plan): ChangeSize {
  let changedLines = 0;
  for (const f of plan.files) changedLines += f.added + f.removed;
  return { files: plan.files.length, changedLines, deletes: plan.files.filter((f) => f.op === 'delete').length };
}

function previewOf(plan: Plan): string {
  return plan.files.map((f) => `${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : f.op === 'move' ? 'R' : 'M'} ${f.from ? `${f.from} -> ` : ''}${f.path} (+${f.added} -${f.removed})`).join('\n');
}

function writesOf(plan: Plan): FileWrite[] {
  const writes: FileWrite[] = [];
  for (const f of plan.files) {
    if (f.op === 'delete') writes.push({ rel: f.path, bytes: null });
    else {
      writes.push({ rel: f.path, bytes: f.bytes!, mode: modeBits(f.mode) });
      if (f.op === 'move' && f.from !== undefined && f.from !== f.path) writes.push({ rel: f.from, bytes: null });
    }
  }
  return writes;
}

const SUBJECT_MAX = 72;

/** Commit message of an applied patch: subject names the files; trailers name session and patch. */
export function applyCommitMessage(sessionId: string, plan: Plan, patchText: string): string {
  const letters = plan.files.map((f) => `${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : f.op === 'move' ? 'R' : 'M'} ${f.path}`);
  let subject = `hagent: ${letters.join(', ')}`;
  if (subject.length > SUBJECT_MAX) subject = `hagent: ${plan.files.length} files (${letters[0]}, …)`;
  const body = plan.files.map((f) => `- ${f.op} ${f.from ? `${f.from} -> ` : ''}${f.path} (+${f.added} -${f.removed})`).join('\n');
  const sha = createHash('sha256').update(patchText).digest('hex');
  return `${subject}\n\n${body}\n\nHagent-Session: ${sessionId}\nHagent-Op: apply\nHagent-Patch-Sha256: ${sha}\n`;
}

/**
 * Applies one patch to a session, all-or-nothing, as one commit on `hagent/<id>`.
 * Rules: patch-language.md §1–§7; design.md invariants 1–4.
 * @throws HagentError with any code of patch-language.md §6 (PATCH_SYNTAX … STALE_FILE,
 *   CONFIRMATION_REQUIRED), TARGET_MOVED when the session head moved during the apply
 *   (files restored), GIT_FAILED.
 */
export async function applyPatch(ctx: RepoContext, session: Session, options: ApplyOptions): Promise<ApplyResult> {
  const policy = options.policy ?? (await loadConfig(ctx, options.env ?? {})).policy;
  const worktree = session.worktree;
  const parsed = checkOpPaths(parsePatch(options.patchText), policy);
  const head = await sessionHead(ctx, session);
  const snapshot = await readSnapshot(worktree, pathsToRead(parsed));
  await assertFresh(worktree, head, snapshot);
  const plan = planPatch(parsed, snapshot);
  const size = changeSize(plan);
  checkLimits(size, policy);
  const files = plan.files.map(fileResult);
  const reasons = confirmationReasons(size, policy);
  if (reasons.length && !options.yes && !options.dryRun) {
    const request: ConfirmationRequest = { reasons, files, preview: previewOf(plan) };
    const yes = options.confirm ? await options.confirm(request) : false;
    if (!yes) {
      throw new HagentError('CONFIRMATION_REQUIRED', `this patch needs a human yes: it ${reasons.join(', ')}`, { reasons, files: files.map((f) => f.path), confirmed: options.confirm ? false : null }, options.confirm ? 'the answer was no; nothing was written' : 'ask the human, then run again with --yes');
    }
  }
  const result: ApplyResult = { ok: true, session: session.id, commit: null, parent: head, dryRun: !!options.dryRun, files, leniencies: plan.leniencies, warnings: plan.warnings };
  if (options.dryRun) return result;

  const writes = writesOf(plan);
  await writeAllOrNothing(worktree, writes);
  try {
    result.commit = await commitWrites(worktree, session, head, plan, writes, options.patchText);
  } catch (error) {
    await rollbackTo(worktree, head, snapshot, writes);
    throw error;
  }
  return result;
}

/** Restores the pre-apply bytes of every written path and the index of the head. */
async function rollbackTo(worktree: string, head: string, snapshot: ReadonlyMap<string, FileState>, writes: readonly FileWrite[]): Promise<void> {
  const restore: FileWrite[] = writes.map((w) => {
    const prior = snapshot.get(w.rel);
    return prior?.kind === 'file' ? { rel: w.rel, bytes: prior.bytes, mode: modeBits(prior.mode) } : { rel: w.rel, bytes: null };
  });
  await writeAllOrNothing(worktree, restore).catch(() => undefined);
  await readTreeIntoIndex(worktree, head).catch(() => undefined);
}

/**
 * Turns the written files into one commit on the session branch. The blobs git stores are
 * checked against the bytes hagent meant to write (an outside write in between is caught).
 * @returns the new commit id. @throws HagentError EXTERNAL_EDIT, TARGET_MOVED, GIT_FAILED.
 */
async function commitWrites(worktree: string, session: Session, head: string, plan: Plan, writes: readonly FileWrite[], patchText: string): Promise<string> {
  const present = writes.filter((w) => w.bytes !== null);
  const oids = await writeBlobsFromPaths(worktree, present.map((w) => w.rel));
  const entries: IndexEntryUpdate[] = [];
  present.forEach((w, i) => {
    const expected = blobId(w.bytes!);
    if (oids[i] !== expected) {
      throw new HagentError('EXTERNAL_EDIT', `${w.rel} changed on disk while hagent was writing it`, { path: w.rel }, 'another process is writing this file; hagent restored what it wrote over; try again when it is done');
    }
    entries.push({ path: w.rel, mode: w.mode === 0o755 ? '100755' : '100644', oid: expected });
  });
  for (const w of writes) if (w.bytes === null) entries.push({ path: w.rel, mode: '0', oid: null });
  await updateIndex(worktree, entries);
  const tree = await writeTree(worktree);
  const commit = await commitTree(worktree, tree, [head], applyCommitMessage(session.id, plan, patchText));
  await updateRefCas(worktree, sessionRef(session), commit, head, `hagent apply: ${plan.files.map((f) => f.path).join(', ')}`.slice(0, 200));
  await retireRedo(worktree, session);
  await addNote(worktree, commit, patchText).catch(() => undefined);
  return commit;
}

/** After a new apply, undone commits can no longer be redone in place: keep them reachable under `refs/hagent/<id>/undone/`. */
async function retireRedo(cwd: string, session: Session): Promise<void> {
  const redo = await readRef(cwd, redoRef(session));
  if (!redo) return;
  await runGit(['update-ref', '--create-reflog', '-m', 'hagent: undone commits kept', `refs/hagent/${session.id}/undone/${redo.slice(0, 12)}`, redo], { cwd });
  await runGit(['update-ref', '-d', redoRef(session), redo], { cwd, allowFailure: true });
}
