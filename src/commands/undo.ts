/**
 * `hagent undo [N] [--redo]`.
 */
import { refuseForAgent } from '../agents/marker.js';
import { HagentError } from '../errors.js';
import { redo, undo } from '../undo/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import { cappedLines, palette, printJson, printLines, short, type Io } from '../output/index.js';
import { recoveryLine, type CommonArgs } from './shared.js';

export async function runUndo(
  argv: CommonArgs & { steps?: number; redo?: boolean; land?: boolean },
  io: Io,
): Promise<number> {
  if (argv.land) refuseForAgent(io.env, 'hagent undo --land', io.cwd);
  // Arguments first: a bad count is a usage error whichever session would be picked.
  const steps = argv.steps ?? 1;
  if (!Number.isInteger(steps) || steps < 1)
    throw new HagentError(
      'USAGE',
      `${argv.redo ? 'redo' : 'undo'} takes a positive whole number of steps${Number.isNaN(steps) ? '' : `, not ${steps}`}`,
      { steps: Number.isNaN(steps) ? null : steps },
      argv.redo ? 'e.g. hagent undo --redo 2' : 'e.g. hagent undo 2',
    );
  const ctx = await openRepo(io.cwd);
  if (argv.land) return (await import('./land.js')).runLandUndo(ctx, argv, io);
  const session = await resolveSession(ctx, argv.session);
  const r = argv.redo
    ? await redo(ctx, session, steps, io.env)
    : await undo(ctx, session, steps, io.env);
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  if (r.recovery) io.stderr.write(`${recoveryLine(r.recovery)}\n`);
  const p = palette(io.color);
  printLines(io, [
    `${p.green(r.direction === 'undo' ? 'Undid' : 'Redid')} ${r.steps} patch${r.steps === 1 ? '' : 'es'} in session ${r.session}: head ${short(r.from)} → ${short(r.to)}`,
    ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
    p.dim(
      r.redoable
        ? `${r.redoable} patch${r.redoable === 1 ? '' : 'es'} can be brought back with: hagent undo --redo`
        : 'nothing left to redo',
    ),
  ]);
  return 0;
}
