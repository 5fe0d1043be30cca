/**
 * The human text of an apply/check result (patch-language.md §7): Codex's success shape, which
 * agents are trained on, and `error[CODE]: message` with indented details and the hint on failure.
 * Pure: a string in, a string out; colour only when asked (ANSI SGR codes).
 */

import type { MatchLevel } from './types.js';

/** One file of a success result (the `files[]` entries of `hagent apply --json`). */
export interface ResultFile {
  path: string;
  op: 'add' | 'update' | 'delete' | 'move';
  /** Source path of a move. */
  from?: string;
  added: number;
  removed: number;
  /** Loosest comparison level any chunk matched at. */
  level?: MatchLevel;
  /** `'added'`: the file got the final newline it lacked (patch-language.md §4). */
  finalNewline?: 'added';
}

/** The error object of a failure result (`error` of `hagent apply --json`). */
export interface ResultError {
  code: string;
  message: string;
  hint?: string;
  path?: string;
  /** 1-based chunk number in patch order. */
  chunk?: number;
  /** 1-based line (in the file, or in the patch for PATCH_SYNTAX). */
  line?: number;
  /** 1-based candidate lines of an ambiguous match. */
  candidates?: number[];
  [key: string]: unknown;
}

/** An apply or check result: `{ok: true, files, leniencies, warnings}` or `{ok: false, error}`. */
export type Result =
  | {
      ok: true;
      files: readonly ResultFile[];
      leniencies?: readonly string[];
      warnings?: readonly string[];
      [key: string]: unknown;
    }
  | { ok: false; error: ResultError; [key: string]: unknown };

const LETTER: Record<ResultFile['op'], string> = { add: 'A', update: 'M', delete: 'D', move: 'M' };

/**
 * Renders a result as the text a human or an agent reads.
 *
 * Success (Codex's shape, in patch order): `Success. Updated the following files:` then one
 * `A path` / `M path` / `D path` line per file (a move is `M new-path`, as Codex prints it); then,
 * only when present, `warning: …` lines, a `matched loosely: path (level)` line per file that did
 * not match exactly, and `leniencies: a, b`.
 *
 * Failure: `error[CODE]: message`, then indented `path:`, `chunk:`, `line:`, `candidates:` lines
 * for the details present; then, when present, PATCH_SYNTAX's `text:` and `expected:`,
 * CONTEXT_NOT_FOUND's `closest:` range and its first difference (file and patch text one above the
 * other), AMBIGUOUS_MATCH's `anchor for line N:` suggestions; then `hint: …`.
 *
 * @param result the JSON result object of `hagent apply|check --json` (or of the library).
 * @param options `color`: wrap the status letters and the error code in ANSI colours (default false).
 * @returns the text, ending with a newline.
 * @example
 * formatResult({ ok: true, files: [{ path: 'a.py', op: 'update', added: 1, removed: 1, level: 'exact' }], leniencies: [], warnings: [] })
 * // → 'Success. Updated the following files:\nM a.py\n'
 */
export function formatResult(result: Result, options: { color?: boolean } = {}): string {
  const paint = (code: string, text: string): string =>
    options.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  const lines: string[] = [];
  if (result.ok) {
    lines.push('Success. Updated the following files:');
    for (const f of result.files) {
      const letter = LETTER[f.op];
      lines.push(
        `${paint(letter === 'A' ? '32' : letter === 'D' ? '31' : '33', letter)} ${f.path}`,
      );
    }
    for (const w of result.warnings ?? []) lines.push(`${paint('33', 'warning')}: ${w}`);
    for (const f of result.files)
      if (f.level !== undefined && f.level !== 'exact')
        lines.push(`matched loosely: ${f.path} (${f.level})`);
    if (result.leniencies && result.leniencies.length > 0)
      lines.push(`leniencies: ${result.leniencies.join(', ')}`);
  } else {
    const e = result.error;
    lines.push(`${paint('31', `error[${e.code}]`)}: ${e.message}`);
    if (e.path !== undefined) lines.push(`  path: ${e.path}`);
    if (e.chunk !== undefined) lines.push(`  chunk: ${e.chunk}`);
    if (e.line !== undefined) lines.push(`  line: ${e.line}`);
    if (e.candidates !== undefined && e.candidates.length > 0)
      lines.push(`  candidates: lines ${e.candidates.join(', ')}`);
    if (typeof e.text === 'string' && e.code === 'PATCH_SYNTAX')
      lines.push(`  text: ${JSON.stringify(e.text)}`);
    if (Array.isArray(e.expected) && e.expected.length > 0)
      lines.push(`  expected: ${e.expected.map((x) => String(x)).join(' | ')}`);
    const closest = e.closest as { startLine?: unknown; endLine?: unknown } | undefined;
    if (closest && typeof closest === 'object')
      lines.push(`  closest: lines ${String(closest.startLine)}-${String(closest.endLine)}`);
    const diff = e.firstDifference as
      { line?: unknown; file?: unknown; patch?: unknown } | undefined;
    if (diff && typeof diff === 'object') {
      lines.push(`  first difference at line ${String(diff.line)}:`);
      lines.push(
        `    file:  ${typeof diff.file === 'string' ? JSON.stringify(diff.file) : '(end of file)'}`,
      );
      lines.push(`    patch: ${JSON.stringify(diff.patch)}`);
    }
    if (Array.isArray(e.suggestedAnchors)) {
      for (const a of e.suggestedAnchors as {
        candidate?: unknown;
        line?: unknown;
        text?: unknown;
      }[]) {
        lines.push(
          `  anchor for line ${String(a.candidate)}: "@@ ${String(a.text)}" (line ${String(a.line)})`,
        );
      }
    }
    if (e.hint !== undefined && e.hint !== '') lines.push(`  hint: ${e.hint}`);
  }
  return `${lines.join('\n')}\n`;
}
