/**
 * The text of `hagent status`: one line per session in aligned columns. Pure: rows and a
 * palette in, lines out. A column is one entry of {@link COLUMNS}; adding one (overlaps, a gate
 * result) is a field of the row and an entry here.
 */
import type { Palette } from '../output/index.js';
import type { Overview, OverviewRow } from './read.js';

/** One column of the table. */
export interface Column {
  header: string;
  /** The cell's plain text (no colour: widths are measured on it). */
  text(row: OverviewRow): string;
  /** Colours a cell's padded text; identity when absent. */
  style?(row: OverviewRow, p: Palette): (s: string) => string;
  /** Right-aligned (numbers); left by default. */
  right?: boolean;
}

/** What a drift shows as, in one word or two. */
function driftText(row: OverviewRow): string {
  if (!row.head) return 'branch gone';
  if (!row.drift) return '-';
  return row.drift.kind === 'outside-commits'
    ? `outside-commits(${row.drift.commits.length})`
    : row.drift.kind;
}

/** The columns, left to right; the worktree last, never padded. */
export const COLUMNS: readonly Column[] = [
  { header: 'SESSION', text: (r) => r.session, style: (_, p) => p.bold },
  { header: 'AGENT', text: (r) => r.agent ?? '-' },
  {
    header: 'STATE',
    text: (r) => (r.approval === 'partial' ? 'approved*' : r.state),
    style: (r, p) =>
      r.state === 'landed'
        ? p.green
        : r.state === 'approved'
          ? p.cyan
          : r.state === 'empty'
            ? p.dim
            : (s) => s,
  },
  { header: 'COMMITS', text: (r) => String(r.commits), right: true },
  { header: 'FILES', text: (r) => String(r.files), right: true },
  { header: 'TARGET', text: (r) => r.target?.replace(/^refs\/heads\//, '') ?? '-' },
  {
    header: 'DRIFT',
    text: driftText,
    style: (r, p) => (r.drift || !r.head ? p.yellow : p.dim),
  },
  {
    header: 'OVERLAPS',
    text: (r) =>
      r.overlaps.length
        ? r.overlaps.map((o) => `${o.session}${o.lines ? '(lines)' : ''}`).join(',')
        : '-',
    style: (r, p) =>
      r.overlaps.some((o) => o.lines) ? p.yellow : r.overlaps.length ? (s) => s : p.dim,
  },
  {
    header: 'LAND',
    text: (r) => r.prediction ?? '-',
    style: (r, p) => (r.prediction === 'conflict' ? p.red : r.prediction ? p.green : p.dim),
  },
  {
    header: 'GATE',
    text: (r) =>
      r.gate ? `${r.gate.passed ? 'passed' : 'failed'}${r.gate.current ? '' : '(old)'}` : '-',
    style: (r, p) => (!r.gate ? p.dim : !r.gate.current ? p.dim : r.gate.passed ? p.green : p.red),
  },
  {
    header: 'WORKTREE',
    text: (r) => `${r.worktree}${r.worktreeExists ? '' : ' (missing)'}`,
    style: (r, p) => (r.worktreeExists ? p.dim : p.red),
  },
];

/**
 * The lines of the overview: a heading, a header row and one row per session, the current
 * session marked `*`; a hint when there is none. `approved*` is a partial approval.
 */
export function renderOverview(
  overview: Overview,
  p: Palette,
  columns: readonly Column[] = COLUMNS,
): string[] {
  const n = overview.sessions.length;
  const heading = `${p.bold(overview.repository)}: ${n} session${n === 1 ? '' : 's'}`;
  const broken = overview.broken.map(
    (b) => `${p.red('broken')} ${b.id}: ${b.file}: ${b.problem} (hagent doctor)`,
  );
  if (n === 0)
    return [
      heading,
      'No sessions. Start one with: hagent run claude (or hagent session start)',
      ...broken,
    ];
  const cells = overview.sessions.map((row) => columns.map((c) => c.text(row)));
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...cells.map((row) => row[i]!.length)),
  );
  const pad = (text: string, i: number) =>
    i === columns.length - 1
      ? text
      : columns[i]!.right
        ? text.padStart(widths[i]!)
        : text.padEnd(widths[i]!);
  const header = `  ${columns.map((c, i) => pad(c.header, i)).join('  ')}`;
  const lines = overview.sessions.map((row, k) => {
    const mark = row.current ? '* ' : '  ';
    return `${mark}${columns
      .map((c, i) => (c.style ? c.style(row, p) : (s: string) => s)(pad(cells[k]![i]!, i)))
      .join('  ')}`;
  });
  return [heading, p.dim(header), ...lines, ...broken];
}
