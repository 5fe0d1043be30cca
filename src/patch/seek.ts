/**
 * Locating a run of lines in a file, strictest comparison first. Rule: patch-language.md §3.1–3.3.
 *
 * Each level's normalized lines and a `line → positions` index are built once per file (lazily),
 * so a search costs O(candidates × chunk length) rather than a rescan of the file per chunk.
 */

import type { MatchLevel } from './types.js';

/** The comparison levels, strictest first. Rule: patch-language.md §3.2. */
export const LEVELS: readonly MatchLevel[] = ['exact', 'trim-end', 'trim', 'unicode'];

/** Rank of a level (0 = exact … 3 = unicode): the larger, the looser. */
export function levelRank(level: MatchLevel): number {
  return LEVELS.indexOf(level);
}

const DASHES = /[\u2010-\u2015\u2212]/g;
const SINGLE_QUOTES = /[\u2018-\u201B]/g;
const DOUBLE_QUOTES = /[\u201C-\u201F]/g;
const SPACES = /[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g;
const NON_ASCII = /[^\x00-\x7F]/;

/**
 * Maps Unicode dashes, quotes and spaces to ASCII and trims: the loosest level of §3.2
 * (U+2010–U+2015, U+2212 → `-`; U+2018–U+201B → `'`; U+201C–U+201F → `"`; U+00A0, U+2002–U+200A,
 * U+202F, U+205F, U+3000 → space).
 */
export function foldUnicode(text: string): string {
  if (!NON_ASCII.test(text)) return text.trim();
  return text.replace(DASHES, '-').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(SPACES, ' ').trim();
}

/** A line as compared at `level`. Rule: patch-language.md §3.2. */
export function normalizeLine(text: string, level: MatchLevel): string {
  switch (level) {
    case 'exact':
      return text;
    case 'trim-end':
      return text.trimEnd();
    case 'trim':
      return text.trim();
    case 'unicode':
      return foldUnicode(text);
  }
}

/**
 * The lines of one file with, per level, the normalized lines and an index from a normalized line
 * to the sorted 0-based positions where it occurs. Build one per file and reuse it for every chunk.
 */
export class LineIndex {
  readonly lines: readonly string[];
  private readonly normalizedByLevel = new Map<MatchLevel, string[]>();
  private readonly positionsByLevel = new Map<MatchLevel, Map<string, number[]>>();

  constructor(lines: readonly string[]) {
    this.lines = lines;
  }

  /** Number of lines. */
  get length(): number {
    return this.lines.length;
  }

  /** The file's lines normalized at `level` (computed once). */
  normalized(level: MatchLevel): readonly string[] {
    let out = this.normalizedByLevel.get(level);
    if (!out) {
      out = level === 'exact' ? (this.lines as string[]) : this.lines.map((l) => normalizeLine(l, level));
      this.normalizedByLevel.set(level, out);
    }
    return out;
  }

  /** Sorted 0-based positions of lines equal to `normalizedText` at `level` (empty when none). */
  positions(level: MatchLevel, normalizedText: string): readonly number[] {
    let map = this.positionsByLevel.get(level);
    if (!map) {
      map = new Map();
      const norm = this.normalized(level);
      for (let i = 0; i < norm.length; i++) {
        const key = norm[i] as string;
        const list = map.get(key);
        if (list) list.push(i);
        else map.set(key, [i]);
      }
      this.positionsByLevel.set(level, map);
    }
    return map.get(normalizedText) ?? EMPTY;
  }
}

const EMPTY: readonly number[] = [];

/**
 * Where a line sequence is. `index` and `candidates` are 0-based line indices of the first line of
 * each match; `level` is the level at which the search first matched.
 */
export type SeekResult =
  | { kind: 'unique'; index: number; level: MatchLevel }
  | { kind: 'none' }
  | { kind: 'ambiguous'; level: MatchLevel; candidates: number[] };

/** First index in sorted `list` whose value is ≥ `value`. */
function lowerBound(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function matchesAt(norm: readonly string[], pattern: readonly string[], start: number): boolean {
  for (let k = 0; k < pattern.length; k++) if (norm[start + k] !== pattern[k]) return false;
  return true;
}

/**
 * Finds every match of `pattern` at one level starting at or after `from` (0-based).
 * Returns the 0-based start indices, in file order.
 */
export function findAllAtLevel(index: LineIndex, pattern: readonly string[], from: number, level: MatchLevel): number[] {
  const m = pattern.length;
  const n = index.length;
  if (m === 0 || m > n - from) return [];
  const pat = pattern.map((l) => normalizeLine(l, level));
  // Pivot on the pattern line with the fewest occurrences in the file.
  let pivot = 0;
  let pivotList: readonly number[] | undefined;
  for (let k = 0; k < m; k++) {
    const list = index.positions(level, pat[k] as string);
    if (list.length === 0) return [];
    if (!pivotList || list.length < pivotList.length) {
      pivot = k;
      pivotList = list;
    }
  }
  const norm = index.normalized(level);
  const out: number[] = [];
  const list = pivotList as readonly number[];
  for (let j = lowerBound(list, from + pivot); j < list.length; j++) {
    const start = (list[j] as number) - pivot;
    if (start + m > n) break;
    if (matchesAt(norm, pat, start)) out.push(start);
  }
  return out;
}

/**
 * Locates `pattern` (the chunk's old side, lines without terminators) at or after `from` (0-based).
 * Levels are tried strictest first; at the first level with any match, every match after `from` is
 * counted: one → `unique`, more → `ambiguous` (Codex silently takes the first).
 * With `endOfFile`, the only position tried is the very end of the file (`from` is then ignored:
 * the caller checks it, to tell an overlap from a miss).
 * An empty pattern is `unique` at `from` (or at the end with `endOfFile`).
 * Rule: patch-language.md §3.2, §3.3, §3.4.
 */
export function seekSequence(
  index: LineIndex,
  pattern: readonly string[],
  from: number,
  options: { endOfFile: boolean },
): SeekResult {
  const m = pattern.length;
  const n = index.length;
  if (m === 0) return { kind: 'unique', index: options.endOfFile ? n : from, level: 'exact' };
  if (m > n) return { kind: 'none' };
  for (const level of LEVELS) {
    if (options.endOfFile) {
      const pat = pattern.map((l) => normalizeLine(l, level));
      if (matchesAt(index.normalized(level), pat, n - m)) return { kind: 'unique', index: n - m, level };
      continue;
    }
    const found = findAllAtLevel(index, pattern, from, level);
    if (found.length === 1) return { kind: 'unique', index: found[0] as number, level };
    if (found.length > 1) return { kind: 'ambiguous', level, candidates: found };
  }
  return { kind: 'none' };
}

/** Where an `@@ TEXT` anchor is: `index` is 0-based; `prefix` tells a unique prefix match. */
export type AnchorResult =
  | { kind: 'found'; index: number; level: MatchLevel; prefix: boolean }
  | { kind: 'none' }
  | { kind: 'ambiguous'; candidates: number[] };

/**
 * Locates an `@@ TEXT` anchor at or after `from` (0-based): the first whole line equal to TEXT at the
 * strictest level that has one (as Codex does); failing that, a line that starts with TEXT (both
 * trimmed, then both Unicode-folded), only when exactly one such line exists after `from`.
 * Rule: patch-language.md §3.1.
 */
export function seekAnchor(index: LineIndex, text: string, from: number): AnchorResult {
  for (const level of LEVELS) {
    const list = index.positions(level, normalizeLine(text, level));
    const j = lowerBound(list, from);
    if (j < list.length) return { kind: 'found', index: list[j] as number, level, prefix: false };
  }
  for (const level of ['trim', 'unicode'] as const) {
    const want = normalizeLine(text, level);
    if (want === '') return { kind: 'none' };
    const norm = index.normalized(level);
    const hits: number[] = [];
    for (let i = from; i < norm.length; i++) if ((norm[i] as string).startsWith(want)) hits.push(i);
    if (hits.length === 1) return { kind: 'found', index: hits[0] as number, level, prefix: true };
    if (hits.length > 1) return { kind: 'ambiguous', candidates: hits };
  }
  return { kind: 'none' };
}
