/**
 * Test helpers for `hagent mcp`: the real built server spawned over stdio and driven by the
 * official MCP SDK client, as an agent's client would drive it.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { recordCodes } from './codes.js';
import { BIN, GIT_ENV } from './index.js';

/** A connected client and the server process behind it. */
export interface McpConnection {
  client: Client;
  /** The server's pid (for kill -9 tests). */
  pid: number;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** Calls a tool; resolves with its result (a tool error is a result with isError). */
  call(name: string, args?: Record<string, unknown>): Promise<ToolCall>;
  close(): Promise<void>;
}

/** A tool result as the tests read it. */
export interface ToolCall {
  isError: boolean;
  text: string;
  data: any;
}

/** Spawns `hagent mcp ARGS` in `cwd` and connects the SDK client to it over stdio. */
export async function connectMcp(
  cwd: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<McpConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    cwd,
    env: { ...process.env, ...GIT_ENV, ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client({ name: 'hagent-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid!,
    stderr: () => err,
    async call(name, callArgs = {}) {
      const r = await client.callTool({ name, arguments: callArgs });
      const text = (r.content as { type: string; text?: string }[])
        .map((c) => c.text ?? '')
        .join('\n');
      recordCodes(text, JSON.stringify(r.structuredContent ?? null));
      return { isError: r.isError === true, text, data: r.structuredContent };
    },
    close: () => client.close(),
  };
}
