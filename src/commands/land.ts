/**
 * `hagent land`: the approved changes onto the target branch.
 */
import { refuseForAgent } from '../agents/marker.js';
import { landSession, undoLand, type LandResult, type LandUndoResult } from '../land/index.js';
import {
  approvedSessions,
  currentTarget,
  forgetTrain,
  landTrain,
  predictTrain,
  readTrain,
  type TrainPrediction,
  type TrainResult,
} from '../land/train.js';
import { undoTrain, type TrainUndoResult } from '../land/undo.js';
import { gateSession } from '../land/gate-session.js';
import { gateCommandLine } from '../gate/index.js';
import { HagentError } from '../errors.js';
import { hasFallbackIdentity, readRef } from '../git/index.js';
import {
  approveCommand,
  listSessions,
  openRepo,
  readSession,
  resolveSession,
  type RepoContext,
  type Session,
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
import type { CommonArgs } from './shared.js';

export async function runLand(
  argv: CommonArgs & {
    sessions?: string[];
    all?: boolean;
    dryRun?: boolean;
    gate?: boolean;
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
  const named = argv.sessions ?? [];
  const clash = argv.undo
    ? '--undo'
    : argv.all
      ? '--all'
      : argv.session !== undefined
        ? '--session'
        : null;
  if (named.length && clash)
    throw new HagentError(
      'USAGE',
      `name the sessions or give ${clash}, not both`,
      { sessions: named },
      clash === '--undo'
        ? "hagent land --undo takes back the last train; --undo --session ID one session's land"
        : `e.g. hagent land ${named.join(' ')}`,
    );
  const ctx = await openRepo(io.cwd);
  if (argv.undo) return runLandUndo(ctx, argv, io);
  const options = {
    mode: argv.merge ? ('merge' as const) : ('squash' as const),
    ...(argv.message ? { message: argv.message } : {}),
    yes: !!argv.yes,
    allowDenied: !!argv.allowDenied,
    noVerify: argv.verify === false,
    gate: argv.gate !== false,
    env: io.env,
  };
  if (named.length > 1 || argv.all) {
    const sessions = await trainSessions(ctx, named, !!argv.all);
    if (argv.dryRun) return printPrediction(await predictTrain(ctx, sessions, io.env), argv, io);
    return printTrain(ctx, await landTrain(ctx, sessions, options), argv, io);
  }
  const session = await resolveSession(ctx, named[0] ?? argv.session);
  if (argv.dryRun) return printPrediction(await predictTrain(ctx, [session], io.env), argv, io);
  const r = await landSession(ctx, session, options);
  await warnFallbackIdentity(ctx, r);
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  printLines(io, landLines(r, palette(io.color)));
  return 0;
}

/**
 * The sessions of a train: those named (in that order), or with `--all` the approved, unlanded
 * sessions onto the branch here, in the order of their approvals.
 * @throws HagentError SESSION_NOT_FOUND; USAGE (`--all` on no branch, or none approved).
 */
async function trainSessions(ctx: RepoContext, ids: string[], all: boolean): Promise<Session[]> {
  if (!all) return Promise.all(ids.map((id) => readSession(ctx.commonDir, id)));
  const target = await currentTarget(ctx);
  if (!target)
    throw new HagentError(
      'USAGE',
      '--all lands onto the branch checked out here, and there is none (detached HEAD, or not in a worktree)',
      {},
      'run it in your checkout of the branch, or name the sessions: hagent land s1 s2',
    );
  const sessions = await approvedSessions(ctx, target);
  if (sessions.length === 0)
    throw new HagentError(
      'NOTHING_TO_LAND',
      `no approved session has anything left to land on ${target.replace('refs/heads/', '')}`,
      { target },
      'approve sessions first (hagent review --session ID --approve); hagent session list shows them',
    );
  return sessions;
}

/** Adds the "no identity" warning to a land made under hagent's fallback identity. */
async function warnFallbackIdentity(ctx: RepoContext, r: LandResult): Promise<void> {
  if (await hasFallbackIdentity(ctx.cwd, r.commit))
    r.warnings.push(
      `git has no identity configured: the land commit ${short(r.commit)} is authored "hagent <hagent@localhost>"; set yours (git config --global user.name "Your Name" and git config --global user.email you@example.com), then hagent land --undo and hagent land to land it under your name`,
    );
}

/** The text lines of one land. */
function landLines(r: LandResult, p: ReturnType<typeof palette>): string[] {
  return [
    `${p.green('Landed')} session ${r.session} on ${r.target.replace('refs/heads/', '')} (${r.mode}): ${short(r.previous)} → ${short(r.commit)}`,
    ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
    r.updatedWorktree
      ? p.dim(
          `updated ${r.files.length} file${r.files.length === 1 ? '' : 's'} in ${r.updatedWorktree}`,
        )
      : p.dim('the target branch is not checked out anywhere; only the ref moved'),
    ...(r.gate
      ? [
          p.dim(
            r.gate.skipped
              ? `gate (${gateCommandLine(r.gate.command)}) skipped: --no-gate`
              : `gate (${gateCommandLine(r.gate.command)}) passed on tree ${short(r.gate.tree)}${r.gate.reused ? ' (an earlier run on the same tree)' : r.gate.durationMs !== null ? ` in ${(r.gate.durationMs / 1000).toFixed(1)} s` : ''}`,
          ),
        ]
      : []),
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
  ];
}

/** Prints a train's result; exit 0 when every session landed, 1 when it stopped. */
async function printTrain(
  ctx: RepoContext,
  r: TrainResult,
  argv: CommonArgs,
  io: Io,
): Promise<number> {
  for (const l of r.landed) await warnFallbackIdentity(ctx, l);
  const stop = r.stopped
    ? new HagentError(
        r.stopped.code as never,
        `the train stopped at session ${r.stopped.session}: ${r.stopped.message}`,
        r.stopped.details,
        r.stopped.hint,
      )
    : null;
  if (argv.json) {
    // A stop is a refusal: `error` as every refusal has it, beside what landed.
    printJson(io, stop ? { ...r, error: stop.toJSON() } : r);
    return r.ok ? 0 : 1;
  }
  const p = palette(io.color);
  const branch = r.target.replace('refs/heads/', '');
  printLines(io, [
    ...r.landed.flatMap((l) => landLines(l, p)),
    ...r.skipped.map((k) => p.dim(`skipped ${k.session}: ${k.message}`)),
  ]);
  if (stop) {
    printError(io, stop, false);
    if (r.notTried.length)
      io.stderr.write(`${p.dim(`not tried: ${r.notTried.join(' ')}`)}
`);
  }
  printLines(io, [
    `${r.ok ? p.green('Train landed') : p.yellow('Train stopped')}: ${r.landed.length} of ${r.landed.length + (r.stopped ? 1 : 0) + r.notTried.length} session${r.landed.length + (r.stopped ? 1 : 0) + r.notTried.length === 1 ? '' : 's'} on ${branch}${r.landed.length ? `; take ${r.landed.length === 1 ? 'it' : 'them all'} back with: hagent land --undo` : ''}`,
  ]);
  return r.ok ? 0 : 1;
}

/** Prints a predicted land or train (`--dry-run`); exit 0 when it would land whole, 1 otherwise. */
function printPrediction(r: TrainPrediction, argv: CommonArgs, io: Io): number {
  const code = r.wouldStopAt ? 1 : 0;
  if (argv.json) {
    printJson(io, r);
    return code;
  }
  const p = palette(io.color);
  const lines = [
    `${p.bold('Dry run')}: nothing written; onto ${r.target.replace('refs/heads/', '')}`,
  ];
  for (const step of r.steps) {
    const gate = step.gate ? p.dim(` (gate ${step.gate} on this tree before)`) : '';
    if (step.outcome === 'clean')
      lines.push(
        `  ${p.green('clean')}     ${step.session}: ${step.files.length} file${step.files.length === 1 ? '' : 's'}${gate}`,
      );
    else if (step.outcome === 'conflict')
      lines.push(`  ${p.red('conflict')}  ${step.session}: ${cappedList(step.conflicts, 5)}`);
    else
      lines.push(
        `  ${p.yellow(step.outcome === 'nothing' ? 'nothing' : 'refused')}   ${step.session}: ${step.code ?? ''} ${step.message ?? ''}`.trimEnd(),
      );
  }
  lines.push(
    r.wouldStopAt
      ? p.yellow(
          `would land ${r.wouldLand.length ? r.wouldLand.join(' ') : 'nothing'}, then stop at ${r.wouldStopAt}`,
        )
      : p.green(`would land ${r.wouldLand.join(' ') || 'nothing'}`),
  );
  printLines(io, lines);
  return code;
}

/**
 * `hagent land --undo` (and `hagent undo --land`): without `--session`, the last train onto the
 * branch here when the branch still ends at it (the whole train, one transaction); else the land
 * of the named session, or of the session whose land is on top of the branch.
 */
export async function runLandUndo(ctx: RepoContext, argv: CommonArgs, io: Io): Promise<number> {
  if (argv.session === undefined) {
    const target = await currentTarget(ctx);
    if (target) {
      const train = await readTrain(ctx.commonDir, target);
      const tip = await readRef(ctx.cwd, target);
      const trainTip = train?.lands[train.lands.length - 1];
      if (train && trainTip && tip === trainTip.commit) {
        const r = await undoTrain(ctx, train, io.env);
        await forgetTrain(ctx.commonDir, target);
        return printTrainUndo(r, argv, io);
      }
      const landedHere = (await listSessions(ctx.commonDir)).filter(
        (s) => s.target === target && s.lands.length > 0,
      );
      const lastLand = (s: Session) => s.lands[s.lands.length - 1]!;
      const onTop = landedHere.filter((s) => lastLand(s).commit === tip);
      if (onTop.length === 1)
        return printLandUndo(await undoLand(ctx, onTop[0]!, io.env), argv, io);
      // Nothing of hagent's at the tip (the user committed on top): the last train, or the
      // newest land, is the one meant; its undo refuses, naming what is on top.
      const newest = landedHere.sort((a, b) => lastLand(b).at.localeCompare(lastLand(a).at))[0];
      if (train && trainTip && newest && lastLand(newest).commit === trainTip.commit)
        return printTrainUndo(await undoTrain(ctx, train, io.env), argv, io);
      if (newest) return printLandUndo(await undoLand(ctx, newest, io.env), argv, io);
    }
    const all = await listSessions(ctx.commonDir);
    if (all.length > 1 && all.every((s) => s.lands.length === 0))
      throw new HagentError(
        'NOTHING_TO_LAND',
        'no session has landed: there is no land to take back',
        {},
        'hagent land --undo takes back a land or a train; hagent session list shows what each session holds',
      );
  }
  const session = await resolveSession(ctx, argv.session);
  return printLandUndo(await undoLand(ctx, session, io.env), argv, io);
}

/** Prints the undo of a whole train. */
function printTrainUndo(r: TrainUndoResult, argv: CommonArgs, io: Io): number {
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  printLines(io, [
    `${p.green('Took back')} the train of ${r.sessions.length} session${r.sessions.length === 1 ? '' : 's'} (${r.sessions.join(' ')}) from ${r.target.replace('refs/heads/', '')}: ${short(r.undone[r.undone.length - 1])} → ${short(r.restored)}`,
    ...cappedLines(
      r.files,
      (f) =>
        `  ${f.status} ${f.path}${r.untouched.includes(f.path) ? p.yellow('  (changed since the land: left as it is)') : ''}`,
    ),
    p.dim(
      `the sessions are not landed any more; land them again with: hagent land ${r.sessions.join(' ')}`,
    ),
  ]);
  return 0;
}

/** `hagent gate [ID]`: the gate on the session's predicted land; exit 1 when it fails. */
export async function runGate(
  argv: CommonArgs & { id?: string; rerun?: boolean },
  io: Io,
): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.id ?? argv.session);
  const { result, error } = await gateSession(ctx, session, io.env, { rerun: !!argv.rerun });
  if (argv.json) {
    printJson(io, error ? { ...result, error: error.toJSON() } : result);
    return result.ok ? 0 : 1;
  }
  const p = palette(io.color);
  if (error) {
    printError(io, error, false);
    return 1;
  }
  printLines(io, [
    `${p.green('Gate passed')} (${gateCommandLine(result.command)}) on the tree session ${session.id} would land: ${short(result.tree)}${result.reused ? ' (an earlier run on the same tree; --rerun runs it again)' : ` in ${(result.durationMs / 1000).toFixed(1)} s`}`,
    p.dim(`ran in ${result.worktree}`),
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
      `the session is not landed any more; land it again with: hagent land --session ${r.session}`,
    ),
  ]);
  return 0;
}
