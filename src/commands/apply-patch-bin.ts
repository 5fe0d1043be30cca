/**
 * The `apply_patch` bin: a drop-in for Codex's `apply_patch` executable, for agent loops that
 * shell out to it. Same calling convention (the patch as the one argument, or on stdin; Codex's
 * `--preserve-crlf` is accepted and changes nothing, as hagent always keeps each line's bytes),
 * same success text on stdout (`Success. Updated the following files:`, then the `A`, `M` and
 * `D` lines in that order, paths as the patch names them relative to the current folder), exit
 * 0. The patch goes to the session of the current folder as `hagent apply` would take it; a
 * refusal prints hagent's teaching error on stderr and exits 1 (2 for a usage error).
 */
import path from 'node:path';
import { applyPatch } from '../apply/index.js';
import { HagentError } from '../errors.js';
import { printLines, type Io } from '../output/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import { readPatchInput } from './shared.js';

const USAGE_TEXT = "apply_patch 'PATCH'   or   echo 'PATCH' | apply_patch";

/**
 * Runs the bin with `args` (argv after the program name).
 * @returns the exit status. @throws HagentError USAGE (extra arguments, nothing on stdin), and the
 *   codes of `hagent apply`.
 */
export async function runApplyPatchBin(args: readonly string[], io: Io): Promise<number> {
  const rest = args[0] === '--preserve-crlf' ? args.slice(1) : [...args];
  if (rest.length > 1)
    throw new HagentError(
      'USAGE',
      'apply_patch accepts exactly one PATCH argument',
      {},
      USAGE_TEXT,
    );
  let patchText: string;
  if (rest.length === 1) patchText = rest[0]!;
  else {
    if (io.stdin.isTTY) throw new HagentError('USAGE', 'no patch given', {}, USAGE_TEXT);
    try {
      patchText = await readPatchInput(io, '-');
    } catch (e) {
      if ((e as HagentError).code === 'EMPTY_PATCH')
        throw new HagentError('USAGE', 'no patch given (stdin was empty)', {}, USAGE_TEXT);
      throw e;
    }
  }
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx);
  const top = ctx.location.topLevel ?? session.worktree;
  const cwd = path.relative(top, io.cwd).split(path.sep).join('/');
  const r = await applyPatch(ctx, session, {
    patchText,
    env: io.env,
    ...(cwd && !cwd.startsWith('..') ? { cwd } : {}),
    // This program has no --yes: the hint names the command that has one.
    howToConfirm: 'apply it with: hagent apply --yes - (the patch on stdin)',
  });
  const shown = (p: string) => (cwd && !cwd.startsWith('..') ? path.posix.relative(cwd, p) : p);
  const lines = ['Success. Updated the following files:'];
  for (const letter of ['A', 'M', 'D'] as const) {
    for (const f of r.files)
      if ((f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : 'M') === letter)
        lines.push(`${letter} ${shown(f.path)}`);
  }
  printLines(io, lines);
  return 0;
}
