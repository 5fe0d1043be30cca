/**
 * The shell gate of the pre-tool hook: the guard decides whether a command may run in the
 * session worktree. Kept behind this one function so the hook does not depend on how the
 * guard is built.
 */

/** The guard's verdict on one command. */
export type ShellVerdict = { allowed: true } | { allowed: false; code: 'GUARD_BLOCKED'; rule: string; reason: string; hint: string; command: string };

/** Decides on `command` run inside `ctx.worktree` (synchronous, no effects). */
export function guardShell(command: string, ctx: { worktree: string; home?: string | undefined }): ShellVerdict {
  void command;
  void ctx;
  return { allowed: true };
}
