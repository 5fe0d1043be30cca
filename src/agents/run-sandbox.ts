/**
 * `hagent run`'s sandbox: the whole agent process starts inside the session's sandbox
 * (docs/sandbox.md), so its own shell, Write and Edit tools are walled in as `hagent exec` is; its
 * hooks still gate and record, answered by the run's hook server outside the sandbox.
 *
 * What the agent needs beyond a command: its home folder's state (sessions, history), writable
 * with its hook and settings files kept read-only on top (agentHomePaths); the network, always
 * (the agent talks to its model; `"network": false` applies to the commands of `hagent exec`).
 */
import { promises as fs } from 'node:fs';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { HagentError } from '../errors.js';
import { writeJsonFile } from '../fsx/index.js';
import {
  agentHomePaths,
  mirrorBranch,
  sandboxedEnv,
  sandboxFor,
  sandboxSettings,
  probeSandbox,
  settleSandbox,
  withReadOnly,
  type SandboxLaunch,
} from '../sandbox/index.js';
import type { RepoContext, Session } from '../session/index.js';
import type { LaunchPlan } from './launch.js';
import type { AgentName } from './normalize.js';
import { runSandboxFile } from './sandbox-shell.js';

/** Whether the run's agent is inside a sandbox, and why not when it is not. */
export type RunSandbox =
  | { on: true; launch: SandboxLaunch }
  | { on: false; reason: string; hint: string; configured: boolean };

/**
 * Prepares the sandbox the whole agent of a run starts in, per the repository's config (read
 * from the user's checkout) and `disabled` (`hagent run --no-sandbox`).
 * @throws HagentError SANDBOX_UNAVAILABLE when the config requires a sandbox and none can start
 *   (before the agent starts); WORKTREE_BROKEN.
 */
export async function prepareRunSandbox(
  ctx: RepoContext,
  session: Session,
  agent: AgentName,
  env: Readonly<Record<string, string | undefined>>,
  disabled: boolean,
): Promise<RunSandbox> {
  if (disabled)
    return {
      on: false,
      configured: true,
      reason: 'sandbox off for this run (--no-sandbox): the shell guard alone',
      hint: 'run without --no-sandbox to wall the agent in',
    };
  const config = await loadConfig(ctx, env);
  const settings = { ...sandboxSettings(config.sandbox, env.HOME || undefined), network: true };
  const home = agentHomePaths(agent, env);
  // A folder bound writable must exist (bwrap skips an absent one, and the home folder around
  // it is read-only): the agent's own folders are made now, as the agent would make them.
  for (const dir of home.folders) await fs.mkdir(dir, { recursive: true }).catch(() => undefined);
  for (const file of home.files)
    await fs.writeFile(file, '{}\n', { flag: 'wx' }).catch(() => undefined);
  const choice = await sandboxFor(
    {
      commonDir: ctx.commonDir,
      session,
      userCheckout: await mainCheckoutRoot(ctx).catch(() => null),
      extraWritable: [...home.folders, ...home.files],
    },
    settings,
    env,
  );
  if (!choice.on) return choice;
  const launch = withReadOnly(choice.launch, home.readOnly);
  await writeJsonFile(runSandboxFile(ctx.commonDir, session.id), launch, { durable: false });
  return { on: true, launch };
}

/**
 * Before a run starts its session: refuses when the config requires a sandbox and none can
 * start here, so no empty session is left behind.
 * @throws HagentError SANDBOX_UNAVAILABLE.
 */
export async function requireRunSandbox(
  ctx: RepoContext,
  env: Readonly<Record<string, string | undefined>>,
  disabled: boolean,
): Promise<void> {
  if (disabled) return;
  const config = await loadConfig(ctx, env);
  const settings = sandboxSettings(config.sandbox, env.HOME || undefined);
  if (settings.mode !== 'required') return;
  const probe = probeSandbox(env);
  if (!probe.available)
    throw new HagentError(
      'SANDBOX_UNAVAILABLE',
      `${probe.reason}; .hagent/config.json says "sandbox": "required", so the agent was not started`,
      { reason: probe.reason },
      probe.hint,
    );
}

/** `plan` started inside `launch`: bwrap first, the sandbox's variables set. Pure. */
export function sandboxedPlan(
  plan: LaunchPlan,
  launch: SandboxLaunch,
  env: Readonly<Record<string, string | undefined>>,
): LaunchPlan {
  const inside = sandboxedEnv({ ...env, ...plan.env }, launch);
  const added: Record<string, string> = { ...plan.env };
  for (const [k, v] of Object.entries(inside)) if (v !== undefined && env[k] !== v) added[k] = v;
  return {
    command: launch.argv[0]!,
    args: [...launch.argv.slice(1), plan.command, ...plan.args],
    env: added,
  };
}

/**
 * Around each hook the run's server answers: the agent's own commits made inside come out
 * first (so the hook sees them), and after it the sandbox's copy of the branch follows what
 * hagent moved. `serve` runs the hook. Problems of the settling are returned with the answer's
 * stderr (the hook log shows them).
 */
export async function aroundHook<T>(launch: SandboxLaunch, serve: () => Promise<T>): Promise<T> {
  await settleSandbox(launch).catch(() => undefined);
  try {
    return await serve();
  } finally {
    await mirrorBranch(launch).catch(() => undefined);
  }
}

/** After the run: the record of its sandbox goes. */
export async function endRunSandbox(commonDir: string, launch: SandboxLaunch): Promise<void> {
  await fs.rm(runSandboxFile(commonDir, launch.sessionId), { force: true });
}
