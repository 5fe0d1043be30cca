/**
 * user-hooks: the repository owner's `pre-apply` and `post-apply` programs (design.md "Where things live": git-hook style, executable, JSON on stdin, non-zero exit vetoes
 * with its stderr as the reason).
 *
 * The hooks folder is `<repo top>/.hagent/hooks` of the user's main checkout, never a session
 * worktree: an agent must not be able to rewrite the checks that judge it. This module runs a
 * hook; it writes no file. It imports only node built-ins and errors.ts.
 *
 * Contract for a hook (also in templates/hooks/*):
 * - it runs only if the file exists, is a regular file (or a symlink to one) and is executable;
 * - it is spawned directly (argv `[path]`, no shell), so it needs a `#!` line;
 * - stdin: one JSON document (for pre-apply: session, base, head, ops, files, counts, patch);
 * - env: the caller's environment plus `HAGENT_SESSION`, `HAGENT_WORKTREE`, `HAGENT_HOOK`;
 * - cwd: the session worktree (`HAGENT_WORKTREE`) when given;
 * - exit 0 accepts; any other exit, a signal or the timeout (default 30 s) rejects (pre-apply);
 * - on timeout the hook's whole process group gets SIGTERM, then SIGKILL after a short grace.
 */
import { spawn } from 'node:child_process';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';

/** The hooks hagent knows. */
export type HookName = 'pre-apply' | 'post-apply';

/** Default hook timeout in ms. */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
/** Bytes kept of each of stdout and stderr; the rest is dropped and marked. */
export const HOOK_OUTPUT_CAP_BYTES = 64 * 1024;
/** Grace between SIGTERM and SIGKILL of a timed-out hook's process group, in ms. */
const KILL_GRACE_MS = 500;
/** After the hook exits, how long to wait for its output pipes to end, in ms. */
const PIPE_DRAIN_MS = 200;

/**
 * What running a hook gave. `ran` is false when there is no executable hook (then `exitCode` is
 * null and the rest empty). `exitCode` is null when the hook was ended by a signal (including our
 * timeout kill) or could not be started. `stdout`/`stderr` are UTF-8, each capped at
 * {@link HOOK_OUTPUT_CAP_BYTES} (a cut is marked `…[truncated]`). `durationMs` is wall time in ms.
 */
export interface HookResult {
  ran: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The signal that ended the hook, if any. */
  signal?: string | null;
  /** Why the hook could not be started (spawn error), if that happened. */
  spawnError?: string;
}

/** True when `file` is a regular file (symlinks followed) with an execute bit for us. */
async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const st = await fs.stat(file);
    if (!st.isFile()) return false;
    await fs.access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Collects a stream's bytes up to `cap`, counting the rest. */
function capture(stream: NodeJS.ReadableStream | null, cap: number): () => string {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  stream?.on('data', (d: Buffer) => {
    const room = cap - kept;
    if (room > 0) {
      const part = d.length > room ? d.subarray(0, room) : d;
      chunks.push(part);
      kept += part.length;
    }
    dropped += Math.max(0, d.length - Math.max(0, room));
  });
  return () =>
    Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n…[truncated ${dropped} bytes]` : '');
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/**
 * Runs the user hook `<hooksDir>/<name>` if it exists and is executable: spawned directly (no
 * shell) in its own process group, `input` as JSON on stdin, `env` merged over `process.env`
 * (plus `HAGENT_HOOK=<name>`), cwd = `env.HAGENT_WORKTREE` when given (else `hooksDir`). On
 * timeout the whole process group (the hook and anything it started) gets SIGTERM, then SIGKILL
 * after 500 ms. Never throws for the hook's own failure: the result says what happened.
 * @param hooksDir absolute `<repo top>/.hagent/hooks` of the main checkout (never a worktree).
 * @param name `pre-apply` or `post-apply`.
 * @param input any JSON-serialisable value (the patch summary).
 * @param env extra environment, e.g. `{HAGENT_SESSION, HAGENT_WORKTREE}`.
 * @param options `timeoutMs`: limit in ms (default 30000).
 * @returns {@link HookResult}; `ran: false` when there is no executable hook.
 * @example const r = await runUserHook(path.join(top, '.hagent/hooks'), 'pre-apply', summary, { HAGENT_SESSION: id, HAGENT_WORKTREE: wt }, {}); assertPreApplyAccepted(r);
 */
export async function runUserHook(
  hooksDir: string,
  name: HookName,
  input: unknown,
  env: Record<string, string>,
  options: { timeoutMs?: number } = {},
): Promise<HookResult> {
  const file = path.join(hooksDir, name);
  if (!(await isExecutableFile(file)))
    return { ran: false, exitCode: null, stdout: '', stderr: '', timedOut: false, durationMs: 0 };
  const timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const started = performance.now();
  const stdinText = `${JSON.stringify(input ?? null)}\n`;
  return new Promise<HookResult>((resolve) => {
    const child = spawn(file, [], {
      cwd: env.HAGENT_WORKTREE ?? hooksDir,
      env: { ...process.env, ...env, HAGENT_HOOK: name },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own process group, so a timeout can end the hook and its children
      windowsHide: true,
    });
    const stdout = capture(child.stdout, HOOK_OUTPUT_CAP_BYTES);
    const stderr = capture(child.stderr, HOOK_OUTPUT_CAP_BYTES);
    let timedOut = false;
    let spawnError: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      if (child.pid === undefined) return;
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
    }, timeoutMs);
    child.stdin.on('error', () => {
      /* a hook may exit without reading stdin */
    });
    child.stdin.end(stdinText);
    child.on('error', (e) => {
      spawnError = e.message;
      finish(null, null); // no 'exit' follows a failed spawn
    });
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (timedOut && child.pid !== undefined) killGroup(child.pid, 'SIGKILL'); // leftovers that ignored SIGTERM
      child.stdout.destroy();
      child.stderr.destroy();
      const result: HookResult = {
        ran: true,
        exitCode: code,
        stdout: stdout(),
        stderr: stderr(),
        timedOut,
        durationMs: performance.now() - started,
        signal,
      };
      if (spawnError !== undefined) result.spawnError = spawnError;
      resolve(result);
    };
    // 'close' comes once the hook exited and its pipes ended. A background process the hook
    // left behind may keep the pipes open: after the hook's own exit, wait at most
    // PIPE_DRAIN_MS for them, then stop reading (the leftover is not killed: the hook exited).
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      setTimeout(() => finish(code, signal), PIPE_DRAIN_MS);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/**
 * Turns a pre-apply result into a veto. Passes when the hook did not run or exited 0 in time.
 * @param result what {@link runUserHook} returned for `pre-apply`.
 * @throws HagentError HOOK_REJECTED when the hook exited non-zero, was killed by a signal, timed
 *   out or could not start; `details` = `{hook: 'pre-apply', exitCode, timedOut, signal}`, the hint
 *   is the hook's stderr (trimmed, at most 2000 characters), or a default when it printed nothing.
 *   Rule: design.md "non-zero exit vetoes with its stderr as the reason".
 */
export function assertPreApplyAccepted(result: HookResult): void {
  if (!result.ran) return;
  if (result.exitCode === 0 && !result.timedOut) return;
  const why = result.timedOut
    ? `timed out after ${Math.round(result.durationMs)} ms`
    : result.spawnError !== undefined
      ? `could not start: ${result.spawnError}`
      : result.exitCode === null
        ? `was ended by ${result.signal ?? 'a signal'}`
        : `exited with status ${result.exitCode}`;
  const said = result.stderr.trim();
  const hint = said
    ? said.length > 2000
      ? `${said.slice(0, 2000)}…`
      : said
    : result.timedOut
      ? 'the pre-apply hook took too long; make it faster or raise its timeout in .hagent/config.json'
      : "the repository's .hagent/hooks/pre-apply refused this patch without saying why (it printed nothing on stderr); read the hook to see what it checks";
  throw new HagentError(
    'HOOK_REJECTED',
    `pre-apply hook ${why}: the patch was not applied`,
    {
      hook: 'pre-apply',
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      signal: result.signal ?? null,
    },
    hint,
  );
}
