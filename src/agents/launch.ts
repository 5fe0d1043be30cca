/**
 * `hagent run`: launches an agent inside a session worktree with hagent's hooks active for this
 * run only, through the agent's own per-run mechanism where it has one: Claude Code
 * `--settings FILE`, Codex `-C DIR` and `-c hooks.<Event>=…`. Gemini CLI, Cursor and Copilot CLI
 * have none that works here (Gemini skips a system settings file below a folder others can write
 * to, such as the temp folder): their hook file is written inside the session worktree (never
 * the user's checkout or home) and kept out of the session's commits. No agent can move its folder from a hook, hence the launcher
 * (agents.md §0.1). While the agent runs, this process serves its hooks (hook-server.ts).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { writeJsonFile } from '../fsx/index.js';
import { readJournal } from '../journal/index.js';
import {
  endSession,
  hagentDir,
  readSession,
  recordSessionAgent,
  sessionStatus,
  startSession,
  type Drift,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { ownedFilesPath } from '../sync/index.js';
import { agentHookFile, claudeHooks, codexConfigArgs, type HttpHookTarget } from './config.js';
import { HOOK_SOCKET_ENV, startHookServer } from './hook-server.js';
import { RUN_HOOK_SOURCE, RUN_HOOKS_ENV } from './hook.js';
import { holdsHagentWiring } from './worktree-wiring.js';
import { endAgentProcess, registerAgentProcess } from './ancestry.js';
import { agentMarkerEnv } from './marker.js';
import {
  aroundHook,
  endRunSandbox,
  prepareRunSandbox,
  requireRunSandbox,
  sandboxedPlan,
} from './run-sandbox.js';
import { SANDBOX_GIT_VARS, settleSandbox } from '../sandbox/index.js';
import type { AgentName } from './normalize.js';

/** What `hagent run` can launch, by the name the user types. */
export const LAUNCHABLE = {
  claude: {
    agent: 'claude',
    binary: 'claude',
    env: 'HAGENT_CLAUDE_BIN',
    install: 'npm install -g @anthropic-ai/claude-code',
  },
  codex: {
    agent: 'codex',
    binary: 'codex',
    env: 'HAGENT_CODEX_BIN',
    install: 'npm install -g @openai/codex',
  },
  gemini: {
    agent: 'gemini',
    binary: 'gemini',
    env: 'HAGENT_GEMINI_BIN',
    install: 'npm install -g @google/gemini-cli',
  },
  'cursor-agent': {
    agent: 'cursor',
    binary: 'cursor-agent',
    env: 'HAGENT_CURSOR_AGENT_BIN',
    install: 'curl https://cursor.com/install -fsS | bash',
  },
  copilot: {
    agent: 'copilot',
    binary: 'copilot',
    env: 'HAGENT_COPILOT_BIN',
    install: 'npm install -g @github/copilot',
  },
} as const satisfies Record<
  string,
  { agent: AgentName; binary: string; env: string; install: string }
>;

export type LaunchName = keyof typeof LAUNCHABLE;

/** Quotes one word for a POSIX shell (agents run hook commands through one). */
export { shellQuote } from '../guard/quote.js';

/**
 * The agent's executable: `$HAGENT_<NAME>_BIN` when set, else the first `<binary>` on PATH.
 * @throws HagentError AGENT_NOT_INSTALLED with the install command as hint.
 */
export function findAgentBinary(
  name: LaunchName,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const spec = LAUNCHABLE[name];
  const override = env[spec.env];
  if (override) return override;
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, spec.binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new HagentError(
    'AGENT_NOT_INSTALLED',
    `${spec.binary} is not installed (not found on PATH)`,
    { agent: name },
    `install it with: ${spec.install} (or point ${spec.env} at the executable)`,
  );
}

/** Files hagent writes inside a worktree for an agent without a per-run mechanism; sync leaves them out. */
export const WORKTREE_HOOK_FILES: Partial<Record<AgentName, string>> = {
  gemini: '.gemini/settings.json',
  cursor: '.cursor/hooks.json',
  copilot: '.github/hooks/hagent.json',
};

/**
 * After the run: the hook file hagent put in the worktree goes again (unless the agent changed
 * it: then it stays, and sync adopts it like any other edit), with the folders it made if empty.
 */
async function removeWorktreeHookFile(
  commonDir: string,
  session: Session,
  agent: AgentName,
): Promise<void> {
  const rel = WORKTREE_HOOK_FILES[agent];
  if (!rel) return;
  const file = path.join(session.worktree, rel);
  const owned = ownedFilesPath(commonDir, session.id);
  const wrote = await fs.readFile(`${owned}.content`, 'utf8').catch(() => null);
  const now = await fs.readFile(file, 'utf8').catch(() => null);
  if (wrote !== null && now === wrote) await fs.rm(file, { force: true });
  await fs.rm(owned, { force: true });
  await fs.rm(`${owned}.content`, { force: true });
  for (
    let dir = path.dirname(file);
    dir !== session.worktree && dir.startsWith(session.worktree);
    dir = path.dirname(dir)
  ) {
    if (
      !(await fs.rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      break;
  }
}

/** The command line and environment of one agent run. */
export interface LaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Claude Code's per-run settings file (`--settings`), which {@link useHttpHooks} rewrites. */
  settingsFile?: string;
}

/** Set to `0`, `hagent run claude` wires command hooks (through the socket) instead of HTTP hooks. */
export const HTTP_HOOKS_ENV = 'HAGENT_HTTP_HOOKS';

/**
 * Makes Claude Code's per-run hooks HTTP hooks to the run's hook server (hook-http.ts) instead of
 * processes: rewrites the settings file (readable by this user only: it holds the run's token)
 * and, when the agent's environment names a web proxy, adds the loopback address to `NO_PROXY`
 * (Claude Code sends HTTP hooks through such a proxy otherwise).
 */
export async function useHttpHooks(
  plan: LaunchPlan,
  http: HttpHookTarget,
  baseEnv: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  if (!plan.settingsFile) return;
  await writeJsonFile(plan.settingsFile, { hooks: claudeHooks('', { http }) }, { mode: 0o600 });
  const env = { ...baseEnv, ...plan.env };
  if (['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((k) => env[k])) {
    for (const k of ['NO_PROXY', 'no_proxy']) {
      const list = env[k] ?? '';
      plan.env[k] = list ? `${list},127.0.0.1` : '127.0.0.1';
    }
  }
}

/**
 * Prepares the run: writes the per-run settings (under hagent's folder in the git dir, or in
 * the worktree for Cursor and Copilot) and builds the agent's argv: its own flags, then `args`.
 * `hookCommand` is how the agent starts hagent's hook (e.g. `'node' '/…/hagent.cjs' hook`).
 */
export async function prepareLaunch(
  commonDir: string,
  session: Session,
  name: LaunchName,
  binary: string,
  args: readonly string[],
  hookCommand: string,
): Promise<LaunchPlan> {
  const agent = LAUNCHABLE[name].agent;
  // Marked as the run's own: hagent hooks the repository also wires (committed project files)
  // stand aside for it, so each event is handled once (handleHook, RUN_HOOKS_ENV).
  const command = `${RUN_HOOK_SOURCE} ${hookCommand} ${agent}`;
  const runDir = path.join(hagentDir(commonDir), 'agents', session.id);
  // The marker: a hagent the agent runs refuses the human's verbs (land, approve, session end, …).
  const env: Record<string, string> = {
    HAGENT_SESSION: session.id,
    HAGENT_WORKTREE: session.worktree,
    [RUN_HOOKS_ENV]: '1',
    ...agentMarkerEnv(session.id),
  };
  switch (agent) {
    case 'claude': {
      const file = path.join(runDir, 'claude-settings.json');
      await writeJsonFile(file, { hooks: claudeHooks(command) });
      return { command: binary, args: ['--settings', file, ...args], env, settingsFile: file };
    }
    case 'codex': {
      const own = [
        '-C',
        session.worktree,
        '--dangerously-bypass-hook-trust',
        ...codexConfigArgs(command),
      ];
      const [first, ...rest] = args;
      const sub = first === 'exec' || first === 'e' ? [first, ...own, ...rest] : [...own, ...args];
      return { command: binary, args: sub, env };
    }
    case 'gemini':
    case 'cursor':
    case 'copilot': {
      const rel = WORKTREE_HOOK_FILES[agent]!;
      const file = path.join(session.worktree, rel);
      const exists = await fs.lstat(file).then(
        () => true,
        () => false,
      );
      // Already wired (the session worktree got the user's uncommitted file): those hooks act.
      if (exists && holdsHagentWiring('hooks', await fs.readFile(file, 'utf8').catch(() => ''))) {
        delete env[RUN_HOOKS_ENV];
        return { command: binary, args: [...args], env };
      }
      if (exists)
        throw new HagentError(
          'UNSUPPORTED_FILE',
          `${rel} already exists in the session worktree`,
          { path: rel },
          `add hagent's hooks to it with: hagent integrate ${agent} (inside the worktree), then start ${LAUNCHABLE[name].binary} there`,
        );
      await writeJsonFile(file, agentHookFile(agent, command));
      await writeJsonFile(ownedFilesPath(commonDir, session.id), [rel]);
      await fs.writeFile(
        `${ownedFilesPath(commonDir, session.id)}.content`,
        await fs.readFile(file, 'utf8'),
      );
      return { command: binary, args: [...args], env };
    }
  }
}

/**
 * Runs the agent in the worktree with the terminal (stdin, stdout, stderr inherited) and resolves
 * with its exit status (128 + signal number when killed). Ctrl-C goes to the agent, not hagent.
 */
export function runAgentProcess(
  plan: LaunchPlan,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(plan.command, plan.args, {
      cwd,
      stdio: 'inherit',
      env: { ...env, ...plan.env },
    });
    // The agent's processes cannot run the human's commands (ancestry.ts), marker or not.
    const registered =
      child.pid === undefined
        ? null
        : registerAgentProcess(child.pid, 'run', plan.env.HAGENT_SESSION ?? null);
    const ignore = () => undefined;
    process.on('SIGINT', ignore);
    child.on('error', (e) => {
      process.off('SIGINT', ignore);
      reject(
        new HagentError(
          'AGENT_NOT_INSTALLED',
          `${plan.command} could not be started: ${e.message}`,
          { command: plan.command },
          'check that the agent is installed and executable',
        ),
      );
    });
    child.on('close', (code, signal) => {
      process.off('SIGINT', ignore);
      endAgentProcess(registered);
      const signals: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9, SIGHUP: 1 };
      resolve(code ?? 128 + (signal ? (signals[signal] ?? 1) : 1));
    });
  });
}

/** What `hagent run` reports once the agent exits. */
export interface RunResult {
  ok: true;
  agent: LaunchName;
  session: string;
  worktree: string;
  /** The agent's exit status; hagent exits with it. */
  exitCode: number;
  /** Commits on the session branch (patches and recorded edits). */
  commits: number;
  files: { path: string; status: string }[];
  /** Attempts hagent refused during this run (journal): none of them was written. */
  blocked: { code: string; message: string }[];
  /** Changes of the user's main checkout seen after the agent's shell commands (journal OUTSIDE_CHANGED): reported, not undone. */
  outsideChanged: { message: string; hint: string }[];
  /** How the session moved without hagent when the agent exited (e.g. its worktree on another branch), or null. */
  drift: Drift | null;
  /**
   * Hook calls this run's hook server answered (hook-server.ts); the others were handled by their
   * own process (a fallback). Null when no server could be started.
   */
  hooksServed: number | null;
  /** Files the agent left that are in no commit yet. */
  outsideEdits: string[];
  /**
   * Whether the whole agent ran inside the session's operating-system sandbox (docs/sandbox.md);
   * when not, why not and what to do (said loudly at the start too).
   */
  sandbox: { on: true } | { on: false; reason: string; hint: string };
  /**
   * True when the run started the session, the agent exited non-zero and the session held no
   * work (no commit, no file left): the session was ended, its worktree and branch removed.
   */
  removed: boolean;
}

/**
 * The whole run: session (new, or `session` resumed), launch with per-run hooks, wait, summary;
 * a session the run started that is still empty when the agent exits non-zero is ended.
 * @throws HagentError AGENT_NOT_INSTALLED (before any session is made), SESSION_NOT_FOUND,
 *   and session start's codes.
 */
export async function runAgent(
  ctx: RepoContext,
  name: LaunchName,
  options: {
    name?: string;
    base?: string;
    session?: string;
    args: readonly string[];
    hookCommand: string;
    env: Readonly<Record<string, string | undefined>>;
    /** False: the agent runs without the sandbox (`--no-sandbox`). */
    sandbox?: boolean;
    /** Told once, before the agent starts, when it runs without a sandbox it could have had. */
    warn?: (text: string) => void;
    /**
     * This hagent's command line before its arguments (the running Node and the CLI's entry
     * file): with it, hagent's MCP server started inside the sandbox is served by the run from
     * outside (hook-server.ts); without it, that server runs inside, where it cannot write.
     */
    selfCommand?: readonly [string, ...string[]];
  },
): Promise<RunResult> {
  const binary = findAgentBinary(name, options.env);
  await requireRunSandbox(ctx, options.env, options.sandbox === false);
  let session: Session;
  if (options.session !== undefined) session = await readSession(ctx.commonDir, options.session);
  else {
    const started = await startSession(ctx, {
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.base !== undefined ? { base: options.base } : {}),
      env: options.env,
    });
    session = await readSession(ctx.commonDir, started.id);
  }
  // Which agent works in the session, for `hagent status` (the name the user typed: cursor-agent).
  session = await recordSessionAgent(ctx, session.id, name);
  const since = new Date().toISOString();
  const plan = await prepareLaunch(
    ctx.commonDir,
    session,
    name,
    binary,
    options.args,
    options.hookCommand,
  );
  const agent = LAUNCHABLE[name].agent;
  let walled: Awaited<ReturnType<typeof prepareRunSandbox>>;
  try {
    walled = await prepareRunSandbox(ctx, session, agent, options.env, options.sandbox === false);
  } catch (e) {
    await removeWorktreeHookFile(ctx.commonDir, session, agent);
    throw e;
  }
  if (!walled.on && !walled.configured)
    options.warn?.(
      `hagent: the agent runs WITHOUT a sandbox: ${walled.reason}. Only the shell guard checks its commands (${walled.hint}).`,
    );
  // The agent's hook processes hand their events to this process (hook-server.ts); without a
  // server (no socket could be made) each handles its own, and an inherited socket is not used.
  const launch = walled.on ? walled.launch : null;
  // Claude Code's hooks can be HTTP hooks the server answers in-process (hook-http.ts), unless
  // the sandbox cuts the network (a loopback of its own): the socket still reaches out then.
  const http =
    agent === 'claude' &&
    options.env[HTTP_HOOKS_ENV] !== '0' &&
    !launch?.argv.includes('--unshare-net')
      ? {
          http: {
            env: launch
              ? { ...options.env, ...sandboxedPlan(plan, launch, options.env).env }
              : { ...options.env, ...plan.env },
          },
        }
      : {};
  const server = await startHookServer(
    launch
      ? {
          ...http,
          around: (serve) => aroundHook(launch, serve),
          dropEnv: SANDBOX_GIT_VARS,
          // A request may come from any process inside: it gets the environment the agent
          // starts with (its socket variable aside), for its session worktree only.
          walled: {
            worktree: session.worktree,
            env: { ...options.env, ...sandboxedPlan(plan, launch, options.env).env },
          },
          // hagent's MCP server, asked for from inside, runs out here with the agent's session.
          ...(options.selfCommand
            ? {
                mcp: {
                  session: session.id,
                  cwd: session.worktree,
                  env: { ...options.env, ...plan.env },
                  command: options.selfCommand,
                  log: path.join(hagentDir(ctx.commonDir), 'agents', session.id, 'mcp.log'),
                },
              }
            : {}),
        }
      : http,
  );
  plan.env[HOOK_SOCKET_ENV] = server?.socket ?? '';
  // Should the settings not be rewritten, the command hooks they hold stay (through the socket).
  if (server?.http) await useHttpHooks(plan, server.http, options.env).catch(() => undefined);
  const started = launch ? sandboxedPlan(plan, launch, options.env) : plan;
  let exitCode: number;
  try {
    exitCode = await runAgentProcess(started, session.worktree, options.env);
  } finally {
    await server?.close();
    // The agent's last commits made inside come out before the summary reads the session.
    if (launch) {
      await settleSandbox(launch).catch(() => undefined);
      await endRunSandbox(ctx.commonDir, launch).catch(() => undefined);
    }
    await removeWorktreeHookFile(ctx.commonDir, session, agent);
    // Its token is dead with the server; the command-hook form stays (nothing secret in it).
    if (server?.http && plan.settingsFile)
      await fs.rm(plan.settingsFile, { force: true }).catch(() => undefined);
  }
  const status = await sessionStatus(ctx, session.id);
  const journal = await readJournal(ctx.commonDir, { session: session.id, failed: true });
  const owned = WORKTREE_HOOK_FILES[LAUNCHABLE[name].agent];
  const outside = status.outsideEdits.map((f) => f.path).filter((p) => p !== owned);
  // An agent that failed at once (not logged in, a bad flag) leaves an empty session nobody
  // asked to keep: a session this run started is ended as `session end` ends an empty one (which
  // itself refuses anything with work). A resumed session is never ended here.
  let removed = false;
  if (
    options.session === undefined &&
    exitCode !== 0 &&
    status.commits === 0 &&
    status.changed.length === 0 &&
    outside.length === 0 &&
    !status.interrupted &&
    !status.drift
  ) {
    removed = await endSession(ctx, session.id).then(
      () => true,
      () => false,
    );
  }
  return {
    ok: true,
    agent: name,
    session: session.id,
    worktree: session.worktree,
    exitCode,
    commits: status.commits,
    files: status.changed.map((f) => ({ path: f.path, status: f.status })),
    blocked: journal.entries
      .filter((e) => e.time >= since && e.code !== 'OUTSIDE_CHANGED')
      .map((e) => ({ code: e.code ?? 'UNKNOWN', message: e.message ?? '' })),
    outsideChanged: journal.entries
      .filter((e) => e.time >= since && e.code === 'OUTSIDE_CHANGED')
      .map((e) => ({ message: e.message ?? '', hint: e.hint ?? '' })),
    drift: status.drift,
    hooksServed: server ? server.served() : null,
    outsideEdits: outside,
    removed,
    sandbox: walled.on ? { on: true } : { on: false, reason: walled.reason, hint: walled.hint },
  };
}
