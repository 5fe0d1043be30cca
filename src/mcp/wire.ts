/**
 * The line filter in front of the SDK's stdio transport. The SDK drops a line it cannot parse or
 * validate without a word (the client waits forever) and closes the connection when one line
 * outgrows its buffer (the server exits 0). Here every line is read first: one hagent would
 * refuse is answered with a JSON-RPC error (its id when one can be read, else null) whose `data`
 * carries a stable code (MCP_REQUEST_TOO_LARGE, MCP_MALFORMED_REQUEST), and only lines the SDK
 * accepts go on to it. A line over the limit is never held whole: past the limit its bytes are
 * dropped as they come, only its beginning is kept to find its id.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResponse,
} from '@modelcontextprotocol/server';
import type { ErrorCode } from '../errors.js';

/** The config key (and environment variable) that raises {@link WireOptions.maxRequestBytes}. */
export const MAX_REQUEST_KEY = 'mcpMaxRequestBytes';

/** What {@link filterRequests} needs. */
export interface WireOptions {
  /** The largest line (one JSON-RPC message, without its newline) served, in bytes. */
  maxRequestBytes: number;
  /** Where a refused line is said (never stdout). */
  log?: (line: string) => void;
}

/** How much of an oversized line is kept to read its id. */
const HEAD_BYTES = 4096;

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

type Id = string | number | null;

/** One answer of the filter: a JSON-RPC error for the line it refused. */
interface Refusal {
  id: Id;
  rpcCode: number;
  code: ErrorCode;
  message: string;
  hint: string;
  extra?: Record<string, unknown>;
}

/**
 * Reads `input` line by line and returns the stream of the lines the SDK will accept (each with
 * its newline); every other request is answered on `output` with a JSON-RPC error and the next
 * line is read as usual. A notification (no id) that is malformed gets no answer (JSON-RPC
 * forbids one) and is said on `log`. Blank lines are passed over. Pure apart from the streams.
 */
export function filterRequests(input: Readable, output: Writable, options: WireOptions): Readable {
  const out = new PassThrough();
  const limit = options.maxRequestBytes;
  let parts: Buffer[] = [];
  let size = 0;
  /** The beginning of the line being dropped (null: no line is being dropped), and its end so far. */
  let head: Buffer | null = null;
  let tail: Buffer = Buffer.alloc(0);

  const answer = (r: Refusal): void => {
    const text = `error[${r.code}] ${r.message}`;
    options.log?.(`hagent mcp: ${text}`);
    output.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: r.id,
        error: { code: r.rpcCode, message: text, data: { code: r.code, hint: r.hint, ...r.extra } },
      })}\n`,
    );
  };

  const endLine = (last: Buffer): void => {
    if (head) {
      answer(tooLarge(head, keepEnd(tail, last), size + last.length, limit));
    } else {
      const line = Buffer.concat([...parts, last]);
      const refusal = checkLine(line.toString('utf8').replace(/\r$/, ''));
      if (refusal === null) out.write(Buffer.concat([line, Buffer.from('\n')]));
      else if (typeof refusal !== 'string') answer(refusal);
      else if (refusal) options.log?.(`hagent mcp: ${refusal}`);
    }
    parts = [];
    size = 0;
    head = null;
    tail = Buffer.alloc(0) as Buffer;
  };

  input.on('data', (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      endLine(chunk.subarray(from, nl));
      from = nl + 1;
    }
    const rest = chunk.subarray(from);
    if (rest.length === 0) return;
    if (!head && size + rest.length > limit) {
      head = Buffer.concat([...parts, rest]).subarray(0, HEAD_BYTES);
      parts = [];
    }
    if (!head) parts.push(Buffer.from(rest));
    else tail = keepEnd(tail, rest);
    size += rest.length;
  });
  input.on('end', () => {
    if (size > 0) endLine(Buffer.alloc(0));
    out.end();
  });
  input.on('error', (e) => out.destroy(e));
  return out;
}

/** The last {@link HEAD_BYTES} of `a` followed by `b`. */
function keepEnd(a: Buffer, b: Buffer): Buffer {
  const both = b.length >= HEAD_BYTES ? b : Buffer.concat([a, b]);
  return Buffer.from(both.subarray(Math.max(0, both.length - HEAD_BYTES)));
}

/** A JSON-RPC id as it is written: a string, or an integer. */
const ID = String.raw`("(?:[^"\\]|\\.){0,200}"|-?\d{1,15})`;
/** The id among the first keys of the message (after "jsonrpc" and "method")… */
const ID_FIRST = new RegExp(
  String.raw`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]{0,100}"\s*,)*\s*"id"\s*:\s*${ID}`,
);
/** …or as its last key (where the SDK's client writes it). */
const ID_LAST = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID}\s*\}\s*$`);

function tooLarge(head: Buffer, tail: Buffer, bytes: number, limit: number): Refusal {
  // The whole line was not kept: its id is read from its beginning or its end.
  const m = ID_FIRST.exec(head.toString('utf8')) ?? ID_LAST.exec(tail.toString('utf8'));
  return {
    id: m ? (JSON.parse(m[1]!) as Id) : null,
    rpcCode: INVALID_REQUEST,
    code: 'MCP_REQUEST_TOO_LARGE',
    message: `a request of ${bytes} bytes is over the limit of ${limit} bytes (${MAX_REQUEST_KEY})`,
    hint: `send smaller requests (split the patch), or raise the limit: "${MAX_REQUEST_KEY}" in .hagent/config.json or HAGENT_MCP_MAX_REQUEST_BYTES, then restart the server`,
    extra: { bytes, limit, key: MAX_REQUEST_KEY },
  };
}

/** The id to answer with: the request's own when it is one JSON-RPC allows, else null. */
function answerId(id: unknown): Id {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function malformed(id: Id, rpcCode: number, message: string): Refusal {
  return {
    id,
    rpcCode,
    code: 'MCP_MALFORMED_REQUEST',
    message,
    hint: 'send one JSON-RPC 2.0 message a line: {"jsonrpc":"2.0","id":<string or integer>,"method":"...","params":{...}}',
  };
}

/**
 * What to do with one line: null passes it to the SDK, a string drops it with that reason for
 * the log (empty for a blank line; a malformed notification, which JSON-RPC never answers), a
 * {@link Refusal} answers it.
 */
function checkLine(line: string): Refusal | string | null {
  if (line.trim() === '') return '';
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    return malformed(null, PARSE_ERROR, `the line is not JSON (${(e as Error).message})`);
  }
  if (isJSONRPCRequest(msg) || isJSONRPCNotification(msg) || isJSONRPCResponse(msg)) return null;
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
    return malformed(
      null,
      INVALID_REQUEST,
      Array.isArray(msg)
        ? 'a batch (a JSON array) is not served: send one message a line'
        : 'the message is not a JSON object',
    );
  const m = msg as Record<string, unknown>;
  const hasId = 'id' in m;
  const id = answerId(m.id);
  if (!hasId && typeof m.method === 'string')
    return `the ${m.method} notification is malformed; dropped (a notification gets no answer)`;
  if (m.jsonrpc !== '2.0')
    return malformed(id, INVALID_REQUEST, 'the message lacks "jsonrpc": "2.0"');
  if (!(typeof m.id === 'string' || Number.isSafeInteger(m.id)))
    return malformed(
      id,
      INVALID_REQUEST,
      `the id ${JSON.stringify(m.id)?.slice(0, 40)} is not a string or an integer within ±${Number.MAX_SAFE_INTEGER}`,
    );
  if (typeof m.method !== 'string')
    return malformed(id, INVALID_REQUEST, 'the request has no "method" string');
  if (
    m.params !== undefined &&
    (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))
  )
    return malformed(id, INVALID_PARAMS, `"params" of ${m.method} must be a JSON object`);
  return malformed(id, INVALID_REQUEST, `the ${m.method} request is not a valid JSON-RPC message`);
}
