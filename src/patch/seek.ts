/**
 * Locating a run of lines in a file, strictest comparison first. Rule: patch-language.md §3.1–3.3.
 *
 * Each level's normalized lines are built once per file (lazily). The planner first names the pivot
 * line of every chunk (its longest old line) and the file is scanned ONCE for all of them at the
 * exact level ({@link LineIndex.preparePivots}); a chunk's exact search then walks only its pivot's
 * positions after the cursor (O(occurrences) per chunk, not O(file lines)). Other searches (looser
 * levels, patterns not prepared) scan the lines after the cursor, comparing string lengths before
 * contents; the `line → positions` index of each level serves only the diagnostics of a failed search.
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
  return text
    .replace(DASHES, '-')
    .replace(SINGLE_QUOTES, "'")
    .replace(DOUBLE_QUOTES, '"')
    .replace(SPACES, ' ')
    .trim();
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

/** Per level: the first position of each distinct line, and a chain to the next equal line. */
interface LevelIndex {
  /** normalized line → 0-based index of its first occurrence. */
  head: Map<string, number>;
  /** next[i] = 0-based index of the next line equal to line i, or -1. */
  next: Int32Array;
  /** count[i] = occurrences of line i's text at or after i. */
  count: Int32Array;
  /** Materialized position lists, built on demand for the lines a search asks about. */
  lists: Map<string, readonly number[]>;
}

/**
 * The lines of one file with, per level, the normalized lines and an index from a normalized line
 * to the sorted 0-based positions where it occurs. Build one per file and reuse it for every chunk.
 *
 * The index is one hash entry per distinct line plus two typed arrays (a chain of equal lines and
 * their counts), built in one O(lines) pass per level; position lists are materialized only for the
 * lines a search asks about, so a 200,000-line file costs no 200,000 small arrays.
 */
export class LineIndex {
  readonly lines: readonly string[];
  private readonly normalizedByLevel = new Map<MatchLevel, string[]>();
  private readonly byLevel = new Map<MatchLevel, LevelIndex>();
  private readonly pivots = new Map<string, readonly number[]>();

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
      out =
        level === 'exact'
          ? (this.lines as string[])
          : this.lines.map((l) => normalizeLine(l, level));
      this.normalizedByLevel.set(level, out);
    }
    return out;
  }

  /**
   * Scans the file once for the given lines (exact level) and remembers where each occurs, so that
   * exact searches pivoting on one of them walk its positions instead of rescanning the file.
   * Lines are compared by length first: most file lines are never hashed or compared.
   */
  preparePivots(wanted: Iterable<string>): void {
    const fresh: string[] = [];
    for (const w of wanted) if (!this.pivots.has(w) && !fresh.includes(w)) fresh.push(w);
    if (fresh.length === 0) return;
    let maxLen = 0;
    for (const w of fresh) maxLen = Math.max(maxLen, w.length);
    const lengths = new Uint8Array(maxLen + 1);
    const lists = new Map<string, number[]>();
    for (const w of fresh) {
      lengths[w.length] = 1;
      lists.set(w, []);
    }
    const lines = this.lines;
    for (let i = 0; i < lines.length; i++) {
      const len = (lines[i] as string).length;
      if (len <= maxLen && lengths[len] === 1) lists.get(lines[i] as string)?.push(i);
    }
    for (const [w, list] of lists) this.pivots.set(w, list);
  }

  /** Sorted positions of an exact line prepared by {@link preparePivots}; undefined when not prepared. */
  pivotPositions(text: string): readonly number[] | undefined {
    return this.pivots.get(text);
  }

  private level(level: MatchLevel): LevelIndex {
    let idx = this.byLevel.get(level);
    if (!idx) {
      const norm = this.normalized(level);
      const n = norm.length;
      const head = new Map<string, number>();
      const next = new Int32Array(n);
      const count = new Int32Array(n);
      for (let i = n - 1; i >= 0; i--) {
        const key = norm[i] as string;
        const h = head.get(key);
        if (h === undefined) {
          next[i] = -1;
          count[i] = 1;
        } else {
          next[i] = h;
          count[i] = (count[h] as number) + 1;
        }
        head.set(key, i);
      }
      idx = { head, next, count, lists: new Map() };
      this.byLevel.set(level, idx);
    }
    return idx;
  }

  /** How many lines equal `normalizedText` at `level`. O(1) after the level's index is built. */
  count(level: MatchLevel, normalizedText: string): number {
    const idx = this.level(level);
    const h = idx.head.get(normalizedText);
    return h === undefined ? 0 : (idx.count[h] as number);
  }

  /** Sorted 0-based positions of lines equal to `normalizedText` at `level` (empty when none). */
  positions(level: MatchLevel, normalizedText: string): readonly number[] {
    const idx = this.level(level);
    let list = idx.lists.get(normalizedText);
    if (!list) {
      const h = idx.head.get(normalizedText);
      if (h === undefined) return EMPTY;
      const out: number[] = [];
      for (let i = h; i !== -1; i = idx.next[i] as number) out.push(i);
      idx.lists.set(normalizedText, out);
      list = out;
    }
    return list;
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

function matchesAt(norm: readonly string[], pattern: readonly string[], start: number): boolean {
  for (let k = 0; k < pattern.length; k++) if (norm[start + k] !== pattern[k]) return false;
  return true;
}

/**
 * Finds every match of `pattern` at one level starting at or after `from` (0-based).
 * Returns the 0-based start indices, in file order.
 */
export function findAllAtLevel(
  index: LineIndex,
  pattern: readonly string[],
  from: number,
  level: MatchLevel,
): number[] {
  const m = pattern.length;
  const n = index.length;
  if (m === 0 || m > n - from) return [];
  const pat = pattern.map((l) => normalizeLine(l, level));
  const pivot = pivotOf(pat);
  const want = pat[pivot] as string;
  const norm = index.normalized(level);
  const out: number[] = [];
  const last = n - m + pivot;
  const known = level === 'exact' ? index.pivotPositions(want) : undefined;
  if (known) {
    // Walk the pivot's positions from the cursor on (binary search for the first).
    let lo = 0;
    let hi = known.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((known[mid] as number) < from + pivot) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < known.length; k++) {
      const i = known[k] as number;
      if (i > last) break;
      if (matchesAt(norm, pat, i - pivot)) out.push(i - pivot);
    }
    return out;
  }
  const len = want.length;
  for (let i = from + pivot; i <= last; i++) {
    const line = norm[i] as string;
    if (line.length === len && line === want && matchesAt(norm, pat, i - pivot))
      out.push(i - pivot);
  }
  return out;
}

/**
 * The pattern line a search pivots on: the longest (rarely a blank line or a brace).
 * Used by the planner to prepare every chunk's pivot in one scan ({@link LineIndex.preparePivots}).
 */
export function pivotOf(pattern: readonly string[]): number {
  let pivot = 0;
  for (let k = 1; k < pattern.length; k++)
    if ((pattern[k] as string).length > (pattern[pivot] as string).length) pivot = k;
  return pivot;
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
      if (matchesAt(index.normalized(level), pat, n - m))
        return { kind: 'unique', index: n - m, level };
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
    const want = normalizeLine(text, level);
    const norm = index.normalized(level);
    const len = want.length;
    for (let i = from; i < norm.length; i++)
      if ((norm[i] as string).length === len && norm[i] === want)
        return { kind: 'found', index: i, level, prefix: false };
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
