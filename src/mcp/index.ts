/**
 * mcp: hagent as an MCP server on stdio, bound to one session (`hagent mcp`). Owns the tool
 * definitions (tools.ts), their zod schemas (schemas.ts), the `read` tool (read.ts) and what a
 * long-lived server keeps warm (binding.ts). It calls the library face of the other folders
 * only, and writes nothing to stdout itself: stdout carries the protocol.
 */
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { splitLargeIndex } from '../git/index.js';
import { withSessionLock } from '../lock/index.js';
import { openRepo, resolveSession, startSession } from '../session/index.js';
import { SessionBinding } from './binding.js';
import { createServer } from './tools.js';
import { filterRequests } from './wire.js';

export { createServer } from './tools.js';
export { SessionBinding } from './binding.js';
export * as schemas from './schemas.js';

/** Options of {@link serveMcp}: the session to serve (`session`), or a new one (`new`, with `name` and `base`). */
export interface McpOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** hagent's version, reported to the client. */
  version: string;
  session?: string;
  new?: boolean;
  name?: string;
  base?: string;
  /** Where to say which session is served (never stdout). */
  log?: (line: string) => void;
}

/**
 * Binds a session — the one named, a new one, or the one `hagent apply` would pick (the worktree
 * around `cwd`, else the only session) — and serves the MCP tools on stdin/stdout until the
 * client closes stdin. Both protocol eras are served (a 2025-era `initialize` opening and the
 * current one), as the SDK's `serveStdio` negotiates them.
 * @returns once serving has started; the process then lives as long as the connection.
 * @throws HagentError NOT_A_GIT_REPO, SESSION_NOT_FOUND, NOT_IN_SESSION, SESSION_AMBIGUOUS, and
 *   with `new` the codes of session start — all before anything is served.
 */
export async function serveMcp(
  options: McpOptions,
): Promise<{ session: string; worktree: string }> {
  const ctx = await openRepo(options.cwd);
  const session = options.new
    ? await startSession(ctx, {
        ...(options.name ? { name: options.name } : {}),
        ...(options.base ? { base: options.base } : {}),
        env: options.env,
      })
    : await resolveSession(ctx, options.session);
  // The session index rewritten whole on every apply was the one step that grew with the
  // repository: split once, each apply then rewrites only what differs from the shared index.
  // Under the session lock, as every writer of the session's index; skipped if it is held long.
  await withSessionLock(
    ctx.commonDir,
    session.id,
    { command: 'mcp (split index)' },
    { timeoutMs: 10_000 },
    () => splitLargeIndex(session.worktree),
  ).catch(() => false);
  const binding = new SessionBinding(ctx, session.id, options.env);
  // Every line is read by the filter first: a malformed or oversized request is answered there
  // with a JSON-RPC error, and the SDK sees only messages it accepts (whole lines up to the limit).
  const maxRequestBytes = (await binding.config()).runtime.mcpMaxRequestBytes;
  const requests = filterRequests(process.stdin, process.stdout, {
    maxRequestBytes,
    ...(options.log ? { log: options.log } : {}),
  });
  const transport = new StdioServerTransport(requests, process.stdout, {
    maxBufferSize: maxRequestBytes + 64 * 1024,
  });
  const handle = serveStdio(() => createServer(binding, options.version), { transport });
  requests.once('end', () => {
    binding.close();
    void handle.close();
  });
  options.log?.(`hagent mcp: serving session ${session.id} (worktree ${session.worktree})`);
  return { session: session.id, worktree: session.worktree };
}
