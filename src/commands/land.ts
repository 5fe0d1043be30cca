/**
 * `hagent land`: the approved changes onto the target branch.
 */
import { refuseForAgent } from '../agents/marker.js';
import { landSession, undoLand, type LandUndoResult } from '../land/index.js';
import { hasFallbackIdentity } from '../git/index.js';
import { approveCommand, openRepo, resolveSession } from '../session/index.js';
import {
  cappedLines,
  cappedList,
  palette,
  printJson,
  printLines,
  short,
  type Io,
} from '../output/index.js';
import type { CommonArgs } from './shared.js';

export async function runLand(
  argv: CommonArgs & {
    squash?: boolean;
    merge?: boolean;
    message?: string;
    yes?: boolean;
    allowDenied?: boolean;
    verify?: boolean;
    undo?: boolean;
  },
  io: Io,
): Promise<number> {
  refuseForAgent(io.env, argv.undo ? 'hagent land --undo' : 'hagent land', io.cwd);
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.session);
  if (argv.undo) return printLandUndo(await undoLand(ctx, session, io.env), argv, io);
  const r = await landSession(ctx, session, {
    mode: argv.merge ? 'merge' : 'squash',
    ...(argv.message ? { message: argv.message } : {}),
    yes: !!argv.yes,
    allowDenied: !!argv.allowDenied,
    noVerify: argv.verify === false,
    env: io.env,
  });
  if (await hasFallbackIdentity(ctx.cwd, r.commit))
    r.warnings.push(
      `git has no identity configured: the land commit ${short(r.commit)} is authored "hagent <hagent@localhost>"; set yours (git config --global user.name "Your Name" and git config --global user.email you@example.com), then hagent land --undo and hagent land to land it under your name`,
    );
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  printLines(io, [
    `${p.green('Landed')} session ${r.session} on ${r.target.replace('refs/heads/', '')} (${r.mode}): ${short(r.previous)} → ${short(r.commit)}`,
    ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
    r.updatedWorktree
      ? p.dim(
          `updated ${r.files.length} file${r.files.length === 1 ? '' : 's'} in ${r.updatedWorktree}`,
        )
      : p.dim('the target branch is not checked out anywhere; only the ref moved'),
    ...(r.coverage.notApproved.length
      ? [
          p.yellow(
            `Not approved yet, so not landed: ${cappedList(r.coverage.notApproved)}. Approve with: ${approveCommand(r.session, r.coverage.notApproved)}, then hagent land --session ${r.session}`,
          ),
        ]
      : []),
    ...(r.hooks.ran.length || r.hooks.skipped.length
      ? [
          p.dim(
            `your git hooks: ${[...new Set(r.hooks.ran.map((h) => h.hook))].join(', ') || 'none'} ran${r.hooks.skipped.length ? `; ${r.hooks.skipped.join(', ')} skipped (--no-verify)` : ''}`,
          ),
        ]
      : []),
    ...r.warnings.map((w) => p.yellow(`warning: ${w}`)),
  ]);
  return 0;
}

/** Prints the result of `hagent land --undo` (also `hagent undo --land`). */
export function printLandUndo(r: LandUndoResult, argv: CommonArgs, io: Io): number {
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  const branch = r.target.replace('refs/heads/', '');
  printLines(io, [
    `${p.green('Took back')} the land of session ${r.session} from ${branch}: ${short(r.undone)} → ${short(r.restored)}`,
    ...cappedLines(
      r.files,
      (f) =>
        `  ${f.status} ${f.path}${r.untouched.includes(f.path) ? p.yellow('  (changed since the land: left as it is)') : ''}`,
    ),
    p.dim(
      `the session is approved and not landed again; land it again with: hagent land --session ${r.session}`,
    ),
  ]);
  return 0;
}
