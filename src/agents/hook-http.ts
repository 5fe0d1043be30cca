/**
 * Claude Code's HTTP hooks, answered by `hagent run`'s hook server (hook-server.ts) with no
 * process at all: under `hagent run claude` each hook event is a POST of the event's JSON to
 * `http://127.0.0.1:PORT/hooks/claude`, and the run handles it exactly as the hook server handles
 * a hook process's request (the same queue, {@link handleHook} with the run's environment, in
 * the folder the event names), then answers in Claude Code's HTTP form (respond.ts
 * claudeHttpReply).
 *
 * - Only the loopback address is bound, and every request must carry the run's token
 *   (`Authorization: Bearer …`, 32 random bytes): the per-run settings file that holds it is
 *   readable by this user only, so other users of the machine cannot send hook events. The
 *   agent's own processes can read it, as they can reach the hook socket: what they can send is
 *   a hook event for the run's own session, which a hook process of their own could send too
 *   (docs/agents.md, "hagent run").
 * - The event's `cwd` must be an absolute folder; a sandboxed run serves only folders inside its
 *   session worktree (HookServerOptions.walled).
 * - Claude Code treats a failed HTTP hook (no answer, a non-2xx status) as a non-blocking error:
 *   the server answers every request that carries the token with a 200 (a body it cannot read
 *   too), and a PreToolUse it cannot serve is denied with the reason, not let through unchecked
 *   (see {@link refused}).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { claudeHttpReply, type HookAnswer, type HttpHookReply } from './respond.js';

/** The path Claude Code's hooks are sent to. */
export const CLAUDE_HOOK_PATH = '/hooks/claude';

/**
 * Event bodies larger than this are refused (read to their end, answered as the event's refusal);
 * the hook socket takes as much.
 */
const BODY_MAX_BYTES = 256 << 20;

/** How much of a refused body is kept to tell its event (Claude Code names it before the tool input). */
const EVENT_PREFIX_BYTES = 64 << 10;

/** What the HTTP listener hands the hook server: one Claude Code event to handle. */
export interface HttpHookEvent {
  /** The event's JSON as Claude Code sent it (the hook's stdin for a command hook). */
  input: string;
  /** The folder the event names (`cwd`). */
  cwd: string;
}

/** A running HTTP listener. */
export interface HttpHooks {
  /** The URL Claude Code's hooks POST to. */
  url: string;
  /** The run's token (`Authorization: Bearer TOKEN`). */
  token: string;
  /** Stops accepting and waits for the connections open to close. */
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (a port the system picks) for Claude Code's HTTP hooks; each event goes to
 * `handle`, which answers as a hook process would, or with the reason it cannot. Resolves with
 * null when nothing can listen there (the run then wires command hooks).
 */
export async function listenHttpHooks(
  handle: (event: HttpHookEvent) => Promise<HookAnswer | { fallback: string }>,
): Promise<HttpHooks | null> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const server: Server = createServer((req, res) => {
    void respond(req, res, expected, handle);
  });
  server.keepAliveTimeout = 60_000;
  const port = await new Promise<number | null>((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve(a && typeof a === 'object' ? a.port : null);
    });
  });
  if (port === null) {
    server.close();
    return null;
  }
  server.on('error', () => undefined);
  return {
    url: `http://127.0.0.1:${port}${CLAUDE_HOOK_PATH}`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // The agent has exited: a connection still open after this is nobody's.
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}

/** Reads, checks and answers one request (module header). */
async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  expected: Buffer,
  handle: (event: HttpHookEvent) => Promise<HookAnswer | { fallback: string }>,
): Promise<void> {
  const send = (status: number, body: string) => {
    if (res.writableEnded) return;
    res.writeHead(status, {
      'content-type': status === 200 ? 'application/json' : 'text/plain',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const auth = Buffer.from(req.headers.authorization ?? '');
  if (auth.length !== expected.length || !timingSafeEqual(auth, expected)) {
    req.resume();
    return send(401, 'hagent: this hook server answers its own run only\n');
  }
  if (req.method !== 'POST' || req.url !== CLAUDE_HOOK_PATH) {
    req.resume();
    return send(404, `hagent: hooks are POSTed to ${CLAUDE_HOOK_PATH}\n`);
  }
  // The whole body is read, even one too large to keep (the connection stays usable), and every
  // event gets a 200: anything else would let Claude Code run a PreToolUse's call unchecked.
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (size <= BODY_MAX_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    return;
  }
  const input = Buffer.concat(chunks).toString('utf8');
  if (size > BODY_MAX_BYTES)
    return sendReply(
      send,
      refused(eventNameIn(input), `the hook event is larger than ${BODY_MAX_BYTES >> 20} MiB`),
    );
  let event: { hook_event_name?: unknown; cwd?: unknown };
  try {
    event = JSON.parse(input) as typeof event;
  } catch {
    return sendReply(send, refused(eventNameIn(input), 'the hook event is not JSON'));
  }
  const eventName = typeof event?.hook_event_name === 'string' ? event.hook_event_name : '';
  if (typeof event?.cwd !== 'string' || !path.isAbsolute(event.cwd))
    return sendReply(send, refused(eventName, 'the hook event names no absolute folder (cwd)'));
  let answer: HookAnswer | { fallback: string };
  try {
    answer = await handle({ input, cwd: event.cwd });
  } catch (e) {
    answer = { fallback: `the server failed: ${String(e)}` };
  }
  sendReply(
    send,
    'fallback' in answer ? refused(eventName, answer.fallback) : claudeHttpReply(eventName, answer),
  );
}

/** The event a body names, read from its text (one too large or not JSON); '' when none. */
function eventNameIn(text: string): string {
  return /"hook_event_name"\s*:\s*"([A-Za-z]+)"/.exec(text.slice(0, EVENT_PREFIX_BYTES))?.[1] ?? '';
}

function sendReply(send: (status: number, body: string) => void, reply: HttpHookReply): void {
  send(reply.status, reply.body);
}

/**
 * The answer to an event the server cannot handle: a PreToolUse is denied with why (never let
 * through unchecked); any other event gets a `systemMessage` (a Stop is not blocked: that would
 * keep the agent from ever stopping).
 */
function refused(eventName: string, reason: string): HttpHookReply {
  const text = `hagent could not check this call: ${reason}`;
  if (eventName === 'PreToolUse')
    return claudeHttpReply(eventName, { exitCode: 2, stdout: '', stderr: text });
  return { status: 200, body: JSON.stringify({ systemMessage: text }) };
}
