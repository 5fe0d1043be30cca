/**
 * `hagent mcp` answers every request, whatever the line holds: raw lines written to the built
 * server's stdin (not JSON, a batch, an id no client can match, params that are not an object, a
 * 20 MB request) each get a JSON-RPC error naming a stable code, and the server keeps serving the
 * next request; the real SDK client gets an error for its oversized call and its next call works.
 * The size limit is `mcpMaxRequestBytes` of .hagent/config.json.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, GIT_ENV, repoWithSession } from '../helpers/index.js';
import { recordCodes } from '../helpers/codes.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp: malformed and oversized requests');

/** The built server on raw pipes: `send` writes one line, `next` resolves with the next answer. */
function rawServer(cwd: string): {
  proc: ChildProcessWithoutNullStreams;
  send(line: string | Buffer): void;
  next(): Promise<any>;
  exited: Promise<number | null>;
} {
  const proc = spawn(process.execPath, [BIN, 'mcp', '--session', 's1'], {
    cwd,
    env: { ...process.env, ...GIT_ENV },
  });
  let buf = '';
  const answers: any[] = [];
  const waiting: ((v: any) => void)[] = [];
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      recordCodes(line);
      const msg = JSON.parse(line);
      const w = waiting.shift();
      if (w) w(msg);
      else answers.push(msg);
    }
  });
  proc.stderr.resume();
  const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
  return {
    proc,
    send: (line) => proc.stdin.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')])),
    next: () =>
      answers.length
        ? Promise.resolve(answers.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20_000);
            waiting.push((v) => {
              clearTimeout(timer);
              resolve(v);
            });
          }),
    exited,
  };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
});

/** A tools/call of `read` whose line is about `bytes` long. */
const bigRead = (id: number, bytes: number): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'read', arguments: { path: 'x'.repeat(bytes) } },
  });

t('each malformed line gets a JSON-RPC error and the next request is served', async () => {
  const { repo } = repoWithSession();
  const s = rawServer(repo);
  try {
    s.send(INIT);
    assert.equal((await s.next()).id, 1);
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    const cases: [string, number | string | null, number, string][] = [
      ['not json at all', null, -32700, 'MCP_MALFORMED_REQUEST'],
      ['[{"jsonrpc":"2.0","id":2,"method":"ping"}]', null, -32600, 'MCP_MALFORMED_REQUEST'],
      ['42', null, -32600, 'MCP_MALFORMED_REQUEST'],
      [
        '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}',
        123456789012345678901234567890,
        -32600,
        'MCP_MALFORMED_REQUEST',
      ],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', null, -32600, 'MCP_MALFORMED_REQUEST'],
      [
        '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}',
        3,
        -32602,
        'MCP_MALFORMED_REQUEST',
      ],
      [
        '{"jsonrpc":"2.0","id":"s","method":"ping","params":"x"}',
        's',
        -32602,
        'MCP_MALFORMED_REQUEST',
      ],
      ['{"jsonrpc":"2.0","id":4,"method":7}', 4, -32600, 'MCP_MALFORMED_REQUEST'],
      ['{"id":5,"method":"ping"}', 5, -32600, 'MCP_MALFORMED_REQUEST'],
      [bigRead(6, 20 * 1024 * 1024), 6, -32600, 'MCP_REQUEST_TOO_LARGE'],
    ];
    let ping = 100;
    for (const [line, id, rpc, code] of cases) {
      s.send(line);
      const a = await s.next();
      assert.equal(a.id, id, line.slice(0, 80));
      assert.equal(a.error?.code, rpc, line.slice(0, 80));
      assert.equal(a.error.data.code, code);
      assert.ok(a.error.data.hint);
      if (code === 'MCP_REQUEST_TOO_LARGE') {
        assert.equal(a.error.data.limit, 10 * 1024 * 1024);
        assert.equal(a.error.data.key, 'mcpMaxRequestBytes');
        assert.match(a.error.message, /10485760.*mcpMaxRequestBytes/);
      }
      // Still serving: the next request is answered.
      s.send(JSON.stringify({ jsonrpc: '2.0', id: ++ping, method: 'ping' }));
      assert.equal(await s.next(), { result: {}, jsonrpc: '2.0', id: ping });
    }
    // A blank line and a malformed notification get no answer (JSON-RPC answers no notification).
    s.send('');
    s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 999, method: 'ping' }));
    assert.equal((await s.next()).id, 999);
    s.proc.stdin.end();
    assert.equal(await s.exited, 0);
  } finally {
    s.proc.kill();
  }
});

t('the real SDK client gets an error for a 20 MB call, and its next call works', async () => {
  const { repo } = repoWithSession();
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    const err = await c.client
      .callTool({ name: 'write', arguments: { path: 'big.txt', content: 'y'.repeat(20e6) } })
      .then(
        () => null,
        (e: Error) => e,
      );
    assert.ok(err, 'the oversized call was answered with an error');
    assert.match(err!.message, /MCP_REQUEST_TOO_LARGE.*10485760.*mcpMaxRequestBytes/);
    recordCodes(err!.message);
    const r = await c.call('read', { path: 'a.txt' });
    assert.not.ok(r.isError, r.text);
    assert.match(r.text, /two/);
  } finally {
    await c.close();
  }
});

t('mcpMaxRequestBytes raises the limit: a 12 MB write is served', async () => {
  const { repo, s } = repoWithSession();
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    JSON.stringify({ mcpMaxRequestBytes: 32 * 1024 * 1024 }),
  );
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    const r = await c.call('write', { path: 'big.txt', content: `${'z'.repeat(12e6)}\n` });
    // Served by the tool, not refused by the size limit.
    assert.not.ok(r.isError, r.text.slice(0, 300));
    assert.equal(statSync(path.join(s.worktree, 'big.txt')).size, 12e6 + 1);
  } finally {
    await c.close();
  }
});

t.run();
