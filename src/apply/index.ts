/**
 * apply: one agent patch, end to end, as one sequence (style.md §5 "Transactions like jj's"):
 * parse → policy (paths) → snapshot (lstat every component) → staleness ({@link freshness})
 * → plan (pure) → limits and confirmation → {@link applyTransaction} (objects: blobs, tree,
 * commit; the transaction plan) → runTransaction (transaction/run.ts: record, files, index,
 * one ref transaction for the branch, the redo ref and the notes ref).
 * A failure before the refs move restores every file; nothing half-done (design.md invariant 1).
 */
import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { trace } from '../trace/index.js';
import { HagentError, isHagentError } from '../errors.js';
import {
  blobId,
  worktreeGitDirSync,
  readLooseObject,
  formatOfOid,
  submodulesOf,
  conversionsOf,
  type Conversions,
  storedBlobIds,
  storeConverted,
  assertDriversAvailable,
  diffTrees,
  entriesAt,
  readCommitTrees,
  readRefs,
  resolveCommit,
  sessionNotesRef,
  writeBlobsFromPaths,
  writeTreeWithChanges,
  looseObjectStore,
  writeLooseObject,
  writeCommit,
  Repo,
  type LooseObjectStore,
  type CommitTrees,
  type CatFileBatch,
  type RefTransactionProcess,
  type NoteWriter,
  hasSkipWorktreeBit,
  commitText,
} from '../git/index.js';
import { readEntry, type Staged, type TargetWrite } from '../fsx/index.js';
import { assertPreApplyAccepted, runUserHook } from '../user-hooks/index.js';
import {
  guardedWrite,
  indexEntriesOf,
  newTxid,
  runTransaction,
  watchTargets,
  type FileChange,
  type Freshness,
  type Recovery,
  type TargetWatch,
  type TransactionPlan,
} from '../transaction/index.js';
import { parsePatch, pathsToRead, planPatch, type ResultFile } from '../patch/index.js';
import type {
  FileMode,
  FileState,
  Leniency,
  ParsedPatch,
  PatchOp,
  Plan,
  PlannedFile,
} from '../patch/types.js';
import {
  checkLimits,
  checkPath,
  confirmationReasons,
  relativizeAbsolute,
  type AbsoluteRoots,
  type ChangeSize,
  type Policy,
} from '../policy/index.js';
import { loadConfig } from '../config/index.js';
import type { EffectiveConfig } from '../policy/index.js';
import {
  guardTarget,
  readSessionRefs,
  retireRedoMoves,
  sessionRef,
  type RepoContext,
  type Session,
} from '../session/index.js';
import {
  assertResolvedBy,
  concludeMerge,
  mergedTreeWith,
  moveConflictRecord,
  readMergeState,
  restoreUnmerged,
  unresolvedAfter,
  type MergeState,
} from '../update/index.js';
import { mergeCommitMessage } from '../sync/index.js';

/** What a confirmation prompt is shown (patch-language.md §5b). */
export interface ConfirmationRequest {
  reasons: string[];
  files: FileResult[];
  preview: string;
}

/** Options of {@link applyPatch}. */
export interface ApplyOptions {
  /** The patch (Codex language or unified diff). Ignored when `change` is given. */
  patchText: string;
  /**
   * The folder, relative to the worktree root and `/`-separated, that the patch's paths are
   * relative to (a drop-in `apply_patch` run in a subfolder, as Codex reads paths against its
   * working folder). A heredoc's `cd DIR` is taken inside it. Default: the root.
   */
  cwd?: string;
  /**
   * A change planned from the snapshot instead of parsed from `patchText` (the edit and write
   * tools).
   */
  change?: PlannedChange;
  /**
   * Compare-and-swap on files: path → the blob id it must hold now (null: it must not exist),
   * checked under the lock against the files the patch reads. Paths are repository-relative and
   * normalised as the patch's are; each must be one the patch reads.
   */
  expectBlobs?: Readonly<Record<string, string | null>>;
  /** Adds `blobs` (path → new blob id, null when deleted) to the result. */
  reportBlobs?: boolean;
  /**
   * A warm object reader for the head's trees when they are not loose (the MCP server keeps one).
   */
  objects?: CatFileBatch;
  /** A kept `git update-ref --stdin` for the ref moves (the MCP server keeps one). */
  refs?: RefTransactionProcess;
  /**
   * The effective configuration, when the caller keeps it loaded (the MCP server); else read from
   * the repository.
   */
  config?: EffectiveConfig & { root: string | null };
  /** `--yes`: confirm risky patches without asking. */
  yes?: boolean;
  /**
   * How this caller gives the human's yes, for CONFIRMATION_REQUIRED's hint (default: `run again
   * with --yes`), e.g. an MCP tool's `yes: true`.
   */
  howToConfirm?: string;
  /**
   * How this caller sees and keeps outside edits, for STALE_FILE's hint (default: the CLI's
   * `hagent session status` and `hagent sync`), e.g. the MCP server's status and sync tools.
   */
  staleHint?: string;
  /** `--dry-run`: plan and check everything, write nothing. */
  dryRun?: boolean;
  /** Overrides the repository's configured policy (tests, library callers). */
  policy?: Policy;
  /** Environment for the policy overrides (HAGENT_MAX_FILES, …). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * `--base COMMIT`: refuse if the head moved since COMMIT and a target changed (compare-and-swap).
   */
  base?: string;
  /** `--no-watch`: skip the watcher (recorded in the result as `watched: false`). */
  noWatch?: boolean;
  /** `--lock-timeout` in ms (default from config, 10 s). */
  lockTimeoutMs?: number;
  /**
   * Skips the staleness check (design.md invariant 3). For measuring what the check costs
   * (bench/run.ts, the envelope figure) only: never reachable from the command line, since
   * without it an outside edit of a target is silently taken into the commit.
   */
  skipStalenessCheck?: boolean;
  /** Asks a human (TTY only); absent means no one can be asked. Resolves true for yes. */
  confirm?: (request: ConfirmationRequest) => Promise<boolean>;
}

/**
 * A change planned from the files instead of parsed from patch text: `edit` (exact-string
 * replacement) and `write` (whole file). It runs through the same transaction as a patch — path
 * policy, lock, recovery, snapshot, staleness, limits, hooks, commit, journal — and only the
 * planning step differs. The unified diff of the plan is what the note and the journal keep.
 */
export interface PlannedChange {
  /**
   * One op per path it touches (an `update` without chunks, or an `add`), for policy, snapshot and
   * watcher.
   */
  parsed: ParsedPatch;
  /**
   * Plans from the snapshot taken under the lock; `parsed` holds the policy-normalised paths.
   * @throws HagentError as the planner does.
   */
  plan(parsed: ParsedPatch, snapshot: ReadonlyMap<string, FileState>): Plan;
}

/** One file of a result (patch-language.md §7). Counts are lines. */
export type FileResult = ResultFile;

/** Success of `hagent apply --json` (patch-language.md §7). `commit` is null on a dry run. */
export interface ApplyResult {
  ok: true;
  session: string;
  commit: string | null;
  parent: string;
  dryRun: boolean;
  /**
   * The patch's language (patch-language.md §2, §7): a unified diff is a format, not a leniency.
   */
  format: 'codex' | 'unified';
  files: FileResult[];
  leniencies: Leniency[];
  warnings: string[];
  /** Whether outside writes were watched for during the apply. */
  watched: boolean;
  /** What hagent finished or undid of an interrupted earlier transaction, if any. */
  recovery?: Recovery;
  /**
   * With `reportBlobs`: each path the patch wrote → its new blob id (null: deleted or moved away).
   */
  blobs?: Record<string, string | null>;
  /**
   * Present when the patch resolved every conflict of the merge in progress (`hagent session
   * update`): its commit is the merge commit (`concluded`; false on a dry run, which would).
   * `target` is the branch merged (null for a merge the agent started itself), `merged` the commit.
   */
  merge?: { concluded: boolean; target: string | null; merged: string };
  /** Output of `.hagent/hooks/post-apply`, when it ran. */
  postApply?: { exitCode: number | null; stdout: string; stderr: string; timedOut: boolean };
}

/**
 * Normalizes and policy-checks every op path (and a heredoc's `cd DIR`) before planning. With
 * `roots`, an absolute path inside the session worktree is made relative (leniency
 * `absolute-path`) and one inside the user's main checkout of the same repository is mapped to the
 * session's copy of it (leniency `main-checkout-path`, with a warning naming both); every other
 * absolute path stays denied.
 * @throws HagentError PATH_DENIED. Rule: patch-language.md §5b.
 */
export function checkOpPaths(
  parsed: ParsedPatch,
  policy: Policy,
  roots?: AbsoluteRoots,
): ParsedPatch {
  const leniencies = [...parsed.leniencies];
  const warnings = [...(parsed.warnings ?? [])];
  const local = (raw: string): string => {
    if (!roots) return raw;
    const r = relativizeAbsolute(raw, roots);
    if (r.kind === 'relative') return raw;
    const l: Leniency = r.kind === 'worktree' ? 'absolute-path' : 'main-checkout-path';
    if (!leniencies.includes(l)) leniencies.push(l);
    if (r.kind === 'main-checkout')
      warnings.push(
        `${raw} is in the main checkout (${r.root}); hagent changed the session's copy, ` +
          `${r.path}, instead: the main checkout changes only when the session lands`,
      );
    return r.path;
  };
  const cwd = parsed.cwd
    ? checkPath(local(parsed.cwd), {
        ...policy,
        deniedPaths: [],
        suffixes: { mode: 'deny', list: [] },
      })
    : '';
  const check = (raw: string): string => checkPath(local(raw), policy, cwd);
  const ops = parsed.ops.map((op): PatchOp => {
    const path = check(op.path);
    if (op.kind === 'update' && (op.moveTo !== undefined || op.altPath !== undefined)) {
      const out = { ...op, path };
      if (op.moveTo !== undefined) out.moveTo = check(op.moveTo);
      if (op.altPath !== undefined) out.altPath = check(op.altPath);
      return out;
    }
    if (op.kind === 'add' && op.copyFrom !== undefined)
      return { ...op, path, copyFrom: check(op.copyFrom) };
    return { ...op, path };
  });
  const out: ParsedPatch = { ...parsed, ops, leniencies };
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}

/**
 * The folders an absolute patch path may name (patch-language.md §5b): the session worktree and
 * the user's main checkout, each also through resolved symlinks.
 */
export async function absoluteRoots(
  worktree: string,
  mainCheckout: string | null,
): Promise<AbsoluteRoots> {
  const both = async (p: string): Promise<string[]> => {
    const real = await fs.realpath(p).catch(() => p);
    return [...new Set([path.resolve(p), real])];
  };
  const [wt, main] = await Promise.all([both(worktree), mainCheckout ? both(mainCheckout) : []]);
  return { worktree: wt, mainCheckout: main };
}

/** `plan` with the warnings checkOpPaths left on `parsed` in front of its own. Pure. */
function withPathWarnings<P extends { warnings: string[] }>(plan: P, parsed: ParsedPatch): P {
  return parsed.warnings?.length
    ? {
        ...plan,
        warnings: [
          ...parsed.warnings,
          ...plan.warnings.filter((w) => !parsed.warnings!.includes(w)),
        ],
      }
    : plan;
}

/** `parsed` with its paths taken inside `cwd` (a heredoc's own `cd DIR` inside that). Pure. */
function withCwd(parsed: ParsedPatch, cwd: string | undefined): ParsedPatch {
  if (!cwd) return parsed;
  return { ...parsed, cwd: parsed.cwd ? `${cwd}/${parsed.cwd}` : cwd };
}

/** The §7 JSON of one planned file. */
export function fileResult(f: PlannedFile): FileResult {
  const r: FileResult = { path: f.path, op: f.op, added: f.added, removed: f.removed };
  if (f.from !== undefined) r.from = f.from;
  if (f.level !== undefined) r.level = f.level;
  if (f.finalNewline !== undefined) r.finalNewline = f.finalNewline;
  return r;
}

function modeBits(mode: FileMode): number {
  return mode === '100755' ? 0o755 : 0o644;
}

/**
 * Reads what the planner needs from `worktree`, refusing a symlink in any path component.
 * @throws HagentError PATH_DENIED naming the symlinked component (patch-language.md §5b).
 */
export async function readSnapshot(
  worktree: string,
  paths: readonly string[],
): Promise<Map<string, FileState>> {
  const snapshot = new Map<string, FileState>();
  await Promise.all(
    paths.map(async (p) => {
      const e = await readEntry(worktree, p);
      if (e.kind === 'symlink') {
        throw new HagentError(
          'PATH_DENIED',
          `${p}: ${e.component} is a symbolic link`,
          { path: p, component: e.component },
          'hagent never writes through a symlink; name the real file inside the worktree',
        );
      }
      if (e.kind === 'file')
        snapshot.set(p, { kind: 'file', bytes: e.bytes, mode: e.executable ? '100755' : '100644' });
      else if (e.kind === 'directory')
        snapshot.set(p, { kind: 'directory', files: await filesUnder(path.join(worktree, p)) });
      else if (e.kind === 'missing')
        snapshot.set(
          p,
          e.underFile === undefined
            ? { kind: 'missing' }
            : { kind: 'missing', underFile: e.underFile },
        );
      else snapshot.set(p, { kind: e.kind });
    }),
  );
  return snapshot;
}

/**
 * Every non-folder entry below `dir`, relative and `/`-separated (a patch may empty a folder and
 * put a file in its place).
 */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) =>
      path
        .relative(dir, path.join(e.parentPath ?? e.path, e.name))
        .split(path.sep)
        .join('/'),
    );
}

/** What one stale path is: its blobs in the head and on disk, and what happened to it. */
interface StaleDetail {
  path: string;
  what: string;
  headBlob: string | null;
  diskBlob: string | null;
  /** Absent on disk because it is outside the sparse checkout (not an outside edit). */
  sparse: boolean;
}

/**
 * Staleness (design.md invariant 3), as a value: every path's on-disk state must equal its
 * state in the session head: same blob id and mode, or absent in both. The on-disk blob id is
 * the one git would store (`diskIds`, from {@link storedBlobIds}: through git's clean
 * conversion for paths with filter or end-of-line attributes), so a CRLF checkout of an LF blob
 * is fresh. `stale` lists every path that is not, with the first one's detail.
 */
async function freshness(
  worktree: string,
  snapshot: ReadonlyMap<string, FileState>,
  trees: CommitTrees,
  diskIds: ReadonlyMap<string, string>,
): Promise<Freshness | (Freshness & { kind: 'stale'; first: StaleDetail })> {
  const paths = [...snapshot.keys()];
  const inHead = entriesAt(trees, paths);
  const stale: string[] = [];
  let first: StaleDetail | null = null;
  for (const p of paths) {
    const disk = snapshot.get(p)!;
    const entry = inHead.get(p);
    const diskBlob = disk.kind === 'file' ? diskIds.get(p)! : null;
    // The planner refuses these with its own code.
    if (disk.kind === 'directory' || disk.kind === 'other') continue;
    if (entry === undefined && diskBlob === null) continue;
    if (
      entry !== undefined &&
      diskBlob === entry.oid &&
      disk.kind === 'file' &&
      disk.mode === entry.mode
    )
      continue;
    if (entry !== undefined && entry.type !== 'blob') continue;
    stale.push(p);
    if (first) continue;
    const what =
      entry === undefined
        ? 'is not in the session head (created outside hagent)'
        : diskBlob === null
          ? 'was deleted outside hagent'
          : diskBlob === entry.oid
            ? 'had its mode changed outside hagent'
            : 'was changed outside hagent';
    const sparse =
      entry !== undefined &&
      diskBlob === null &&
      disk.kind === 'missing' &&
      (await skipWorktree(worktree, p));
    first = { path: p, what, headBlob: entry?.oid ?? null, diskBlob, sparse };
  }
  return first ? { kind: 'stale', paths: stale, first } : { kind: 'fresh' };
}

/**
 * The refusal of a stale snapshot ({@link freshness}).
 * @throws HagentError STALE_FILE naming the first path and both blob ids; OUTSIDE_SPARSE when
 *   that path is only outside the sparse checkout.
 */
function assertFresh(
  worktree: string,
  f: Awaited<ReturnType<typeof freshness>>,
  staleHint = 'run hagent session status to see outside edits; keep them with hagent sync (or drop them)',
): void {
  if (f.kind === 'fresh' || !('first' in f)) return;
  const { path: p, what, headBlob, diskBlob, sparse } = f.first;
  if (sparse)
    throw new HagentError(
      'OUTSIDE_SPARSE',
      `${p} is outside the sparse checkout of the session worktree`,
      { path: p },
      `bring it in with: git -C ${JSON.stringify(worktree)} sparse-checkout add ` +
        `${JSON.stringify(p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : p)}, then apply ` +
        `again (git sparse-checkout set in your checkout decides what new sessions get)`,
    );
  throw new HagentError(
    'STALE_FILE',
    `${p} ${what} since the session's last commit`,
    { path: p, headBlob, diskBlob, files: f.paths },
    `${staleHint}, re-read the file and rebuild the patch from its current content`,
  );
}

/**
 * A patch never writes inside a submodule: hagent would replace the gitlink with a folder of
 * files, and a land would then remove the submodule from the user's branch.
 * @throws HagentError SUBMODULE_PATH naming the path and its submodule.
 */
function assertOutsideSubmodules(trees: CommitTrees, paths: readonly string[]): void {
  const inside = submodulesOf(trees, paths);
  const [p, sub] = [...inside][0] ?? [];
  if (p === undefined) return;
  throw new HagentError(
    'SUBMODULE_PATH',
    p === sub ? `${p} is a submodule` : `${p} is inside the submodule ${sub}`,
    { path: p, submodule: sub, files: [...inside.keys()] },
    `hagent edits this repository's own files only; change ${sub} in its own repository (and ` +
      `commit the new submodule commit there), or leave these paths out of the patch`,
  );
}

/** True when the index entry of `rel` has git's skip-worktree bit (outside a sparse checkout). */
async function skipWorktree(worktree: string, rel: string): Promise<boolean> {
  return hasSkipWorktreeBit(worktree, rel);
}

/**
 * Size of a plan for limits and confirmation, from the computed per-file counts (patch-language.md
 * §5b).
 */
function changeSize(plan: Plan): ChangeSize {
  let changedLines = 0;
  for (const f of plan.files) changedLines += f.added + f.removed;
  return {
    files: plan.files.length,
    changedLines,
    deletes: plan.files.filter((f) => f.op === 'delete').length,
  };
}

const PREVIEW_MAX_LINES = 60;

/**
 * What a human sees before saying yes: the file list with op kinds
 * and line counts, then a unified diff preview (at most 60 lines, computed with diff@9 and a
 * timeout so a huge file cannot stall the prompt).
 */
async function previewOf(plan: Plan, snapshot: ReadonlyMap<string, FileState>): Promise<string> {
  const list = plan.files.map(
    (f) =>
      `  ${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : f.op === 'move' ? 'R' : 'M'} ` +
      `${f.from ? `${f.from} -> ` : ''}${f.path} (+${f.added} -${f.removed})`,
  );
  const { createTwoFilesPatch } = await import('diff');
  const diffLines: string[] = [];
  for (const f of plan.files) {
    const { oldText, newText } = textsOf(f, snapshot);
    const patch = createTwoFilesPatch(f.from ?? f.path, f.path, oldText, newText, '', '', {
      context: 2,
      timeout: 200,
    });
    diffLines.push(
      ...(patch ?? '')
        .split('\n')
        .slice(2)
        .filter((l) => l.length > 0),
    );
    if (diffLines.length > PREVIEW_MAX_LINES) break;
  }
  const shown = diffLines.slice(0, PREVIEW_MAX_LINES);
  if (diffLines.length > shown.length)
    shown.push(
      `… (${diffLines.length - shown.length}+ more lines: hagent apply --dry-run --json, or ` +
        `hagent check)`,
    );
  return [...list, '', ...shown].join('\n');
}

const textDecoder = new TextDecoder();

/** A planned file's text before (from the snapshot; '' when new) and after ('' when deleted). */
function textsOf(
  f: PlannedFile,
  snapshot: ReadonlyMap<string, FileState>,
): { oldText: string; newText: string } {
  const before = snapshot.get(f.from ?? f.path);
  return {
    oldText: before?.kind === 'file' ? textDecoder.decode(before.bytes) : '',
    newText: f.bytes ? textDecoder.decode(f.bytes) : '',
  };
}

/**
 * Every path the plan changes, with its new bytes (null: deleted) and the bytes it must still hold.
 */
function targetWrites(plan: Plan, snapshot: ReadonlyMap<string, FileState>): TargetWrite[] {
  const prior = (rel: string) => {
    const st = snapshot.get(rel);
    return st?.kind === 'file'
      ? { expected: st.bytes as Uint8Array, expectedMode: modeBits(st.mode) }
      : { expected: null, expectedMode: 0o644 };
  };
  const writes: TargetWrite[] = [];
  for (const f of plan.files) {
    if (f.op === 'delete') writes.push({ rel: f.path, bytes: null, mode: 0o644, ...prior(f.path) });
    else {
      writes.push({ rel: f.path, bytes: f.bytes!, mode: modeBits(f.mode), ...prior(f.path) });
      if (f.op === 'move' && f.from !== undefined && f.from !== f.path)
        writes.push({ rel: f.from, bytes: null, mode: 0o644, ...prior(f.from) });
    }
  }
  return writes;
}

const SUBJECT_MAX = 72;

/**
 * The line saying an apply concluded (or, on a dry run, would conclude) the merge in progress; null
 * when it did not. Pure.
 */
export function mergeLine(r: Pick<ApplyResult, 'merge'>): string | null {
  if (!r.merge) return null;
  const what = r.merge.target
    ? r.merge.target.replace(/^refs\/heads\//, '')
    : r.merge.merged.slice(0, 12);
  return `${r.merge.concluded ? 'concluded' : 'would conclude'} the merge of ${what}`;
}

/** Commit message of an applied patch: subject names the files; trailers name session and patch. */
export function applyCommitMessage(sessionId: string, plan: Plan, patchText: string): string {
  const letters = plan.files.map(
    (f) =>
      `${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : f.op === 'move' ? 'R' : 'M'} ${f.path}`,
  );
  let subject = `hagent: ${letters.join(', ')}`;
  if (subject.length > SUBJECT_MAX)
    subject = `hagent: ${plan.files.length} files (${letters[0]}, …)`;
  const body = plan.files
    .map((f) => `- ${f.op} ${f.from ? `${f.from} -> ` : ''}${f.path} (+${f.added} -${f.removed})`)
    .join('\n');
  return (
    `${subject}\n\n${body}\n\n` +
    `Hagent-Session: ${sessionId}\nHagent-Op: apply\n${patchTrailer(patchText)}\n`
  );
}

/**
 * The trailer naming a patch by its text (`Hagent-Patch-Sha256`), by which a retried patch is known
 * ({@link assertNotLastPatch}). Pure.
 */
function patchTrailer(patchText: string): string {
  return `Hagent-Patch-Sha256: ${createHash('sha256').update(patchText).digest('hex')}`;
}

/**
 * During a merge in progress, whether this plan concludes it: a plan that writes no conflicted
 * path is an apply like any other (the merge stays in progress, over the new head); one that
 * writes a conflicted path must resolve every conflict, and its commit is then the merge commit.
 * @throws HagentError MERGE_UNRESOLVED naming what the patch leaves conflicted; nothing is written.
 */
async function concludesMerge(
  worktree: string,
  session: Session,
  merge: MergeState | null,
  plan: Plan,
  snapshot: ReadonlyMap<string, FileState>,
): Promise<boolean> {
  if (!merge) return false;
  const written = new Map(targetWrites(plan, snapshot).map((w) => [w.rel, w.bytes] as const));
  if (![...written.keys()].some((p) => merge.conflicted.has(p))) return false;
  assertResolvedBy(worktree, session.id, await unresolvedAfter(worktree, merge, written));
  return true;
}

/**
 * `snapshot` without `paths`: a conflicted path's bytes on disk are its current content, not an
 * outside edit.
 */
function withoutPaths(
  snapshot: ReadonlyMap<string, FileState>,
  paths: ReadonlySet<string>,
): ReadonlyMap<string, FileState> {
  return new Map([...snapshot].filter(([p]) => !paths.has(p)));
}

/**
 * Applies one patch to a session, all-or-nothing, as one commit on `hagent/<id>`, as one
 * sequence: lock → recover an interrupted transaction → snapshot → staleness (and `--base`
 * compare-and-swap) → plan (pure) → limits, confirmation, pre-apply hook → the transaction's
 * objects and plan ({@link applyTransaction}: tree and commit from the planned blob ids) →
 * runTransaction: intent record, staged temp files (their blobs checked against the plan while
 * they and the record are fsynced together), publish (renames, each a compare-and-swap on the
 * file's bytes), index, one ref transaction (branch, redo ref, notes ref) → post-apply hook.
 * A watcher on the targets runs from the snapshot until after the commit.
 * Every attempt, applied or refused, is appended to the journal.
 * Rules: patch-language.md §1–§7; design.md invariants 1–4; docs/architecture.md.
 * @throws HagentError with any code of patch-language.md §6, plus WATCH_FAILED, TARGET_MOVED,
 *   GIT_FAILED; nothing is left half-written.
 */
export async function applyPatch(
  ctx: RepoContext,
  session: Session,
  options: ApplyOptions,
): Promise<ApplyResult> {
  trace('apply: start');
  const config = options.config ?? (await loadConfig(ctx, options.env ?? {}, session.target));
  trace('apply: config loaded');
  const policy = options.policy ?? config.policy;
  const command = options.dryRun ? 'apply --dry-run' : 'apply';
  const timeoutMs = options.lockTimeoutMs ?? config.runtime.lockTimeoutMs;
  const { value, recovery } = await guardedWrite(
    guardTarget(ctx, session),
    command,
    { timeoutMs, patch: options.patchText, journal: !options.dryRun },
    async () => {
      trace('apply: locked');
      const parsed = checkOpPaths(
        withCwd(
          options.change ? options.change.parsed : parsePatch(options.patchText),
          options.cwd,
        ),
        policy,
        await absoluteRoots(session.worktree, config.root),
      );
      trace('apply: parsed');
      // Which targets git converts (attributes, config): two git calls, started now to overlap
      // the reads below.
      const conversions = conversionsOf(session.worktree, pathsToRead(parsed));
      conversions.catch(() => undefined); // awaited in applyLocked
      // git's identity for the commit (three spawns, once per process), asked now to overlap too.
      if (!options.dryRun) void Repo.of(ctx).from(session.worktree).identity();
      const { head, redo } = await readSessionRefs(ctx, session);
      trace('apply: refs read');
      const watch =
        options.noWatch || !config.runtime.watch
          ? null
          : await watchTargets(session.worktree, pathsToRead(parsed));
      trace('apply: watcher ready');
      try {
        const { result: r, patchText } = await applyLocked(
          ctx,
          session,
          options,
          parsed,
          head,
          redo,
          policy,
          config,
          watch,
          conversions,
        );
        return {
          value: r,
          files: r.files.map((f) => f.path),
          head: r.commit ?? head,
          ...(options.change ? { patch: patchText } : {}),
        };
      } finally {
        await watch?.close();
      }
    },
  );
  if (recovery) value.recovery = recovery;
  return value;
}

/**
 * Runs the apply's transaction: the converted blobs stored as they are staged, the watch checked
 * healthy and quiet before the refs move and the files checked as ours after, and on a rollback
 * during a merge the conflicted index entries put back.
 */
function publish(
  ctx: RepoContext,
  worktree: string,
  tx: Awaited<ReturnType<typeof applyTransaction>>,
  store: LooseObjectStore | null,
  watch: TargetWatch | null,
  merge: MergeState | null,
  refs: RefTransactionProcess | undefined,
): ReturnType<typeof runTransaction> {
  const writes = tx.writes;
  return runTransaction(
    ctx.commonDir,
    worktree,
    tx.plan,
    tx.objects,
    {
      staged: (staged) => storeStagedBlobs(worktree, staged, tx.plan, store, tx.convertedIds),
      beforePublish: () => {
        watch?.assertHealthy();
        assertNoOutsideEvents(watch);
      },
      published: async () => {
        watch?.assertHealthy();
        await assertOnlyOurWrites(worktree, writes);
      },
      ...(merge
        ? {
            rollback: (indexed: boolean) =>
              indexed
                ? restoreUnmerged(
                    worktree,
                    merge,
                    writes.map((w) => w.rel),
                  )
                : Promise.resolve(),
          }
        : {}),
    },
    { txid: tx.txid, ...(refs ? { refs } : {}) },
  );
}

/**
 * What the patch finds: the files it reads, the head's trees on the way to them (the staleness
 * check and, later, the new tree), the attributes' conversions and a merge in progress; checked
 * fresh (the files are as the head holds them, or as `expectBlobs` says) and outside submodules.
 * @throws HagentError STALE_FILE, OUTSIDE_SPARSE, SUBMODULE_PATH, USAGE (expectBlobs).
 */
async function readCurrent(
  ctx: RepoContext,
  worktree: string,
  head: string,
  parsed: ParsedPatch,
  options: ApplyOptions,
  pendingConversions: Promise<Conversions>,
) {
  const store = await looseObjectStore(ctx.commonDir, head);
  const format = formatOfOid(head);
  const [snapshot, trees, conversions, merge] = await Promise.all([
    readSnapshot(worktree, pathsToRead(parsed)),
    readCommitTrees(worktree, head, pathsToRead(parsed), store, options.objects),
    pendingConversions,
    readMergeState(worktree, head),
  ]);
  trace('apply: snapshot, head trees and attributes read');
  const diskFiles = [...snapshot].flatMap(([p, st]) =>
    st.kind === 'file' ? [{ path: p, bytes: st.bytes }] : [],
  );
  const diskIds = await storedBlobIds(worktree, diskFiles, conversions.converted, format);
  assertOutsideSubmodules(trees, pathsToRead(parsed));
  // While a merge is in progress, a conflicted path is current as the worktree holds it (git's
  // rule).
  if (!options.skipStalenessCheck)
    assertFresh(
      worktree,
      await freshness(
        worktree,
        merge ? withoutPaths(snapshot, merge.conflicted) : snapshot,
        trees,
        diskIds,
      ),
      options.staleHint,
    );
  if (options.expectBlobs) assertExpectedBlobs(snapshot, options.expectBlobs, diskIds);
  trace('apply: staleness checked');
  return { store, format, snapshot, trees, conversions, merge, diskIds };
}

async function applyLocked(
  ctx: RepoContext,
  session: Session,
  options: ApplyOptions,
  parsed: ParsedPatch,
  head: string,
  redo: string | null,
  policy: Policy,
  config: EffectiveConfig & { root: string | null },
  watch: TargetWatch | null,
  pendingConversions: Promise<Conversions>,
): Promise<{ result: ApplyResult; patchText: string }> {
  const worktree = session.worktree;
  if (options.base !== undefined)
    await assertBaseFresh(ctx, options.base, head, pathsToRead(parsed));
  const { store, format, snapshot, trees, conversions, merge, diskIds } = await readCurrent(
    ctx,
    worktree,
    head,
    parsed,
    options,
    pendingConversions,
  );
  if (!options.change) await assertNotLastPatch(worktree, head, store, options.patchText);
  // A planned change keeps the warnings of its paths (an absolute path mapped from the main
  // checkout).
  const plan = options.change
    ? withPathWarnings(options.change.plan(parsed, snapshot), parsed)
    : planPatch(parsed, snapshot);
  const patchText = options.change ? await unifiedDiffOf(plan, snapshot) : options.patchText;
  trace('apply: planned');
  const concluding = await concludesMerge(worktree, session, merge, plan, snapshot);
  assertDriversAvailable(
    conversions,
    plan.files.flatMap((f) => (f.op === 'delete' ? [] : [f.path])),
  );
  const size = changeSize(plan);
  checkLimits(size, policy);
  const files = plan.files.map(fileResult);
  // The overlap radar (src/radar/): lines another unlanded session changed, before anything is written.
  const overlapWarnings =
    config.runtime.overlap === 'off'
      ? []
      : await (
          await import('../radar/index.js')
        ).checkOverlap(ctx, session, editedFiles(plan, snapshot), config.runtime.overlap);
  trace('apply: overlap checked');
  await confirmOrRefuse(options, confirmationReasons(size, policy), files, plan, snapshot);
  const result: ApplyResult = {
    ok: true,
    session: session.id,
    commit: null,
    parent: head,
    dryRun: !!options.dryRun,
    format: parsed.format,
    files,
    leniencies: plan.leniencies,
    warnings: [...plan.warnings, ...overlapWarnings],
    watched: watch !== null,
  };
  if (options.reportBlobs) result.blobs = blobsOf(plan, format);
  if (concluding)
    result.merge = {
      concluded: !options.dryRun,
      target: merge!.record ? session.target : null,
      merged: merge!.mergeHead,
    };
  if (options.dryRun) return { result, patchText };

  const hooksDir = config.root ? path.join(config.root, '.hagent', 'hooks') : null;
  const hookEnv = { HAGENT_SESSION: session.id, HAGENT_WORKTREE: worktree };
  const hookInput = hookInputOf(session, head, files, size, patchText);
  if (hooksDir)
    assertPreApplyAccepted(
      await runUserHook(hooksDir, 'pre-apply', hookInput, hookEnv, {
        timeoutMs: config.runtime.hookTimeoutMs,
      }),
    );

  // The transaction: objects first (blobs of converted paths, the tree, the commit), then the
  // record, the files, the index and one ref transaction (transaction/run.ts).
  const tx = await applyTransaction(ctx, session, {
    plan,
    snapshot,
    patchText,
    head,
    redo,
    merge: concluding ? merge : null,
    trees,
    store,
    diskIds,
    conversions,
    objects: options.objects,
  });
  const outcome = await publish(ctx, worktree, tx, store, watch, merge, options.refs);
  result.commit = tx.commit;
  result.warnings.push(...outcome.warnings);
  await outcome.durable;
  trace('apply: committed');
  // The merge ends as `git commit` ends it; one left in progress follows the new head.
  if (merge)
    await (
      concluding ? concludeMerge(worktree) : moveConflictRecord(worktree, merge, tx.commit)
    ).catch(() => {
      result.warnings.push(
        `the merge state in ${worktree} could not be ` +
          (concluding ? 'cleared (git merge --quit there ends it)' : 'moved to the new head'),
      );
    });
  if (hooksDir)
    await runPostApply(hooksDir, { ...hookInput, commit: result.commit }, hookEnv, config, result);
  return { result, patchText };
}

/** Each planned file's text before and after (null: absent or deleted), for the overlap check. Pure. */
function editedFiles(
  plan: Plan,
  snapshot: ReadonlyMap<string, FileState>,
): { path: string; before: string | null; after: string | null }[] {
  const text = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('utf8') : null);
  return plan.files
    .filter((f) => !f.noop)
    .map((f) => {
      const prior = snapshot.get(f.from ?? f.path);
      return {
        path: f.from ?? f.path,
        before: f.op === 'add' || prior?.kind !== 'file' ? null : text(prior.bytes),
        after: f.op === 'delete' ? null : text(f.bytes),
      };
    });
}

/**
 * A patch over the policy's confirmation limits needs a human yes: `--yes`, or the caller's
 * `confirm` answering yes; a dry run only reports.
 * @throws HagentError CONFIRMATION_REQUIRED (no yes: nothing was written).
 */
async function confirmOrRefuse(
  options: ApplyOptions,
  reasons: string[],
  files: FileResult[],
  plan: Plan,
  snapshot: ReadonlyMap<string, FileState>,
): Promise<void> {
  if (!reasons.length || options.yes || options.dryRun) return;
  const request: ConfirmationRequest = {
    reasons,
    files,
    preview: await previewOf(plan, snapshot),
  };
  const yes = options.confirm ? await options.confirm(request) : false;
  if (!yes) {
    throw new HagentError(
      'CONFIRMATION_REQUIRED',
      `this patch needs a human yes: it ${reasons.join(', ')}`,
      { reasons, files: files.map((f) => f.path), confirmed: options.confirm ? false : null },
      options.confirm
        ? 'the answer was no; nothing was written'
        : `ask the human; with their yes, ${options.howToConfirm ?? 'run again with --yes'}`,
    );
  }
}

/** What the pre-apply and post-apply hooks read on stdin: the change, its counts and its patch. */
function hookInputOf(
  session: Session,
  head: string,
  files: FileResult[],
  size: ChangeSize,
  patchText: string,
) {
  return {
    session: session.id,
    base: session.base,
    head,
    ops: files.map((f) => ({ op: f.op, path: f.path, ...(f.from ? { from: f.from } : {}) })),
    files: files.map((f) => f.path),
    counts: {
      files: size.files,
      added: files.reduce((n, f) => n + f.added, 0),
      removed: files.reduce((n, f) => n + f.removed, 0),
    },
    patch: patchText,
  };
}

/**
 * The post-apply hook runs once the commit is made: its output is reported, a failure is a warning.
 */
async function runPostApply(
  hooksDir: string,
  input: ReturnType<typeof hookInputOf> & { commit: string | null },
  env: Record<string, string>,
  config: EffectiveConfig,
  result: ApplyResult,
): Promise<void> {
  const post = await runUserHook(hooksDir, 'post-apply', input, env, {
    timeoutMs: config.runtime.hookTimeoutMs,
  });
  if (!post.ran) return;
  result.postApply = {
    exitCode: post.exitCode,
    stdout: post.stdout,
    stderr: post.stderr,
    timedOut: post.timedOut,
  };
  if (post.exitCode !== 0)
    result.warnings.push(
      `the post-apply hook failed (exit ${post.exitCode ?? 'none'}` +
        `${post.timedOut ? ', timed out' : ''}); the commit stays`,
    );
}

/** Path → new blob id of every file a plan writes (null: deleted, or the source of a move). */
function blobsOf(
  plan: Plan,
  format: ReturnType<typeof formatOfOid>,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const f of plan.files) {
    if (f.op === 'move' && f.from !== undefined && f.from !== f.path) out[f.from] = null;
    out[f.path] = f.bytes ? blobId(f.bytes, format) : null;
  }
  return out;
}

/**
 * The caller's compare-and-swap on files (`expectBlobs`): each named path must hold that blob
 * now, or be absent for null. Checked against the snapshot taken under the lock, which the
 * staleness check has just found equal to the session head; `diskIds` are the blobs git would
 * store for the snapshot's files ({@link storedBlobIds}).
 * @throws HagentError STALE_FILE naming the path, the expected and the current blob;
 *   USAGE for a path the patch does not read.
 */
function assertExpectedBlobs(
  snapshot: ReadonlyMap<string, FileState>,
  expected: Readonly<Record<string, string | null>>,
  diskIds: ReadonlyMap<string, string>,
): void {
  for (const [p, want] of Object.entries(expected)) {
    const disk = snapshot.get(p);
    if (disk === undefined)
      throw new HagentError(
        'USAGE',
        `${p} is given an expected blob but the change does not touch it`,
        { path: p },
        'name only the files the patch changes (their paths as the patch writes them)',
      );
    // The blob git stores, or the raw bytes' id (what a reader of the file computes): either names
    // these bytes.
    const now = disk.kind === 'file' ? (diskIds.get(p) ?? null) : null;
    const raw =
      disk.kind === 'file' && want !== null ? blobId(disk.bytes, formatOfOid(want)) : null;
    if (now !== want && raw !== want) {
      throw new HagentError(
        'STALE_FILE',
        `${p} ${now === null ? 'no longer exists' : want === null ? 'exists now' : 'changed'} ` +
          `since blob ${want === null ? '(none)' : want.slice(0, 12)} was read`,
        { path: p, expectedBlob: want, diskBlob: now },
        're-read the file (read returns its current text and blob id) and rebuild the change ' +
          'from it',
      );
    }
  }
}

/**
 * The unified diff (git's `a/` `b/` form, 3 lines of context) of a planned change: the patch text
 * an edit or write is recorded with, so the note and the journal can replay it like any patch.
 * diff@9 runs with a time limit; past it the file is recorded whole (every old line removed,
 * every new line added), which still applies.
 */
async function unifiedDiffOf(
  plan: Plan,
  snapshot: ReadonlyMap<string, FileState>,
): Promise<string> {
  const { createTwoFilesPatch } = await import('diff');
  const parts: string[] = [];
  for (const f of plan.files) {
    const { oldText, newText } = textsOf(f, snapshot);
    const header =
      `diff --git a/${f.from ?? f.path} b/${f.path}\n` +
      (f.op === 'add' ? `new file mode ${f.mode}\n` : '');
    const oldName = f.op === 'add' ? '/dev/null' : `a/${f.from ?? f.path}`;
    const body =
      createTwoFilesPatch(oldName, `b/${f.path}`, oldText, newText, undefined, undefined, {
        context: 3,
        timeout: 500,
      }) ?? wholeFileHunk(oldName, `b/${f.path}`, oldText, newText);
    // diff@9 opens with an "===" line and names both sides; git's form starts at "---".
    parts.push(header + body.slice(body.indexOf('--- ')));
  }
  return parts.join('');
}

/**
 * One hunk removing every old line and adding every new one (the diff when diff@9 ran out of time).
 */
function wholeFileHunk(oldName: string, newName: string, oldText: string, newText: string): string {
  const side = (text: string, sign: string): { lines: string[]; count: number } => {
    if (text === '') return { lines: [], count: 0 };
    const lines = text.split('\n');
    const last = lines.pop()!;
    const out = lines.map((l) => `${sign}${l}\n`);
    if (last !== '') out.push(`${sign}${last}\n\\ No newline at end of file\n`);
    return { lines: out, count: lines.length + (last !== '' ? 1 : 0) };
  };
  const a = side(oldText, '-');
  const b = side(newText, '+');
  return (
    `--- ${oldName}\n+++ ${newName}\n` +
    `@@ -${a.count ? 1 : 0},${a.count} +${b.count ? 1 : 0},${b.count} @@\n` +
    `${a.lines.join('')}${b.lines.join('')}`
  );
}

/**
 * An agent retrying after a timeout sends the very patch it sent last: when the session head is
 * the commit of this exact patch text (its `Hagent-Patch-Sha256` trailer), the patch is applied
 * already, whatever its chunks would match now (a chunk that only inserts lines would match again
 * and insert them twice). Rule: patch-language.md §4 "Already applied" (the engine's content test
 * cannot see a retried insertion; the session's own history can).
 * @throws HagentError NO_CHANGES with `alreadyApplied: true` and the `commit`.
 */
async function assertNotLastPatch(
  worktree: string,
  head: string,
  store: LooseObjectStore | null,
  patchText: string,
): Promise<void> {
  let message: string | null = null;
  const loose = store ? readLooseObject(store, head) : null;
  if (loose && loose.type === 'commit') message = loose.content.toString('utf8');
  else message = (await commitText(worktree, head)) || null;
  const trailer = message ? /^Hagent-Patch-Sha256: ([0-9a-f]{64})$/m.exec(message) : null;
  if (!trailer || trailer[1] !== createHash('sha256').update(patchText).digest('hex')) return;
  throw new HagentError(
    'NO_CHANGES',
    `the patch looks applied already: it is the session's last commit, ${head.slice(0, 12)}`,
    { commit: head, alreadyApplied: true },
    're-read the files: this exact patch was applied by the last apply, and nothing was ' +
      'written (hagent undo takes it back)',
  );
}

/** What {@link applyTransaction} is given: the checked plan and what was read for it. */
interface ApplyInputs {
  plan: Plan;
  snapshot: ReadonlyMap<string, FileState>;
  patchText: string;
  head: string;
  redo: string | null;
  /** The merge this apply concludes, if it does. */
  merge: MergeState | null;
  trees: CommitTrees;
  store: LooseObjectStore | null;
  diskIds: ReadonlyMap<string, string>;
  conversions: Conversions;
  objects: CatFileBatch | undefined;
}

/**
 * The transaction of one apply: writes its objects (the blobs git's clean step makes for
 * converted paths, the tree from the head's trees and the planned blob ids, the commit), then
 * describes the rest as a plan: the staged writes, the session branch moving from `head` to the
 * commit with the redo ref retired and the note (the patch text) in the session's notes ref,
 * all in one ref transaction. Until the refs move, the objects are unreferenced.
 * @throws HagentError FILTER_FAILED, GIT_FAILED from git.
 */
async function applyTransaction(
  ctx: RepoContext,
  session: Session,
  a: ApplyInputs,
): Promise<{
  plan: TransactionPlan;
  objects: NoteWriter;
  writes: TargetWrite[];
  convertedIds: Map<string, string>;
  commit: string;
  txid: string;
}> {
  const worktree = session.worktree;
  const format = formatOfOid(a.head);
  const writes = targetWrites(a.plan, a.snapshot);
  // Paths git converts get the blob git's clean step stores and the bytes its checkout writes.
  const convertedIds = new Map<string, string>();
  for (const w of writes) {
    if (w.bytes === null || !a.conversions.converted.has(w.rel)) continue;
    const { oid, checkedOut } = await storeConverted(worktree, w.rel, w.bytes);
    convertedIds.set(w.rel, oid);
    w.bytes = checkedOut;
  }
  const txid = newTxid();
  const files: FileChange[] = writes.map((w) => ({
    rel: w.rel,
    prior:
      w.expected === null
        ? null
        : {
            oid: a.diskIds.get(w.rel) ?? blobId(w.expected, format),
            mode: w.expectedMode === 0o755 ? '100755' : '100644',
          },
    next:
      w.bytes === null
        ? null
        : {
            oid: convertedIds.get(w.rel) ?? blobId(w.bytes, format),
            mode: w.mode === 0o755 ? '100755' : '100644',
          },
  }));
  const nextEntries = indexEntriesOf(files, 'next');
  // A commit concluding a merge records the merged index with the patch in it, over both parents.
  const tree = a.merge
    ? await mergedTreeWith(worktree, nextEntries, txid)
    : await writeTreeWithChanges(worktree, a.head, nextEntries, a.trees, a.store, a.objects);
  const message = a.merge
    ? mergeCommitMessage(
        session.id,
        a.merge.mergeHead,
        'apply',
        await diffTrees(worktree, a.head, tree),
        [patchTrailer(a.patchText)],
      )
    : applyCommitMessage(session.id, a.plan, a.patchText);
  const gitDir = a.store ? worktreeGitDirSync(worktree) : null;
  const made = await writeCommit(
    worktree,
    ctx.commonDir,
    gitDir,
    a.store,
    tree,
    a.merge ? [a.head, a.merge.mergeHead] : [a.head],
    message,
  );
  trace(made.inProcess ? 'apply: committed in-process' : 'apply: commit written');
  const notesRef = sessionNotesRef(session.id);
  const notesParent = (await readRefs(worktree, ctx.commonDir, [notesRef])).get(notesRef) ?? null;
  return {
    plan: {
      kind: 'apply',
      session: session.id,
      message: `hagent apply: ${a.plan.files.map((f) => f.path).join(', ')}`.slice(0, 200),
      worktrees: [{ path: worktree, owner: 'session', files, publish: { kind: 'bytes', writes } }],
      refs: [
        { ref: sessionRef(session), old: a.head, new: made.oid },
        ...retireRedoMoves(session, a.redo),
      ],
      note: { ref: notesRef, parent: notesParent, commit: made.oid, text: a.patchText },
      rollForward: true,
    },
    objects: { cwd: worktree, commonDir: ctx.commonDir, gitDir, store: a.store },
    writes,
    convertedIds,
    commit: made.oid,
    txid,
  };
}

/**
 * `--base COMMIT` compare-and-swap: when the session head moved since COMMIT, refuse if any
 * target differs between COMMIT and the head.
 * @throws HagentError STALE_FILE (or UNKNOWN_REV for a base that names no commit).
 */
async function assertBaseFresh(
  ctx: RepoContext,
  base: string,
  head: string,
  targets: readonly string[],
): Promise<void> {
  const resolved = await resolveCommit(ctx.cwd, base);
  if (!resolved)
    throw new HagentError(
      'UNKNOWN_REV',
      `--base ${base} names no commit`,
      { rev: base },
      'pass the session head the patch was written against (hagent session status shows it)',
    );
  if (resolved === head) return;
  const changed = await diffTrees(ctx.cwd, resolved, head, targets);
  if (changed.length) {
    throw new HagentError(
      'STALE_FILE',
      `the session moved since ${base.slice(0, 12)} and ` +
        `${changed.map((c) => c.path).join(', ')} changed since then`,
      { path: changed[0]!.path, files: changed.map((c) => c.path), base: resolved, head },
      're-read the files at the current head and rebuild the patch',
    );
  }
}

/**
 * Stores the staged temp files as blobs and checks each id against the planned bytes. The blobs
 * of converted paths (`converted`) were stored by git's clean step already: their staged files
 * are checked byte for byte against the checked-out form instead.
 */
async function storeStagedBlobs(
  worktree: string,
  staged: readonly Staged[],
  tx: TransactionPlan,
  store: LooseObjectStore | null,
  converted: ReadonlyMap<string, string>,
): Promise<void> {
  for (const s of staged) {
    if (
      s.tmp !== null &&
      converted.has(s.rel) &&
      !readFileSync(s.tmp).equals(Buffer.from(s.bytes!))
    ) {
      throw stagedCopyChanged(s.rel);
    }
  }
  const present = staged.filter((s) => s.tmp !== null && !converted.has(s.rel));
  // The blobs are read back from the staged files, so a temp file touched by someone else is
  // caught; synchronously, as the thread pool is busy with the fsyncs meanwhile.
  const oids = store
    ? await Promise.all(present.map((s) => writeLooseObject(store, 'blob', readFileSync(s.tmp!))))
    : await writeBlobsFromPaths(
        worktree,
        present.map((s) => path.relative(worktree, s.tmp!).split(path.sep).join('/')),
      );
  present.forEach((s, i) => {
    const want = tx.worktrees[0]!.files.find((t) => t.rel === s.rel)!.next!.oid;
    if (oids[i] !== want) throw stagedCopyChanged(s.rel);
  });
}

function stagedCopyChanged(rel: string): HagentError {
  return new HagentError(
    'EXTERNAL_EDIT',
    `the staged copy of ${rel} changed before it was published`,
    { path: rel },
    "another process touched hagent's temp file; nothing was published; apply again",
  );
}

/**
 * Before publishing, any watcher event on a target is an outside write (hagent has only
 * written temp files, which the watcher ignores by name).
 * @throws HagentError EXTERNAL_EDIT naming the path.
 */
function assertNoOutsideEvents(watch: TargetWatch | null): void {
  const seen = watch?.events[0];
  if (seen !== undefined) {
    throw new HagentError(
      'EXTERNAL_EDIT',
      `${seen} was written by another process while hagent was applying the patch`,
      { path: seen },
      'its bytes were kept and nothing of the patch was written; apply again when the other ' +
        'writer is done',
    );
  }
}

/**
 * After publishing, every target must hold exactly what hagent wrote (absent for a delete):
 * content is the judge, whether or not the watcher has delivered its events yet.
 * @throws HagentError EXTERNAL_EDIT naming the first path that holds other bytes.
 */
async function assertOnlyOurWrites(
  worktree: string,
  writes: readonly TargetWrite[],
): Promise<void> {
  for (const w of writes) {
    const e = await readEntry(worktree, w.rel);
    const becameFolder =
      e.kind === 'directory' &&
      writes.some((o) => o.bytes !== null && o.rel.startsWith(`${w.rel}/`));
    const ours =
      w.bytes === null
        ? e.kind === 'missing' || becameFolder
        : e.kind === 'file' && Buffer.from(w.bytes).equals(e.bytes);
    if (!ours) {
      throw new HagentError(
        'EXTERNAL_EDIT',
        `${w.rel} was written by another process while hagent was applying the patch`,
        { path: w.rel },
        'the outside bytes were kept; hagent took back only what it wrote; apply again when ' +
          'the other writer is done',
      );
    }
  }
}
