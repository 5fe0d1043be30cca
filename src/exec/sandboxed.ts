/**
 * The sandbox around one `hagent exec` (and the MCP `exec` tool): started where one can start
 * (`.hagent/config.json` `"sandbox"`, read from the user's checkout), settled after the command
 * so that hagent's commit sees the agent's own commits, and every write it stopped told to the
 * agent with the path and why, and journaled as SANDBOX_DENIED.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { runSandboxFile } from '../agents/sandbox-shell.js';
import { loadConfig } from '../config/index.js';
import { appendJournal } from '../journal/index.js';
import {
  sandboxDenials,
  sandboxedEnv,
  sandboxFor,
  sandboxSettings,
  sandboxStateDir,
  settleSandbox,
  type SandboxChoice,
} from '../sandbox/index.js';
import type { RepoContext, Session } from '../session/index.js';

/**
 * `sandbox` of exec's JSON: on, with the writes it stopped (each `code: SANDBOX_DENIED`, the
 * path, why), what moved out of it (`objects`, the session `branch`) and what did not
 * (`problems`); or off, with why and how to have one (`configured`: `"sandbox": "off"`).
 */
export type ExecSandbox =
  | {
      on: true;
      denied: { code: 'SANDBOX_DENIED'; path: string; reason: string }[];
      objects: number;
      branch: { old: string | null; new: string } | null;
      problems: string[];
    }
  | { on: false; configured: boolean; reason: string; hint: string };

/**
 * The sandbox of one command of `session`, per the repository's config. While a `hagent run` of
 * the session has its whole agent in the session's sandbox (its record is there), the command
 * gets one beside it, in `<id>/exec` (its own temp folder, object store and copy of the branch):
 * preparing the usual one would remove what is mounted in the agent's (the MCP server the run
 * serves from outside runs its `exec` here).
 * @throws HagentError SANDBOX_UNAVAILABLE (`"sandbox": "required"` and none can start),
 *   CONFIG_INVALID, WORKTREE_BROKEN.
 */
export async function execSandbox(
  ctx: RepoContext,
  session: Session,
  env: NodeJS.ProcessEnv,
): Promise<SandboxChoice> {
  const config = await loadConfig(ctx, env);
  const besideRun = existsSync(runSandboxFile(ctx.commonDir, session.id));
  return sandboxFor(
    {
      commonDir: ctx.commonDir,
      session,
      userCheckout: config.root,
      ...(besideRun
        ? { stateDir: path.join(sandboxStateDir(ctx.commonDir, session.id), 'exec') }
        : {}),
    },
    sandboxSettings(config.sandbox, env.HOME || undefined),
    env,
  );
}

/** The command's environment inside `choice`'s sandbox (as it is when there is none). */
export function envInSandbox(choice: SandboxChoice, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return choice.on ? sandboxedEnv(env, choice.launch) : env;
}

/**
 * After the command: the sandbox settled (objects, branch), the writes it stopped found in the
 * output and journaled. Never throws.
 */
export async function afterSandbox(
  ctx: RepoContext,
  session: Session,
  choice: SandboxChoice,
  command: string,
  output: string,
): Promise<ExecSandbox> {
  if (!choice.on)
    return { on: false, configured: choice.configured, reason: choice.reason, hint: choice.hint };
  const settled = await settleSandbox(choice.launch);
  const denied = sandboxDenials(output, choice.launch).map((d) => ({
    code: 'SANDBOX_DENIED' as const,
    ...d,
  }));
  if (denied.length)
    await appendJournal(ctx.commonDir, {
      session: session.id,
      command: 'exec',
      ok: false,
      code: 'SANDBOX_DENIED',
      message: denied.map((d) => `${d.path}: ${d.reason}`).join('\n'),
      hint: 'the sandbox keeps everything outside the session worktree read-only',
      files: denied.map((d) => d.path),
      patch: command,
    }).catch(() => undefined);
  return { on: true, denied, ...settled };
}
