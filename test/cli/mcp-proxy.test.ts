/**
 * hagent's MCP server through a run's hook server (src/agents/hook-server.ts, src/mcp/proxy.ts):
 * the proxy asks the run's socket for a server, which starts the real built `hagent mcp` outside
 * and pipes it to the connection, byte for byte; the proxy falls back (nothing read, nothing
 * written) whenever none is started, and never waits long; the server is killed when its
 * connection closes and when the run's server closes. The last test runs the proxy inside a real
 * sandbox (`hagent exec`) with the socket gone: it serves in-process, as without a run.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startHookServer, type HookServer } from '../../src/agents/hook-server.js';
import { proxyMcp } from '../../src/mcp/proxy.js';
import { BIN, GIT_ENV, git, hagent, makeRepo, tempDir } from '../helpers/index.js';
import { sandboxMissing } from '../helpers/sandbox.js';
import { testOrSkip } from '../helpers/skip.js';

const test = suite('hagent mcp through the run (proxy)');

/** A repository with session `id`; its worktree. */
function session(id: string): { repo: string; wt: string } {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const r = hagent(repo, ['session', 'start', '--name', id, '--json']);
  assert.is(r.status, 0, r.stderr);
  return { repo, wt: r.json.worktree as string };
}

/** A run's hook server that serves MCP for session `id` in `wt`. */
function serverFor(id: string, wt: string): Promise<HookServer | null> {
  return startHookServer({
    mcp: {
      session: id,
      cwd: wt,
      env: { ...process.env, ...GIT_ENV },
      command: [process.execPath, BIN],
    },
  });
}

/** Pids of this process's children running `hagent mcp --session id`. */
function mcpChildren(id: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (ppid === process.pid && cmd.includes('mcp') && cmd.includes(id)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function waitFor(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An MCP client on streams: sends JSON-RPC lines, reads the answers by id. */
function rpc(input: PassThrough, output: PassThrough) {
  const answers = new Map<number, any>();
  let buf = '';
  output.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = JSON.parse(line);
      if (typeof m.id === 'number') answers.set(m.id, m);
    }
  });
  let next = 1;
  return {
    notify: (method: string) => input.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
    async call(method: string, params: unknown): Promise<any> {
      const id = next++;
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      await waitFor(`answer ${id} to ${method}`, () => answers.has(id), 60_000);
      return answers.get(id);
    },
  };
}

test('the proxy gets a server started outside: initialize, then apply_patch commits on the session branch; closing the input ends the proxy and kills the server', async () => {
  const { repo, wt } = session('px1');
  const server = await serverFor('px1', wt);
  assert.ok(server, 'the server started');
  try {
    const input = new PassThrough();
    const output = new PassThrough();
    const proxied = proxyMcp(server!.socket, {}, { input, output });
    const client = rpc(input, output);
    const init = await client.call('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'hagent-test', version: '1.0.0' },
    });
    assert.is(init.result?.serverInfo?.name, 'hagent', JSON.stringify(init));
    client.notify('notifications/initialized');
    const patch = '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n';
    const r = await client.call('tools/call', { name: 'apply_patch', arguments: { patch } });
    assert.not.ok(r.result?.isError, JSON.stringify(r));
    assert.is(git(repo, 'show', 'hagent/px1:c.txt'), 'sea');
    assert.is(mcpChildren('px1').length, 1, 'one server, a child of the run');
    input.end();
    assert.equal(await proxied, { served: true });
    await waitFor('the server to be killed', () => mcpChildren('px1').length === 0);
    assert.is(server!.served(), 0, 'an MCP connection is no hook call');
  } finally {
    await server!.close();
  }
});

test("the run's server closing kills the MCP server it started; the proxy ends", async () => {
  const { wt } = session('px2');
  const server = await serverFor('px2', wt);
  const input = new PassThrough();
  const output = new PassThrough();
  const proxied = proxyMcp(server!.socket, {}, { input, output });
  await waitFor('the server to start', () => mcpChildren('px2').length === 1);
  await server!.close();
  assert.equal(mcpChildren('px2'), [], 'no server left once close() resolved');
  assert.equal(await proxied, { served: true });
});

test('no server started, the proxy falls back at once, having read and written nothing: another session, --new, a run serving no MCP, another protocol, the socket gone, a file in its place, a run that never answers', async () => {
  const { wt } = session('px3');
  const server = await serverFor('px3', wt);
  const bare = await startHookServer();
  const dir = tempDir('hagent-proxy-');
  const notSocket = path.join(dir, 's');
  writeFileSync(notSocket, '');
  const silent = createServer(() => undefined);
  const silentPath = path.join(dir, 'silent');
  await new Promise<void>((r) => silent.listen(silentPath, r));
  try {
    const cases: [string, Parameters<typeof proxyMcp>[1], RegExp][] = [
      [server!.socket, { session: 'other' }, /serves its own session px3, not other/],
      [server!.socket, { new: true, name: 'n' }, /own session px3 only/],
      [bare!.socket, {}, /this run serves no MCP server/],
      [path.join(dir, 'gone', 's'), {}, /ENOENT/],
      [notSocket, {}, /ECONNREFUSED|ENOTSOCK/],
      [silentPath, {}, /did not answer/],
    ];
    for (const [socket, options, reason] of cases) {
      const input = new PassThrough();
      const output = new PassThrough();
      input.write('{"jsonrpc":"2.0","id":1,"method":"initialize"}\n');
      const started = Date.now();
      const r = await proxyMcp(socket, options, { input, output }, { answerMs: 500 });
      assert.is(r.served, false, socket);
      assert.match((r as { reason: string }).reason, reason);
      assert.ok(Date.now() - started < 5000, 'no long wait');
      assert.is(output.readableLength, 0, 'nothing written');
      assert.match(String(input.read()), /initialize/, 'nothing read');
    }
    assert.equal(mcpChildren('px3'), [], 'no server started');
  } finally {
    silent.close();
    await bare!.close();
    await server!.close();
  }
});

const it = testOrSkip(test, 'hagent mcp through the run (proxy)', sandboxMissing);

it('inside a real sandbox with the socket gone, hagent mcp says so and serves in-process (never hangs)', () => {
  const { repo } = session('px4');
  const socket = path.join(tempDir('hagent-proxy-'), 'gone', 's');
  const r = hagent(repo, [
    'exec',
    '--session',
    'px4',
    '--',
    `HAGENT_HOOK_SOCKET=${socket} ${process.execPath} ${BIN} mcp < /dev/null; echo "status=$?"`,
  ]);
  assert.is(r.status, 0, r.stderr + r.stdout);
  const out = r.stdout + r.stderr;
  assert.match(out, /hagent mcp: the run serves no MCP server \(the run's socket: connect ENOENT/);
  assert.match(out, /serving here/);
  assert.match(out, /hagent mcp: serving session px4/);
  assert.match(out, /status=0/);
});

test.run();
