/**
 * guard: decides whether a shell command an agent wants to run may run in its session worktree.
 *
 * The command is parsed with a real shell parser (unbash) and walked whole (see walk.ts); every
 * command line it would run is checked by the verb rules (rules.ts names them). Inside the session
 * worktree discards are allowed — every edit there is a hagent commit — so what is refused is what
 * reaches outside it (deletions, writes, git pointed elsewhere, pushes) or destroys hagent's safety
 * net (its branches and refs, the reflog, unreachable objects, worktrees, stash entries), and what
 * is the human's (hagent's review --approve, land, session end, integrate, and dropping the agent
 * marker that makes hagent itself refuse them: hagent.ts). A word the guard cannot resolve where
 * a dangerous command reads it is refused (fail closed).
 *
 * What no text guard can see, and this one does not claim to: aliases and functions defined in the
 * user's shell start-up files, the contents of scripts the command runs (`./build.sh`, `make`,
 * `npm test`), and what a program does by itself. The session worktree and hagent's commits are the
 * safety net for those.
 *
 * PURE apart from reading the file system to resolve symlinks and to tell scratch folders from
 * checkouts: no process is spawned, nothing is written. Synchronous; tens of microseconds per command.
 */
import os from 'node:os';
import { makeFrame } from './paths.js';
import { GUARD_RULE_NAMES, GUARD_RULES, type GuardRule } from './rules.js';
import { Blocked, Walker } from './walk.js';

export { GUARD_RULES, GUARD_RULE_NAMES, GUARD_HINTS, type GuardRule } from './rules.js';

export interface GuardContext {
  /** Absolute path of the session worktree: the only place writes and discards are allowed. */
  worktree: string;
  /** The user's home folder (default os.homedir()). */
  home?: string;
  /** Short names of branches hagent protects besides hagent/*: the session's target, e.g. ['main']. */
  protectedBranches?: readonly string[];
  /** Relaxations from .hagent/config.json (e.g. allow git push); never from inside a session. */
  allow?: readonly string[];
  /** The user's main checkout: named in refusals of what reaches it, never a scratch repository. */
  checkout?: string;
  /** The repository's git common folder: named in refusals, never a scratch repository. */
  gitDir?: string;
}

export type GuardVerdict =
  | { allowed: true }
  | {
      allowed: false;
      code: 'GUARD_BLOCKED';
      rule: string;
      reason: string;
      hint: string;
      command: string;
    };

/**
 * Decides whether a shell command string may run in the session worktree.
 *
 * The command is judged as run from the worktree's root folder. From a sub-folder that is
 * conservative (a relative path that stays inside from the root stays inside from below it);
 * to judge it exactly, pass `cd 'SUBFOLDER' && COMMAND`: the guard follows `cd`. `ctx.allow` holds rule names
 * (see {@link GUARD_RULES}) the repository relaxed; unknown names are ignored here (the config
 * schema rejects them). A refusal names the `rule`, a one-line `reason`, a `hint` the agent can
 * follow, and `command`: the part of the input that was refused (a nested command is named as
 * it would run). Never throws.
 */
export function guardCommand(command: string, ctx: GuardContext): GuardVerdict {
  const walker = new Walker({
    frame: makeFrame(ctx.worktree, ctx.home ?? os.homedir(), {
      ...(ctx.checkout ? { checkout: ctx.checkout } : {}),
      ...(ctx.gitDir ? { gitDir: ctx.gitDir } : {}),
    }),
    protectedBranches: ctx.protectedBranches ?? [],
    allow: new Set(ctx.allow ?? []),
  });
  try {
    walker.source(command, { cwd: walker.session.frame.worktree, vars: new Map() }, 0);
    return { allowed: true };
  } catch (error) {
    if (error instanceof Blocked)
      return {
        allowed: false,
        code: 'GUARD_BLOCKED',
        rule: error.rule,
        reason: error.reason,
        hint: error.hint,
        command: error.command || command,
      };
    // A bug in the walk must not let a command through: refuse, naming it.
    const rule: GuardRule = 'unresolved';
    if (walker.session.allow.has(rule)) return { allowed: true };
    return {
      allowed: false,
      code: 'GUARD_BLOCKED',
      rule,
      reason: `${GUARD_RULES[rule]}: the guard failed on it (${(error as Error)?.message ?? String(error)})`,
      hint: 'simplify the command, or report it as a hagent bug',
      command,
    };
  }
}

/** True when `name` is a rule of the guard (for the config schema). */
export function isGuardRule(name: string): name is GuardRule {
  return (GUARD_RULE_NAMES as readonly string[]).includes(name);
}

export { sessionGuardContext } from './session.js';
export { shellQuote } from './quote.js';
