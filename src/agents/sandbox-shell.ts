/**
 * The sandbox for the shell of an agent wired by `hagent integrate` (no `hagent run`): its
 * pre-tool hook rewrites an allowed shell command to start inside the session's sandbox
 * (docs/sandbox.md), and its post-tool hook brings the commits the command made inside out of it
 * before recording the command's files. An agent whose whole process already runs in a sandbox
 * (`hagent run`) is left as it is.
 *
 * Parallel shell calls of one session share one prepared sandbox: the first call prepares it,
 * the others join, and the last to end settles it (a second preparation would replace the
 * private folders the first command is using).
 */
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { appendJournal } from '../journal/index.js';
import {
  denialLines,
  sandboxDenials,
  sandboxedShellCommand,
  sandboxFor,
  sandboxSettings,
  sandboxStateDir,
  settleSandbox,
  SANDBOX_ENV,
  type SandboxLaunch,
} from '../sandbox/index.js';
import type { RepoContext, Session } from '../session/index.js';
import type { AgentEvent } from './normalize.js';
import { rewriteShell, type HookAnswer } from './respond.js';

interface Bound {
  ctx: RepoContext;
  session: Session;
}

/** The prepared sandbox the session's shell calls under way share, and which calls they are. */
interface Shared {
  launch: SandboxLaunch;
  calls: string[];
  at: number;
}

/** A shared sandbox older than this is not joined (its calls' post-tool hooks never came). */
const STALE_MS = 15 * 60_000;

function sharedFile(bound: Bound): string {
  return path.join(sandboxStateDir(bound.ctx.commonDir, bound.session.id), 'hook-shell.json');
}

/** Where `hagent run` keeps the sandbox its whole agent runs in, while it runs. */
export function runSandboxFile(commonDir: string, id: string): string {
  return path.join(sandboxStateDir(commonDir, id), 'run.json');
}

/** Runs `fn` holding the session's shell-sandbox lock (a folder made exclusively), waiting up to 10 s. */
async function withLock<T>(bound: Bound, fn: () => Promise<T>): Promise<T> {
  const lock = `${sharedFile(bound)}.lock`;
  await fs.mkdir(path.dirname(lock), { recursive: true });
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const st = await fs.stat(lock).catch(() => null);
      // A lock left by a killed hook (the work under it takes milliseconds).
      if (st && Date.now() - st.mtimeMs > 30_000) await fs.rmdir(lock).catch(() => undefined);
      if (Date.now() > until) break; // go on without it rather than hang the agent
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rmdir(lock).catch(() => undefined);
  }
}

/** The key of the command in a shell tool's input (`command`, Codex's `cmd`, `script`), if a string. */
function commandField(input: unknown): string | null {
  if (!input || typeof input !== 'object') return null;
  const o = input as Record<string, unknown>;
  for (const k of ['command', 'cmd', 'script']) if (typeof o[k] === 'string') return k;
  return null;
}

/**
 * The pre-tool answer that runs the allowed shell command `event` inside the session's sandbox,
 * or null to let it run as it is: already inside one (the whole agent under `hagent run`), the
 * sandbox off, none can start here (said on stderr), or a tool input hagent cannot rewrite.
 * @throws HagentError SANDBOX_UNAVAILABLE when the config says `"sandbox": "required"` and none
 *   can start (the call is refused, nothing ran); WORKTREE_BROKEN.
 */
export async function rewriteIntoSandbox(
  event: AgentEvent,
  bound: Bound,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HookAnswer | null> {
  if (env[SANDBOX_ENV] || !event.command) return null;
  const field = commandField(event.input);
  if (!field) return null;
  const config = await loadConfig(bound.ctx, env);
  const settings = sandboxSettings(config.sandbox, env.HOME || undefined);
  const call = event.toolUseId ?? `call-${Date.now()}`;
  const launch = await withLock(bound, async () => {
    const shared = (await readJsonFile(sharedFile(bound))) as Shared | null;
    if (shared && shared.calls.length && Date.now() - shared.at < STALE_MS) {
      shared.calls.push(call);
      await writeJsonFile(sharedFile(bound), shared, { durable: false });
      return shared.launch;
    }
    const choice = await sandboxFor(
      {
        commonDir: bound.ctx.commonDir,
        session: bound.session,
        userCheckout: await mainCheckoutRoot(bound.ctx).catch(() => null),
      },
      settings,
      env,
    );
    if (!choice.on) return choice;
    await writeJsonFile(
      sharedFile(bound),
      { launch: choice.launch, calls: [call], at: Date.now() } satisfies Shared,
      { durable: false },
    );
    return choice.launch;
  });
  if ('on' in launch) {
    // Said on every call, where the agent's hook log shows it; `hagent doctor` says it too.
    return launch.configured
      ? null
      : {
          exitCode: 0,
          stdout: event.agent === 'cursor' ? '{}\n' : '',
          stderr: `hagent: ${launch.reason}; the shell guard alone checked this command (${launch.hint})\n`,
        };
  }
  return rewriteShell(
    event.agent,
    event,
    event.input as Record<string, unknown>,
    field,
    sandboxedShellCommand(launch, event.command),
  );
}

/**
 * After a shell call the pre-tool hook rewrote: the commits the command made inside move into
 * the repository (when it is the last of the session's calls under way), and the writes the
 * sandbox stopped, read from the tool's output, are journaled and returned as lines for the
 * agent. Never throws (what could not be brought out is returned too).
 */
export async function settleAfterShell(
  event: AgentEvent,
  bound: Bound,
  output: string,
): Promise<string[]> {
  const call = event.toolUseId;
  // Most shell calls ran without a sandbox of hagent's: no lock, no reads for them.
  const files = [sharedFile(bound), runSandboxFile(bound.ctx.commonDir, bound.session.id)];
  if (!files.some((f) => existsSync(f))) return [];
  const settled = await withLock(bound, async () => {
    const shared = (await readJsonFile(sharedFile(bound))) as Shared | null;
    if (!shared) {
      // The whole agent inside (hagent run): its server settles around each hook; only the
      // writes stopped are read here.
      const run = (await readJsonFile(
        runSandboxFile(bound.ctx.commonDir, bound.session.id),
      )) as SandboxLaunch | null;
      return run ? { launch: run, problems: [] as string[] } : null;
    }
    shared.calls = shared.calls.filter((c) => c !== call);
    if (shared.calls.length && call) {
      await writeJsonFile(sharedFile(bound), shared, { durable: false });
      return { launch: shared.launch, problems: [] as string[] };
    }
    await fs.rm(sharedFile(bound), { force: true });
    const r = await settleSandbox(shared.launch);
    return { launch: shared.launch, problems: r.problems };
  }).catch(() => null);
  if (!settled) return [];
  const denials = sandboxDenials(output, settled.launch);
  if (denials.length)
    await appendJournal(bound.ctx.commonDir, {
      session: bound.session.id,
      command: `hook ${event.agent} ${event.tool}`,
      ok: false,
      code: 'SANDBOX_DENIED',
      message: `the sandbox stopped ${denials.length === 1 ? 'a write' : `${denials.length} writes`}: ${denials.map((d) => d.path).join(', ')}`,
      ...(event.command ? { files: denials.map((d) => d.path) } : {}),
    }).catch(() => undefined);
  return [...denialLines(denials), ...settled.problems.map((p) => `hagent sandbox: ${p}`)];
}
