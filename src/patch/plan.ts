/**
 * The planner: parsed ops + a snapshot of the files → the new bytes of every file, in memory.
 * Locates chunks (patch-language.md §3), writes with byte fidelity (§4), checks file operations
 * (§5). Pure: no fs, no git, no clock.
 */

import { HagentError } from '../errors.js';
import { closestRegion, enclosingLine, show } from './diagnose.js';
import { countChanges } from './line-diff.js';
import {
  findAllAtLevel,
  LineIndex,
  levelRank,
  normalizeLine,
  pivotOf,
  seekAnchor,
  seekSequence,
} from './seek.js';
import {
  countLines,
  decodeTextFile,
  encodeTextFile,
  encodeUtf8,
  sameBytes,
  type Eol,
  type TextFile,
} from './text-file.js';
import type {
  Chunk,
  ChunkPlacement,
  FileMode,
  FileState,
  Leniency,
  MatchLevel,
  ParsedPatch,
  PatchOp,
  Plan,
  PlannedFile,
  Snapshot,
} from './types.js';

/**
 * Plans the whole patch. See `planPatch` in index.ts for the contract.
 * @throws HagentError DUPLICATE_PATH, FILE_EXISTS, FILE_NOT_FOUND, UNSUPPORTED_FILE,
 *   CONTEXT_NOT_FOUND, AMBIGUOUS_MATCH, OVERLAPPING_CHUNKS, NO_CHANGES, INTERNAL (snapshot lacks a path).
 */
export function plan(parsed: ParsedPatch, snapshot: Snapshot): Plan {
  checkDuplicatePaths(parsed.ops, parsed.format);
  checkFileFolderClash(parsed.ops);
  const leniencies: Leniency[] = [...parsed.leniencies];
  const ops = parsed.ops.map((op) => chooseTarget(op, snapshot));
  const vacated = vacatedPaths(ops);
  // Later ops on a path an earlier op changed see its result: a Delete then Add of one path
  // (a whole-file replacement, §5), or a unified diff touching a file twice (git format-patch of
  // several commits), as `git apply` reads it.
  const overlay = new Map<string, FileState>();
  const view: Snapshot = { get: (p: string) => overlay.get(p) ?? snapshot.get(p) } as Snapshot;
  const files: PlannedFile[] = [];
  const at = new Map<string, number>();
  const applied = new Map<PlannedFile, HagentError>();
  const replacedAlready = new Set<PlannedFile>();
  for (const op of ops) {
    const planned = planOp(op, view, leniencies, vacated, parsed.format);
    if (planned.looksApplied) applied.set(planned.file, planned.looksApplied);
    const f = planned.file;
    if (f.op === 'delete') overlay.set(f.path, { kind: 'missing' });
    else {
      overlay.set(f.path, { kind: 'file', bytes: f.bytes as Uint8Array, mode: f.mode });
      if (f.op === 'move' && f.from !== undefined) overlay.set(f.from, { kind: 'missing' });
    }
    const earlier = at.get(op.path);
    if (earlier !== undefined && !applied.has(f)) {
      const merged = compose(files[earlier] as PlannedFile, f, snapshot, op);
      at.delete(op.path);
      if (merged === null) {
        files.splice(earlier, 1);
        for (const [p, k] of at) if (k > earlier) at.set(p, k - 1);
        continue;
      }
      files[earlier] = merged;
      if (merged.noop && op.kind === 'add') replacedAlready.add(merged);
      if (merged.op !== 'delete') at.set(merged.path, earlier);
      continue;
    }
    files.push(f);
    at.set(f.path, files.length - 1);
  }
  if (applied.size > 0) {
    // An op that looks applied may have been composed with a later op of its path (the file
    // it planned is then no longer in `files`): only the planned files still there count.
    const appliedFiles = files.filter((f) => applied.has(f));
    if (files.length > 0 && appliedFiles.length === files.length) {
      const first = applied.get(files[0] as PlannedFile) as HagentError;
      const where: Record<string, unknown> = {};
      for (const k of ['chunk', 'line', 'appliedChunks'])
        if (first.details[k] !== undefined) where[k] = first.details[k];
      throw new HagentError(
        'NO_CHANGES',
        'the patch looks applied already: every change it makes is in the files',
        { path: files[0]?.path, ...where, files: files.map((f) => f.path), alreadyApplied: true },
        're-read the files: nothing is left to do for this patch, and nothing was written',
      );
    }
    // Some ops look applied and others apply: the files changed in between; refuse the first.
    const e = (
      appliedFiles.length ? applied.get(appliedFiles[0]!) : applied.values().next().value
    ) as HagentError;
    e.details['alreadyApplied'] = false;
    throw e;
  }
  const changed = files.filter((f) => !f.noop);
  if (changed.length === 0 && files.length > 0 && files.every((f) => replacedAlready.has(f))) {
    // Delete File + Add File of content the file already holds: a retried whole-file rewrite.
    throw new HagentError(
      'NO_CHANGES',
      'the patch looks applied already: every file it rewrites already holds the new content',
      { path: files[0]?.path, files: files.map((f) => f.path), alreadyApplied: true },
      're-read the files: nothing is left to do for this patch, and nothing was written',
    );
  }
  if (changed.length === 0) {
    const path = files[0]?.path;
    throw new HagentError(
      'NO_CHANGES',
      files.length === 0
        ? 'the patch holds no ops'
        : 'the patch changes nothing: every file would stay byte-identical',
      path === undefined ? {} : { path, files: files.map((f) => f.path) },
      'check that the "+" lines differ from the "-" lines; nothing was written',
    );
  }
  const warnings = [
    ...(parsed.warnings ?? []),
    ...files.filter((f) => f.noop).map((f) => `${f.path}: the update changes nothing (no-op)`),
  ];
  return { files, leniencies, warnings };
}

/**
 * The plain `diff -u a.orig a.new` choice (patch-language.md §2): the `+++` name when it exists,
 * else the `---` name when that does; when neither does, FILE_NOT_FOUND naming both headers.
 */
function chooseTarget(op: PatchOp, snapshot: Snapshot): PatchOp {
  if (op.kind !== 'update' || op.altPath === undefined) return op;
  const isFile = (p: string): boolean => snapshot.get(p)?.kind === 'file';
  const { altPath, ...rest } = op;
  if (isFile(op.path)) return rest;
  if (isFile(altPath)) return { ...rest, path: altPath };
  throw new HagentError(
    'FILE_NOT_FOUND',
    `cannot update ${op.path}: neither the "+++ ${op.path}" nor the "--- ${altPath}" file exists`,
    { path: op.path, paths: [op.path, altPath] },
    `name the file to change in both headers ("--- a/PATH", "+++ b/PATH"), relative to the worktree root; this diff names ${altPath} and ${op.path}`,
  );
}

/**
 * Two planned changes of one path, the second planned against the first's result, as one change
 * against the original: an Add of what a Delete removed is an update of it (the original mode
 * kept unless the diff sets one), an Add then Delete nothing at all. Counts are recomputed from the
 * original and final bytes. Rule: patch-language.md §5 (Delete File + Add File).
 * @returns the composed file, or null when nothing is left (added, then deleted).
 */
function compose(
  first: PlannedFile,
  second: PlannedFile,
  snapshot: Snapshot,
  op: PatchOp,
): PlannedFile | null {
  const origin =
    first.op === 'add' ? null : first.op === 'move' ? (first.from as string) : first.path;
  const dest = second.op === 'delete' ? null : second.path;
  if (origin === null && dest === null) return null;
  const before = origin === null ? undefined : snapshot.get(origin);
  const beforeBytes = before?.kind === 'file' ? before.bytes : undefined;
  const chunks = [...first.chunks, ...second.chunks];
  let out: PlannedFile;
  if (dest === null) {
    out = {
      op: 'delete',
      path: origin as string,
      mode: before?.kind === 'file' ? before.mode : first.mode,
      added: 0,
      removed: beforeBytes ? countLines(beforeBytes) : 0,
      chunks,
      noop: false,
    };
    return out;
  }
  const bytes = second.bytes as Uint8Array;
  let mode = second.mode;
  // A Codex Add names no mode: a replacement keeps the file's (an explicit diff mode wins).
  if (
    first.op === 'delete' &&
    op.kind === 'add' &&
    op.mode === undefined &&
    before?.kind === 'file'
  )
    mode = before.mode;
  const counts = beforeBytes
    ? countChanges(linesOf(beforeBytes), linesOf(bytes))
    : { added: countLines(bytes), removed: 0 };
  const kind: PlannedFile['op'] = origin === null ? 'add' : origin === dest ? 'update' : 'move';
  out = {
    op: kind,
    path: dest,
    bytes,
    mode,
    added: counts.added,
    removed: counts.removed,
    chunks,
    noop:
      kind === 'update' &&
      before?.kind === 'file' &&
      before.mode === mode &&
      sameBytes(before.bytes, bytes),
  };
  if (kind === 'move') out.from = origin as string;
  if (first.op === 'add' && first.from !== undefined) out.from = first.from;
  const levels = [first.level, second.level].filter((l): l is MatchLevel => l !== undefined);
  if (levels.length > 0) out.level = levels.reduce((x, y) => (levelRank(y) > levelRank(x) ? y : x));
  if (first.finalNewline ?? second.finalNewline) out.finalNewline = 'added';
  return out;
}

/** Lines of bytes with their terminators (decoded leniently: used for counts only). */
function linesOf(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Two ops may not name one path (a move destination counts). Rule: patch-language.md §5. The
 * exceptions: in the Codex language, `*** Delete File: P` followed later by `*** Add File: P` (a
 * whole-file replacement); in a unified diff, any later section on a path an earlier one changed
 * (git format-patch of several commits), which is applied to the earlier one's result as git does.
 */
function checkDuplicatePaths(ops: readonly PatchOp[], format: ParsedPatch['format']): void {
  const seen = new Map<string, { line: number; kind: PatchOp['kind']; uses: number }>();
  const claim = (path: string, line: number, kind: PatchOp['kind']): void => {
    const first = seen.get(path);
    if (first !== undefined) {
      const replacement = first.kind === 'delete' && kind === 'add' && first.uses === 1;
      if (format === 'unified' || replacement) {
        seen.set(path, { line, kind, uses: first.uses + 1 });
        return;
      }
      throw new HagentError(
        'DUPLICATE_PATH',
        `${path} is named by two ops (patch lines ${first.line} and ${line})`,
        { path, line },
        'merge all changes to one file into a single op (one "*** Update File:" with several @@ chunks); to rewrite a whole file, "*** Delete File:" it and then "*** Add File:" it',
      );
    }
    seen.set(path, { line, kind, uses: 1 });
  };
  for (const op of ops) {
    claim(op.path, op.patchLine, op.kind);
    if (op.kind === 'update' && op.moveTo !== undefined && op.moveTo !== op.path)
      claim(op.moveTo, op.patchLine, 'add');
  }
}

/**
 * A path cannot be a file and the folder of another file after the patch: `*** Add File: a` and
 * `*** Add File: a/b` in one patch (or an update/move destination likewise) is refused, since no
 * tree can hold both. Rule: patch-language.md §5 (two ops on one path), where the second op
 * names the path as a folder.
 */
function checkFileFolderClash(ops: readonly PatchOp[]): void {
  const files = new Map<string, number>();
  for (const op of ops) {
    if (op.kind === 'add') files.set(op.path, op.patchLine);
    else if (op.kind === 'update') files.set(op.moveTo ?? op.path, op.patchLine);
  }
  for (const [path, line] of files) {
    for (let cut = path.indexOf('/'); cut !== -1; cut = path.indexOf('/', cut + 1)) {
      const folder = path.slice(0, cut);
      const first = files.get(folder);
      if (first === undefined) continue;
      throw new HagentError(
        'DUPLICATE_PATH',
        `${folder} is named as a file (patch line ${first}) and as the folder of ${path} (patch line ${line})`,
        { path: folder, line },
        'a file and a folder cannot share one name; rename one of them',
      );
    }
  }
}

function stateOf(snapshot: Snapshot, path: string): FileState {
  const state = snapshot.get(path);
  if (!state) {
    throw new HagentError(
      'INTERNAL',
      `internal error: the snapshot lacks ${path}`,
      { path },
      'this is a bug in hagent: pathsToRead() paths must all be in the snapshot',
    );
  }
  return state;
}

function requireTextFile(
  path: string,
  state: FileState,
  verb: string,
): { file: TextFile; bytes: Uint8Array; mode: FileMode } {
  if (state.kind === 'missing' || state.kind === 'directory') {
    throw new HagentError(
      'FILE_NOT_FOUND',
      `cannot ${verb} ${path}: ${state.kind === 'missing' ? 'no such file' : 'it is a directory'}`,
      { path },
      state.kind === 'missing'
        ? 'check the path (relative to the worktree root), or use "*** Add File:" to create it'
        : 'name a file, not a directory',
    );
  }
  if (state.kind === 'other') {
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `cannot ${verb} ${path}: not a regular file`,
      { path },
      'hagent edits regular files only (not symlinks, submodules or devices)',
    );
  }
  const decoded = decodeTextFile(state.bytes);
  if (decoded.kind === 'unsupported') {
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `cannot ${verb} ${path}: the file ${decoded.reason}`,
      { path },
      'hagent edits UTF-8 text files only; leave this file alone or replace it with Delete + Add',
    );
  }
  return { file: decoded.file, bytes: state.bytes, mode: state.mode };
}

/**
 * An Add, copy or Move destination must be free (patch-language.md §5). A path under a file is
 * free only when the patch deletes or moves away that file (a file becomes a folder). A directory is free when
 * the snapshot lists the files under it (`files`) and the same patch deletes or moves away every
 * one of them (a folder that becomes a file); without `files` a directory is never free.
 */
function requireAbsent(
  path: string,
  state: FileState,
  what: string,
  vacated: ReadonlySet<string>,
): void {
  if (state.kind === 'missing') {
    if (state.underFile === undefined || vacated.has(state.underFile)) return;
    throw new HagentError(
      'FILE_EXISTS',
      `${what} ${path}: ${state.underFile} already exists as a file, so it cannot be a folder`,
      { path, file: state.underFile },
      `to turn the file into a folder, delete ${state.underFile} in the same patch ("*** Delete File: ${state.underFile}"), or pick another path`,
    );
  }
  let detail = '';
  const details: Record<string, unknown> = { path };
  if (state.kind === 'directory') {
    detail = ' (a directory)';
    if (state.files !== undefined) {
      const kept = state.files.filter((f) => !vacated.has(`${path}/${f}`));
      if (kept.length === 0) return;
      const shown = kept.slice(0, 3).map((f) => `${path}/${f}`);
      detail = ` (a directory holding ${kept.length} file(s) the patch does not delete: ${shown.join(', ')}${kept.length > 3 ? ', …' : ''})`;
      details['remaining'] = kept.map((f) => `${path}/${f}`);
    }
  }
  throw new HagentError(
    'FILE_EXISTS',
    `${what} ${path}: it already exists${detail}`,
    details,
    state.kind === 'directory' && state.files !== undefined
      ? 'to turn a folder into a file, delete every file under it in the same patch ("*** Delete File: …"), or pick another path'
      : `use "*** Update File:" to change an existing file; to rewrite it whole, "*** Delete File: ${path}" then "*** Add File: ${path}" in the same patch; or pick another path`,
  );
}

/** Lines in a body kept whole: `''` is no line at all only for an empty body (Add with no lines). */
function countLinesOf(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Paths this patch removes: every Delete, and the source of every Move. */
function vacatedPaths(ops: readonly PatchOp[]): Set<string> {
  const out = new Set<string>();
  for (const op of ops) {
    if (op.kind === 'delete') out.add(op.path);
    else if (op.kind === 'update' && op.moveTo !== undefined && op.moveTo !== op.path)
      out.add(op.path);
  }
  return out;
}

/** One planned op; `looksApplied` when the op's change is already in the files (§4 "Already applied"): the refusal to give unless every op looks applied. */
interface PlannedOp {
  file: PlannedFile;
  looksApplied?: HagentError;
}

/** Plans one op against the snapshot (as changed by the ops before it), by its kind. */
function planOp(
  op: PatchOp,
  snapshot: Snapshot,
  leniencies: Leniency[],
  vacated: ReadonlySet<string>,
  format: ParsedPatch['format'],
): PlannedOp {
  switch (op.kind) {
    case 'add':
      return planAdd(op, snapshot, leniencies, vacated, format);
    case 'delete':
      return planDelete(op, snapshot);
    case 'update':
      return planUpdate(op, snapshot, leniencies, vacated, format);
  }
}

/**
 * An Add File op: the new file's bytes, or a copy of another file with chunks applied; a noop
 * (looks applied) when the file holds those bytes already.
 * @throws HagentError FILE_EXISTS (or the refusals of a copy's source and chunks).
 */
function planAdd(
  op: Extract<PatchOp, { kind: 'add' }>,
  snapshot: Snapshot,
  leniencies: Leniency[],
  vacated: ReadonlySet<string>,
  format: ParsedPatch['format'],
): PlannedOp {
  if (op.copyFrom !== undefined)
    return planCopy(op, op.copyFrom, snapshot, leniencies, vacated, format);
  const body = op.text ?? op.lines.join('\n');
  const count = op.text === undefined ? op.lines.length : countLinesOf(op.text);
  const text = count === 0 ? '' : body + (op.finalNewline ? '\n' : '');
  const bytes = encodeUtf8(text);
  const mode = op.mode ?? '100644';
  const target = stateOf(snapshot, op.path);
  if (target.kind === 'file' && sameBytes(target.bytes, bytes)) {
    // The file holds exactly what the Add would write: applied before, unless the rest disagrees.
    return {
      file: {
        op: 'add',
        path: op.path,
        bytes,
        mode: target.mode,
        added: 0,
        removed: 0,
        chunks: [],
        noop: true,
      },
      looksApplied: catchError(() => requireAbsent(op.path, target, 'cannot add', vacated)),
    };
  }
  requireAbsent(op.path, target, 'cannot add', vacated);
  return {
    file: {
      op: 'add',
      path: op.path,
      bytes,
      mode,
      added: count,
      removed: 0,
      chunks: [],
      noop: false,
    },
  };
}

/** A copy (`op.copyFrom`, here `from`) with its chunks applied to the source's text. */
function planCopy(
  op: Extract<PatchOp, { kind: 'add' }>,
  from: string,
  snapshot: Snapshot,
  leniencies: Leniency[],
  vacated: ReadonlySet<string>,
  format: ParsedPatch['format'],
): PlannedOp {
  const src = requireTextFile(from, stateOf(snapshot, from), 'copy');
  requireAbsent(op.path, stateOf(snapshot, op.path), 'cannot copy to', vacated);
  const edit = applyChunks(from, src.file, op.chunks ?? [], leniencies, format);
  if (edit.looksApplied) throw edit.looksApplied;
  const bytes = encodeEdit(src.file, src.bytes, edit.pieces);
  const out: PlannedFile = {
    op: 'add',
    path: op.path,
    from,
    bytes,
    mode: op.mode ?? src.mode,
    added: edit.pieces.reduce((sum, p) => sum + pieceLength(p), 0),
    removed: 0,
    chunks: edit.placements,
    noop: false,
  };
  if (edit.level) out.level = edit.level;
  return { file: out };
}

/**
 * A Delete File op; a noop (looks applied) when the file is gone already.
 * @throws HagentError FILE_NOT_FOUND, UNSUPPORTED_FILE, and CONTEXT_NOT_FOUND when the removed
 *   lines given do not match the file.
 */
function planDelete(op: Extract<PatchOp, { kind: 'delete' }>, snapshot: Snapshot): PlannedOp {
  const state = stateOf(snapshot, op.path);
  if (state.kind === 'missing') {
    return {
      file: {
        op: 'delete',
        path: op.path,
        mode: '100644',
        added: 0,
        removed: 0,
        chunks: [],
        noop: true,
      },
      looksApplied: catchError(() => requireTextFile(op.path, state, 'delete')),
    };
  }
  if (state.kind !== 'file') {
    requireTextFile(op.path, state, 'delete'); // throws FILE_NOT_FOUND / UNSUPPORTED_FILE
    throw new Error('unreachable');
  }
  if (op.removedLines !== undefined) checkDeletedContent(op.path, state.bytes, op.removedLines);
  return {
    file: {
      op: 'delete',
      path: op.path,
      mode: state.mode,
      added: 0,
      removed: countLines(state.bytes),
      chunks: [],
      noop: false,
    },
  };
}

/**
 * An Update File op, with or without a move: its chunks applied to the file's text; a noop (looks
 * applied) when every chunk stands applied already.
 * @throws HagentError the refusals of applyChunks, FILE_NOT_FOUND, UNSUPPORTED_FILE, FILE_EXISTS.
 */
function planUpdate(
  op: Extract<PatchOp, { kind: 'update' }>,
  snapshot: Snapshot,
  leniencies: Leniency[],
  vacated: ReadonlySet<string>,
  format: ParsedPatch['format'],
): PlannedOp {
  const moveTo = op.moveTo !== undefined && op.moveTo !== op.path ? op.moveTo : undefined;
  const sourceState = stateOf(snapshot, op.path);
  if (moveTo !== undefined && sourceState.kind === 'missing')
    return planMoveDoneAlready(op, moveTo, sourceState, snapshot, format);
  const src = requireTextFile(op.path, sourceState, moveTo !== undefined ? 'move' : 'update');
  if (moveTo !== undefined)
    requireAbsent(moveTo, stateOf(snapshot, moveTo), `cannot move ${op.path} to`, vacated);
  const edit = applyChunks(op.path, src.file, op.chunks, leniencies, format);
  if (
    edit.looksApplied &&
    edit.placements.length === 0 &&
    moveTo === undefined &&
    (op.newMode === undefined || op.newMode === src.mode)
  ) {
    return {
      file: {
        op: 'update',
        path: op.path,
        bytes: src.bytes,
        mode: src.mode,
        added: 0,
        removed: 0,
        chunks: [],
        noop: true,
      },
      looksApplied: edit.looksApplied,
    };
  }
  if (edit.looksApplied) throw edit.looksApplied;
  const bytes =
    edit.placements.length === 0 ? src.bytes : encodeEdit(src.file, src.bytes, edit.pieces);
  const mode = op.newMode ?? src.mode;
  const noop = moveTo === undefined && mode === src.mode && sameBytes(bytes, src.bytes);
  const out: PlannedFile = {
    op: moveTo === undefined ? 'update' : 'move',
    path: moveTo ?? op.path,
    bytes,
    mode,
    added: edit.added,
    removed: edit.removed,
    chunks: edit.placements,
    noop,
  };
  if (moveTo !== undefined) out.from = op.path;
  if (edit.level) out.level = edit.level;
  if (edit.finalNewlineAdded && !noop) out.finalNewline = 'added';
  return { file: out };
}

/**
 * A move done already: the source is gone and the destination holds the edited file (every chunk
 * looks applied there). Otherwise the source's refusal.
 */
function planMoveDoneAlready(
  op: Extract<PatchOp, { kind: 'update' }>,
  moveTo: string,
  sourceState: FileState,
  snapshot: Snapshot,
  format: ParsedPatch['format'],
): PlannedOp {
  const dest = stateOf(snapshot, moveTo);
  const refusal = catchError(() => requireTextFile(op.path, sourceState, 'move')) as HagentError;
  if (dest.kind !== 'file') throw refusal;
  const decoded = decodeTextFile(dest.bytes);
  if (decoded.kind !== 'text') throw refusal;
  if (op.chunks.length > 0) {
    let edit: Edit;
    try {
      edit = applyChunks(moveTo, decoded.file, op.chunks, [], format);
    } catch {
      throw refusal;
    }
    if (!edit.looksApplied || edit.placements.length > 0) throw refusal;
  }
  return {
    file: {
      op: 'move',
      path: moveTo,
      from: op.path,
      bytes: dest.bytes,
      mode: dest.mode,
      added: 0,
      removed: 0,
      chunks: [],
      noop: true,
    },
    looksApplied: refusal,
  };
}

/** The HagentError `fn` throws (it must throw one). */
function catchError(fn: () => unknown): HagentError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HagentError) return e;
    throw e;
  }
  return new HagentError(
    'INTERNAL',
    'internal error: a refusal was expected',
    {},
    'this is a bug in hagent',
  );
}

/**
 * A unified-diff deletion must remove exactly the file's lines, as git checks (patch-language.md
 * §2 "A deletion"); compared line by line without terminators (a CRLF file's diff matches).
 * @throws HagentError CONTEXT_NOT_FOUND naming the first line that differs.
 */
function checkDeletedContent(path: string, bytes: Uint8Array, removed: readonly string[]): void {
  const decoded = decodeTextFile(bytes);
  if (decoded.kind !== 'text') return; // the deletion of a binary file: nothing to compare
  const lines = decoded.file.texts;
  const n = Math.max(lines.length, removed.length);
  for (let k = 0; k < n; k++) {
    if (lines[k] === removed[k]) continue;
    throw new HagentError(
      'CONTEXT_NOT_FOUND',
      `${path}: the deletion's removed lines are not the file's lines (first difference at line ${k + 1})`,
      {
        path,
        line: k + 1,
        firstDifference: { line: k + 1, file: lines[k] ?? null, patch: removed[k] ?? null },
      },
      `re-read ${path}: a deletion's "-" lines must be the whole file as it is now; nothing was deleted`,
    );
  }
}

interface Replacement {
  chunkNo: number;
  chunk: Chunk;
  start: number;
  oldLen: number;
  kinds: string;
  newLines: readonly string[];
  /** CR marks aligned with `kinds` (Chunk.crMarks), when the diff is read byte for byte. */
  marks?: string;
  level: MatchLevel;
  /** The chunk puts back the missing final newline (§4: `-last` / `+last` before End of File). */
  addsFinalNewline: boolean;
}

/** A run of untouched original lines `[from, to)`, or lines written by a chunk. */
type Piece = { from: number; to: number } | { texts: string[]; eols: Eol[] };

interface Edit {
  pieces: Piece[];
  placements: ChunkPlacement[];
  added: number;
  removed: number;
  level?: MatchLevel;
  /**
   * Set when some chunk looks applied already (its old side is not in the file, its new side is,
   * §4): the refusal to give, naming those chunks. With no placement, every chunk looks applied.
   */
  looksApplied?: HagentError;
  /** A chunk added the missing final newline (§4). */
  finalNewlineAdded?: boolean;
}

/** Context = common prefix and suffix, for chunks built without `lineKinds`. */
function deriveKinds(chunk: Chunk): string {
  const a = chunk.oldLines;
  const b = chunk.newLines;
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return (
    ' '.repeat(p) + '-'.repeat(a.length - p - s) + '+'.repeat(b.length - p - s) + ' '.repeat(s)
  );
}

/** The chunk without its last old line (an empty one): for the retry of §3.6. */
function dropTrailingEmptyOld(
  oldLines: readonly string[],
  newLines: readonly string[],
  kinds: string,
  marks?: string,
): { oldLines: string[]; newLines: string[]; kinds: string; marks?: string } {
  let p = kinds.length - 1;
  while (p >= 0 && kinds[p] === '+') p--;
  let newIdx = 0;
  for (let q = 0; q < p; q++) if (kinds[q] !== '-') newIdx++;
  const nl = [...newLines];
  if (kinds[p] === ' ') nl.splice(newIdx, 1);
  const out: { oldLines: string[]; newLines: string[]; kinds: string; marks?: string } = {
    oldLines: oldLines.slice(0, -1),
    newLines: nl,
    kinds: kinds.slice(0, p) + kinds.slice(p + 1),
  };
  if (marks !== undefined) out.marks = marks.slice(0, p) + marks.slice(p + 1);
  return out;
}

/** A chunk that looks applied already: 1-based number and the 0-based line its new side starts at. */
interface AppliedChunk {
  chunkNo: number;
  at: number;
}

/**
 * The placing of one file's chunks, top to bottom: `cursor` is the line the next chunk (or anchor)
 * is looked for from, `lastEnd` the end of the lowest chunk placed so far.
 */
interface Placing {
  readonly path: string;
  readonly file: TextFile;
  readonly index: LineIndex;
  readonly leniencies: Leniency[];
  readonly format: ParsedPatch['format'];
  cursor: number;
  lastEnd: number;
  readonly reps: Replacement[];
  readonly applied: AppliedChunk[];
}

/** The sides of a chunk as they matched: after the one-blank-line retry, one line shorter. */
interface MatchedSides {
  start: number;
  level: MatchLevel;
  oldLines: readonly string[];
  newLines: readonly string[];
  kinds: string;
  marks: string | undefined;
}

/**
 * Locates every chunk in order with a cursor and rebuilds the file's lines.
 * Rule: patch-language.md §3.1–3.8 (location), §4 (fidelity).
 * @throws HagentError CONTEXT_NOT_FOUND, AMBIGUOUS_MATCH or OVERLAPPING_CHUNKS for the first chunk
 *   that cannot be placed, naming the later chunks that look applied already.
 */
function applyChunks(
  path: string,
  file: TextFile,
  chunks: readonly Chunk[],
  leniencies: Leniency[],
  format: ParsedPatch['format'] = 'codex',
): Edit {
  const index = new LineIndex(file.texts);
  // One scan of the file for the pivot line of every chunk, not one scan per chunk.
  index.preparePivots(
    chunks
      .filter((c) => c.oldLines.length > 0)
      .map((c) => c.oldLines[pivotOf(c.oldLines)] as string),
  );
  const s: Placing = {
    path,
    file,
    index,
    leniencies,
    format,
    cursor: 0,
    lastEnd: 0,
    reps: [],
    applied: [],
  };
  let failure: HagentError | undefined;
  chunks.forEach((chunk, i) => {
    if (failure) {
      // After a chunk that fails, the rest is only looked at to say which chunks look applied.
      const at = appliedAfterFailure(index, chunk);
      if (at !== undefined) s.applied.push({ chunkNo: i + 1, at });
      return;
    }
    try {
      placeChunk(s, chunk, i + 1);
    } catch (e) {
      if (!(e instanceof HagentError)) throw e;
      failure = e;
    }
  });
  if (failure) throw namingAppliedChunks(failure, s.applied);
  return rebuildLines(
    file,
    withoutOverlaps(path, s.reps),
    looksAppliedError(path, s.applied, s.reps),
  );
}

/** Where a chunk after a failed one stands applied already (its old side gone, its new side there once). */
function appliedAfterFailure(index: LineIndex, chunk: Chunk): number | undefined {
  if (
    chunk.newLines.length === 0 ||
    (chunk.oldLines.length > 0 &&
      seekSequence(index, chunk.oldLines, 0, { endOfFile: chunk.endOfFile }).kind !== 'none')
  )
    return undefined;
  const rest = seekSequence(index, chunk.newLines, 0, { endOfFile: chunk.endOfFile });
  return rest.kind === 'unique' ? rest.index : undefined;
}

/**
 * Places one chunk below the cursor (or records it as applied already) and moves the cursor past it.
 * @throws HagentError CONTEXT_NOT_FOUND, AMBIGUOUS_MATCH, OVERLAPPING_CHUNKS.
 */
function placeChunk(s: Placing, chunk: Chunk, chunkNo: number): void {
  const anchored = followAnchors(s, chunk, chunkNo);
  if (chunk.oldLines.length === 0) {
    placeInsertion(s, chunk, chunkNo, anchored);
    return;
  }
  const m = matchOldSide(s, chunk, chunkNo);
  if (!m || newSideStandsElsewhere(s, chunk, chunkNo, m)) return;
  const { start, oldLines, newLines, kinds, marks } = m;
  const addsFinalNewline = putsBackFinalNewline(
    s.file,
    chunk,
    start + oldLines.length === s.index.length,
    kinds,
    oldLines,
    newLines,
  );
  const rep: Replacement = {
    chunkNo,
    chunk,
    start,
    oldLen: oldLines.length,
    kinds,
    newLines,
    level: m.level,
    addsFinalNewline,
  };
  if (marks !== undefined) rep.marks = marks;
  s.reps.push(rep);
  markApplied(s, start + oldLines.length);
}

/** Moves the cursor to the end of a chunk placed (or found applied) there. */
function markApplied(s: Placing, end: number): void {
  s.cursor = end;
  s.lastEnd = Math.max(s.lastEnd, end);
}

/**
 * Moves the cursor past each `@@` anchor of the chunk, in order (§3.2).
 * @returns whether the chunk had an anchor.
 * @throws HagentError CONTEXT_NOT_FOUND (no such line below the cursor), AMBIGUOUS_MATCH.
 */
function followAnchors(s: Placing, chunk: Chunk, chunkNo: number): boolean {
  const { path, index } = s;
  let anchored = false;
  for (const anchor of chunk.anchors) {
    if (anchor.trim() === '') continue;
    const cursor = s.cursor;
    const r = seekAnchor(index, anchor, cursor);
    if (r.kind === 'none') {
      const earlier = cursor > 0 ? seekAnchor(index, anchor, 0) : ({ kind: 'none' } as const);
      const where =
        earlier.kind === 'found'
          ? `it names line ${earlier.index + 1}, which is above the previous chunk or anchor: chunks and anchors must follow file order`
          : `an @@ anchor must name one whole line of the file (or the unique start of one); copy it exactly from ${path}`;
      throw new HagentError(
        'CONTEXT_NOT_FOUND',
        `${path}: chunk ${chunkNo}: the anchor "@@ ${anchor}" matches no line${cursor > 0 ? ` after line ${cursor}` : ''}`,
        {
          path,
          chunk: chunkNo,
          chunkFirstLine: chunkFirstLine(chunk),
          anchor,
          line: earlier.kind === 'found' ? earlier.index + 1 : cursor + 1,
        },
        where,
      );
    }
    if (r.kind === 'ambiguous') {
      const candidates = r.candidates.map((c) => c + 1);
      throw new HagentError(
        'AMBIGUOUS_MATCH',
        `${path}: chunk ${chunkNo}: the anchor "@@ ${anchor}" is the start of ${candidates.length} lines (${listLines(candidates)})`,
        {
          path,
          chunk: chunkNo,
          chunkFirstLine: chunkFirstLine(chunk),
          anchor,
          line: candidates[0],
          candidates,
          suggestedAnchors: r.candidates.map((c) => ({
            line: c + 1,
            text: index.lines[c] as string,
          })),
        },
        `write the whole line in the @@ anchor so it names exactly one line, e.g. "@@ ${index.lines[r.candidates[0] as number] as string}"`,
      );
    }
    s.cursor = r.index + 1;
    anchored = true;
  }
  return anchored;
}

/**
 * A pure insertion (§3.5): after the last anchor, else at the end (a udiff hunk gives its line).
 * A Codex insertion carries no line number: its lines already standing where it goes is a retry,
 * never a reason to insert them twice. A unified diff's hunk is placed by git's rule.
 */
function placeInsertion(s: Placing, chunk: Chunk, chunkNo: number, anchored: boolean): void {
  const n = s.index.length;
  const newLines = chunk.newLines;
  let at: number;
  if (chunk.insertAfterLine !== undefined && !anchored && !chunk.endOfFile)
    at = Math.min(Math.max(chunk.insertAfterLine, 0), n);
  else if (anchored && !chunk.endOfFile) at = s.cursor;
  else at = n;
  const already = at === n ? n - newLines.length : at;
  if (s.format === 'codex' && holdsAt(s.index, newLines, already, 'exact')) {
    s.applied.push({ chunkNo, at: already });
    s.cursor = already + newLines.length;
    return;
  }
  s.reps.push({
    chunkNo,
    chunk,
    start: at,
    oldLen: 0,
    kinds: chunk.lineKinds ?? deriveKinds(chunk),
    newLines,
    level: 'exact',
    addsFinalNewline: false,
  });
}

/**
 * Finds the chunk's old side below the cursor (§3.3–3.8): retried once without a trailing blank
 * line, an ambiguity settled by the hunk's line number when it has one.
 * @returns the match, or undefined when the chunk stands applied already (recorded as such).
 * @throws HagentError CONTEXT_NOT_FOUND, AMBIGUOUS_MATCH, OVERLAPPING_CHUNKS.
 */
function matchOldSide(s: Placing, chunk: Chunk, chunkNo: number): MatchedSides | undefined {
  const { path, index, cursor, leniencies } = s;
  const endOfFile = { endOfFile: chunk.endOfFile };
  let sides = {
    oldLines: chunk.oldLines,
    newLines: chunk.newLines,
    kinds: chunk.lineKinds ?? deriveKinds(chunk),
    marks: chunk.crMarks,
  };
  let found = seekSequence(index, sides.oldLines, cursor, endOfFile);
  if (found.kind === 'none' && sides.oldLines[sides.oldLines.length - 1] === '') {
    const retry = dropTrailingEmptyOld(sides.oldLines, sides.newLines, sides.kinds, sides.marks);
    const again =
      retry.oldLines.length === 0
        ? ({ kind: 'none' } as const)
        : seekSequence(index, retry.oldLines, cursor, endOfFile);
    if (again.kind !== 'none') {
      found = again;
      sides = { ...retry, marks: retry.marks };
      if (!leniencies.includes('one-blank-line-retry')) leniencies.push('one-blank-line-retry');
    }
  }
  if (found.kind === 'none') {
    // Already applied (§4): the old side is not in the file, the new side is, once, from the cursor.
    const done =
      chunk.newLines.length > 0
        ? seekSequence(index, chunk.newLines, cursor, endOfFile)
        : ({ kind: 'none' } as const);
    if (done.kind === 'unique') {
      s.applied.push({ chunkNo, at: done.index });
      markApplied(s, done.index + chunk.newLines.length);
      return undefined;
    }
    throw notFound(path, chunkNo, chunk, index, sides.oldLines, cursor);
  }
  if (found.kind === 'ambiguous') {
    const hinted = lineNumberTiebreak(chunk, found.candidates);
    if (hinted === undefined)
      throw ambiguous(path, chunkNo, chunk, index, sides.oldLines, found.candidates, found.level);
    found = { kind: 'unique', index: hinted, level: found.level };
    if (!leniencies.includes('line-number-tiebreak')) leniencies.push('line-number-tiebreak');
  }
  const start = found.index;
  if (start < cursor) throw beforeCursor(s, chunk, chunkNo, start, sides.oldLines.length);
  return { start, level: found.level, ...sides };
}

/**
 * Why a match above the cursor cannot be used: only an End-of-File chunk lands there, and then
 * either on another chunk (an overlap) or above its own anchor.
 */
function beforeCursor(
  s: Placing,
  chunk: Chunk,
  chunkNo: number,
  start: number,
  oldLen: number,
): HagentError {
  if (start < s.lastEnd) {
    const other = s.reps.find(
      (r) => r.oldLen > 0 && start < r.start + r.oldLen && r.start < start + oldLen,
    );
    return overlap(s.path, chunkNo, start, other?.chunkNo);
  }
  return new HagentError(
    'CONTEXT_NOT_FOUND',
    `${s.path}: chunk ${chunkNo}: the End of File chunk starts at line ${start + 1}, before its @@ anchor`,
    {
      path: s.path,
      chunk: chunkNo,
      chunkFirstLine: chunkFirstLine(chunk),
      line: start + 1,
      closest: { startLine: start + 1, endLine: start + oldLen },
    },
    'an @@ anchor must name a line above the chunk; drop the anchor or fix it',
  );
}

/**
 * The old side matched only loosely (or after dropping its last blank line), while the new side
 * stands exactly in the file: most likely this chunk was applied already, and the loose match is
 * another, similar place. (A copy inside the loosely matched lines does not count: a chunk that
 * deletes lines has its new side inside its old one.)
 * @returns true when the chunk was recorded as applied already.
 */
function newSideStandsElsewhere(
  s: Placing,
  chunk: Chunk,
  chunkNo: number,
  m: MatchedSides,
): boolean {
  if ((m.level === 'exact' && m.oldLines === chunk.oldLines) || chunk.newLines.length === 0)
    return false;
  const there = findAllAtLevel(s.index, chunk.newLines, s.cursor, 'exact');
  const at = there[0] as number;
  const inside = at >= m.start && at + chunk.newLines.length <= m.start + m.oldLines.length;
  if (there.length !== 1 || inside) return false;
  s.applied.push({ chunkNo, at });
  markApplied(s, at + chunk.newLines.length);
  return true;
}

/** `failure`, naming the later chunks of the file that look applied already. */
function namingAppliedChunks(failure: HagentError, applied: readonly AppliedChunk[]): HagentError {
  if (applied.length === 0) return failure;
  const list = applied.map((a) => a.chunkNo);
  failure.details['appliedChunks'] = list;
  failure.message += ` (chunk${list.length === 1 ? '' : 's'} ${list.join(', ')} look${list.length === 1 ? 's' : ''} applied already)`;
  failure.hint = `${failure.hint ?? ''}; chunk${list.length === 1 ? '' : 's'} ${list.join(', ')} of this file look${list.length === 1 ? 's' : ''} applied already: drop ${list.length === 1 ? 'it' : 'them'} from the patch`;
  return failure;
}

/**
 * The note for an edit some of whose chunks look applied already (the plan decides whether it is a
 * refusal: a retry of a whole patch is not).
 */
function looksAppliedError(
  path: string,
  applied: readonly AppliedChunk[],
  reps: readonly Replacement[],
): HagentError | undefined {
  const first = applied[0];
  if (!first) return undefined;
  const list = applied.map((a) => a.chunkNo);
  const some = reps.length > 0;
  return new HagentError(
    'CONTEXT_NOT_FOUND',
    `${path}: chunk ${first.chunkNo} looks applied already: its new lines stand at line ${first.at + 1}${some ? `, while chunk${reps.length === 1 ? '' : 's'} ${reps.map((r) => r.chunkNo).join(', ')} still appl${reps.length === 1 ? 'ies' : 'y'}` : ''}`,
    {
      path,
      chunk: first.chunkNo,
      line: first.at + 1,
      appliedChunks: list,
      alreadyApplied: !some,
    },
    some
      ? `re-read ${path}: chunk${list.length === 1 ? '' : 's'} ${list.join(', ')} look${list.length === 1 ? 's' : ''} applied already; send only the chunks still to do`
      : `re-read ${path}: its change is in the file already`,
  );
}

/**
 * The replacements in file order.
 * @throws HagentError OVERLAPPING_CHUNKS when two of them touch the same lines.
 */
function withoutOverlaps(path: string, reps: readonly Replacement[]): Replacement[] {
  const sorted = [...reps].sort((a, b) => a.start - b.start || a.chunkNo - b.chunkNo);
  for (let k = 1; k < sorted.length; k++) {
    const a = sorted[k - 1] as Replacement;
    const b = sorted[k] as Replacement;
    if (b.start < a.start + a.oldLen)
      throw overlap(path, Math.max(a.chunkNo, b.chunkNo), b.start, Math.min(a.chunkNo, b.chunkNo));
  }
  return sorted;
}

/**
 * Rebuilds the file as pieces: runs of untouched lines (kept as ranges: a large file is never
 * copied line by line) and the lines of each chunk (context lines keep their bytes; added lines
 * get '' for now), with the counts and placements of the result.
 */
function rebuildLines(
  file: TextFile,
  sorted: readonly Replacement[],
  looksApplied: HagentError | undefined,
): Edit {
  const n = file.texts.length;
  const pieces: Piece[] = [];
  const placements: ChunkPlacement[] = [];
  let added = 0;
  let removed = 0;
  let loosest: MatchLevel | undefined;
  let wantFinalNewline = file.finalNewline;
  let finalNewlineAdded = false;
  let pos = 0;
  for (const r of sorted) {
    if (pos < r.start) pieces.push({ from: pos, to: r.start });
    const { texts, eols } = chunkLines(file, r);
    pieces.push({ texts, eols });
    const counts = countChanges(
      withEols(
        file.texts.slice(r.start, r.start + r.oldLen),
        file.eols.slice(r.start, r.start + r.oldLen),
      ),
      withEols(texts, eols),
    );
    added += counts.added;
    removed += counts.removed;
    pos = r.start + r.oldLen;
    if (pos === n) {
      if (r.chunk.newNoFinalNewline) wantFinalNewline = false;
      else if (r.chunk.oldNoFinalNewline) wantFinalNewline = true;
      else if (r.addsFinalNewline) {
        wantFinalNewline = true;
        finalNewlineAdded = true;
      }
    }
    if (r.oldLen > 0 && (loosest === undefined || levelRank(r.level) > levelRank(loosest)))
      loosest = r.level;
    placements.push({
      chunk: r.chunkNo,
      level: r.level,
      startLine: r.start + 1,
      oldCount: r.oldLen,
      newCount: texts.length,
    });
  }
  if (pos < n) pieces.push({ from: pos, to: n });
  fixLineEnds(file, pieces, wantFinalNewline);
  placements.sort((a, b) => a.chunk - b.chunk);
  const edit: Edit = { pieces, placements, added, removed };
  if (loosest === undefined && placements.length > 0) loosest = 'exact';
  if (loosest) edit.level = loosest;
  if (looksApplied) edit.looksApplied = looksApplied;
  if (finalNewlineAdded) edit.finalNewlineAdded = true;
  return edit;
}

/** Lines with their terminators, for counting changes that touch only a line ending. */
function withEols(texts: readonly string[], eols: readonly string[]): string[] {
  return texts.map(
    (t, k) =>
      t + ((eols[k] as string) === '' ? '' : '\n') + ((eols[k] as string) === '\r\n' ? '\r' : ''),
  );
}

/**
 * The lines a replacement writes, each with its terminator (patch-language.md §4): context lines
 * keep the file's bytes; in each group of removed and added lines the i-th added line takes the
 * ending of the i-th removed line (extra ones the last removed line's); an added line with no
 * removed line in its group takes the ending of the line before it (at the top of the file, the
 * line after it). A unified diff read byte for byte says each added line's ending itself: CRLF
 * when the patch line ended in CR, else LF. `''` is left for fixLineEnds (the last line).
 */
function chunkLines(file: TextFile, r: Replacement): { texts: string[]; eols: Eol[] } {
  const texts: string[] = [];
  const eols: Eol[] = [];
  const kinds = r.kinds;
  let o = 0;
  let w = 0;
  let q = 0;
  while (q < kinds.length) {
    if (kinds[q] === ' ') {
      texts.push(file.texts[r.start + o] as string);
      eols.push(file.eols[r.start + o] as Eol);
      o++;
      w++;
      q++;
      continue;
    }
    let e = q;
    while (e < kinds.length && kinds[e] !== ' ') e++;
    const removedEols: Eol[] = [];
    for (let k = q, oo = o; k < e; k++)
      if (kinds[k] === '-') removedEols.push(file.eols[r.start + oo++] as Eol);
    const before: Eol | undefined =
      r.start + o > 0 ? file.eols[r.start + o - 1] : file.eols[r.start + o];
    let ai = 0;
    for (let k = q; k < e; k++) {
      if (kinds[k] === '-') {
        o++;
        continue;
      }
      let eol: Eol;
      if (r.marks !== undefined) {
        eol = r.marks[k] === '1' ? '\r\n' : '\n';
        // The file's last line, without newline, ending in CR (`+abc\r` then `\ No newline`).
        if (
          eol === '\r\n' &&
          r.chunk.newNoFinalNewline &&
          w === r.newLines.length - 1 &&
          r.start + r.oldLen === file.texts.length
        )
          eol = '\r';
      } else if (removedEols.length > 0)
        eol = removedEols[Math.min(ai, removedEols.length - 1)] as Eol;
      else eol = before ?? '';
      texts.push(r.newLines[w] as string);
      eols.push(eol);
      ai++;
      w++;
    }
    q = e;
  }
  return { texts, eols };
}

/**
 * The one spelling of "add the missing final newline" in the Codex language (patch-language.md
 * §4): a chunk at the end of a file without a final newline, marked `*** End of File`, that
 * removes the last line and adds it back unchanged (`-last` / `+last`).
 */
function putsBackFinalNewline(
  file: TextFile,
  chunk: Chunk,
  atEnd: boolean,
  kinds: string,
  oldLines: readonly string[],
  newLines: readonly string[],
): boolean {
  if (!chunk.endOfFile || !atEnd || file.finalNewline || chunk.oldStartHint !== undefined)
    return false;
  const tail = kinds.replace(/ +$/, '');
  if (tail.length !== kinds.length) return false;
  return /-\+$/.test(kinds) && oldLines[oldLines.length - 1] === newLines[newLines.length - 1];
}

/**
 * Terminators of the rebuilt file (§4): every line but the last ends with its own terminator, or the
 * file's dominant one when it has none (an added line, or the old unterminated last line that is no
 * longer last); the last line ends as `wantFinalNewline` says — a file without a final newline stays
 * without one, unless its last line is now empty (an unterminated empty line is no line at all).
 */
function fixLineEnds(file: TextFile, pieces: Piece[], wantFinalNewline: boolean): void {
  let lastPiece = pieces.length - 1;
  while (lastPiece >= 0 && pieceLength(pieces[lastPiece] as Piece) === 0) lastPiece--;
  const n = file.texts.length;
  for (let k = 0; k < pieces.length; k++) {
    const piece = pieces[k] as Piece;
    if ('from' in piece) {
      // Untouched lines keep their terminators; only the file's unterminated last line needs one
      // when more lines now follow it.
      if (k < lastPiece && piece.to === n && file.eols[n - 1] === '') {
        piece.to = n - 1;
        pieces[k] = piece.from < piece.to ? piece : { from: 0, to: 0 };
        pieces.splice(k + 1, 0, { texts: [file.texts[n - 1] as string], eols: [file.dominant] });
        lastPiece++;
        k++;
      }
      continue;
    }
    const last = piece.eols.length - 1;
    for (let q = 0; q < piece.eols.length; q++) {
      if (k === lastPiece && q === last) {
        if (!wantFinalNewline && piece.texts[q] !== '' && piece.eols[q] !== '\r')
          piece.eols[q] = '';
        else if (piece.eols[q] === '') piece.eols[q] = file.dominant;
      } else if (piece.eols[q] === '') {
        piece.eols[q] = file.dominant;
      }
    }
  }
}

function pieceLength(piece: Piece): number {
  return 'from' in piece ? piece.to - piece.from : piece.texts.length;
}

/**
 * The bytes of the rebuilt file. For an ASCII file (bytes = UTF-16 units, so a line's byte offset
 * is the sum of the lengths before it) the untouched runs are copied from the original bytes as
 * they are (no join and re-encode of a large file); other files are joined from their lines and
 * encoded.
 */
function encodeEdit(file: TextFile, bytes: Uint8Array, pieces: readonly Piece[]): Uint8Array {
  const n = file.texts.length;
  const bom = file.bom ? 3 : 0;
  if (file.ascii !== true) {
    const all = fullLines(file, pieces);
    return encodeTextFile({ bom: file.bom, texts: all.texts, eols: all.eols });
  }
  const parts: Uint8Array[] = [];
  if (file.bom) parts.push(bytes.subarray(0, 3));
  let line = 0;
  let offset = bom;
  const seek = (to: number): number => {
    if (to === n) return bytes.length;
    for (; line < to; line++)
      offset += (file.texts[line] as string).length + (file.eols[line] as string).length;
    return offset;
  };
  for (const piece of pieces) {
    if ('from' in piece) {
      if (piece.from >= piece.to) continue;
      const a = seek(piece.from);
      const b = seek(piece.to);
      parts.push(bytes.subarray(a, b));
    } else if (piece.texts.length > 0) {
      let text = '';
      for (let q = 0; q < piece.texts.length; q++)
        text += (piece.texts[q] as string) + (piece.eols[q] as string);
      parts.push(encodeUtf8(text));
    }
  }
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The rebuilt file as whole line arrays. */
function fullLines(file: TextFile, pieces: readonly Piece[]): { texts: string[]; eols: Eol[] } {
  const texts: string[] = [];
  const eols: Eol[] = [];
  for (const piece of pieces) {
    if ('from' in piece) {
      for (let i = piece.from; i < piece.to; i++) {
        texts.push(file.texts[i] as string);
        eols.push(file.eols[i] as Eol);
      }
    } else {
      texts.push(...piece.texts);
      eols.push(...piece.eols);
    }
  }
  return { texts, eols };
}

/**
 * The tie-break of a unified-diff hunk that matches several places at its level: the candidate that
 * starts exactly at the hunk's `@@ -l` line, if one does; otherwise undefined (AMBIGUOUS_MATCH).
 *
 * A deliberate reading of patch-language.md §2 ("the numbers are hints", matching is by content
 * under the uniqueness rule of §3.3): the content still decides — only places where the whole old
 * side matches are candidates — and the number only picks among them, and only when it points
 * exactly at one (where `git apply` puts the hunk). A hint that is off by even one line picks
 * nothing. `-l` counts lines of the original file, the same numbering as the candidates (the
 * planner locates every chunk in the original file); it is the `+l` line of the new file minus the
 * net line delta of the file's earlier hunks. Codex patches carry no line numbers (an `@@ -l,n` line
 * there is only an anchor, §2.11), so this never applies to them. Leniency `line-number-tiebreak`.
 */
function lineNumberTiebreak(chunk: Chunk, candidates: readonly number[]): number | undefined {
  if (chunk.oldStartHint === undefined) return undefined;
  const want = chunk.oldStartHint - 1;
  return candidates.includes(want) ? want : undefined;
}

function listLines(lines: readonly number[]): string {
  const shown = lines.slice(0, 10).join(', ');
  return lines.length > 10 ? `${shown}, … ${lines.length} in all` : shown;
}

function overlap(
  path: string,
  chunkNo: number,
  start: number,
  other: number | undefined,
): HagentError {
  const details: Record<string, unknown> = { path, chunk: chunkNo, line: start + 1 };
  if (other !== undefined) details['chunks'] = [other, chunkNo];
  return new HagentError(
    'OVERLAPPING_CHUNKS',
    `${path}: chunk ${chunkNo} claims line ${start + 1}, which ${other !== undefined ? `chunk ${other}` : 'an earlier chunk'} already changes`,
    details,
    'merge the two chunks into one, or make each chunk cover separate lines in file order',
  );
}

/** True when the file's lines from 0-based `at` equal `lines` at `level`. */
function holdsAt(
  index: LineIndex,
  lines: readonly string[],
  at: number,
  level: MatchLevel,
): boolean {
  if (lines.length === 0 || at < 0 || at + lines.length > index.length) return false;
  const norm = index.normalized(level);
  for (let k = 0; k < lines.length; k++)
    if (norm[at + k] !== normalizeLine(lines[k] as string, level)) return false;
  return true;
}

/** The chunk's first old line (context or removed), or its first added line when it has no old side. */
function chunkFirstLine(chunk: Chunk): string {
  return chunk.oldLines[0] ?? chunk.newLines[0] ?? '';
}

/**
 * CONTEXT_NOT_FOUND for a chunk whose old side is nowhere after the cursor (patch-language.md §3.8).
 * `details`: `path`, `chunk` (1-based), `chunkFirstLine` (its first old line), `line` (1-based: the
 * first differing line of the closest region, else the cursor), and when some line of the chunk
 * occurs in the file, `closest: {startLine, endLine}` (1-based, inclusive, within the file) and, when
 * that region differs from the chunk, `firstDifference: {line, file, patch}` — the 1-based file line
 * and both texts (`file` is null past the end of the file). The hint shows them side by side.
 */
function notFound(
  path: string,
  chunkNo: number,
  chunk: Chunk,
  index: LineIndex,
  oldLines: readonly string[],
  cursor: number,
): HagentError {
  const region = closestRegion(index, oldLines);
  const parts: string[] = [];
  const details: Record<string, unknown> = {
    path,
    chunk: chunkNo,
    chunkFirstLine: chunkFirstLine(chunk),
  };
  let line: number;
  if (chunk.endOfFile)
    parts.push(
      `the chunk is marked "*** End of File" but its lines are not the last ${oldLines.length} line(s) of the file`,
    );
  if (chunk.endOfFile && index.length > 0 && index.lines[index.length - 1] === '')
    parts.push('the file ends with a blank line: include it as an empty context line');
  if (region) {
    const end = Math.max(region.start + 1, Math.min(region.start + oldLines.length, index.length));
    details['closest'] = { startLine: region.start + 1, endLine: end };
    const differs = region.matching < oldLines.length || region.firstDiff >= index.length;
    line = Math.min(region.firstDiff, Math.max(index.length - 1, 0)) + 1;
    let where = `closest region: lines ${region.start + 1}-${end} (${region.matching} of ${oldLines.length} lines match)`;
    if (differs) {
      const fileText = index.lines[region.firstDiff];
      const patchText = oldLines[region.firstDiffInPattern] as string;
      details['firstDifference'] = {
        line: region.firstDiff + 1,
        file: fileText ?? null,
        patch: patchText,
      };
      where += `; first difference at line ${region.firstDiff + 1}: file ${show(fileText)} | patch ${show(patchText)}`;
    } else {
      line = region.start + 1;
    }
    parts.push(where);
    if (region.start < cursor)
      parts.push(
        `that region lies before ${cursor > 0 ? `line ${cursor + 1}, where the search starts (after the previous chunk or anchor)` : 'the search start'}: chunks must follow file order`,
      );
  } else {
    line = Math.min(cursor + 1, Math.max(index.length, 1));
    parts.push('no line of the chunk occurs in the file, even ignoring whitespace');
  }
  details['line'] = line;
  const lastAnchor = chunk.anchors[chunk.anchors.length - 1];
  if (
    lastAnchor !== undefined &&
    oldLines[0] !== undefined &&
    lastAnchor.trim() === oldLines[0].trim()
  ) {
    parts.push(
      'the chunk repeats its @@ anchor line as its first context line, but the chunk is searched after the anchor line: drop one of the two',
    );
  }
  if (chunk.oldStartHint !== undefined)
    parts.push(`the hunk header says line ${chunk.oldStartHint}`);
  parts.push(`re-read ${path} and copy the context lines exactly`);
  return new HagentError(
    'CONTEXT_NOT_FOUND',
    `${path}: chunk ${chunkNo} (first line ${show(chunkFirstLine(chunk))}): the context lines were not found${cursor > 0 ? ` after line ${cursor}` : ''}`,
    details,
    parts.join('; '),
  );
}

/**
 * The line an anchor should name for the match at 0-based `at`, searched after 0-based `after`
 * (the previous candidate, or -1): its enclosing definition, else the nearest non-blank line
 * above it; either only when it lies after `after` and no line between names the same text, so
 * that the anchor singles this match out from the earlier ones (an anchor finds the first line of
 * its text after the cursor: patch-language.md §3.3).
 */
function anchorFor(lines: readonly string[], at: number, after: number): number | undefined {
  const firstAfter = (i: number) => {
    const t = (lines[i] as string).trim();
    for (let j = after + 1; j < i; j++) if ((lines[j] as string).trim() === t) return false;
    return true;
  };
  const e = enclosingLine(lines, at);
  if (e !== undefined && e > after && firstAfter(e)) return e;
  for (let i = at - 1; i > after; i--)
    if ((lines[i] as string).trim() !== '' && firstAfter(i)) return i;
  return undefined;
}

/**
 * How many file lines right after the match at `at` (0-based, `m` lines long) must join the chunk
 * so that no other candidate has the same lines (compared at `level`); undefined beyond 5 lines.
 */
function extraContextFor(
  index: LineIndex,
  at: number,
  m: number,
  others: readonly number[],
  level: MatchLevel,
): number | undefined {
  const norm = index.normalized(level);
  let alive = others.filter((o) => o !== at);
  for (let k = 1; k <= 5 && at + m + k - 1 < index.length; k++) {
    const mine = norm[at + m + k - 1];
    alive = alive.filter((o) => norm[o + m + k - 1] === mine);
    if (alive.length === 0) return k;
  }
  return undefined;
}

/**
 * AMBIGUOUS_MATCH (patch-language.md §3.3). `details`: `path`, `chunk`, `chunkFirstLine`, `line` (the
 * first candidate), `candidates` (every candidate, 1-based), `level`, and `suggestedAnchors`:
 * `[{candidate, line, text}]`, one per candidate that has a line above it — the nearest enclosing
 * definition line (less indented), else the nearest non-blank line above. The hint names the one for
 * the first candidate, and says what else is needed: an anchor alone makes a match unique only when
 * no other candidate follows the anchor line (matches are counted after the cursor), so for an
 * earlier candidate it also names the following lines to add as context.
 */
function ambiguous(
  path: string,
  chunkNo: number,
  chunk: Chunk,
  index: LineIndex,
  oldLines: readonly string[],
  candidates0: readonly number[],
  level: MatchLevel,
): HagentError {
  const candidates = candidates0.map((c) => c + 1);
  const suggestedAnchors: { candidate: number; line: number; text: string }[] = [];
  for (const [i, c] of candidates0.entries()) {
    const a = anchorFor(index.lines, c, i === 0 ? -1 : (candidates0[i - 1] as number));
    if (a !== undefined)
      suggestedAnchors.push({ candidate: c + 1, line: a + 1, text: index.lines[a] as string });
  }
  const first = candidates0[0] as number;
  const firstAnchor = suggestedAnchors.find((s) => s.candidate === first + 1);
  const advice: string[] = [];
  if (firstAnchor) {
    const laterAfterAnchor = candidates0.some((c) => c !== first && c >= firstAnchor.line);
    advice.push(
      `for the match at line ${first + 1}, add the anchor "@@ ${firstAnchor.text}" (line ${firstAnchor.line})`,
    );
    if (laterAfterAnchor) {
      const k = extraContextFor(index, first, oldLines.length, candidates0, level);
      advice.push(
        k !== undefined
          ? `and, since other matches follow it, extend the chunk with the next ${k} line(s) of the file (from line ${first + oldLines.length + 1}) as context`
          : 'and, since other matches follow it, add context lines until the chunk matches once',
      );
    }
  } else {
    const k = extraContextFor(index, first, oldLines.length, candidates0, level);
    advice.push(
      k !== undefined
        ? `for the match at line ${first + 1}, extend the chunk with the next ${k} line(s) of the file as context`
        : 'add context lines until the chunk matches once',
    );
  }
  const others = suggestedAnchors.filter((s) => s.candidate !== first + 1).slice(0, 2);
  if (others.length > 0)
    advice.push(
      `(for the others: ${others.map((s) => `"@@ ${s.text}" for line ${s.candidate}`).join(', ')})`,
    );
  return new HagentError(
    'AMBIGUOUS_MATCH',
    `${path}: chunk ${chunkNo} (first line ${show(chunkFirstLine(chunk))}) matches ${candidates.length} places (lines ${listLines(candidates)}, comparison ${level})`,
    {
      path,
      chunk: chunkNo,
      chunkFirstLine: chunkFirstLine(chunk),
      line: candidates[0],
      candidates,
      level,
      suggestedAnchors,
    },
    advice.join(' '),
  );
}
