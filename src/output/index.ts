/**
 * output: the human and JSON renderers. Colours only on a TTY, never when NO_COLOR is set
 * or in a pipe; JSON always one object per command on stdout.
 */
import type { HagentError } from '../errors.js';

/** Where a command writes, and what it may assume about its terminal. */
export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** stdout is a terminal and colours are allowed. */
  color: boolean;
  /** A human can answer a prompt (stdin and stderr are terminals). */
  interactive: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * This process's Io: its streams, each made on first use. Node builds process.stdout and
 * process.stdin (loading its stream, net and tty modules for them) the first time they are read,
 * ~4 ms of a start; `hagent hook` answers with one short write and never needs them. Colour and
 * interactivity are read from the streams when asked, for the same reason.
 */
/**
 * The current folder. When it was removed under the shell, process.cwd() throws (ENOENT): the
 * shell's PWD is taken instead, so the command refuses naming that folder (git/run.ts) rather
 * than crashing before any error handling.
 */
function currentFolder(): string {
  try {
    return process.cwd();
  } catch {
    return process.env.PWD && process.env.PWD.startsWith('/') ? process.env.PWD : '.';
  }
}

export function processIo(): Io {
  return {
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    get stdin() {
      return process.stdin;
    },
    get color() {
      return !!process.stdout.isTTY && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
    },
    get interactive() {
      return !!process.stdin.isTTY && !!process.stderr.isTTY;
    },
    cwd: currentFolder(),
    env: process.env,
  };
}

/** ANSI styles; identity functions when colour is off. */
export interface Palette {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;

/** A palette for `io`: real colours on a TTY, plain text otherwise. */
export function palette(color: boolean): Palette {
  if (!color) {
    const id = (s: string) => s;
    return { red: id, green: id, yellow: id, cyan: id, dim: id, bold: id };
  }
  return {
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    dim: wrap(2, 22),
    bold: wrap(1, 22),
  };
}

/** Writes one JSON document and a newline to stdout. */
export function printJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines to stdout. */
export function printLines(io: Io, lines: readonly string[]): void {
  if (lines.length) io.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Renders a refusal: under `--json` the `{ok:false, error}` object on stdout
 * (patch-language.md §7); otherwise `error[CODE]: message` and the hint on stderr.
 */
export function printError(
  io: Io,
  error: HagentError,
  json: boolean,
  extra: Record<string, unknown> = {},
): void {
  if (json) {
    printJson(io, { ok: false, ...extra, error: error.toJSON() });
    return;
  }
  const p = palette(io.color);
  const lines = [`${p.red(p.bold(`error[${error.code}]`))}: ${error.message}`];
  const d = error.details;
  if (d.path && !error.message.includes(String(d.path)))
    lines.push(`  ${p.dim('path:')} ${d.path}`);
  if (d.chunk !== undefined) lines.push(`  ${p.dim('chunk:')} ${d.chunk}`);
  if (d.line !== undefined) lines.push(`  ${p.dim('line:')} ${d.line}`);
  if (d.candidates?.length)
    lines.push(`  ${p.dim('candidates (lines):')} ${d.candidates.join(', ')}`);
  const closest = d.closest as { startLine?: number; endLine?: number } | undefined;
  if (closest?.startLine !== undefined)
    lines.push(`  ${p.dim('closest region:')} lines ${closest.startLine}-${closest.endLine}`);
  const diff = d.firstDifference as
    { line?: number; file?: string | null; patch?: string } | undefined;
  if (diff?.line !== undefined)
    lines.push(
      `  ${p.dim(`line ${diff.line}, file: `)} ${JSON.stringify(diff.file)}`,
      `  ${p.dim(`line ${diff.line}, patch:`)} ${JSON.stringify(diff.patch)}`,
    );
  if (typeof d.text === 'string' && error.code === 'PATCH_SYNTAX')
    lines.push(`  ${p.dim('text:')} ${JSON.stringify(d.text)}`);
  if (Array.isArray(d.expected))
    lines.push(`  ${p.dim('expected one of:')} ${(d.expected as string[]).join(' | ')}`);
  if (error.code === 'GUARD_BLOCKED')
    lines.push(
      `  ${p.dim('rule:')} ${String(d.rule)}`,
      `  ${p.dim('command:')} ${String(d.command)}`,
    );
  if (error.hint) lines.push(`  ${p.cyan('hint:')} ${error.hint}`);
  io.stderr.write(`${lines.join('\n')}\n`);
}

/** `A`, `M`, `D`, `R` letter of a file op, as Codex prints them. */
export function opLetter(op: string): string {
  return op === 'add' ? 'A' : op === 'delete' ? 'D' : 'M';
}

/** `word` as one word of a POSIX shell command line (single-quoted when it needs to be), for hints. */
export function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Shortens a commit id for humans. */
export function short(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 12) : '-';
}

/**
 * How many items a human list shows: a monorepo change can touch 10,000 files, and a terminal
 * flooded with them hides the one line that says what to do. `--json` always carries them all.
 */
export const LIST_LIMIT = 20;

/** The line that stands for the items a list leaves out. */
function moreText(n: number): string {
  return `… and ${n} more (use --json for all)`;
}

/**
 * One line per item for the first {@link LIST_LIMIT} items of `items` (`line` renders one), then
 * `<indent>… and N more (use --json for all)` when some were left out. `indent` is the left
 * margin of that last line, matching the item lines.
 * @example cappedLines(r.files, (f) => `  ${f.status} ${f.path}`, '  ')
 */
export function cappedLines<T>(
  items: readonly T[],
  line: (item: T) => string,
  indent = '  ',
  limit = LIST_LIMIT,
): string[] {
  const shown = items.slice(0, limit).map(line);
  if (items.length > limit) shown.push(`${indent}${moreText(items.length - limit)}`);
  return shown;
}

/**
 * The first {@link LIST_LIMIT} of `items` joined with `, `, then `… and N more (use --json for
 * all)`: for a list inside a one-line message or hint (the full list stays in the error's
 * details, which `--json` prints).
 * @example `uncommitted changes: ${cappedList(dirty)}`
 */
export function cappedList(items: readonly string[], limit = LIST_LIMIT): string {
  const shown = items.slice(0, limit).join(', ');
  return items.length > limit ? `${shown} ${moreText(items.length - limit)}` : shown;
}
