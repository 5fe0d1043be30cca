/**
 * A scripted model server on 127.0.0.1 for driving the real agent CLIs with no network. It
 * speaks the Anthropic Messages API (`POST /v1/messages`, streamed server-sent events) for
 * Claude Code, the OpenAI Responses API (`POST /v1/responses`, streamed) for Codex and the
 * Gemini API (`POST /v1beta/models/M:streamGenerateContent?alt=sse`) for Gemini CLI, answers
 * each turn of the agent loop with the next scripted step (one or more tool calls, or a final
 * text), and records the tool results the agent sends back, by tool-call id.
 * The step is derived from the request itself (how many tool calls the conversation already
 * holds), so retries and side requests (titles, summaries) never advance the script.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call of a step. `input` is the tool's JSON input; a string is sent as a freeform (custom) tool input (Codex apply_patch). */
export interface ScriptedCall {
  id: string;
  name: string;
  input: Record<string, unknown> | string;
  /** Responses API only: the namespace of a namespaced tool (Codex offers an MCP server's tools as namespace `mcp__<server>`). */
  namespace?: string;
}

/** One model turn: tool calls (several run in parallel), or the final answer. */
export type ScriptStep = { calls: ScriptedCall[] } | { text: string };

/**
 * A step, or a step built from the agent's working folder as its request names it (Claude Code:
 * "Primary working directory: …" in the system prompt; Codex: `<cwd>…</cwd>` in its environment
 * context), so a script can name absolute paths in a worktree it did not create.
 */
export type Step = ScriptStep | ((cwd: string) => ScriptStep);

/** A tool result the agent sent back. */
export interface ToolResult {
  id: string;
  text: string;
  isError: boolean;
}

export interface ModelServer {
  url: string;
  port: number;
  /** Every request body, in order (parsed JSON). */
  requests: { path: string; body: any }[];
  /** Tool results by call id (the latest seen). */
  results: Map<string, ToolResult>;
  close(): Promise<void>;
}

const flat = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) =>
        typeof c === 'string' ? c : typeof c?.text === 'string' ? c.text : flat(c?.content),
      )
      .join('');
  return '';
};

/** The step answering a conversation that already holds `seen` tool calls; past the script, a final text. */
function stepFor(script: readonly Step[], seen: number, cwd: string): ScriptStep {
  let before = 0;
  for (const step of script) {
    const s = typeof step === 'function' ? step(cwd) : step;
    if (before === seen) return s;
    before += 'calls' in s ? s.calls.length : 0;
  }
  return { text: 'Done.' };
}

/** The working folder a request names (see {@link Step}); '' when it names none. */
function requestCwd(body: any): string {
  const text = JSON.stringify(body);
  const m =
    /Primary working directory: ([^\n\\"]+)/.exec(text) ??
    /<cwd>([^<]+)<\/cwd>/.exec(text) ??
    /Workspace Directories:\*\*\\n +- ([^\n\\"]+)/.exec(text);
  return m ? m[1]!.trim() : '';
}

function sse(res: http.ServerResponse, events: { event: string; data: unknown }[]): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'close',
  });
  for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

let counter = 0;

function anthropicAnswer(res: http.ServerResponse, body: any, step: ScriptStep): void {
  const id = `msg_${++counter}`;
  const model = body.model ?? 'claude-test';
  const usage = {
    input_tokens: 10,
    output_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  type Block =
    { type: 'tool_use'; id: string; name: string; input: unknown } | { type: 'text'; text: string };
  const blocks: Block[] =
    'calls' in step
      ? step.calls.map((c) => ({
          type: 'tool_use' as const,
          id: c.id,
          name: c.name,
          input: c.input,
        }))
      : [{ type: 'text', text: step.text }];
  const stop = 'calls' in step ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  const events: { event: string; data: unknown }[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    },
  ];
  blocks.forEach((b, index) => {
    if (b.type === 'tool_use') {
      events.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        },
      });
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
        },
      });
    } else {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 10 },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  sse(res, events);
}

function responsesAnswer(res: http.ServerResponse, step: ScriptStep): void {
  const id = `resp_${++counter}`;
  const items =
    'calls' in step
      ? step.calls.map((c) =>
          typeof c.input === 'string'
            ? {
                type: 'custom_tool_call',
                id: `ctc_${c.id}`,
                call_id: c.id,
                name: c.name,
                input: c.input,
                status: 'completed',
              }
            : {
                type: 'function_call',
                id: `fc_${c.id}`,
                call_id: c.id,
                ...(c.namespace ? { namespace: c.namespace } : {}),
                name: c.name,
                arguments: JSON.stringify(c.input),
                status: 'completed',
              },
        )
      : [
          {
            type: 'message',
            id: `m_${id}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: step.text, annotations: [] }],
          },
        ];
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 20,
  };
  const events: { event: string; data: unknown }[] = [
    {
      event: 'response.created',
      data: {
        type: 'response.created',
        response: { id, object: 'response', status: 'in_progress', output: [] },
      },
    },
  ];
  items.forEach((item, output_index) => {
    events.push({
      event: 'response.output_item.added',
      data: { type: 'response.output_item.added', output_index, item },
    });
    events.push({
      event: 'response.output_item.done',
      data: { type: 'response.output_item.done', output_index, item },
    });
  });
  events.push({
    event: 'response.completed',
    data: {
      type: 'response.completed',
      response: { id, object: 'response', status: 'completed', output: items, usage },
    },
  });
  sse(res, events);
}

function geminiAnswer(res: http.ServerResponse, stream: boolean, step: ScriptStep): void {
  const parts =
    'calls' in step
      ? step.calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.input } }))
      : [{ text: step.text }];
  const chunk = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
  };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunk));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
  res.end(`data: ${JSON.stringify(chunk)}\n\n`);
}

/**
 * Starts the server with `script`. Claude Code's main loop is told apart from its side requests
 * by its tool list (it offers tools; titles and summaries do not).
 */
export async function startModelServer(script: readonly Step[]): Promise<ModelServer> {
  const requests: { path: string; body: any }[] = [];
  const results = new Map<string, ToolResult>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        body = {};
      }
      const url = (req.url ?? '').split('?')[0]!;
      requests.push({ path: url, body });
      if (req.method === 'POST' && url.endsWith('/messages')) {
        const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
        let seen = 0;
        for (const m of messages) {
          if (!Array.isArray(m.content)) continue;
          for (const b of m.content) {
            if (b?.type === 'tool_use' && m.role === 'assistant') seen++;
            if (b?.type === 'tool_result')
              results.set(b.tool_use_id, {
                id: b.tool_use_id,
                text: flat(b.content),
                isError: !!b.is_error,
              });
          }
        }
        const main = Array.isArray(body.tools) && body.tools.length > 0;
        anthropicAnswer(res, body, main ? stepFor(script, seen, requestCwd(body)) : { text: 'ok' });
        return;
      }
      if (req.method === 'POST' && url.endsWith('/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      if (req.method === 'POST' && url.endsWith('/responses')) {
        const input: any[] = Array.isArray(body.input) ? body.input : [];
        let seen = 0;
        for (const item of input) {
          if (
            item?.type === 'function_call' ||
            item?.type === 'custom_tool_call' ||
            item?.type === 'local_shell_call'
          )
            seen++;
          if (item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output') {
            const out =
              typeof item.output === 'string'
                ? item.output
                : flat(item.output?.content ?? item.output);
            results.set(item.call_id, { id: item.call_id, text: out, isError: false });
          }
        }
        responsesAnswer(res, stepFor(script, seen, requestCwd(body)));
        return;
      }
      if (req.method === 'POST' && /:(stream)?[gG]enerateContent$/.test(url)) {
        const contents: any[] = Array.isArray(body.contents) ? body.contents : [];
        let seen = 0;
        for (const c of contents) {
          for (const part of Array.isArray(c.parts) ? c.parts : []) {
            if (part?.functionCall && c.role === 'model') seen++;
            const fr = part?.functionResponse;
            if (fr) {
              const out = fr.response?.output ?? fr.response?.error ?? fr.response;
              results.set(fr.id ?? fr.name, {
                id: fr.id ?? fr.name,
                text: typeof out === 'string' ? out : JSON.stringify(out),
                isError: fr.response?.error !== undefined,
              });
            }
          }
        }
        const main =
          Array.isArray(body.tools) &&
          body.tools.some((t: any) => Array.isArray(t.functionDeclarations));
        // Side requests (the model router) expect a JSON verdict.
        geminiAnswer(
          res,
          url.includes(':stream'),
          main
            ? stepFor(script, seen, requestCwd(body))
            : { text: '{"complexity_reasoning":"scripted","complexity_score":1}' },
        );
        return;
      }
      if (url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'not_found', message: `no route ${url}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    results,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
