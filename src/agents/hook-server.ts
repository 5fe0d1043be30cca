/**
 * The hook server of `hagent run`: the agent's hook processes hand their event to the `hagent run`
 * that launched the agent, over a Unix socket, instead of each loading and compiling hagent's
 * hook bundle and reading the repository cold (a hook runs twice per tool call). The launcher
 * (scripts/launcher.cjs) is the client: it sends what {@link handleHook} needs and prints the
 * answer; on any failure before a whole answer arrives it handles the hook itself, as without a
 * server. So the server is only ever a shortcut, never a second behaviour:
 *
 * - Each request runs exactly {@link handleHook}, which reads the session, the configuration and
 *   the files afresh. What a process memoises (git identity, object formats, repository
 *   handles, moved sessions) is forgotten before each request, the request's environment stands
 *   in for `process.env` and its folder for the working folder while it runs: git, the user's
 *   hooks and every reader of the environment see what they would in a hook process of its own.
 *   When the agent runs in a sandbox, any process inside can reach the socket: the environment
 *   is then the agent's own (a few per-hook variables taken from the request) and the folder must
 *   be in the session worktree (HookServerOptions.walled).
 *   Hence one request at a time (a queue); hooks of one session wait on its lock anyway.
 * - The socket lives in a fresh folder of the temp folder only this user can enter (0700), named
 *   to the agent in {@link HOOK_SOCKET_ENV}; it is removed when the run ends, on SIGTERM or
 *   SIGHUP, and on exit. One left by a killed run refuses connections (the client falls back)
 *   and is swept by the next run.
 *
 * Protocol, one exchange per connection: the client writes one JSON line
 * `{v, agent, event, input, cwd, env}`; the server answers one JSON line `{v, exitCode, stdout,
 * stderr}`, or `{v, fallback: reason}` when the client must handle the hook itself (another
 * protocol version, an unknown agent, a folder that is gone), and closes.
 *
 * hagent's MCP server started inside the run's sandbox asks for one instead (src/mcp/proxy.ts
 * is the client): one JSON line `{v: MCP_PROTOCOL, mcp: {session?, new?, name?, base?}}`. The
 * server starts the real `hagent mcp --session <the run's session>` outside the sandbox (the
 * run's own command, folder and environment for the agent: nothing of the request but the
 * options, which must name the run's session), answers `{v, mcp: "serving"}` once it has
 * started, and from then on the connection is the child's stdin and stdout, byte for byte; the
 * child's stderr is appended to the run's log file. Closing the connection kills the child, as
 * the run's end does. `{v, fallback: reason}` and close when none is started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { forgetRepoMemos } from '../git/index.js';
import { pidAlive } from '../lock/index.js';
import { forgetMovedSessions, isInside } from '../session/index.js';
import { handleHook } from './hook.js';
import { listenHttpHooks, type HttpHooks } from './hook-http.js';
import { AGENTS, type AgentName } from './normalize.js';
import type { HookAnswer } from './respond.js';

/** The variable naming the socket to the agent, and so to its hook processes. */
export const HOOK_SOCKET_ENV = 'HAGENT_HOOK_SOCKET';

/** The protocol's version: a client of another version is told to fall back. */
export const HOOK_PROTOCOL = 1;

/** The version of the MCP request (module header): a client of another is told to fall back. */
export const MCP_PROTOCOL = 1;

/** The longest socket path every supported system takes (sun_path: 108 bytes on Linux, 104 on macOS). */
const SOCKET_PATH_MAX = 103;

/** Requests larger than this are refused (the client falls back); a hook event is far smaller. */
const REQUEST_MAX_BYTES = 256 << 20;

const FOLDER_PREFIX = 'hagent-hook-';

/** A running hook server. */
export interface HookServer {
  /** The socket's path, for {@link HOOK_SOCKET_ENV}. */
  socket: string;
  /** Hook calls answered so far (not counting those told to fall back). */
  served(): number;
  /** Where Claude Code's HTTP hooks go (HookServerOptions.http), or null. */
  http: HttpHooks | null;
  /**
   * Stops accepting, waits for the requests under way, ends the MCP servers it started (and
   * waits for them), removes the socket and its folder.
   */
  close(): Promise<void>;
}

/** One request, as the client sends it. */
interface HookRequest {
  v: number;
  agent: AgentName;
  event: string | null;
  input: string;
  cwd: string;
  env: Record<string, string>;
}

/** The options of `hagent mcp` an MCP request carries (module header). */
export interface McpRequestOptions {
  session?: string;
  new?: boolean;
  name?: string;
  base?: string;
}

/** An MCP request, as the client sends it. */
interface McpRequest {
  v: number;
  mcp: McpRequestOptions;
}

/** The request in `line`, or the reason the client must handle it itself. */
function parseRequest(line: string): HookRequest | McpRequest | string {
  let r: Partial<HookRequest> & { mcp?: unknown };
  try {
    r = JSON.parse(line) as Partial<HookRequest> & { mcp?: unknown };
  } catch {
    return 'the request is not JSON';
  }
  if (!r || typeof r !== 'object') return 'the request is not a JSON object';
  if ('mcp' in r) {
    if (r.v !== MCP_PROTOCOL)
      return `MCP protocol ${String(r.v)}, this server speaks ${MCP_PROTOCOL}`;
    if (!r.mcp || typeof r.mcp !== 'object') return 'the MCP request lacks its options';
    return { v: r.v, mcp: r.mcp as McpRequestOptions };
  }
  if (r.v !== HOOK_PROTOCOL) return `protocol ${String(r.v)}, this server speaks ${HOOK_PROTOCOL}`;
  if (!AGENTS.includes(r.agent as AgentName)) return `unknown agent ${JSON.stringify(r.agent)}`;
  if (typeof r.input !== 'string' || typeof r.cwd !== 'string' || !path.isAbsolute(r.cwd))
    return 'the request lacks its input or folder';
  if (r.event !== null && typeof r.event !== 'string') return 'the event is not a string';
  if (!r.env || typeof r.env !== 'object') return 'the request lacks its environment';
  for (const v of Object.values(r.env))
    if (typeof v !== 'string') return 'the environment holds a value that is not a string';
  return r as HookRequest;
}

/**
 * Makes `env` this process's environment and `cwd` its working folder until the returned
 * function puts back the ones it had. The real environment is changed (not `process.env`
 * replaced by a plain object), so what reads it natively (TZ for dates, HOME) sees it too.
 * @throws the error of process.chdir when `cwd` is gone (nothing changed then).
 */
function enter(env: Record<string, string>, cwd: string): () => void {
  const savedCwd = process.cwd();
  const savedEnv = { ...process.env } as Record<string, string>;
  process.chdir(cwd);
  const become = (next: Record<string, string>) => {
    for (const k of Object.keys(process.env)) if (!Object.hasOwn(next, k)) delete process.env[k];
    for (const [k, v] of Object.entries(next)) if (process.env[k] !== v) process.env[k] = v;
  };
  become(env);
  return () => {
    become(savedEnv);
    try {
      process.chdir(savedCwd);
    } catch {
      // the run's own folder is gone: nothing reads it (commands below commands/ take paths)
    }
  };
}

/**
 * Handles one request as a hook process of its own would (module header). The socket variable
 * is left out of the environment: a hagent the handler starts (a user hook's) runs in-process.
 */
async function serve(
  request: HookRequest,
  options: HookServerOptions,
): Promise<HookAnswer | { fallback: string }> {
  const env = requestEnv(request, options.walled);
  delete env[HOOK_SOCKET_ENV];
  for (const k of options.dropEnv ?? []) delete env[k];
  if (options.walled && !isInside(options.walled.worktree, request.cwd))
    return { fallback: `${request.cwd} is outside the run's session worktree` };
  let leave: () => void;
  try {
    leave = enter(env, request.cwd);
  } catch (e) {
    // The error's code only: its message would name the run's own folder too.
    const code = (e as NodeJS.ErrnoException).code;
    return { fallback: `cannot enter ${request.cwd}${code ? ` (${code})` : ''}` };
  }
  try {
    forgetRepoMemos();
    forgetMovedSessions();
    return await handleHook(request.agent, request.event ?? undefined, request.input, {
      cwd: request.cwd,
      env,
    });
  } finally {
    leave();
  }
}

/**
 * The variables a hook of its own may set for itself (the hook command's prefix, the commit
 * identity and dates): the only ones a sandboxed run takes from a request.
 */
const PER_HOOK_VARS = new Set([
  'HAGENT_HOOK_SOURCE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
]);

/**
 * The environment a request runs with. Unwalled, the request's own (the agent's hook process
 * could run anything itself anyway). Walled, the one the run gave its agent with only
 * {@link PER_HOOK_VARS} taken from the request: a process inside the sandbox that reaches the
 * socket must not choose the `PATH`, `GIT_*` or `NODE_OPTIONS` of what runs out here.
 */
function requestEnv(request: HookRequest, walled: WalledRun | undefined): Record<string, string> {
  if (!walled) return { ...request.env };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(walled.env)) if (v !== undefined) env[k] = v;
  for (const k of PER_HOOK_VARS) {
    const v = request.env[k];
    if (v !== undefined) env[k] = v;
    else delete env[k];
  }
  return env;
}

/**
 * Removes the socket folders of runs that were killed (their pid, in the folder's name, is gone),
 * of this user only. Best effort.
 */
function sweepStaleFolders(tmp: string): void {
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = /^hagent-hook-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const dir = path.join(tmp, name);
    try {
      const st = statSync(dir);
      if (st.isDirectory() && (uid === undefined || st.uid === uid))
        rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/** How a run's server handles requests beyond {@link handleHook}. */
export interface HookServerOptions {
  /** Runs around each request (the run's sandbox settles before and follows after). */
  around?: <T>(serve: () => Promise<T>) => Promise<T>;
  /** Variables of the agent's environment its hooks must not see (the sandbox's git store). */
  dropEnv?: readonly string[];
  /** Serve MCP requests (module header) this way; without it they are told to fall back. */
  mcp?: McpServing;
  /**
   * The agent runs in a sandbox: a request is served only for a folder inside its session
   * worktree, with the environment the run gave the agent (see {@link requestEnv}).
   */
  walled?: WalledRun;
  /**
   * Answer Claude Code's HTTP hooks too (hook-http.ts), each run in this environment (the one
   * the run gives its agent: an HTTP hook carries none of its own).
   */
  http?: { env: Readonly<Record<string, string | undefined>> };
}

/** What a sandboxed run trusts instead of its requests (HookServerOptions.walled). */
export interface WalledRun {
  /** The run's session worktree. */
  worktree: string;
  /** The environment the run gave its agent. */
  env: Readonly<Record<string, string | undefined>>;
}

/** How the run starts hagent's MCP server for its agent, outside the sandbox. */
export interface McpServing {
  /** The run's session: the only one the server binds (`--session`). */
  session: string;
  /** The server's working folder: the session worktree. */
  cwd: string;
  /** The environment the run gave its agent ({@link HOOK_SOCKET_ENV} and `dropEnv` are left out). */
  env: Readonly<Record<string, string | undefined>>;
  /** This hagent's command line before its arguments: the running Node and the CLI's entry file. */
  command: readonly [string, ...string[]];
  /** The file the servers' stderr is appended to (their log lines); none: dropped. */
  log?: string;
}

/** Why `mcp` cannot be served as asked (the run serves its own session only), or null. */
function mcpRefusal(mcp: McpRequestOptions, serving: McpServing): string | null {
  if (mcp.new || mcp.name !== undefined || mcp.base !== undefined)
    return `the run serves its own session ${serving.session} only (no --new, --name, --base)`;
  if (mcp.session !== undefined && mcp.session !== serving.session)
    return `the run serves its own session ${serving.session}, not ${String(mcp.session)}`;
  return null;
}

/**
 * Starts the MCP server of `serving` for one connection and pipes them together (module header);
 * `children` holds it while it lives. The child is killed when the connection closes.
 */
function serveMcpConnection(
  conn: Socket,
  serving: McpServing,
  options: HookServerOptions,
  children: Set<ChildProcess>,
): void {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(serving.env)) if (v !== undefined) env[k] = v;
  delete env[HOOK_SOCKET_ENV];
  for (const k of options.dropEnv ?? []) delete env[k];
  const [command, ...args] = serving.command;
  let child: ChildProcess;
  try {
    child = spawn(command, [...args, 'mcp', '--session', serving.session], {
      cwd: serving.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (e) {
    return writeAnswer(conn, { fallback: `cannot start hagent mcp: ${(e as Error).message}` });
  }
  children.add(child);
  let started = false;
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  };
  child.on('error', (e) => {
    children.delete(child);
    if (!started) writeAnswer(conn, { fallback: `cannot start hagent mcp: ${e.message}` });
    else conn.destroy();
  });
  child.on('exit', () => children.delete(child));
  child.stdin!.on('error', () => undefined);
  if (serving.log) {
    try {
      mkdirSync(path.dirname(serving.log), { recursive: true });
      const log = createWriteStream(serving.log, { flags: 'a' });
      log.on('error', () => undefined);
      child.stderr!.pipe(log);
    } catch {
      child.stderr!.resume();
    }
  } else child.stderr!.resume();
  child.on('spawn', () => {
    started = true;
    if (conn.destroyed) return kill();
    conn.write(`${JSON.stringify({ v: MCP_PROTOCOL, mcp: 'serving' })}\n`);
    conn.pipe(child.stdin!);
    child.stdout!.pipe(conn);
  });
  conn.on('close', kill);
}

/**
 * Starts the hook server of one `hagent run` (module header): a socket in a fresh 0700 folder
 * under the temp folder. Resolves with null when no socket can be made there (a temp path too
 * long for a socket, a folder that cannot be written): the hooks then run in-process, as before.
 */
export async function startHookServer(options: HookServerOptions = {}): Promise<HookServer | null> {
  const tmp = os.tmpdir();
  sweepStaleFolders(tmp);
  let dir: string;
  try {
    dir = mkdtempSync(path.join(tmp, `${FOLDER_PREFIX}${process.pid}-`));
  } catch {
    return null;
  }
  const socket = path.join(dir, 's');
  const removeFolder = () => rmSync(dir, { recursive: true, force: true });
  if (Buffer.byteLength(socket) > SOCKET_PATH_MAX) {
    removeFolder();
    return null;
  }
  let queue: Promise<unknown> = Promise.resolve();
  let closing = false;
  let served = 0;
  const open = new Set<Socket>();
  const children = new Set<ChildProcess>();
  /** Runs `request` after those before it (module header), counting the ones answered. */
  const enqueue = (request: HookRequest): Promise<HookAnswer | { fallback: string }> => {
    const run = queue.then(() =>
      options.around ? options.around(() => serve(request, options)) : serve(request, options),
    );
    queue = run.catch(() => undefined);
    return run.then((a) => {
      if (!('fallback' in a)) served++;
      return a;
    });
  };
  const server: Server = createServer((conn) => {
    open.add(conn);
    conn.on('close', () => open.delete(conn));
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const answer = (body: { fallback: string }) => {
      done = true;
      writeAnswer(conn, body);
    };
    conn.on('error', () => conn.destroy());
    conn.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > REQUEST_MAX_BYTES) return answer({ fallback: 'the request is too large' });
      const nl = chunk.indexOf(10);
      if (nl < 0) return void chunks.push(chunk);
      chunks.push(chunk.subarray(0, nl));
      done = true;
      const request = parseRequest(Buffer.concat(chunks).toString('utf8'));
      if (typeof request === 'string') return answer({ fallback: request });
      if (closing) return answer({ fallback: 'the run is ending' });
      if ('mcp' in request) {
        if (!options.mcp) return answer({ fallback: 'this run serves no MCP server' });
        const refused = mcpRefusal(request.mcp, options.mcp);
        if (refused) return answer({ fallback: refused });
        // The rest of the connection is the server's: bytes after the request line go to it.
        conn.pause();
        const rest = chunk.subarray(nl + 1);
        if (rest.length) conn.unshift(rest);
        return serveMcpConnection(conn, options.mcp, options, children);
      }
      enqueue(request).then(
        (a) => writeAnswer(conn, a),
        (e: unknown) => writeAnswer(conn, { fallback: `the server failed: ${String(e)}` }),
      );
    });
  });
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(socket, () => resolve(true));
  });
  if (!ok) {
    removeFolder();
    return null;
  }
  server.on('error', () => undefined);
  const httpEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.http?.env ?? {})) if (v !== undefined) httpEnv[k] = v;
  // The run's own hook (RUN_HOOK_SOURCE), as the command form says in its prefix.
  httpEnv.HAGENT_HOOK_SOURCE = 'run';
  const http = options.http
    ? await listenHttpHooks((event) =>
        closing
          ? Promise.resolve({ fallback: 'the run is ending' })
          : enqueue({
              v: HOOK_PROTOCOL,
              agent: 'claude',
              event: null,
              input: event.input,
              cwd: event.cwd,
              env: httpEnv,
            }),
      )
    : null;
  // A run ended by a signal removes its folder and its MCP servers, then dies of the signal as
  // it did before.
  const onExit = () => {
    for (const child of children) child.kill('SIGKILL');
    removeFolder();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    detach();
    process.kill(process.pid, signal);
  };
  const detach = () => {
    process.off('exit', onExit);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  };
  process.on('exit', onExit);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  return {
    socket,
    served: () => served,
    http,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const httpClosed = http?.close();
      await queue;
      // Requests under way are answered; a client that never sent a whole request is let go,
      // and an MCP server's connection closes, which kills the server (awaited: the run reads
      // the session next).
      const exited = [...children].map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.once('error', () => resolve());
            // SIGKILL follows SIGTERM after 3 s; a child that still has not gone is let be.
            setTimeout(resolve, 5000).unref();
          }),
      );
      for (const conn of open) conn.destroy();
      await Promise.all(exited);
      await closed;
      await httpClosed;
      removeFolder();
      detach();
    },
  };
}

/** Sends `answer` and closes; a client gone meanwhile is no error (it fell back or was killed). */
function writeAnswer(conn: Socket, answer: HookAnswer | { fallback: string }): void {
  if (conn.destroyed) return;
  const body =
    'fallback' in answer
      ? { fallback: answer.fallback }
      : { exitCode: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
  conn.end(`${JSON.stringify({ v: HOOK_PROTOCOL, ...body })}\n`);
}
