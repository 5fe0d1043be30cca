/**
 * Intake: from the text an agent sent to the lines of exactly one patch. Unwraps JSON tool calls,
 * heredocs, Markdown fences and prose; normalizes CRLF; refuses two patches at once and content
 * after a premature `*** End Patch`. Rule: patch-language.md §2 (leniencies 2, 3, 4, 5, 10).
 */

import { TextLines, type LineSource } from './lines.js';
import { HagentError } from '../errors.js';
import { classifyMarker, EXPECTED, isFenceLine, syntax } from './markers.js';
import type { Leniency } from './types.js';

/** The unwrapped text as lines (no terminators). `lines.at(i)` is line `i + 1` of the text (§6 numbering). */
export interface Intake {
  lines: LineSource;
  /**
   * The same lines before CRLF → LF, when the text held CRLF: a unified diff whose own header
   * lines do not end in CRLF is read from these, since there a CR before the line break is
   * content (patch-language.md §2.4). Same line count and numbering as `lines`.
   */
  raw?: LineSource;
  leniencies: Leniency[];
  /** `DIR` of a heredoc's `cd DIR && apply_patch <<EOF`, unquoted, unchecked. */
  cwd?: string;
}

/**
 * Where the single patch is in {@link Intake.lines} (0-based). A unified diff's end is not known
 * here: only its parser can tell a hunk's own lines (a context line " ```" of a Markdown file) from
 * a closing fence, so the parser finds the end and {@link closeUnified} checks what follows it.
 * `fenced`: a Markdown fence line stands before the diff (an opening fence).
 */
export type Located =
  | { format: 'codex'; begin: number; end: number }
  | { format: 'unified'; start: number; fenced: boolean };

const HEREDOC =
  /^(?:\$\s+)?(?:cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)\s*&&\s*)?apply_patch\s*<<-?\s*(['"]?)([A-Za-z_][\w.-]*)\2\s*$/;

/**
 * Unwraps the raw text: a leading BOM, CRLF → LF (leniency `crlf-patch`), and a JSON wrapper
 * (`{"command":["apply_patch","…"]}`, `{"input":"…"}`, any JSON whose one string holds a patch;
 * leniency `json-wrapper`). Line numbers of a JSON-wrapped patch count lines of the unwrapped string.
 * @param depth nesting level of JSON unwrapping (internal; stops after 3).
 * @throws HagentError `PATCH_SYNTAX` (JSON holding no patch), `MULTIPLE_PATCHES` (JSON holding several).
 */
export function unwrapText(text: string, depth = 0): Intake {
  const leniencies: Leniency[] = [];
  if (text.charCodeAt(0) === 0xfeff) {
    text = text.slice(1);
    leniencies.push('invisible-chars');
  }
  let raw: string | undefined;
  if (text.includes('\r\n')) {
    raw = text;
    text = text.replace(/\r\n/g, '\n');
    leniencies.push('crlf-patch');
  }
  const trimmed = text.trim();
  if (
    depth < 3 &&
    (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('"'))
  ) {
    let value: unknown;
    let parsed = false;
    try {
      value = JSON.parse(trimmed);
      parsed = true;
    } catch {
      parsed = false;
    }
    if (parsed) {
      const found = new Set<string>();
      collectPatchStrings(value, found);
      if (found.size === 0) {
        throw new HagentError(
          'PATCH_SYNTAX',
          'the JSON input holds no patch',
          { line: 1, text: trimmed.split('\n', 1)[0] as string, expected: [...EXPECTED.begin] },
          'send the patch text itself, starting with "*** Begin Patch"',
        );
      }
      if (found.size > 1) {
        throw new HagentError(
          'MULTIPLE_PATCHES',
          `the JSON input holds ${found.size} patches`,
          { line: 1 },
          'send one patch per apply',
        );
      }
      const inner = unwrapText([...found][0] as string, depth + 1);
      return { ...inner, leniencies: dedupe(['json-wrapper', ...leniencies, ...inner.leniencies]) };
    }
  }
  const intake: Intake = { lines: new TextLines(text), leniencies };
  if (raw !== undefined) intake.raw = new TextLines(raw);
  return intake;
}

/**
 * The lines a unified diff starting at 0-based `start` is read from: when the text held CRLF and
 * the diff's first header line does not end in CRLF, the CRLF was not transport (git writes a CRLF
 * file's lines with their CR): the unconverted lines, and `crlf-patch` is withdrawn. Otherwise the
 * converted lines. Rule: patch-language.md §2.4.
 */
export function unifiedLines(intake: Intake, start: number): LineSource {
  const raw = intake.raw;
  if (raw === undefined || (raw.at(start) ?? '').endsWith('\r')) return intake.lines;
  const at = intake.leniencies.indexOf('crlf-patch');
  if (at !== -1) intake.leniencies.splice(at, 1);
  return raw;
}

function looksLikePatch(s: string): boolean {
  return (
    /\*\*\*\s*begin\s+patch/i.test(s) || /^diff --git /m.test(s) || /^--- .*\n\+\+\+ /m.test(s)
  );
}

function collectPatchStrings(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') {
    if (looksLikePatch(value)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectPatchStrings(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) {
      // Some tool-call formats nest the arguments as a JSON string.
      if (typeof v === 'string' && /^\s*[{[]/.test(v) && !looksLikePatch(v.slice(0, 40))) {
        try {
          collectPatchStrings(JSON.parse(v), out);
          continue;
        } catch {
          // not JSON: fall through
        }
      }
      collectPatchStrings(v, out);
    }
  }
}

function isUdiffStart(lines: LineSource, i: number): boolean {
  const line = lines.at(i)!;
  if (line.startsWith('diff --git ')) return true;
  return line.startsWith('--- ') && (lines.at(i + 1) ?? '').startsWith('+++ ');
}

/**
 * Finds the one patch in the lines: a Codex patch (`*** Begin Patch` … `*** End Patch`) or, when
 * there is none, a unified diff. Records `fence`, `prose`, `heredoc` and the Begin/End marker
 * leniencies; sets `intake.cwd` from a heredoc's `cd DIR &&`.
 * Rule: patch-language.md §2.2, §2.3, and "content after *** End Patch".
 * @throws HagentError `MULTIPLE_PATCHES` (two complete patches), `PATCH_SYNTAX` (no patch, no End
 *   Patch, a marker after End Patch, a second Begin inside the patch), with the 1-based `line`.
 */
export function locatePatch(intake: Intake): Located {
  const { lines } = intake;
  const n = lines.length;
  let begin = -1;
  for (let i = 0; i < n; i++) {
    if (classifyMarker(lines.at(i)!, false)?.kind === 'begin') {
      begin = i;
      break;
    }
  }
  if (begin === -1) return locateUnified(intake);

  let end = -1;
  for (let i = begin + 1; i < n; i++) {
    const kind = classifyMarker(lines.at(i)!, false)?.kind;
    if (kind === 'end') {
      end = i;
      break;
    }
    if (kind === 'begin') {
      throw syntax(
        i,
        'a second "*** Begin Patch" appears before "*** End Patch"',
        'end the patch with "*** End Patch" before starting another, and send one patch per apply',
        EXPECTED.end,
      );
    }
  }
  if (end === -1) {
    throw syntax(
      n,
      'the patch has no "*** End Patch" line (truncated?)',
      'end the patch with a line "*** End Patch"; nothing was applied',
      EXPECTED.end,
    );
  }
  for (const l of classifyMarker(lines.at(begin)!, false)?.leniencies ?? []) addLeniency(intake, l);
  for (const l of classifyMarker(lines.at(end)!, false)?.leniencies ?? []) addLeniency(intake, l);

  // After End Patch: blank lines, fences and marker-free prose only.
  for (let i = end + 1; i < n; i++) {
    const line = lines.at(i)!;
    const marker = classifyMarker(line, true);
    if (marker && marker.kind === 'begin') {
      for (let j = i + 1; j < n; j++) {
        if (classifyMarker(lines.at(j)!, false)?.kind === 'end') {
          throw new HagentError(
            'MULTIPLE_PATCHES',
            'the input holds more than one complete patch',
            { line: i + 1 },
            'send one patch per apply (or merge them into one "*** Begin Patch" … "*** End Patch")',
          );
        }
      }
      throw syntax(
        i,
        'content after "*** End Patch": a second "*** Begin Patch" without its End',
        'send exactly one complete patch',
        EXPECTED.afterEnd,
      );
    }
    if ((marker && marker.kind !== 'unknown-star') || line.startsWith('@@')) {
      throw syntax(
        i,
        'content after "*** End Patch" (premature End Patch?)',
        'put "*** End Patch" only after the last op; nothing was applied',
        EXPECTED.afterEnd,
      );
    }
  }
  classifyOutside(intake, (i) => i < begin || i > end, begin);
  return { format: 'codex', begin, end };
}

function locateUnified(intake: Intake): Located {
  const { lines } = intake;
  const n = lines.length;
  let start = -1;
  for (let i = 0; i < n; i++) {
    if (isUdiffStart(lines, i)) {
      start = i;
      break;
    }
  }
  if (start === -1) {
    throw syntax(
      0,
      'no patch found: expected "*** Begin Patch" or a unified diff',
      'start the patch with a line "*** Begin Patch" and end it with "*** End Patch"',
      EXPECTED.begin,
    );
  }
  let fenced = false;
  for (let i = 0; i < start && !fenced; i++) fenced = isFenceLine(lines.at(i)!);
  return { format: 'unified', start, fenced };
}

/**
 * After the unified-diff parser has read the diff `lines[start, end)` (it stops at the first fence
 * line outside any hunk, or at the end of the text): refuses a second diff after it and notes the
 * fence, heredoc and prose around it. Rule: patch-language.md §2.2 — unwrapping never cuts inside
 * the patch's own lines.
 * @throws HagentError `MULTIPLE_PATCHES` (another diff after the end), with the 1-based `line`.
 */
export function closeUnified(intake: Intake, start: number, end: number): void {
  const { lines } = intake;
  for (let i = end; i < lines.length; i++) {
    if (isUdiffStart(lines, i)) {
      throw new HagentError(
        'MULTIPLE_PATCHES',
        'the input holds more than one diff',
        { line: i + 1 },
        'send one patch per apply',
      );
    }
  }
  classifyOutside(intake, (i) => i < start || i >= end, start);
}

/** Notes fences, heredoc and prose among the lines outside the patch. */
function classifyOutside(
  intake: Intake,
  outside: (i: number) => boolean,
  patchStart: number,
): void {
  const { lines } = intake;
  let heredocTag: string | undefined;
  let fence = false;
  let prose = false;
  for (let i = 0; i < lines.length; i++) {
    if (!outside(i)) continue;
    const line = lines.at(i)!;
    const t = line.trim();
    if (t === '') continue;
    if (isFenceLine(line)) {
      fence = true;
      continue;
    }
    const h = i < patchStart ? HEREDOC.exec(t) : null;
    if (h) {
      heredocTag = h[3];
      if (h[1] !== undefined) intake.cwd = unquote(h[1]);
      else delete intake.cwd;
      continue;
    }
    if (heredocTag !== undefined && i > patchStart && t === heredocTag) continue;
    prose = true;
  }
  if (heredocTag !== undefined) addLeniency(intake, 'heredoc');
  if (fence) addLeniency(intake, 'fence');
  if (prose) addLeniency(intake, 'prose');
}

function unquote(s: string): string {
  if ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'")))
    return s.slice(1, -1);
  return s;
}

function addLeniency(intake: Intake, l: Leniency): void {
  if (!intake.leniencies.includes(l)) intake.leniencies.push(l);
}

function dedupe(list: Leniency[]): Leniency[] {
  return [...new Set(list)];
}
