/**
 * `hagent session start|list|status|end`: thin wrappers over session/.
 */
import { openRepo, startSession, listSessionSummaries, sessionStatus, endSession } from '../session/index.js';
import { palette, printJson, printLines, short, type Io } from '../output/index.js';
import { askYesNo, type CommonArgs } from './shared.js';
import { HagentError } from '../errors.js';

export async function runStart(argv: CommonArgs & { name?: string; base?: string }, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const r = await startSession(ctx, { ...(argv.name ? { name: argv.name } : {}), ...(argv.base ? { base: argv.base } : {}), env: io.env });
  if (argv.json) printJson(io, r);
  else {
    const p = palette(io.color);
    printLines(io, [
      `${p.green('Started session')} ${p.bold(r.id)}`,
      `  worktree: ${r.worktree}${r.recycled ? p.dim(' (recycled from the pool)') : ''}`,
      `  branch:   ${r.branch} (from ${short(r.base)})`,
      `  lands on: ${r.target ?? '(detached HEAD: no target branch)'}`,
      ...(r.included.length ? [`  copied from .worktreeinclude: ${r.included.length} file${r.included.length === 1 ? '' : 's'}`] : []),
      `Next: cd ${r.worktree} && hagent apply patch.txt`,
    ]);
  }
  return 0;
}

export async function runList(argv: CommonArgs, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const list = await listSessionSummaries(ctx);
  if (argv.json) printJson(io, { sessions: list });
  else if (list.length === 0) printLines(io, ['No sessions. Start one with: hagent session start']);
  else {
    const p = palette(io.color);
    printLines(io, list.map((s) => `${p.bold(s.id.padEnd(18))} ${String(s.commits).padStart(3)} patch${s.commits === 1 ? ' ' : 'es'}  ${s.landed ? p.green('landed  ') : s.approved ? p.cyan('approved') : '        '}  → ${s.target?.replace('refs/heads/', '') ?? '-'}  ${p.dim(s.worktree)}`));
  }
  return 0;
}

export async function runStatus(argv: CommonArgs & { id?: string }, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const s = await sessionStatus(ctx, argv.id ?? argv.session);
  if (argv.json) printJson(io, s);
  else {
    const p = palette(io.color);
    printLines(io, [
      `${p.bold(`Session ${s.id}`)}${s.landed ? p.green(' (landed)') : s.approved ? p.cyan(' (approved)') : ''}`,
      `  worktree: ${s.worktree}${s.worktreeExists ? '' : p.red(' (missing)')}`,
      `  base:     ${short(s.base)}   head: ${short(s.head)}   patches: ${s.commits}`,
      `  target:   ${s.target ?? '-'}`,
      `  changed:  ${s.changed.length ? '' : 'nothing yet'}`,
      ...s.changed.map((c) => `    ${c.status} ${c.path}`),
      ...(s.interrupted ? [p.red(`  interrupted: a ${s.interrupted.command} (started ${s.interrupted.startedAt}) on ${s.interrupted.files.join(', ') || 'unknown files'}`), p.dim('    the next apply, undo, sync or land (or hagent doctor) finishes or undoes it first')] : []),
      ...(s.outsideEdits.length ? [p.yellow(`  outside edits pending (${s.outsideEdits.length}):`), ...s.outsideEdits.map((c) => `    ${c.status} ${c.path}`)] : []),
    ]);
  }
  return 0;
}

export async function runEnd(argv: CommonArgs & { id?: string; force?: boolean; yes?: boolean }, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  if (argv.force && !argv.yes && !argv.json) {
    if (io.interactive) {
      if (!(await askYesNo(io, 'End the session even if its work has not landed?'))) {
        throw new HagentError('UNLANDED_WORK', 'not ended: the answer was no', {}, 'nothing was changed');
      }
    }
  }
  const r = await endSession(ctx, argv.id ?? argv.session, !!argv.force, { env: io.env });
  if (argv.json) printJson(io, { ok: true, ...r });
  else printLines(io, [`Ended session ${r.id}${r.head ? ` (head ${short(r.head)} kept as refs/hagent/${r.id}/ended)` : ''}${r.pooled ? '; its worktree is kept, clean, for the next session start' : ''}`]);
  return 0;
}
