/**
 * Line ranges of a change, read from `git diff -U0` hunk headers, and when two of them meet.
 * PURE: text in, values out; no fs, no git, no clock.
 *
 * A range is `[start, end]`, 1-based and inclusive, in the coordinates of the **old** side of the
 * diff (the session's land base). A hunk that only inserts lines after line `s` (`@@ -s,0 +… @@`)
 * is the empty range `[s + 1, s]`: it sits between lines `s` and `s + 1`.
 *
 * Rule (why "touch" counts): two ranges meet when they intersect or touch, i.e. `a.start <=
 * b.end + 1 && b.start <= a.end + 1`. git's three-way merge reports a conflict for changes with
 * no unchanged line between them, so two changes on adjacent lines conflict as surely as two
 * changes of one line; an insertion after line `s` meets a change of lines `s` or `s + 1`.
 */

/** `[start, end]`, 1-based inclusive lines of the old side; `end = start - 1` for a pure insertion. */
export type LineRange = [number, number];

/** One hunk header of `git diff -U0`: old and new start lines and counts. */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

/** Paths and their hunks, as {@link parseZeroContextDiff} reads them. */
export type FileHunks = Map<string, Hunk[]>;

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Unquotes a path git wrote in C style (`"a\tb"`, octal escapes for bytes outside ASCII when
 * core.quotePath is on); an unquoted path comes back unchanged.
 */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"')) return raw;
  const body = raw.slice(1, -1);
  const bytes: number[] = [];
  const named: Record<string, number> = {
    n: 10,
    t: 9,
    r: 13,
    '"': 34,
    '\\': 92,
    a: 7,
    b: 8,
    f: 12,
    v: 11,
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(named[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Parses the text of `git diff -U0 --src-prefix=a/ --dst-prefix=b/` (no renames) into each
 * changed path's hunks. A path is read from its `+++ b/…` line (`--- a/…` for a deletion); a
 * binary file or a mode-only change has no `---`/`+++` lines and is not in the result (callers
 * take the file list from `diff-tree`, which names every path).
 */
export function parseZeroContextDiff(text: string): FileHunks {
  const out: FileHunks = new Map();
  let oldPath: string | null = null;
  let current: Hunk[] | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      oldPath = null;
      current = null;
    } else if (current === null && line.startsWith('--- ')) {
      const p = headerPath(line);
      oldPath = p === '/dev/null' ? null : unquoteGitPath(p).replace(/^a\//, '');
    } else if (current === null && line.startsWith('+++ ')) {
      const p = headerPath(line);
      const name = p === '/dev/null' ? oldPath : unquoteGitPath(p).replace(/^b\//, '');
      if (name !== null) {
        current = out.get(name) ?? [];
        out.set(name, current);
      }
    } else if (current !== null && line.startsWith('@@')) {
      const m = HEADER.exec(line);
      if (m)
        current.push({
          oldStart: Number(m[1]),
          oldCount: m[2] === undefined ? 1 : Number(m[2]),
          newStart: Number(m[3]),
          newCount: m[4] === undefined ? 1 : Number(m[4]),
        });
    }
  }
  return out;
}

/** The path of a `---`/`+++` line: git ends one holding a space with a tab, which is not part of it. */
function headerPath(line: string): string {
  const p = line.slice(4);
  return p.endsWith('\t') ? p.slice(0, -1) : p;
}

/** The old-side range of a hunk: `[s, s + n - 1]`, or `[s + 1, s]` for a pure insertion after line `s`. */
export function hunkRange(h: Hunk): LineRange {
  return h.oldCount === 0
    ? [h.oldStart + 1, h.oldStart]
    : [h.oldStart, h.oldStart + h.oldCount - 1];
}

/** Whether two ranges intersect or touch (the module's rule). */
export function rangesMeet(a: LineRange, b: LineRange): boolean {
  return a[0] <= b[1] + 1 && b[0] <= a[1] + 1;
}

/** Whether any range of `a` meets any range of `b`; an empty list stands for the whole file (a binary or mode change), which meets anything. */
export function anyMeet(a: readonly LineRange[], b: readonly LineRange[]): boolean {
  if (a.length === 0 || b.length === 0) return true;
  // Both lists are short (hunks of one file); sorted merges are not worth it.
  return a.some((x) => b.some((y) => rangesMeet(x, y)));
}

/**
 * Maps a range of the **new** side of `hunks` (a session head's lines) to the old side (its land
 * base): lines between hunks shift by the hunks before them; a range inside a hunk's new lines
 * becomes that hunk's whole old range (those lines have no older counterpart). `hunks` are one
 * file's, in order.
 */
export function toOldSide(range: LineRange, hunks: readonly Hunk[]): LineRange {
  const map = (line: number, edge: 'start' | 'end'): number => {
    let shift = 0;
    for (const h of hunks) {
      const newEnd = h.newStart + h.newCount - 1;
      const before = h.newCount === 0 ? line <= h.newStart : line < h.newStart;
      if (before) break;
      if (h.newCount > 0 && line <= newEnd) {
        const r = hunkRange(h);
        return edge === 'start' ? r[0] : r[1];
      }
      shift += h.oldCount - h.newCount;
    }
    return line + shift;
  };
  const start = map(range[0], 'start');
  const end = range[1] < range[0] ? start - 1 : map(range[1], 'end');
  return [start, Math.max(end, start - 1)];
}

/**
 * The old-side lines an edit touches, from the file's text before and after it: the lines
 * between the longest common prefix and suffix of lines, as one range (`[]` when nothing changes).
 * An edit of one place (an exact-string edit) gives exactly its lines; a whole-file write gives
 * the span from its first to its last changed line.
 */
export function touchedLines(before: string, after: string): LineRange[] {
  if (before === after) return [];
  const a = splitLines(before);
  const b = splitLines(after);
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let q = 0;
  while (q < a.length - p && q < b.length - p && a[a.length - 1 - q] === b[b.length - 1 - q]) q++;
  return [[p + 1, a.length - q]];
}

/** Lines of a text, each with its terminator, so a changed final newline counts as a change. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** `10–20`, `10` for one line, `after 9` for an insertion: how a range reads in a message. */
export function formatRange(r: LineRange): string {
  if (r[1] < r[0]) return r[1] === 0 ? 'at the top' : `after ${r[1]}`;
  return r[0] === r[1] ? `${r[0]}` : `${r[0]}–${r[1]}`;
}

/** Ranges joined for a message: `lines 10–20, 31` (`the whole file` for an empty list). */
export function formatRanges(rs: readonly LineRange[]): string {
  if (rs.length === 0) return 'the whole file';
  const shown = rs.slice(0, 4).map(formatRange).join(', ');
  return `line${rs.length === 1 && rs[0]![0] === rs[0]![1] ? '' : 's'} ${shown}${rs.length > 4 ? ` (+${rs.length - 4} more)` : ''}`;
}
