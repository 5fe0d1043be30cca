/**
 * Parser of the Codex `apply_patch` language: the lines between `*** Begin Patch` and
 * `*** End Patch` → ops. Grammar: patch-language.md §1; leniencies §2.1, 2.6–2.9, 2.11.
 * It does not check that the patch applies (the planner does).
 */

import { joinLines, type LineSource } from './lines.js';
import { HagentError } from '../errors.js';
import { classifyMarker, EXPECTED, syntax, type Marker } from './markers.js';
import type { Chunk, Leniency, PatchOp } from './types.js';

const UDIFF_HUNK = /^@@+\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@+(.*)$/;

/**
 * Parses the ops of a Codex patch whose `*** Begin Patch` is at 0-based `begin` and
 * `*** End Patch` at `end`. Leniencies used are appended to `leniencies` (no duplicates).
 * Line numbers in errors and `patchLine` are 1-based (`index + 1`).
 * @throws HagentError `PATCH_SYNTAX` with `line` for a line that breaks the grammar.
 */
export function parseCodex(
  lines: LineSource,
  begin: number,
  end: number,
  leniencies: Leniency[],
): PatchOp[] {
  const note = (l: Leniency): void => {
    if (!leniencies.includes(l)) leniencies.push(l);
  };
  const noteAll = (m: Marker): void => m.leniencies.forEach(note);
  const ops: PatchOp[] = [];
  let i = begin + 1;
  while (i < end) {
    const line = lines.at(i)!;
    if (isBlank(line)) {
      note('stray-blank-line');
      i++;
      continue;
    }
    const header = classifyMarker(line, true);
    if (
      !header ||
      header.kind === 'unknown-star' ||
      header.kind === 'eof' ||
      header.kind === 'move' ||
      header.kind === 'begin' ||
      header.kind === 'end'
    ) {
      throw syntax(
        i,
        `expected an op header ("*** Add File: ", "*** Update File: ", "*** Delete File: ") or "*** End Patch", found ${quote(line)}`,
        'each op starts with "*** Add File: PATH", "*** Update File: PATH" or "*** Delete File: PATH"',
        EXPECTED.opHeader,
      );
    }
    noteAll(header);
    const path = header.path as string;
    if (path === '')
      throw syntax(
        i,
        'the op header names no path',
        'write the path after the colon, e.g. "*** Update File: src/a.py"',
        EXPECTED.path,
      );
    if (header.kind === 'delete') {
      ops.push({ kind: 'delete', path, patchLine: i + 1 });
      i++;
    } else if (header.kind === 'add') {
      i = parseAdd(lines, i, end, path, ops, note);
    } else {
      i = parseUpdate(lines, i, end, path, ops, note);
    }
  }
  return ops;
}

/** True for a line that ends an Add body or a chunk: a known marker, or `***` anything at column 0. */
function isOpBoundary(line: string): boolean {
  const m = classifyMarker(line, false);
  if (!m) return false;
  if (m.kind === 'unknown-star') return line.startsWith('***');
  return true;
}

function parseAdd(
  lines: LineSource,
  headerAt: number,
  end: number,
  path: string,
  ops: PatchOp[],
  note: (l: Leniency) => void,
): number {
  let k = headerAt + 1;
  while (k < end && isBlank(lines.at(k)!)) k++;
  const firstBody = k < end ? lines.at(k)! : undefined;
  if (firstBody === undefined || isOpBoundary(firstBody)) {
    if (k > headerAt + 1) note('stray-blank-line');
    ops.push({ kind: 'add', path, lines: [], finalNewline: true, patchLine: headerAt + 1 });
    return k;
  }
  if (firstBody.startsWith('+')) {
    // All body lines carry '+'. Blank lines between '+' lines are empty content lines.
    let j = headerAt + 1;
    while (j < end) {
      const line = lines.at(j)!;
      if (line.startsWith('+')) {
        j++;
        continue;
      }
      if (isBlank(line)) {
        let q = j;
        while (q < end && isBlank(lines.at(q)!)) q++;
        if (q < end && lines.at(q)!.startsWith('+')) {
          j = q;
          continue;
        }
        break;
      }
      if (isOpBoundary(line) || classifyMarker(line, true)) break;
      throw syntax(
        j,
        `Add File body line without "+" among lines with it: ${quote(line)}`,
        'prefix every line of an added file with "+" (all lines or none)',
        EXPECTED.addBody,
      );
    }
    // The body is kept as one string (a 10 MB patch of added files would otherwise keep a string
    // per line alive): each line loses its '+', a blank line becomes empty.
    ops.push(
      addOp(path, joinLines(lines, headerAt + 1, j).replace(ADD_LINE_PREFIX, ''), headerAt + 1),
    );
    return j;
  }
  const body: string[] = [];
  // No '+' at all (§2.7): the body runs to the next "***" line; no body line may carry '+'.
  let j = headerAt + 1;
  for (; j < end; j++) {
    const line = lines.at(j)!;
    if (stripLeading(line).startsWith('***')) break;
    if (line.startsWith('+')) {
      throw syntax(
        j,
        `Add File body mixes lines with and without "+": ${quote(line)}`,
        'prefix every line of an added file with "+" (all lines or none)',
        EXPECTED.addBody,
      );
    }
    body.push(line);
  }
  if (body.length > 0 && isBlank(body[body.length - 1] as string)) {
    body.pop();
    note('stray-blank-line');
  }
  note('add-without-plus');
  ops.push({ kind: 'add', path, lines: body, finalNewline: true, patchLine: headerAt + 1 });
  return j;
}

const NON_BLANK = /\S/;
/** At each line start: the '+' of an Add File line, or the whole of a blank line. */
const ADD_LINE_PREFIX = /^(?:\+|[^\S\n]+$)/gm;

/**
 * An Add op whose body is `text` (lines joined by `\n`): `lines` is split from it when first read,
 * and `text` (not enumerable: the op's JSON and equality stay as with `lines` alone) lets the
 * planner use it whole.
 */
function addOp(path: string, text: string, patchLine: number): PatchOp {
  let split: string[] | undefined;
  const op = { kind: 'add', path, finalNewline: true, patchLine } as Extract<
    PatchOp,
    { kind: 'add' }
  >;
  Object.defineProperty(op, 'lines', {
    get: () => (split ??= text.split('\n')),
    enumerable: true,
    configurable: true,
  });
  Object.defineProperty(op, 'text', { value: text, enumerable: false });
  return op;
}

/** Whitespace only (no allocation, unlike trim()). */
function isBlank(line: string): boolean {
  return !NON_BLANK.test(line);
}

function stripLeading(line: string): string {
  return line.replace(/^[\s\uFEFF\u200B\u200C\u200D\u2060\u00A0]+/, '');
}

interface ChunkBuilder {
  anchors: string[];
  oldLines: string[];
  newLines: string[];
  kinds: string[];
  endOfFile: boolean;
  patchLine: number;
  /** Number of trailing lines that were bare empty lines (no ' ' prefix). */
  trailingBare: number;
  hasLines: boolean;
}

/**
 * Reads the body of an `*** Update File:` op (lines `headerAt + 1` up to the next op header,
 * End Patch or `end`): an optional `*** Move to:`, then chunks of `@@` anchors and ' ', '-', '+'
 * lines, each optionally closed by `*** End of File`. Pushes one update op onto `ops`.
 * Rule: patch-language.md §2.3–2.8.
 * @returns the index of the first line after the op.
 * @throws HagentError PATCH_SYNTAX for a malformed body, with the line and what was expected.
 */
function parseUpdate(
  lines: LineSource,
  headerAt: number,
  end: number,
  path: string,
  ops: PatchOp[],
  note: (l: Leniency) => void,
): number {
  const moveTo = readMoveTo(lines, headerAt + 1, end, note);
  let k = headerAt + 1 + (moveTo === undefined ? 0 : 1);
  const chunks: Chunk[] = [];
  let cur: ChunkBuilder | undefined;
  let anchorsAt = -1;
  for (; k < end; k++) {
    const line = lines.at(k)!;
    if (line.startsWith('@@')) {
      if (cur?.hasLines) cur = finishChunk(cur, chunks, note);
      if (!cur) {
        cur = newChunk(k);
        anchorsAt = k;
      }
      const anchor = readAnchor(line, note);
      if (anchor !== '') cur.anchors.push(anchor);
      continue;
    }
    const c0 = line.charCodeAt(0);
    const isChunkLine = line === '' || c0 === 32 || c0 === 43 || c0 === 45;
    if (!isChunkLine || !isBlank(line)) {
      const marker = updateMarker(line, k, isChunkLine);
      if (marker?.kind === 'eof') {
        if (!cur?.hasLines)
          throw syntax(
            k,
            '"*** End of File" with no chunk lines before it',
            'put "*** End of File" right after the last line of a chunk',
            EXPECTED.chunkLine,
          );
        marker.leniencies.forEach(note);
        cur.endOfFile = true;
        cur = finishChunk(cur, chunks, note);
        continue;
      }
      if (marker) break; // the op has ended: header position
    }
    if (!isChunkLine) {
      throw syntax(
        k,
        `unexpected line in an Update chunk: ${quote(line)}`,
        'chunk lines start with " " (context), "-" (removed) or "+" (added); a new chunk starts with "@@"',
        EXPECTED.chunkLine,
      );
    }
    if (!cur) {
      if (!opensChunk(lines, k, end, chunks, note)) continue;
      cur = newChunk(k);
    }
    addChunkLine(cur, line, c0);
  }
  if (cur && !cur.hasLines && cur.anchors.length > 0) {
    throw syntax(
      anchorsAt,
      '"@@" anchor with no chunk lines after it',
      'follow each "@@" line with the chunk\'s context and changed lines',
      EXPECTED.chunkLine,
    );
  }
  if (cur) finishChunk(cur, chunks, note);
  if (chunks.length === 0 && moveTo === undefined) {
    throw syntax(
      headerAt,
      `"Update File: ${path}" has no chunks`,
      'add at least one chunk of " ", "-" and "+" lines, or use "*** Move to:" for a rename',
      EXPECTED.chunkLine,
    );
  }
  const op: PatchOp = { kind: 'update', path, chunks, patchLine: headerAt + 1 };
  if (moveTo !== undefined) op.moveTo = moveTo;
  ops.push(op);
  return k;
}

/**
 * The destination of a `*** Move to:` on line `k`, the first of an Update op's body (§2.4).
 * @throws HagentError PATCH_SYNTAX when it names no path.
 */
function readMoveTo(
  lines: LineSource,
  k: number,
  end: number,
  note: (l: Leniency) => void,
): string | undefined {
  const maybeMove = k < end ? classifyMarker(lines.at(k)!, true) : undefined;
  if (maybeMove?.kind !== 'move') return undefined;
  maybeMove.leniencies.forEach(note);
  const moveTo = maybeMove.path as string;
  if (moveTo === '')
    throw syntax(
      k,
      '"*** Move to:" names no path',
      'write the destination after the colon',
      EXPECTED.path,
    );
  return moveTo;
}

/**
 * What a marker-like line inside an Update op is: `*** End of File`, or a line that ends the op
 * (the next op's header, End Patch), or neither (undefined: an ordinary line).
 * @throws HagentError PATCH_SYNTAX for an unknown `***` marker.
 */
function updateMarker(
  line: string,
  k: number,
  isChunkLine: boolean,
): { kind: 'eof'; leniencies: Leniency[] } | { kind: 'op-end' } | undefined {
  const marker = classifyMarker(line, !isChunkLine);
  if (!marker) return undefined;
  if (marker.kind === 'eof') return { kind: 'eof', leniencies: marker.leniencies };
  if (marker.kind !== 'unknown-star') return { kind: 'op-end' };
  if (!line.startsWith('***')) return undefined;
  throw syntax(
    k,
    `unknown marker ${quote(line)}`,
    'valid markers: "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ", "*** End of File", "*** End Patch"',
    EXPECTED.chunkLine,
  );
}

/**
 * Whether chunk line `k`, outside any chunk, opens the op's first chunk (one needs no "@@").
 * A stray blank line right after "*** End of File", before the next op or End Patch (§2.8), is
 * skipped (false).
 * @throws HagentError PATCH_SYNTAX for another chunk line after "*** End of File".
 */
function opensChunk(
  lines: LineSource,
  k: number,
  end: number,
  chunks: readonly Chunk[],
  note: (l: Leniency) => void,
): boolean {
  if (chunks.length === 0) return true;
  if (
    chunks[chunks.length - 1]!.endOfFile &&
    isBlank(lines.at(k)!) &&
    endsOpAt(lines, k + 1, end)
  ) {
    note('stray-blank-line');
    return false;
  }
  throw syntax(
    k,
    'a chunk line after "*** End of File" without a new "@@"',
    'start each further chunk with an "@@" line',
    EXPECTED.chunkStart,
  );
}

/** An empty chunk whose first line is line `at` (0-based) of the patch. */
function newChunk(at: number): ChunkBuilder {
  return {
    anchors: [],
    oldLines: [],
    newLines: [],
    kinds: [],
    endOfFile: false,
    patchLine: at + 1,
    trailingBare: 0,
    hasLines: false,
  };
}

/** Adds one ' ' (or bare empty), '-' or '+' line (`c0`: its first character code) to the chunk. */
function addChunkLine(cur: ChunkBuilder, line: string, c0: number): void {
  cur.hasLines = true;
  if (line === '' || c0 === 32) {
    const text = line === '' ? '' : line.slice(1);
    cur.oldLines.push(text);
    cur.newLines.push(text);
    cur.kinds.push(' ');
    cur.trailingBare = line === '' ? cur.trailingBare + 1 : 0;
  } else if (c0 === 45) {
    cur.oldLines.push(line.slice(1));
    cur.kinds.push('-');
    cur.trailingBare = 0;
  } else {
    cur.newLines.push(line.slice(1));
    cur.kinds.push('+');
    cur.trailingBare = 0;
  }
}

/**
 * Closes the chunk being read and pushes it onto `chunks` when it has lines.
 * Bare empty lines at the end of a chunk are empty context lines (Codex), except when the chunk is
 * otherwise a pure insertion (or only blanks): then they are stray blank lines (§2.8), never a
 * context line that could pull the insertion onto some blank line of the file.
 * @returns undefined: no chunk is open any more.
 */
function finishChunk(c: ChunkBuilder, chunks: Chunk[], note: (l: Leniency) => void): undefined {
  if (!c.hasLines) return undefined;
  if (c.trailingBare > 0 && c.oldLines.length === c.trailingBare && !c.endOfFile) {
    c.oldLines.length = 0;
    c.newLines.length -= c.trailingBare;
    c.kinds.length -= c.trailingBare;
    note('stray-blank-line');
    if (c.newLines.length === 0 && c.anchors.length === 0) return undefined;
  }
  chunks.push({
    anchors: c.anchors,
    oldLines: c.oldLines,
    newLines: c.newLines,
    endOfFile: c.endOfFile,
    lineKinds: c.kinds.join(''),
    patchLine: c.patchLine,
  });
  return undefined;
}

/** True when line `k` (0-based) and on is only blank lines up to an op header, End Patch or the end. */
function endsOpAt(lines: LineSource, k: number, end: number): boolean {
  for (; k < end; k++) {
    const line = lines.at(k)!;
    if (isBlank(line)) continue;
    return (
      isOpBoundary(line) ||
      (classifyMarker(line, true) !== undefined &&
        classifyMarker(line, true)!.kind !== 'unknown-star')
    );
  }
  return true;
}

/** `@@` → '', `@@ TEXT` → TEXT, `@@ -1,3 +1,3 @@ TEXT` → TEXT (§2.11). */
function readAnchor(line: string, note: (l: Leniency) => void): string {
  const u = UDIFF_HUNK.exec(line);
  if (u) {
    note('udiff-anchor');
    const rest = u[1] as string;
    return rest.startsWith(' ') ? rest.slice(1) : rest;
  }
  if (line.startsWith('@@ ')) return line.slice(3);
  return line.slice(2);
}

function quote(line: string): string {
  const shown = line.length > 60 ? `${line.slice(0, 57)}...` : line;
  return JSON.stringify(shown);
}
