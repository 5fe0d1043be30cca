/**
 * sandbox: the operating-system wall behind the shell guard. A command an agent runs starts
 * inside bubblewrap with the whole file system read-only except its session's worktree, a temp
 * folder of its own, the caches, and of the git folder only what the session's own commits need
 * (launch.ts says how). The guard reads command text and teaches; the sandbox holds whatever the
 * text hid (scripts, Makefiles, copied binaries, computed paths).
 *
 * Use: {@link sandboxFor} once per command (null: none, with why), run `[...launch.argv,
 * program, ...args]` with {@link sandboxedEnv}, then {@link settleSandbox} before reading the
 * session, and {@link sandboxDenials} on the output to tell the agent what was stopped and why.
 */
import { HagentError } from '../errors.js';
import { prepareSandbox, SANDBOX_GIT_CONFIG, type SandboxLaunch } from './launch.js';
import { probeSandbox } from './probe.js';
import type { SandboxSettings } from './settings.js';

export { BWRAP_BASE, probeSandbox, type SandboxProbe } from './probe.js';
export {
  DEFAULT_CACHES,
  expandHome,
  sandboxSettings,
  type SandboxConfig,
  type SandboxMode,
  type SandboxSettings,
} from './settings.js';
export {
  prepareSandbox,
  sandboxStateDir,
  type SandboxLaunch,
  type SandboxTarget,
} from './launch.js';
export { settleSandbox, type SettleResult } from './settle.js';
export { denialLines, sandboxDenials, whyReadOnly, type SandboxDenial } from './explain.js';
export {
  agentHomePaths,
  mirrorBranch,
  SANDBOX_ENV,
  SANDBOX_GIT_VARS,
  sandboxedShellCommand,
  withReadOnly,
} from './agent.js';

/** Whether a command runs in a sandbox, and why not when it does not. */
export type SandboxChoice =
  | { on: true; launch: SandboxLaunch }
  | { on: false; reason: string; hint: string; configured: boolean };

/**
 * The sandbox of one command of `session`, per `settings`: prepared when the mode is `auto` or
 * `required` and one can start here; `{on: false}` with why when the mode is `off`
 * (`configured`) or none can start in `auto` mode (the caller says so once, loudly).
 * @throws HagentError SANDBOX_UNAVAILABLE in `required` mode when none can start;
 *   WORKTREE_BROKEN from {@link prepareSandbox}.
 */
export async function sandboxFor(
  target: {
    commonDir: string;
    session: { id: string; worktree: string };
    userCheckout?: string | null;
    extraWritable?: readonly string[];
    stateDir?: string;
  },
  settings: SandboxSettings,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SandboxChoice> {
  const status = sandboxStatus(settings, env);
  if (!status.on) {
    if (status.required)
      throw new HagentError(
        'SANDBOX_UNAVAILABLE',
        `${status.reason}; .hagent/config.json says "sandbox": "required", so nothing ran`,
        { reason: status.reason },
        status.hint,
      );
    return { on: false, reason: status.reason, hint: status.hint, configured: status.configured };
  }
  return { on: true, launch: await prepareSandbox({ ...target, settings, bwrap: status.bwrap }) };
}

/**
 * The environment of a command in `launch`'s sandbox: `base` with the sandbox's variables
 * (TMPDIR, git's object store), and git's `gc.auto=0`/`maintenance.auto=false` added after any
 * `GIT_CONFIG_COUNT` settings `base` already has. Pure.
 */
export function sandboxedEnv(base: NodeJS.ProcessEnv, launch: SandboxLaunch): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...launch.env };
  const n = Number(base.GIT_CONFIG_COUNT ?? '0') || 0;
  const extra = SANDBOX_GIT_CONFIG;
  extra.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${n + i}`] = k;
    env[`GIT_CONFIG_VALUE_${n + i}`] = v;
  });
  env.GIT_CONFIG_COUNT = String(n + extra.length);
  return env;
}

/** Whether commands would run in a sandbox here, for `hagent doctor` and the MCP `status`. */
export type SandboxStatus =
  | { on: true; bwrap: string; network: boolean; writable: string[] }
  | { on: false; configured: boolean; required: boolean; reason: string; hint: string };

/**
 * Whether the session's commands run in a sandbox, per `settings`, without preparing one (one
 * probe, cached per process). Never throws.
 */
export function sandboxStatus(
  settings: SandboxSettings,
  env: Readonly<Record<string, string | undefined>>,
): SandboxStatus {
  if (settings.mode === 'off')
    return {
      on: false,
      configured: true,
      required: false,
      reason: 'sandbox off (.hagent/config.json "sandbox": "off"): the shell guard alone',
      hint: 'remove "sandbox": "off" from .hagent/config.json to wall the agent’s shell in',
    };
  const probe = probeSandbox(env);
  if (!probe.available)
    return {
      on: false,
      configured: false,
      required: settings.mode === 'required',
      reason: probe.reason,
      hint: probe.hint,
    };
  return {
    on: true,
    bwrap: probe.bwrap,
    network: settings.network,
    writable: settings.writable,
  };
}
