/**
 * Recognising the marker lines of the Codex language (`*** Begin Patch`, op headers, `*** Move to:`,
 * `*** End of File`, `*** End Patch`) with the leniencies of patch-language.md §2.1, 2.6, 2.9, 2.10.
 */

import { HagentError } from '../errors.js';
import type { Leniency } from './types.js';

/** What a marker line is: Begin/End Patch, End of File, an op header, Move to, or `***` + unknown text. */
export type MarkerKind =
  'begin' | 'end' | 'eof' | 'add' | 'update' | 'delete' | 'move' | 'unknown-star';

/** A recognised marker line. `path` (trimmed) is set for op headers and `move`. */
export interface Marker {
  kind: MarkerKind;
  path?: string;
  /** Leniencies needed to read this line as a marker (empty for the canonical spelling). */
  leniencies: Leniency[];
}

/** BOM, zero-width space / joiners, word joiner, NBSP: invisible on a marker line (§2.10). */
const INVISIBLE = /[\uFEFF\u200B\u200C\u200D\u2060\u00A0]/g;
const HAS_INVISIBLE = /[\uFEFF\u200B\u200C\u200D\u2060\u00A0]/;

const BEGIN = /^\*\*\*(\s*)(begin)(\s+)(patch)(\s*\*\*\*)?$/i;
const END = /^\*\*\*(\s*)(end)(\s+)(patch)(\s*\*\*\*)?$/i;
const EOF = /^\*\*\*(\s*)(end)(\s+)(of)(\s+)(file)(\s*\*\*\*)?$/i;
const OP = /^(\*\*\*)?(\s*)(add|update|delete)(\s+)(file)(\s*):(\s*)(.*)$/i;
const MOVE = /^(\*\*\*)?(\s*)(move)(\s+)(to)(\s*):(\s*)(.*)$/i;

const CANON_OP: Record<string, string> = {
  add: 'Add File',
  update: 'Update File',
  delete: 'Delete File',
};

/** The line without its invisible characters (BOM, zero-width, NBSP). Rule: patch-language.md §2.10. */
export function stripInvisible(line: string): string {
  return HAS_INVISIBLE.test(line) ? line.replace(INVISIBLE, '') : line;
}

/**
 * Reads `line` as a marker, or returns undefined when it is not one.
 * `allowMissingPrefix`: accept op headers and `Move to:` without `*** ` (§2.6; the caller passes it
 * only in header position). Lines starting with `***` that name no known marker are `unknown-star`.
 */
export function classifyMarker(line: string, allowMissingPrefix: boolean): Marker | undefined {
  // Fast exit for ordinary content: after leading blanks a marker starts with '*', with a letter
  // (op headers without "*** "), or with an invisible non-ASCII character.
  let p = 0;
  let c = line.charCodeAt(0);
  while (c === 32 || c === 9) c = line.charCodeAt(++p);
  if (c !== 42 && c < 0x80 && !(allowMissingPrefix && isHeaderLetter(c))) return undefined;
  const cleaned = stripInvisible(line);
  const t = cleaned.trim();
  if (t === '') return undefined;
  const len: Leniency[] = [];
  if (cleaned !== line) len.push('invisible-chars');
  if (t !== cleaned) len.push('marker-whitespace');
  if (t.startsWith('***')) {
    let m = BEGIN.exec(t) ?? END.exec(t);
    if (m) {
      const kind = /^end$/i.test(m[2] as string) ? 'end' : 'begin';
      if (m[1] !== ' ' || m[3] !== ' ') len.push('marker-whitespace');
      const word = `${m[2]} ${m[4]}`;
      if (word !== (kind === 'begin' ? 'Begin Patch' : 'End Patch')) len.push('letter-case');
      if (m[5]) len.push('decorated-marker');
      return { kind, leniencies: dedupe(len) };
    }
    m = EOF.exec(t);
    if (m) {
      if (m[1] !== ' ' || m[3] !== ' ' || m[5] !== ' ') len.push('marker-whitespace');
      if (`${m[2]} ${m[4]} ${m[6]}` !== 'End of File') len.push('letter-case');
      if (m[7]) len.push('decorated-marker');
      return { kind: 'eof', leniencies: dedupe(len) };
    }
  } else if (!allowMissingPrefix) {
    return undefined;
  }
  const op = OP.exec(t);
  if (op) {
    const keyword = (op[3] as string).toLowerCase();
    readHeaderLeniencies(op, CANON_OP[keyword] as string, len);
    return {
      kind: keyword as 'add' | 'update' | 'delete',
      path: (op[8] as string).trim(),
      leniencies: dedupe(len),
    };
  }
  const mv = MOVE.exec(t);
  if (mv) {
    readHeaderLeniencies(mv, 'Move to', len);
    return { kind: 'move', path: (mv[8] as string).trim(), leniencies: dedupe(len) };
  }
  if (t.startsWith('***')) return { kind: 'unknown-star', leniencies: dedupe(len) };
  return undefined;
}

/** First letters of Add, Update, Delete, Move in either case. */
function isHeaderLetter(c: number): boolean {
  const l = c | 0x20;
  return l === 97 || l === 117 || l === 100 || l === 109;
}

function readHeaderLeniencies(m: RegExpExecArray, canon: string, len: Leniency[]): void {
  if (!m[1]) len.push('header-prefix');
  else if (m[2] !== ' ') len.push('marker-whitespace');
  if (m[4] !== ' ' || m[6] !== '' || (m[7] !== ' ' && m[8] !== '')) len.push('marker-whitespace');
  if (`${m[3]} ${m[5]}` !== canon) len.push('letter-case');
}

function dedupe(list: Leniency[]): Leniency[] {
  return list.length < 2 ? list : [...new Set(list)];
}

/** A Markdown fence line (```` ``` ````, ```` ```patch ````, `~~~`). */
export function isFenceLine(line: string): boolean {
  return /^\s*(```+|~~~+)\s*[\w+.-]*\s*$/.test(line);
}

/**
 * The forms a PATCH_SYNTAX error lists as `details.expected`: what the grammar allows at the
 * offending line (patch-language.md §1, §2 "A unified diff").
 */
export const EXPECTED = {
  begin: ['*** Begin Patch', 'diff --git a/PATH b/PATH', '--- a/PATH (then +++ b/PATH)'],
  end: ['*** End Patch'],
  opHeader: [
    '*** Add File: PATH',
    '*** Update File: PATH',
    '*** Delete File: PATH',
    '*** End Patch',
  ],
  path: [
    '*** Add File: PATH',
    '*** Update File: PATH',
    '*** Delete File: PATH',
    '*** Move to: PATH',
  ],
  addBody: [
    '+TEXT (every body line, or none, with "+")',
    '*** Add File: PATH',
    '*** Update File: PATH',
    '*** Delete File: PATH',
    '*** End Patch',
  ],
  chunkLine: [
    ' CONTEXT',
    '-REMOVED',
    '+ADDED',
    '@@',
    '@@ ANCHOR',
    '*** End of File',
    '*** Update File: PATH',
    '*** Add File: PATH',
    '*** Delete File: PATH',
    '*** End Patch',
  ],
  chunkStart: ['@@', '@@ ANCHOR'],
  afterEnd: ['(blank line)', '```', 'prose without markers'],
  gitHeader: ['diff --git a/PATH b/PATH'],
  fileHeader: ['--- a/PATH', '+++ b/PATH', 'diff --git a/PATH b/PATH'],
  quotedPath: ['"a/PATH" (git C-quoting: \\t, \\n, \\", \\\\, \\ooo)'],
  hunkLine: [
    ' CONTEXT',
    '-REMOVED',
    '+ADDED',
    '\\ No newline at end of file',
    '@@ -L,N +L,N @@',
    'diff --git a/PATH b/PATH',
  ],
  hunk: ['@@ -L,N +L,N @@'],
  newFileHunk: ['+ADDED'],
} as const satisfies Record<string, readonly string[]>;

/**
 * PATCH_SYNTAX at 0-based `index` (patch-language.md, error codes); `parsePatch` adds the line's
 * `text`. The one constructor of the three parsers' syntax errors.
 */
export function syntax(
  index: number,
  message: string,
  hint: string,
  expected: readonly string[],
): HagentError {
  return new HagentError(
    'PATCH_SYNTAX',
    `line ${index + 1}: ${message}`,
    { line: index + 1, expected: [...expected] },
    hint,
  );
}
