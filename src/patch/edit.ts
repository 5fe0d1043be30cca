/**
 * Plans the two whole-text changes agents make without a patch: an exact-string replacement
 * (the `edit` tool, with the semantics of Claude Code's Edit) and a whole-file write (the `write`
 * tool). Pure, like the rest of the engine: a snapshot state in, a {@link Plan} out, which the
 * transaction writes exactly as it writes a planned patch.
 *
 * Why not turn the edit into patch text and plan that: a replacement is defined on characters,
 * not lines (`old_string` may start or end inside a line), and a generated chunk's context may
 * match elsewhere in the file. Planning the bytes directly keeps every byte outside the replaced
 * spans as it was, CRLF, BOM and final newline included.
 */

import { HagentError } from '../errors.js';
import { countChanges } from './line-diff.js';
import { decodeTextFile, splitText } from './text-file.js';
import type { ChunkPlacement, FileMode, FileState, Plan, PlannedFile } from './types.js';

/** An exact-string replacement. `replaceAll` false: `oldString` must occur exactly once. */
export interface EditRequest {
  path: string;
  oldString: string;
  newString: string;
  replaceAll?: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** 1-based line of the UTF-16 offset `at` in `text`. */
function lineAt(text: string, at: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length))
    out.push(i);
  return out;
}

/** Lines of a text as the line counter sees them (terminators dropped). */
function linesOf(text: string): string[] {
  return splitText(text).texts;
}

/** Bare LFs (not already part of CRLF) become CRLF. */
function toCrlf(s: string): string {
  return s.replace(/\r?\n/g, '\r\n');
}

/**
 * The text of a file state, or why it cannot be edited as text.
 * @throws HagentError FILE_NOT_FOUND, UNSUPPORTED_FILE.
 */
function textOf(path: string, state: FileState, verb: string): { text: string; mode: FileMode } {
  if (state.kind === 'missing')
    throw new HagentError(
      'FILE_NOT_FOUND',
      `cannot ${verb} ${path}: no such file`,
      { path },
      'check the path (read or status list the files); to create a file, use write, or edit with an empty old_string',
    );
  if (state.kind !== 'file')
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `cannot ${verb} ${path}: it is ${state.kind === 'directory' ? 'a folder' : 'not a regular file'}`,
      { path },
      'name a regular text file',
    );
  const decoded = decodeTextFile(state.bytes);
  if (decoded.kind === 'unsupported')
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `cannot ${verb} ${path}: the file ${decoded.reason}`,
      { path },
      'hagent edits UTF-8 text files only; leave this file alone',
    );
  return { text: decoder.decode(state.bytes), mode: state.mode };
}

/** A planned file for `path` changing `before` into `after` (both whole texts). */
function plannedFile(
  path: string,
  op: 'add' | 'update',
  before: string,
  after: string,
  mode: FileMode,
  chunks: ChunkPlacement[],
): PlannedFile {
  const { added, removed } =
    op === 'add'
      ? { added: linesOf(after).length, removed: 0 }
      : countChanges(linesOf(before), linesOf(after));
  return {
    op,
    path,
    bytes: encoder.encode(after),
    mode,
    added,
    removed,
    level: 'exact',
    chunks,
    noop: false,
  };
}

/**
 * The closest line of `text` to `oldString`'s first non-blank line (trimmed comparison): where
 * the agent's copy probably came from. Null when that line occurs nowhere.
 */
function closestLine(text: string, oldString: string): number | null {
  const first = oldString
    .split(/\r?\n/)
    .find((l) => l.trim() !== '')
    ?.trim();
  if (first === undefined) return null;
  const lines = linesOf(text);
  const at = lines.findIndex((l) => l.trim() === first);
  return at === -1 ? null : at + 1;
}

/**
 * Plans an exact-string replacement, as Claude Code's Edit defines it: `oldString` must occur in
 * the file, exactly once unless `replaceAll`; every occurrence is replaced by `newString`, and
 * nothing else changes. An empty `oldString` creates the file (or fills an empty one) with
 * `newString`. When `oldString` is not found as given and the file uses CRLF, it is tried with
 * its line breaks as CRLF (agents send LF; a warning says so).
 *
 * @param state the file's state read under the session lock (the transaction's snapshot).
 * @returns a one-file plan; `chunks` give each replaced span's 1-based start line and line counts.
 * @throws HagentError NO_CHANGES (`oldString` equals `newString`), FILE_NOT_FOUND,
 *   UNSUPPORTED_FILE (binary, not UTF-8, a folder; a NUL in `newString`), FILE_EXISTS (empty
 *   `oldString` on a file with content), CONTEXT_NOT_FOUND (not found; `closest` names the line
 *   of its first line when that occurs), AMBIGUOUS_MATCH (several occurrences without
 *   `replaceAll`; `candidates` are their 1-based lines).
 */
export function planEdit(request: EditRequest, state: FileState): Plan {
  const { path, oldString, newString } = request;
  if (oldString === newString)
    throw new HagentError(
      'NO_CHANGES',
      'old_string and new_string are the same: the edit changes nothing',
      { path },
      'give the text to replace in old_string and its replacement in new_string',
    );
  if (newString.includes('\0'))
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `new_string for ${path} holds a NUL character`,
      { path },
      'hagent writes UTF-8 text only',
    );
  if (oldString === '') {
    if (state.kind === 'missing')
      return {
        files: [plannedFile(path, 'add', '', newString, '100644', [])],
        leniencies: [],
        warnings: [],
      };
    const { text, mode } = textOf(path, state, 'edit');
    if (text !== '')
      throw new HagentError(
        'FILE_EXISTS',
        `${path} already exists and is not empty: an empty old_string only creates a file`,
        { path },
        'to change it, give the text to replace in old_string; to replace all of it, use write with the blob id read returned',
      );
    return {
      files: [plannedFile(path, 'update', text, newString, mode, [])],
      leniencies: [],
      warnings: [],
    };
  }
  const { text, mode } = textOf(path, state, 'edit');
  let from = oldString;
  let to = newString;
  let found = occurrences(text, from);
  const warnings: string[] = [];
  if (found.length === 0 && text.includes('\r\n') && /(^|[^\r])\n/.test(oldString)) {
    const crlf = occurrences(text, toCrlf(oldString));
    if (crlf.length) {
      [from, to, found] = [toCrlf(oldString), toCrlf(newString), crlf];
      warnings.push(
        `${path}: old_string matched with the file's CRLF line endings; new_string was written with CRLF too`,
      );
    }
  }
  if (found.length === 0) {
    const near = closestLine(text, oldString);
    throw new HagentError(
      'CONTEXT_NOT_FOUND',
      `old_string was not found in ${path}`,
      { path, ...(near ? { closest: { startLine: near, endLine: near } } : {}) },
      near
        ? `its first line occurs at line ${near}, but what follows differs: read the file again (from line ${near}) and copy old_string exactly, whitespace and line breaks included`
        : 'read the file again and copy old_string exactly from it, whitespace and line breaks included',
    );
  }
  if (found.length > 1 && !request.replaceAll) {
    const candidates = found.map((at) => lineAt(text, at));
    throw new HagentError(
      'AMBIGUOUS_MATCH',
      `old_string occurs ${found.length} times in ${path} (lines ${candidates.join(', ')})`,
      { path, candidates },
      'add the lines around the one you mean to old_string so that it occurs once, or set replace_all to replace every occurrence',
    );
  }
  const pieces: string[] = [];
  const chunks: ChunkPlacement[] = [];
  let last = 0;
  const oldCount = linesOf(from).length;
  const newCount = linesOf(to).length;
  found.forEach((at, i) => {
    pieces.push(text.slice(last, at), to);
    last = at + from.length;
    chunks.push({ chunk: i + 1, level: 'exact', startLine: lineAt(text, at), oldCount, newCount });
  });
  pieces.push(text.slice(last));
  return {
    files: [plannedFile(path, 'update', text, pieces.join(''), mode, chunks)],
    leniencies: [],
    warnings,
  };
}

/**
 * Plans a whole-file write: a new file (op `add`, mode 100644) or a replacement of an existing
 * text file's bytes (op `update`, mode kept). Whether a replacement is allowed (the caller knows
 * the file's current blob) is the caller's rule; this only plans.
 * @throws HagentError NO_CHANGES (same content), UNSUPPORTED_FILE (a NUL in `content`; the file
 *   is binary, not UTF-8 or a folder).
 */
export function planWrite(path: string, content: string, state: FileState): Plan {
  if (content.includes('\0'))
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `the content for ${path} holds a NUL character`,
      { path },
      'hagent writes UTF-8 text only',
    );
  if (state.kind === 'missing')
    return {
      files: [plannedFile(path, 'add', '', content, '100644', [])],
      leniencies: [],
      warnings: [],
    };
  const { text, mode } = textOf(path, state, 'write');
  if (text === content)
    throw new HagentError(
      'NO_CHANGES',
      `${path} already holds this content`,
      { path, files: [path] },
      'nothing was written',
    );
  return {
    files: [plannedFile(path, 'update', text, content, mode, [])],
    leniencies: [],
    warnings: [],
  };
}
