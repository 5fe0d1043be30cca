/**
 * exec: a shell command an agent runs in its session worktree, guarded, timed out and recorded.
 * The guard decides first (relaxed only by the user's `.hagent/config.json`, never by a file in
 * the worktree); outside edits already pending are adopted first as their own commit, so the
 * command's commit holds only what it changed; then the command runs (see run.ts) and every file
 * it changed in the worktree becomes one commit marked `Hagent-Op: exec` that carries the
 * command — reviewable, and undoable with `hagent undo` like a patch.
 */
import { HagentError, toHagentError } from '../errors.js';
import { realpathSync } from 'node:fs';
import { endAgentProcess, registerAgentProcess } from '../agents/ancestry.js';
import { agentMarkerEnv } from '../agents/marker.js';
import { guardCommand, sessionGuardContext } from '../guard/index.js';
import { appendJournal } from '../journal/index.js';
import type { RepoContext, Session, ChangedFile } from '../session/index.js';
import { adoptPendingOutside, syncSession, type AdoptAs, type SyncResult } from '../sync/index.js';
import {
  journalOutsideChange,
  outsideChangeSince,
  snapshotOutside,
  type OutsideChange,
} from './outside.js';
import { runShell, type RunOutcome } from './run.js';
import { afterSandbox, envInSandbox, execSandbox, type ExecSandbox } from './sandboxed.js';

export type { Cut, RunOutcome } from './run.js';
export type { ExecSandbox } from './sandboxed.js';
export {
  journalOutsideChange,
  outsideChangeSince,
  snapshotOutside,
  type MovedRef,
  type OutsideChange,
  type OutsideSnapshot,
} from './outside.js';

/** Defaults: 120 s before the process group is killed; 64 KiB kept of each stream. */
export const DEFAULT_TIMEOUT_S = 120;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

/** Options of {@link execInSession}. */
export interface ExecOptions {
  /** Seconds before the command's process group is killed; 0 for no limit. */
  timeoutS?: number;
  /** Bytes kept of stdout and of stderr (first half and last half). */
  maxOutputBytes?: number;
  /** The caller's environment (passed to the command, and read for hagent's own settings). */
  env?: NodeJS.ProcessEnv;
}

/**
 * JSON of `hagent exec`: the {@link RunOutcome} fields with the session's. Keys in the order
 * ok, session, command, exitCode, signal, timedOut, stdout, stderr, truncated, durationMs,
 * changed, commit, adopted, skipped, outside. `ok` is true only for exit code 0 within the time;
 * `exitCode` is null when a signal ended the command (a timeout always does); `truncated` is
 * false or the sizes of the cut streams; `changed` the files the command changed in the
 * worktree, committed as `commit` (null when it changed nothing); `adopted` the commit of
 * outside edits found pending before the command ran (null when there were none); `skipped`
 * files it changed that the path policy keeps out of commits (they stay as outside edits);
 * `outside` null, or what changed outside the session while the command ran (the checkout's
 * files, untracked and ignored ones too, refs, git's own files, `.hagent/config.json`: see
 * outside.ts), also journaled as OUTSIDE_CHANGED; hagent's config and small removed files are put
 * back, the rest reported with the commands that restore it; `sandbox` whether the command ran
 * in the operating-system sandbox and what it stopped ({@link ExecSandbox}).
 */
export interface ExecResult extends RunOutcome {
  ok: boolean;
  session: string;
  command: string;
  changed: ChangedFile[];
  commit: string | null;
  adopted: string | null;
  skipped: { path: string; reason: string }[];
  outside: OutsideChange | null;
  sandbox: ExecSandbox;
}

/** The command as the subject shows it: its first line, at most 40 characters. */
function shortCommand(command: string): string {
  const line = command.trim().split('\n')[0]!.replace(/\s+/g, ' ');
  const more = line !== command.trim();
  return line.length > 40 ? `${line.slice(0, 39)}…` : more ? `${line} …` : line;
}

/**
 * The commit of an exec: its subject names the command, its body carries it whole with how it
 * ended.
 */
function adoptAsExec(command: string, end: string): AdoptAs {
  return {
    op: 'exec',
    title: `exec ${shortCommand(command)}`,
    intro: 'Files changed by a shell command run with hagent exec:',
    detail: `Command (${end}):\n${command
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}`,
    journalText: command,
    journalMessage: `the command: ${end}`,
  };
}

/**
 * Commits what a shell command changed in the session worktree as one `Hagent-Op: exec` commit
 * carrying the command — for a command that ran elsewhere (an agent's own shell tool, seen by a
 * post-tool hook). `end` says how it ended, for the commit body (e.g. `exit 0`; default `ran`).
 * Under the session lock; journaled as `exec`. Commit null when nothing changed.
 * @throws HagentError LOCKED, TARGET_MOVED, WORKTREE_BROKEN.
 */
export async function commitCommandChanges(
  ctx: RepoContext,
  session: Session,
  command: string,
  options: { env?: Readonly<Record<string, string | undefined>>; end?: string } = {},
): Promise<SyncResult> {
  return syncSession(ctx, session, options.env ?? {}, adoptAsExec(command, options.end ?? 'ran'));
}

function howItEnded(
  r: { exitCode: number | null; signal: string | null; timedOut: boolean },
  timeoutS: number,
): string {
  if (r.timedOut) return `timed out after ${timeoutS} s, killed`;
  if (r.signal) return `ended by ${r.signal}`;
  return `exit ${r.exitCode}`;
}

/**
 * Runs `command` in `session`'s worktree after the guard, and commits what it changed.
 * The command runs in the session's sandbox where one can start (src/sandbox/), else under the
 * guard alone, as the result's `sandbox` says.
 * @throws HagentError GUARD_BLOCKED (journaled; nothing ran), USAGE for a bad timeout or cap,
 *   SANDBOX_UNAVAILABLE (`"sandbox": "required"`; nothing ran), LOCKED, CONFIG_INVALID,
 *   WORKTREE_BROKEN from the session envelope.
 */
export async function execInSession(
  ctx: RepoContext,
  session: Session,
  command: string,
  options: ExecOptions = {},
): Promise<ExecResult> {
  const env = options.env ?? {};
  const timeoutS = options.timeoutS ?? DEFAULT_TIMEOUT_S;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  assertLimits(timeoutS, maxOutputBytes);
  await refuseUnlessAllowed(ctx, session, command, env);
  // Pending outside edits get their own commit first, so the exec commit holds only what the
  // command changed (the step every way in shares: sync/index.ts).
  const before = await adoptPendingOutside(ctx, session, env);
  const sandbox = await execSandbox(ctx, session, env);
  const commandEnv = envInSandbox(sandbox, commandEnvOf(session, env));
  const watch = await snapshotOutside(ctx, session);
  const run = await runShell(command, {
    cwd: session.worktree,
    env: commandEnv,
    timeoutMs: Math.round(timeoutS * 1000),
    maxOutputBytes,
    ...(sandbox.on ? { wrap: sandbox.launch.argv } : {}),
    onSpawn: registerShell(ctx, session),
  });
  const walled = await afterSandbox(ctx, session, sandbox, command, `${run.stdout}\n${run.stderr}`);
  const end = howItEnded(run, timeoutS);
  const outside = await outsideChangeSince(ctx, session, watch);
  if (outside) await journalOutsideChange(ctx, session, 'exec', outside, command);
  let after;
  try {
    after = await commitCommandChanges(ctx, session, command, { env, end });
  } catch (error) {
    // The command ran (it may have switched the worktree's branch): say so, and keep its output.
    const e = toHagentError(error);
    const outcome = outcomeOf(run);
    throw new HagentError(
      e.code,
      `the command ran (${end}) but what it changed was not committed: ${e.message}`,
      { ...e.details, exec: outcome, ...(outside ? { outside } : {}), sandbox: walled },
      'its changes stay in the worktree; ' +
        (e.hint?.replace(/^nothing was written; /, '') ?? 'fix the cause, then run hagent sync'),
      { cause: e },
    );
  }
  return {
    ok: run.exitCode === 0 && !run.timedOut,
    session: session.id,
    command,
    ...outcomeOf(run),
    changed: after.files,
    commit: after.commit,
    adopted: before?.commit ?? null,
    skipped: after.skipped,
    outside,
    sandbox: walled,
  };
}

/**
 * Records the command's shell as an agent's process while it runs, and its window after
 * (agents/ancestry.ts): what it starts cannot run the human's commands.
 */
function registerShell(ctx: RepoContext, session: Session): (pid: number | null) => void {
  let file: string | null = null;
  let repo: string | null;
  try {
    repo = realpathSync(ctx.commonDir);
  } catch {
    repo = ctx.commonDir;
  }
  return (pid) => {
    if (pid !== null) file = registerAgentProcess(pid, 'exec', session.id, repo);
    else endAgentProcess(file);
  };
}

/**
 * A timeout of seconds ≥ 0 (0: none) and an output cap of at least 2 bytes.
 * @throws HagentError USAGE naming the option.
 */
function assertLimits(timeoutS: number, maxOutputBytes: number): void {
  if (!Number.isFinite(timeoutS) || timeoutS < 0)
    throw new HagentError(
      'USAGE',
      `--timeout must be a number of seconds ≥ 0, not ${timeoutS}`,
      { option: 'timeout' },
      'e.g. --timeout 300 (0: no limit)',
    );
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 2)
    throw new HagentError(
      'USAGE',
      `--max-output must be a whole number of bytes ≥ 2, not ${maxOutputBytes}`,
      { option: 'max-output' },
      'e.g. --max-output 65536',
    );
}

/**
 * The guard's verdict on the command; a refusal is journaled before it is thrown (nothing ran).
 * @throws HagentError GUARD_BLOCKED with the rule and the command part it refused.
 */
async function refuseUnlessAllowed(
  ctx: RepoContext,
  session: Session,
  command: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const verdict = guardCommand(command, await sessionGuardContext(ctx, session, env));
  if (verdict.allowed) return;
  const error = new HagentError(
    'GUARD_BLOCKED',
    verdict.reason,
    { rule: verdict.rule, command: verdict.command },
    verdict.hint,
  );
  await appendJournal(ctx.commonDir, {
    session: session.id,
    command: 'exec',
    ok: false,
    code: error.code,
    message: error.message,
    hint: verdict.hint,
    patch: command,
  }).catch(() => undefined);
  throw error;
}

/**
 * The command's environment, marked as the session's. The folder is the worktree, and git in the
 * command finds it by itself: variables that would send git elsewhere (set by a calling git hook,
 * say) are not passed on.
 */
function commandEnvOf(session: Session, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const commandEnv: NodeJS.ProcessEnv = {
    ...env,
    HAGENT_SESSION: session.id,
    ...agentMarkerEnv(session.id),
    GIT_TERMINAL_PROMPT: '0',
    PWD: session.worktree,
  };
  for (const k of [
    'GIT_DIR',
    'GIT_WORK_TREE',
    'GIT_INDEX_FILE',
    'GIT_COMMON_DIR',
    'GIT_OBJECT_DIRECTORY',
    'GIT_ALTERNATE_OBJECT_DIRECTORIES',
    'GIT_NAMESPACE',
    'GIT_PREFIX',
  ])
    delete commandEnv[k];
  return commandEnv;
}

/**
 * How the command ended and what it printed, as the result and a failed commit's details show it.
 */
function outcomeOf(run: Awaited<ReturnType<typeof runShell>>) {
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    stdout: run.stdout,
    stderr: run.stderr,
    truncated: run.truncated,
    durationMs: Math.round(run.durationMs),
  };
}
