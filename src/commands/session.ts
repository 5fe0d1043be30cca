/**
 * `hagent session start|list|status|end`: thin wrappers over session/.
 */
import path from 'node:path';
import { refuseForAgent } from '../agents/marker.js';
import { HagentError } from '../errors.js';
import {
  openRepo,
  resolveSession,
  startSession,
  listSessionSummaries,
  listBrokenSessions,
  corruptHint,
  endSession,
  missingWorktreeHint,
  orphanNote,
  repoKey,
} from '../session/index.js';
import {
  cappedLines,
  cappedList,
  palette,
  printError,
  printJson,
  printLines,
  short,
  type Io,
} from '../output/index.js';
import { askYesNo, driftLines, radarJson, radarLines, type CommonArgs } from './shared.js';
import { radarOf } from '../radar/index.js';
import { carrySessionWiring, notCarriedWarning } from '../agents/worktree-wiring.js';

export async function runStart(
  argv: CommonArgs & { name?: string; base?: string },
  io: Io,
): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const r = await startSession(ctx, {
    ...(argv.name ? { name: argv.name } : {}),
    ...(argv.base ? { base: argv.base } : {}),
    env: io.env,
  });
  // Worktrees of repositories that are gone, told once a day (session/orphans.ts).
  const folder = path.dirname(r.worktree);
  const note =
    path.basename(folder) === repoKey(ctx.commonDir)
      ? await orphanNote(path.dirname(folder))
      : null;
  if (note) io.stderr.write(`note: ${note}\n`);
  const wiring = await carrySessionWiring(ctx, r.worktree);
  if (argv.json) printJson(io, { ok: true, ...r, wiring });
  else {
    const p = palette(io.color);
    printLines(io, [
      `${p.green('Started session')} ${p.bold(r.id)}`,
      `  worktree: ${r.worktree}${r.recycled ? p.dim(' (recycled from the pool)') : ''}`,
      `  branch:   ${r.branch} (from ${short(r.base)})`,
      `  lands on: ${r.target ?? '(detached HEAD: no target branch)'}`,
      ...(r.included.length
        ? [
            `  copied from .worktreeinclude: ${r.included.length} file${r.included.length === 1 ? '' : 's'}`,
          ]
        : []),
      ...(wiring.carried.length
        ? [`  agent wiring copied (uncommitted in your checkout): ${wiring.carried.join(', ')}`]
        : []),
      ...(wiring.notCarried.length ? [p.red(notCarriedWarning(r.id, wiring.notCarried))] : []),
      `Next: cd ${r.worktree} && hagent apply patch.txt`,
    ]);
  }
  return 0;
}

export async function runList(argv: CommonArgs, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const [list, broken, radar] = await Promise.all([
    listSessionSummaries(ctx),
    listBrokenSessions(ctx.commonDir),
    radarOf(ctx),
  ]);
  if (argv.json)
    printJson(io, {
      ok: true,
      sessions: list.map((s) => ({ ...s, ...radarJson(radar.get(s.id)) })),
      broken: broken.map((b) => ({ ...b, hint: corruptHint(b) })),
    });
  else if (list.length === 0 && broken.length === 0)
    printLines(io, ['No sessions. Start one with: hagent session start']);
  else {
    const p = palette(io.color);
    const label = {
      empty: p.dim('empty   '),
      open: 'open    ',
      approved: p.cyan('approved'),
      landed: p.green('landed  '),
      drifted: p.yellow('drifted '),
    } as const;
    printLines(
      io,
      list.flatMap((s) => [
        `${p.bold(s.id.padEnd(18))} ${String(s.commits).padStart(3)} patch${s.commits === 1 ? '  ' : 'es'}  ${label[s.state]}  → ${s.target?.replace('refs/heads/', '') ?? '-'}  ${p.dim(s.worktree)}${s.worktreeExists ? '' : p.red('  (worktree missing: hagent doctor)')}${s.drift ? p.yellow(`  (moved outside hagent: ${s.drift.kind})`) : ''}`,
        ...radarLines(radar.get(s.id), p, ' '.repeat(19), false),
      ]),
    );
    printLines(
      io,
      broken.map(
        (b) =>
          `${p.bold(b.id.padEnd(18))} ${p.red('broken')}: ${b.file}: ${b.problem}\n${' '.repeat(19)}${p.dim(`hint: ${corruptHint(b)}`)}`,
      ),
    );
  }
  return 0;
}

export async function runStatus(argv: CommonArgs & { id?: string }, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const { sessionStatusWithMerge } = await import('../update/index.js');
  const { merge, ...s } = await sessionStatusWithMerge(ctx, argv.id ?? argv.session);
  const radar = (await radarOf(ctx, [s.id])).get(s.id);
  if (argv.json) printJson(io, { ok: true, ...s, merge, ...radarJson(radar) });
  else {
    const p = palette(io.color);
    printLines(io, [
      `${p.bold(`Session ${s.id}`)} (${s.state})`,
      `  worktree: ${s.worktree}${s.worktreeExists ? '' : p.red(' (missing)')}`,
      ...(s.worktreeExists ? [] : [p.dim(`    ${missingWorktreeHint(s.id)}`)]),
      `  base:     ${short(s.base)}   head: ${short(s.head)}   patches: ${s.commits}`,
      `  target:   ${s.target ?? '-'}`,
      s.changed.length ? '  changed:' : '  changed:  nothing yet',
      ...cappedLines(s.changed, (c) => `    ${c.status} ${c.path}`, '    '),
      ...(s.interrupted
        ? [
            p.red(
              `  interrupted: ${/^[aeiou]/.test(s.interrupted.command) ? 'an' : 'a'} ${s.interrupted.command} (started ${s.interrupted.startedAt}) on ${cappedList(s.interrupted.files) || 'unknown files'}`,
            ),
            p.dim(
              '    the next apply, undo, sync or land (or hagent doctor) finishes or undoes it first',
            ),
          ]
        : []),
      ...(merge
        ? [
            p.yellow(
              `  merge in progress: ${short(merge.mergeHead)}${merge.byUpdate ? ` (hagent session update of ${s.target?.replace('refs/heads/', '') ?? 'its target'})` : ''}, ${merge.unresolved.length ? `${merge.unresolved.length} of ${merge.conflicted.length} conflicted file${merge.conflicted.length === 1 ? '' : 's'} unresolved` : 'every conflict resolved'}:`,
            ),
            ...cappedLines(
              merge.conflicted,
              (f) => `    ${merge.unresolved.includes(f) ? 'C' : 'R'} ${f}`,
              '    ',
            ),
            p.dim(`    hint: ${merge.hint}`),
          ]
        : []),
      ...(s.outsideEdits.length
        ? [
            p.yellow(`  outside edits pending (${s.outsideEdits.length}):`),
            ...cappedLines(s.outsideEdits, (c) => `    ${c.status} ${c.path}`, '    '),
          ]
        : []),
      ...(s.drift ? driftLines(s.drift, p) : []),
      ...radarLines(radar, p, '  ', true),
      ...s.outsideChanged.flatMap((o) => [
        p.red(`  your checkout changed during ${o.command} (${o.time}): ${o.message}`),
        p.dim(`    hint: ${o.hint}`),
      ]),
    ]);
  }
  return 0;
}

export async function runEnd(
  argv: CommonArgs & { id?: string; force?: boolean; yes?: boolean },
  io: Io,
): Promise<number> {
  refuseForAgent(io.env, 'hagent session end', io.cwd);
  const ctx = await openRepo(io.cwd);
  const confirm = async (unlanded: readonly string[], uncommitted: readonly string[]) => {
    if (argv.yes) return true;
    if (!io.interactive || argv.json) return false; // refused: CONFIRMATION_REQUIRED, as apply does
    const lines = [
      ...cappedLines(unlanded, (p) => `  not landed:  ${p}`),
      ...cappedLines(uncommitted, (p) => `  uncommitted: ${p}`),
    ];
    io.stderr.write(`${lines.join('\n')}\n`);
    return askYesNo(io, 'End the session? (what is listed stays reachable as its ended ref)');
  };
  const r = await endSession(ctx, argv.id ?? argv.session, {
    force: !!argv.force,
    confirm,
    env: io.env,
  });
  if (argv.json) printJson(io, { ok: true, ...r });
  else
    printLines(io, [
      `Ended session ${r.id}${r.keptAs ? ` (${keptWhat(r)} kept as ${r.keptAs}; see it with: git show --stat ${r.keptAs})` : ''}${r.pooled ? '; its worktree is kept, clean, for the next session start' : ''}`,
      ...(r.recoveredFrom
        ? [
            `  its branch was gone: its head ${r.head?.slice(0, 12)} was found in the ${r.recoveredFrom}`,
          ]
        : []),
      ...r.leftOut.map((k) => `  left out (never put in git): ${k.path}: ${k.reason}`),
      ...r.nested.map((n) => `  removed the nested repository ${n} (its .git with it)`),
    ]);
  return 0;
}

/** What a forced end kept under `ended`: work that had not landed, uncommitted files, or both. */
function keptWhat(r: { unlanded: string[]; uncommitted: string[] }): string {
  const parts = [
    r.unlanded.length ? 'its work that had not landed' : '',
    r.uncommitted.length
      ? `its ${r.uncommitted.length} uncommitted file${r.uncommitted.length === 1 ? '' : 's'}`
      : '',
  ].filter(Boolean);
  return parts.length === 2 ? `${parts[0]} and ${parts[1]} are` : `${parts[0] ?? 'its head'} is`;
}

export async function runUpdate(
  argv: CommonArgs & { id?: string; rebase?: boolean; all?: boolean },
  io: Io,
): Promise<number> {
  if (argv.all) return runUpdateAll(argv, io);
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.id ?? argv.session);
  const { updateSession, conflictsRefusal } = await import('../update/index.js');
  const r = await updateSession(ctx, session, { rebase: !!argv.rebase, env: io.env });
  // Stopped at conflicts: the merge waits in the worktree, so the command refuses (exit 1) with
  // the result's fields kept beside the error (`ok: false`, as every refusal says).
  const refusal = r.conflicts.length ? conflictsRefusal(r, session.worktree) : null;
  if (argv.json) {
    printJson(io, refusal ? { ...r, ok: false, error: refusal.toJSON() } : r);
    return refusal ? refusal.exitStatus : 0;
  }
  const p = palette(io.color);
  const branch = r.target.replace('refs/heads/', '');
  if (r.upToDate)
    printLines(io, [`Session ${r.session} already holds ${branch} (${short(r.merged)})`]);
  else if (refusal) {
    printLines(io, [
      p.yellow(
        `Merging ${branch} into session ${r.session}: ${r.conflicts.length} file${r.conflicts.length === 1 ? '' : 's'} with conflicts`,
      ),
      ...cappedLines(r.conflicts, (f) => `  C ${f}`),
    ]);
    printError(io, refusal, false);
    return refusal.exitStatus;
  } else {
    const what = argv.rebase
      ? `Rebased session ${r.session} on ${branch} (${short(r.merged)})`
      : `Merged ${branch} (${short(r.merged)}) into session ${r.session}`;
    printLines(io, [
      `${p.green(what)}: ${short(r.parent)} → ${short(r.commit!)}`,
      ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
      ...(r.leftInPlace?.length
        ? [
            'Left in place, untouched (hagent never commits them):',
            ...cappedLines(r.leftInPlace, (f) => `  ${f.path}: ${f.reason}`),
          ]
        : []),
    ]);
  }
  return 0;
}

/**
 * `hagent session update --all`: each session's outcome on one line; exit 1 when any conflicted
 * or was refused (something needs the user), 0 otherwise.
 */
async function runUpdateAll(
  argv: CommonArgs & { id?: string; rebase?: boolean },
  io: Io,
): Promise<number> {
  if (argv.id !== undefined || argv.session !== undefined)
    throw new HagentError(
      'USAGE',
      '--all updates every session: it takes no session id',
      {},
      'hagent session update --all, or hagent session update ID for one',
    );
  // Another session's worktree is not an agent's to change.
  refuseForAgent(io.env, 'hagent session update --all', io.cwd);
  const ctx = await openRepo(io.cwd);
  const { updateAllSessions, updateAllRefusal } = await import('../update/index.js');
  const r = await updateAllSessions(ctx, { rebase: !!argv.rebase, env: io.env });
  const needs = r.sessions.filter((s) => s.outcome === 'conflict' || s.outcome === 'refused');
  if (argv.json) {
    const refusal = updateAllRefusal(r);
    printJson(io, { ...r, ...(refusal ? { error: refusal.toJSON() } : {}) });
    return refusal ? 1 : 0;
  }
  const p = palette(io.color);
  if (r.sessions.length === 0) {
    printLines(io, ['No session with a target branch to update.']);
    return 0;
  }
  const width = Math.max(...r.sessions.map((s) => s.session.length));
  const style = {
    updated: p.green,
    'up-to-date': p.dim,
    conflict: p.yellow,
    refused: p.red,
  } as const;
  printLines(
    io,
    r.sessions.map((s) => {
      const branch = s.target.replace('refs/heads/', '');
      const what =
        s.outcome === 'updated'
          ? `merged ${branch} (${short(s.merged)}): ${short(s.commit)}, ${s.files!.length} file${s.files!.length === 1 ? '' : 's'}`
          : s.outcome === 'up-to-date'
            ? `already holds ${branch} (${short(s.merged)})`
            : s.outcome === 'conflict'
              ? `${s.conflicts!.length} file${s.conflicts!.length === 1 ? '' : 's'} with conflicts, left in its worktree: ${cappedList(s.conflicts!, 5)}`
              : `${s.code}: ${s.message}`;
      return `${p.bold(s.session.padEnd(width))}  ${style[s.outcome](s.outcome.padEnd(10))}  ${what}`;
    }),
  );
  if (needs.length)
    printLines(io, [
      '',
      p.yellow(`${needs.length} of ${r.sessions.length} need you:`),
      ...needs.map((s) => `  ${s.session}: ${p.dim(s.hint ?? s.message ?? '')}`),
    ]);
  return needs.length ? 1 : 0;
}
