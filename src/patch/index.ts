/**
 * src/patch — the PURE patch engine of hagent: agent text → {@link ParsedPatch} → {@link Plan}
 * (the new bytes, op, counts and match level of every file), computed entirely in memory.
 *
 * Owns: intake leniencies, the Codex and unified-diff parsers, chunk location (unique match,
 * four comparison levels), byte fidelity, file-op checks, and their diagnostics.
 * Must not import `node:fs`, `node:child_process`, `chokidar`, `git/`, `fsx/` or `transaction/`,
 * read the clock or `process.cwd()`: it takes text and a snapshot, and returns values or throws
 * {@link HagentError}. Other folders import only from this file.
 * Paths are opaque strings here: policy normalizes and checks them before planning.
 */

import { isHagentError, HagentError } from '../errors.js';
import { closeUnified, locatePatch, unifiedLines, unwrapText, type Intake } from './intake.js';
import { parseCodex } from './parse-codex.js';
import { parseUnifiedDiff } from './parse-udiff.js';
import { plan } from './plan.js';
import type { Leniency, ParsedPatch, PatchOp, Plan, Snapshot } from './types.js';

export { formatResult } from './format.js';
export { planEdit, planWrite, type EditRequest } from './edit.js';
export { splitText } from './text-file.js';
export type { Result, ResultError, ResultFile } from './format.js';

export type {
  Chunk,
  ChunkPlacement,
  FileMode,
  FileState,
  Leniency,
  MatchLevel,
  ParsedPatch,
  PatchOp,
  Plan,
  PlannedFile,
  Snapshot,
} from './types.js';

/**
 * Parses what an agent sent: a Codex `apply_patch` patch or a unified diff, possibly wrapped in a
 * Markdown fence, prose, a heredoc (`[cd DIR &&] apply_patch <<'EOF'`) or JSON
 * (`{"command":["apply_patch","…"]}`, `{"input":"…"}`), with CRLF line breaks.
 * Rule: patch-language.md §1 (grammar), §2 (the 11 leniencies, each reported in `leniencies`).
 *
 * Line numbers (`patchLine`, error `details.line`) are 1-based lines of the text as given (of the
 * unwrapped string for a JSON wrapper). `cwd` is the heredoc's `cd DIR`, recorded, not applied:
 * the caller must check it is inside the worktree.
 *
 * @param text the patch text (already decoded from bytes).
 * @returns `{format, ops, leniencies, cwd?}`; ops in patch order.
 * @throws HagentError `PATCH_SYNTAX` (not a patch, a line that breaks the grammar, no End Patch,
 *   ops after a premature End Patch) with `details` `{line, text, expected}`: the 1-based line, its
 *   text (`''` past the end of the input) and the forms the grammar allows there (strings), `MULTIPLE_PATCHES` (two complete patches),
 *   `UNSUPPORTED_FILE` (a binary diff, a symlink mode, or a submodule entry — mode 160000 or
 *   `Subproject commit` hunks — with `details.reason` `'submodule'`). A unified diff is read by its
 *   hunk counts (the `-- ` signature of git format-patch is trailing text); its CRs are content
 *   unless its header lines end in CRLF too (then `crlf-patch`). `format` says which language it is.
 * @example
 * const parsed = parsePatch('*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n');
 * // parsed.ops[0] → { kind: 'add', path: 'a.txt', lines: ['hi'], finalNewline: true, patchLine: 2 }
 */
export function parsePatch(text: string): ParsedPatch {
  let intake: ReturnType<typeof unwrapText>;
  try {
    intake = unwrapText(text);
  } catch (e) {
    // A wrapper nested thousands deep exhausts the stack while it is unwrapped.
    if (e instanceof RangeError)
      throw new HagentError(
        'PATCH_SYNTAX',
        'the patch is wrapped too deeply to read',
        { line: 1 },
        'send the patch text itself (*** Begin Patch … *** End Patch), or one level of JSON around it',
      );
    throw e;
  }
  try {
    return parseLines(intake);
  } catch (e) {
    // PATCH_SYNTAX names the offending line's text beside its number.
    if (
      isHagentError(e) &&
      e.code === 'PATCH_SYNTAX' &&
      e.details.text === undefined &&
      typeof e.details.line === 'number'
    ) {
      e.details['text'] = intake.lines.at(e.details.line - 1) ?? '';
    }
    throw e;
  }
}

function parseLines(intake: Intake): ParsedPatch {
  const located = locatePatch(intake);
  const leniencies = intake.leniencies;
  let ops: PatchOp[];
  if (located.format === 'codex') {
    ops = parseCodex(intake.lines, located.begin, located.end, leniencies);
  } else {
    // The parser finds where the diff ends (a fence line outside every hunk); the wrapper's
    // leniencies are noted before the parser's, in the order the text shows them.
    const own: Leniency[] = [];
    const diff = parseUnifiedDiff(
      unifiedLines(intake, located.start),
      located.start,
      intake.lines.length,
      own,
      { fenced: located.fenced },
    );
    closeUnified(intake, located.start, diff.end);
    for (const l of own) if (!leniencies.includes(l)) leniencies.push(l);
    ops = diff.ops;
  }
  const parsed: ParsedPatch = { format: located.format, ops, leniencies: [...leniencies] };
  if (intake.cwd !== undefined) parsed.cwd = intake.cwd;
  return parsed;
}

/**
 * Every path the planner needs the state of, in patch order without duplicates: each op's path,
 * each move destination (to refuse a move onto an existing file) and each copy source.
 * The caller reads them (lstat + bytes + mode) into the {@link Snapshot} given to {@link planPatch}.
 * For a path that is a directory, the caller may list the files under it
 * (`{kind: 'directory', files: ['y', 'sub/z']}`, relative to that directory): then an Add or Move
 * onto it is allowed when the same patch deletes or moves away every one of them.
 */
export function pathsToRead(parsed: ParsedPatch): string[] {
  const out = new Set<string>();
  for (const op of parsed.ops) {
    if (op.kind === 'add' && op.copyFrom !== undefined) out.add(op.copyFrom);
    out.add(op.path);
    if (op.kind === 'update' && op.moveTo !== undefined) out.add(op.moveTo);
    if (op.kind === 'update' && op.altPath !== undefined) out.add(op.altPath);
  }
  return [...out];
}

/**
 * Computes the whole patch in memory against `snapshot` (which must hold every path of
 * {@link pathsToRead}). Nothing is written: the result is what the transaction writes, all or nothing.
 *
 * - Chunks are located in file order with a cursor; `@@` anchors narrow the search (stacked anchors
 *   allowed; a prefix match only when unique); each chunk must match uniquely at the strictest of
 *   four levels (exact, trim-end, trim, unicode). Rule: patch-language.md §3.
 * - Deliberate reading of §2 ("the numbers are hints"): a unified-diff hunk that matches several
 *   places at its level is taken at the one candidate starting exactly at its `@@ -l` line (the
 *   original file's numbering: where `git apply` puts it), with leniency `line-number-tiebreak`;
 *   if no candidate starts there, AMBIGUOUS_MATCH as usual. Codex patches never get it.
 * - Context lines keep the file's bytes; a line that replaces a removed line takes that line's
 *   ending (the i-th added line of a group the i-th removed line's, extra ones the last removed
 *   line's), a pure insertion the ending of the line before it; a unified diff read byte for byte
 *   says each added line's ending itself (CR kept as content, §2.4). BOM, a missing final newline
 *   and a final blank line are kept, except that `-last` / `+last` before `*** End of File` adds
 *   the missing final newline (`finalNewline: 'added'`); mode is kept on update and move. §4.
 * - Already applied (§4): a chunk whose old side is not found but whose new side is, once, from
 *   the cursor, looks applied; so does a Codex insertion with no old side at all whose lines
 *   already stand where it goes (nothing else tells its retry apart). A chunk whose old side is
 *   found applies, even when its new side occurs too (repetitive files).
 *   When every op looks applied (Add targets holding the content, Delete targets absent, Moves
 *   done) → NO_CHANGES with `alreadyApplied: true`; otherwise the first failing chunk's refusal
 *   lists `appliedChunks`, and a mix of applied and fresh chunks is CONTEXT_NOT_FOUND.
 * - Add/Move onto an existing path, Update/Delete/Move of a missing path or directory, two ops on one
 *   path are refused. §5. Exceptions to DUPLICATE_PATH: a Codex `Delete File: P` then `Add File: P`
 *   (a whole-file replacement, reported as one update with the file's mode), and in a unified diff
 *   any later section on a path an earlier one changed (git format-patch of several commits):
 *   each later op is planned against the earlier one's result and the two are reported as one
 *   change. A unified-diff deletion must remove exactly the file's lines; a plain `diff -u a.orig
 *   a.new` updates whichever of the two exists (`altPath`). A directory is a free Add/Move
 *   destination only when its snapshot state
 *   lists its files (`files`) and the patch deletes or moves away all of them (a folder becomes a
 *   file); the writer then removes the emptied directory before writing the file. A no-op file among real changes is a warning; all no-ops → NO_CHANGES.
 *
 * `PlannedFile.chunks[].startLine` is 1-based in the original file; `added`/`removed` count the
 * lines really changed (a delete counts the file's lines, an add its lines); `level` is the loosest
 * level any chunk of the file matched at. `Plan.leniencies` = the parser's plus `one-blank-line-retry`
 * and `line-number-tiebreak`.
 *
 * @throws HagentError with `details` {path, chunk (1-based), line (1-based), candidates (1-based lines)}
 *   and always a `hint`:
 *   `DUPLICATE_PATH`, `FILE_EXISTS`, `FILE_NOT_FOUND`, `UNSUPPORTED_FILE` (NUL bytes, invalid UTF-8,
 *   not a regular file), `CONTEXT_NOT_FOUND` (hint: closest region and its first differing line),
 *   `AMBIGUOUS_MATCH` (candidates, and an anchor to add), `OVERLAPPING_CHUNKS`, `NO_CHANGES`,
 *   `INTERNAL` (the snapshot lacks a path from pathsToRead: a caller bug).
 * @example
 * const plan = planPatch(parsed, new Map([['a.txt', { kind: 'missing' }]]));
 * // plan.files[0] → { op: 'add', path: 'a.txt', bytes: <"hi\n">, mode: '100644', added: 1, … }
 */
export function planPatch(parsed: ParsedPatch, snapshot: Snapshot): Plan {
  return plan(parsed, snapshot);
}
