/**
 * Hints for refusals that teach (design.md invariant 6): the closest region of a chunk that was not
 * found (patch-language.md §3.8) and anchors that would disambiguate a chunk found twice (§3.3).
 */

import { foldUnicode, type LineIndex } from './seek.js';

/** The best partial match of a chunk. `start`, `firstDiff` are 0-based file indices. */
export interface ClosestRegion {
  start: number;
  /** Pattern lines that equal the file's (compared loosely: trimmed, Unicode-folded). */
  matching: number;
  /** 0-based index in the pattern of the first line that differs (even loosely). */
  firstDiffInPattern: number;
  /** 0-based file index of that line (may be ≥ file length when the pattern runs past the end). */
  firstDiff: number;
}

/** Lines that occur more often than this are not used to vote (blank lines, `}`…). */
const MAX_VOTES_PER_LINE = 200;

/**
 * Finds the region of the file that agrees with the most lines of `pattern` (at the loosest level),
 * by letting each pattern line vote for the starts it implies. O(occurrences), capped per line.
 * Returns undefined when no pattern line occurs in the file.
 */
export function closestRegion(
  index: LineIndex,
  pattern: readonly string[],
): ClosestRegion | undefined {
  const votes = new Map<number, number>();
  const n = index.length;
  for (let k = 0; k < pattern.length; k++) {
    const folded = foldUnicode(pattern[k] as string);
    if (folded === '') continue;
    if (index.count('unicode', folded) > MAX_VOTES_PER_LINE) continue;
    const list = index.positions('unicode', folded);
    for (const p of list) {
      const s = p - k;
      if (s < -pattern.length || s > n) continue;
      votes.set(s, (votes.get(s) ?? 0) + 1);
    }
  }
  let best: number | undefined;
  let bestVotes = 0;
  for (const [s, v] of votes) {
    if (v > bestVotes || (v === bestVotes && best !== undefined && s < best)) {
      best = s;
      bestVotes = v;
    }
  }
  if (best === undefined) return undefined;
  const start = Math.max(0, best);
  const norm = index.normalized('unicode');
  let firstDiffInPattern = -1;
  for (let k = start - best; k < pattern.length; k++) {
    const fileLine = norm[best + k];
    if (fileLine === undefined || fileLine !== foldUnicode(pattern[k] as string)) {
      firstDiffInPattern = k;
      break;
    }
  }
  if (firstDiffInPattern === -1) firstDiffInPattern = 0;
  return { start, matching: bestVotes, firstDiffInPattern, firstDiff: best + firstDiffInPattern };
}

function indentOf(line: string): number {
  const m = /^[ \t]*/.exec(line) as RegExpExecArray;
  return m[0].length;
}

/**
 * The nearest less-indented non-blank line above 0-based `at` (the enclosing function, class…),
 * as a 0-based index; undefined when `at`'s first non-blank line is not indented.
 */
export function enclosingLine(lines: readonly string[], at: number): number | undefined {
  let first = at;
  while (first < lines.length && (lines[first] as string).trim() === '') first++;
  if (first >= lines.length) return undefined;
  const indent = indentOf(lines[first] as string);
  if (indent === 0) return undefined;
  for (let i = at - 1; i >= 0; i--) {
    const l = lines[i] as string;
    if (l.trim() !== '' && indentOf(l) < indent) return i;
  }
  return undefined;
}

/** Shortens a line for a message. */
export function show(line: string | undefined): string {
  if (line === undefined) return '(end of file)';
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 77)}...` : line);
}
