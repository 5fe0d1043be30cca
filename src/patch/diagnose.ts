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

/** How many of the best-voted starts are compared line by line. */
const RECOUNTED = 64;

/**
 * Finds the region of the file that agrees with the most lines of `pattern` (at the loosest level).
 * Each distinctive pattern line votes for the starts it implies (O(occurrences), capped per line);
 * the best-voted starts are then compared line by line, blank and common lines included, so the
 * region named is the one with the most equal lines and `matching` counts them all. Ties go to the
 * earliest start. Returns undefined when no pattern line occurs in the file.
 */
export function closestRegion(
  index: LineIndex,
  pattern: readonly string[],
): ClosestRegion | undefined {
  const votes = new Map<number, number>();
  const n = index.length;
  const folded = pattern.map((l) => foldUnicode(l));
  for (let k = 0; k < pattern.length; k++) {
    const f = folded[k] as string;
    if (f === '') continue;
    if (index.count('unicode', f) > MAX_VOTES_PER_LINE) continue;
    for (const p of index.positions('unicode', f)) {
      const s = p - k;
      if (s < -pattern.length || s > n) continue;
      votes.set(s, (votes.get(s) ?? 0) + 1);
    }
  }
  if (votes.size === 0) return undefined;
  const norm = index.normalized('unicode');
  const equalLines = (s: number) => {
    let c = 0;
    for (let k = 0; k < pattern.length; k++) if (norm[s + k] === folded[k]) c++;
    return c;
  };
  const ranked = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, RECOUNTED);
  let best = ranked[0]![0];
  let bestCount = -1;
  for (const [s] of ranked) {
    const c = equalLines(s);
    if (c > bestCount || (c === bestCount && s < best)) {
      best = s;
      bestCount = c;
    }
  }
  const start = Math.max(0, best);
  let firstDiffInPattern = -1;
  for (let k = start - best; k < pattern.length; k++) {
    const fileLine = norm[best + k];
    if (fileLine === undefined || fileLine !== folded[k]) {
      firstDiffInPattern = k;
      break;
    }
  }
  if (firstDiffInPattern === -1) firstDiffInPattern = 0;
  return { start, matching: bestCount, firstDiffInPattern, firstDiff: best + firstDiffInPattern };
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
