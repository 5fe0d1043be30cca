/**
 * `hagent mcp` inside the sandbox of a `hagent run`: the sandbox keeps hagent's records in the
 * git folder read-only, so a server started there cannot apply anything. It asks the run (whose
 * hook server listens on {@link HOOK_SOCKET_ENV}, outside the sandbox) for a server instead and
 * becomes a byte proxy: its stdin to the socket, the socket to its stdout, until either side
 * closes. The protocol is in agents/hook-server.ts. Loaded by the CLI (commands/mcp.ts): it
 * imports nothing of the server itself.
 */
import { connect, type Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { HOOK_SOCKET_ENV, MCP_PROTOCOL, type McpRequestOptions } from '../agents/hook-server.js';
import { sandboxOfThisProcess } from '../agents/marker.js';

/** How long to wait for the run's socket to accept, then for its answer, before serving here. */
const CONNECT_MS = 2000;
const ANSWER_MS = 15_000;

/** The answer line is far shorter: more without a newline is no answer. */
const ANSWER_MAX_BYTES = 64 * 1024;

/**
 * The run's socket to ask for an MCP server: {@link HOOK_SOCKET_ENV} when it is set and this
 * process runs inside a sandbox of hagent's (`sandboxOfThisProcess`, read from the mount table,
 * which a process inside cannot change); else null (serve here, as outside any run). Never throws.
 */
export function mcpProxySocket(env: Readonly<Record<string, string | undefined>>): string | null {
  const socket = env[HOOK_SOCKET_ENV];
  if (!socket) return null;
  return sandboxOfThisProcess() !== null ? socket : null;
}

/** What {@link proxyMcp} did: served through the run, or not (why), with nothing read or written. */
export type ProxyOutcome = { served: true } | { served: false; reason: string };

/**
 * Asks the run's server at `socket` for an MCP server with `options` (the run serves its own
 * session only) and, once it says it serves, pipes `input` to it and its output to `output`
 * until either side closes; resolves `{served: true}` then. Resolves `{served: false, reason}`
 * when no server was started — the socket missing or refusing, no connection within 2 s, no
 * answer within 15 s, an answer that does not parse, the server's `{fallback}` — having read
 * nothing of `input` and written nothing to `output`, so the caller serves in-process. Never
 * throws, never waits longer than those limits before the proxying starts.
 */
export function proxyMcp(
  socket: string,
  options: McpRequestOptions,
  io: { input: Readable; output: Writable },
  limits: { connectMs?: number; answerMs?: number } = {},
): Promise<ProxyOutcome> {
  return new Promise((resolve) => {
    const conn = connect(socket);
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve({ served: false, reason });
    };
    let timer = setTimeout(
      () => fail('the run did not accept the connection'),
      limits.connectMs ?? CONNECT_MS,
    );
    conn.on('error', (e) => fail(`the run's socket: ${e.message}`));
    conn.on('close', () => fail('the run closed the connection without an answer'));
    conn.on('connect', () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail('the run did not answer'), limits.answerMs ?? ANSWER_MS);
      conn.write(`${JSON.stringify({ v: MCP_PROTOCOL, mcp: options })}\n`);
    });
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(10);
      size += chunk.length;
      if (nl < 0) {
        chunks.push(chunk);
        if (size > ANSWER_MAX_BYTES) fail('the run answered too long a line');
        return;
      }
      chunks.push(chunk.subarray(0, nl));
      let answer: { v?: unknown; mcp?: unknown; fallback?: unknown } | null;
      try {
        answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof answer;
      } catch {
        answer = null;
      }
      if (!answer || answer.v !== MCP_PROTOCOL || answer.mcp !== 'serving')
        return fail(
          typeof answer?.fallback === 'string'
            ? answer.fallback
            : 'the run answered what this hagent does not read',
        );
      settled = true;
      clearTimeout(timer);
      conn.off('data', onData);
      pipeThrough(conn, chunk.subarray(nl + 1), io).then(() => resolve({ served: true }));
    };
    conn.on('data', onData);
  });
}

/** Pipes `io.input` to `conn` and `conn` (after `first`) to `io.output` until `conn` closes. */
function pipeThrough(
  conn: Socket,
  first: Buffer,
  io: { input: Readable; output: Writable },
): Promise<void> {
  return new Promise((resolve) => {
    conn.pause();
    if (first.length) io.output.write(first);
    // stdout is never ended (Node's own stream); what is written is flushed before the end.
    conn.pipe(io.output, { end: false });
    io.input.pipe(conn);
    io.output.on('error', () => conn.destroy());
    conn.on('close', () => {
      io.input.unpipe(conn);
      // Nothing more is read: a client still holding stdin open does not keep this process.
      io.input.destroy();
      if (io.output.destroyed) resolve();
      else io.output.write('', () => resolve());
    });
  });
}
