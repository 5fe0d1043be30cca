/**
 * `hagent run`'s hook server: the agent's hook processes hand their events to the run over a Unix
 * socket (src/agents/hook-server.ts), and fall back to handling them in-process on any failure.
 * The agent is a stand-in driver script that `hagent run claude` starts as Claude Code: it runs
 * the hook command of its `--settings` file through `sh -c`, as Claude Code does, with the
 * environment the run gave it (or with the socket variable changed), and records each answer.
 * Real CLI, real git; the real Claude Code and Codex runs are in test/agents/.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, IDENTITY_VARS, makeRepo, tempDir } from '../helpers/index.js';

const test = suite('hagent run: the hook server');

/** One step of the driver's plan (see DRIVER). */
type Step =
  | {
      hook: Record<string, unknown>;
      socket?: string | null;
      env?: Record<string, string>;
      /** HTTP hooks: this Authorization header, this path instead of the settings'. */
      authorization?: string;
      urlPath?: string;
      /** HTTP hooks: this body instead of the event's JSON. */
      rawBody?: string;
    }
  | { write: string; content: string }
  | { file: string; content: string }
  | { cli: string[] }
  | { git: string[] }
  | { lanes: Step[][] }
  | { killRun: true }
  | { termRun: true }
  | { exit: number };

/** What the driver recorded: the socket it was given, and one answer per hook step. */
interface Record_ {
  socket: string;
  /** With HTTP hooks, `status` is the HTTP status, `stdout` the body and `http` the URL. */
  answers: { status: number; stdout: string; stderr: string; http?: string }[];
  folderAfterTerm?: boolean;
}

// The stand-in agent. Hook steps run the settings' command through `sh -c` with the event on
// stdin, or POST it as Claude Code does when the settings hold HTTP hooks; `socket` replaces HAGENT_HOOK_SOCKET (null: removed). `cli` runs hagent itself, as the
// human would in another terminal. `lanes` run side by side (steps in order within a lane).
const DRIVER = `
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const plan = JSON.parse(readFileSync(process.env.DRIVER_PLAN, 'utf8'));
const settings = JSON.parse(readFileSync(process.argv[process.argv.indexOf('--settings') + 1], 'utf8'));
const handler = settings.hooks.PreToolUse[0].hooks[0];
const wt = process.env.HAGENT_WORKTREE;
const record = { socket: process.env.HAGENT_HOOK_SOCKET, answers: [] };
const run = (file, args, input, env) => new Promise((resolve) => {
  const child = spawn(file, args, { cwd: wt, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = [], err = [];
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.on('data', (c) => err.push(c));
  child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  // A child that exits before reading its input (git config does) closes the pipe: EPIPE here is
  // not the agent's failure, as it is not Claude Code's.
  child.stdin.on('error', () => {});
  child.stdin.end(input);
});
async function step(s, answers) {
  if (s.hook) {
    const env = { ...process.env, ...(s.env ?? {}) };
    if (s.socket === null) delete env.HAGENT_HOOK_SOCKET;
    else if (s.socket !== undefined) env.HAGENT_HOOK_SOCKET = s.socket;
    const event = JSON.parse(JSON.stringify(s.hook).replaceAll('@WT', wt));
    if (handler.type === 'http') {
      // As Claude Code sends an HTTP hook: a POST of the event with the settings' headers.
      const headers = { ...handler.headers, 'content-type': 'application/json' };
      if (s.authorization !== undefined) headers.Authorization = s.authorization;
      const res = await fetch(s.urlPath ? new URL(s.urlPath, handler.url).href : handler.url, { method: 'POST', headers, body: s.rawBody ?? JSON.stringify(event) });
      answers.push({ status: res.status, stdout: await res.text(), stderr: '', http: handler.url });
    } else answers.push(await run('sh', ['-c', handler.command], JSON.stringify(event), env));
  } else if (s.write) writeFileSync(path.join(wt, s.write), s.content);
  else if (s.file) writeFileSync(s.file, s.content);
  else if (s.cli) answers.push(await run(process.execPath, [plan.bin, ...s.cli], '', process.env));
  else if (s.git) await run('git', s.git, '', process.env);
  else if (s.lanes) {
    const got = await Promise.all(s.lanes.map(async (lane) => { const a = []; for (const t of lane) await step(t, a); return a; }));
    for (const a of got) answers.push(...a);
  } else if (s.killRun || s.termRun) {
    const run = process.ppid;
    process.kill(run, s.killRun ? 'SIGKILL' : 'SIGTERM');
    while ((() => { try { process.kill(run, 0); return true; } catch { return false; } })())
      await new Promise((r) => setTimeout(r, 20));
    if (s.termRun) record.folderAfterTerm = existsSync(path.dirname(record.socket));
  } else if (s.exit !== undefined) {
    writeFileSync(process.env.DRIVER_OUT, JSON.stringify(record));
    process.kill(process.pid, 'SIGKILL');
  }
}
for (const s of plan.steps) await step(s, record.answers);
writeFileSync(process.env.DRIVER_OUT, JSON.stringify(record));
`;

/**
 * Runs `hagent run claude` with the driver doing `steps`; returns the run and what the driver
 * recorded. Command hooks (through the socket) unless `extraEnv` says otherwise.
 */
function runDriver(
  repo: string,
  name: string,
  steps: Step[],
  extraEnv: Record<string, string> = {},
  unsetEnv: readonly string[] = [],
) {
  const dir = tempDir('hagent-hook-driver-');
  const bin = path.join(dir, 'claude');
  writeFileSync(bin, `#!${process.execPath}\n${DRIVER}`, { mode: 0o755 });
  const planFile = path.join(dir, 'plan.json');
  const out = path.join(dir, 'out.json');
  const BIN = path.resolve('dist', 'hagent.cjs');
  writeFileSync(planFile, JSON.stringify({ bin: BIN, steps }));
  // Without the sandbox: the driver records outside the worktree and signals the run itself
  // (the hook server inside a sandboxed run: test/cli/hook-sandbox.test.ts, test/agents/).
  const r = hagent(repo, ['run', 'claude', '--name', name, '--no-sandbox', '--json'], {
    env: {
      HAGENT_CLAUDE_BIN: bin,
      DRIVER_PLAN: planFile,
      DRIVER_OUT: out,
      HAGENT_HTTP_HOOKS: '0',
      ...extraEnv,
    },
    unsetEnv,
  });
  // spawnSync waits for the driver too (it holds the run's stdout): no record means the driver
  // never finished, and the run's own output says why.
  assert.ok(
    existsSync(out),
    `the driver wrote no record; hagent run: ${r.status} ${r.stderr}${r.stdout}`,
  );
  const record = JSON.parse(readFileSync(out, 'utf8')) as Record_;
  return { r, record };
}

const writeEvent = (name: string, file: string, id: string, content = `${id}\n`) => ({
  hook_event_name: name,
  cwd: '@WT',
  tool_name: 'Write',
  tool_use_id: id,
  tool_input: { file_path: `@WT/${file}`, content },
});
/** A native Write through both hooks: pre, the write, post. */
const edit = (file: string, id: string, socket?: string | null): Step[] => [
  { hook: writeEvent('PreToolUse', file, id), ...(socket !== undefined ? { socket } : {}) },
  { write: file, content: `${id}\n` },
  { hook: writeEvent('PostToolUse', file, id), ...(socket !== undefined ? { socket } : {}) },
];
const commitsOf = (repo: string, session: string) =>
  git(repo, 'log', '--format=%s', `main..hagent/${session}`).trim().split('\n').filter(Boolean);

test('a refusal and a commit through the server are byte for byte the in-process answers; an undo between the calls is seen', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const refusal = { hook: writeEvent('PreToolUse', '.env', 'toolu_env', 'SECRET=1\n') };
  const { r, record } = runDriver(repo, 'same', [
    { ...refusal, socket: null },
    ...edit('b.txt', 'toolu_b', null),
    { cli: ['undo', '--json'] },
    refusal,
    ...edit('b.txt', 'toolu_b'),
  ]);
  assert.is(r.status, 0, r.stderr);
  const [inRefusal, inPre, inPost, undo, srvRefusal, srvPre, srvPost] = record.answers;
  assert.is(undo!.status, 0, undo!.stderr);
  assert.is(inRefusal!.status, 2);
  assert.match(inRefusal!.stderr, /error\[PATH_DENIED\]/);
  assert.equal(srvRefusal, inRefusal);
  assert.equal(srvPre, inPre);
  // Same parent (the undo moved the branch back), same bytes, fixed dates: the same commit id.
  assert.match(inPost!.stdout, /hagent recorded this edit as commit [0-9a-f]{12}/);
  assert.equal(srvPost, inPost);
  assert.is(
    r.json.hooksServed,
    3,
    'the refusal, the pre and the post hook went through the server',
  );
  assert.equal(commitsOf(repo, 'same'), ['hagent: Write b.txt']);
  assert.not.ok(existsSync(path.dirname(record.socket)), 'the socket folder is removed');
  assert.not.ok(existsSync(path.join(r.json.worktree, '.env')), 'nothing written');
});

test('a configuration change and an identity change between two hook calls are seen by the server', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', '.hagent/config.json': '{}\n' });
  git(repo, 'config', 'user.name', 'First');
  git(repo, 'config', 'user.email', 'first@example.com');
  const config = path.join(repo, '.hagent', 'config.json');
  const pre = (file: string, id: string) => ({ hook: writeEvent('PreToolUse', file, id) });
  const { r, record } = runDriver(
    repo,
    'fresh',
    [
      pre('secret/one.txt', 'toolu_1'),
      { file: config, content: '{"deniedPaths":["secret/**"]}\n' },
      pre('secret/two.txt', 'toolu_2'),
      { file: config, content: '{}\n' },
      pre('secret/three.txt', 'toolu_3'),
      ...edit('a.txt', 'toolu_a'),
      { git: ['config', 'user.name', 'Second Author'] },
      ...edit('b.txt', 'toolu_b'),
      { hook: writeEvent('PreToolUse', 'c.txt', 'toolu_c') },
      { write: 'c.txt', content: 'c\n' },
      { hook: writeEvent('PostToolUse', 'c.txt', 'toolu_c'), env: { GIT_AUTHOR_NAME: 'Third' } },
    ],
    {},
    IDENTITY_VARS,
  );
  assert.is(r.status, 0, r.stderr);
  const [one, two, three] = record.answers;
  assert.is(one!.status, 0, one!.stderr);
  assert.is(two!.status, 2);
  assert.match(two!.stderr, /error\[PATH_DENIED\]: secret\/two\.txt/);
  assert.is(three!.status, 0, three!.stderr);
  assert.is(r.json.hooksServed, record.answers.length);
  assert.equal(
    git(repo, 'log', '--format=%an <%ae>', 'main..hagent/fresh').trim().split('\n'),
    ['Third <first@example.com>', 'Second Author <first@example.com>', 'First <first@example.com>'],
    "a git config change between two calls, and each hook's own environment, make the identity",
  );
});

test('parallel hook calls through the server lose no commit', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const files = ['p1.txt', 'p2.txt', 'p3.txt', 'p4.txt', 'p5.txt', 'p6.txt'];
  const { r, record } = runDriver(repo, 'par', [
    { lanes: files.map((f, i) => edit(f, `toolu_p${i}`)) },
  ]);
  assert.is(r.status, 0, r.stderr);
  for (const a of record.answers) assert.is(a.status, 0, a.stderr);
  assert.is(r.json.hooksServed, 12);
  assert.equal(commitsOf(repo, 'par').sort(), files.map((f) => `hagent: Write ${f}`).sort());
  for (const [i, f] of files.entries())
    assert.is(readFileSync(path.join(r.json.worktree, f), 'utf8'), `toolu_p${i}\n`);
  assert.is(git(r.json.worktree, 'status', '--porcelain'), '');
});

/** A socket path whose listener was killed: the file stays, nothing accepts. */
function staleSocket(): string {
  const sock = path.join(tempDir('hagent-stale-'), 's');
  spawnSync(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  assert.ok(existsSync(sock), 'the stale socket file is there');
  return sock;
}

/** Servers that fail in each way before a whole answer: not JSON, closed early, half an answer, "fall back". */
async function badServers(): Promise<{ sockets: Record<string, string>; stop: () => void }> {
  const dir = tempDir('hagent-bad-server-');
  const modes = {
    garbage: 'c.end("not json\\n")',
    closed: 'c.destroy()',
    half: 'c.end(\'{"v":1,"exitCode":0,"stdout":"\')',
    fallback: 'c.end(\'{"v":1,"fallback":"told to"}\\n\')',
    otherVersion: 'c.end(\'{"v":2,"exitCode":0,"stdout":"","stderr":""}\\n\')',
  };
  const sockets = Object.fromEntries(Object.keys(modes).map((m) => [m, path.join(dir, m)]));
  const code = Object.entries(modes)
    .map(
      ([m, act]) =>
        `require('node:net').createServer((c) => c.on('data', () => { ${act}; })).listen(${JSON.stringify(sockets[m])});`,
    )
    .join('\n');
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  for (let i = 0; i < 200 && !Object.values(sockets).every((s) => existsSync(s)); i++)
    await new Promise((r) => setTimeout(r, 25));
  return { sockets, stop: () => child.kill('SIGKILL') };
}

test('fallback: a missing socket, a stale one, a server that fails before a whole answer: each hook is handled in-process', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const bad = await badServers();
  const ways: Record<string, string> = {
    missing: path.join(tempDir('hagent-nosock-'), 'gone', 's'),
    stale: staleSocket(),
    ...bad.sockets,
  };
  try {
    const names = Object.keys(ways);
    const { r, record } = runDriver(
      repo,
      'fallback',
      names.flatMap((n) => edit(`${n}.txt`, `toolu_${n}`, ways[n])),
    );
    assert.is(r.status, 0, r.stderr);
    assert.is(r.json.hooksServed, 0);
    for (const [i, n] of names.entries()) {
      const post = record.answers[i * 2 + 1]!;
      assert.is(post.status, 0, `${n}: ${post.stderr}`);
      assert.match(post.stdout, /hagent recorded this edit as commit/, n);
    }
    assert.equal(
      commitsOf(repo, 'fallback').sort(),
      names.map((n) => `hagent: Write ${n}.txt`).sort(),
    );
  } finally {
    bad.stop();
  }
});

test('a run killed with -9 leaves a stale socket: the next hooks fall back, the next run sweeps its folder', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  // A temp folder of this test's own: any other run on the machine sweeps a dead run's folder too.
  const own = { TMPDIR: tempDir('hagent-sockets-') };
  const { r, record } = runDriver(
    repo,
    'killed',
    [...edit('one.txt', 'toolu_1'), { killRun: true }, ...edit('two.txt', 'toolu_2')],
    own,
  );
  assert.is(r.status, -1, 'hagent run was killed');
  assert.is(record.answers.length, 4);
  assert.match(record.answers[1]!.stdout, /recorded this edit as commit/);
  assert.match(record.answers[3]!.stdout, /recorded this edit as commit/);
  assert.equal(commitsOf(repo, 'killed'), ['hagent: Write two.txt', 'hagent: Write one.txt']);
  assert.ok(existsSync(record.socket), 'the killed run could not remove its socket');
  const next = runDriver(repo, 'after', edit('three.txt', 'toolu_3'), own);
  assert.is(next.r.status, 0, next.r.stderr);
  assert.is(next.r.json.hooksServed, 2);
  assert.not.ok(
    existsSync(path.dirname(record.socket)),
    "the next run swept the dead run's folder",
  );
});

test('the socket folder is removed on SIGTERM and when the agent crashes', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const term = runDriver(repo, 'term', [...edit('one.txt', 'toolu_1'), { termRun: true }]);
  assert.is(term.record.folderAfterTerm, false, 'gone once the run died of SIGTERM');
  assert.match(term.record.answers[1]!.stdout, /recorded this edit as commit/);
  const crash = runDriver(repo, 'crash', [...edit('one.txt', 'toolu_1'), { exit: 1 }]);
  assert.is(crash.r.status, 137, 'hagent run exits with the killed agent status');
  assert.is(crash.r.json.hooksServed, 2);
  assert.not.ok(existsSync(path.dirname(crash.record.socket)));
});

test("Claude Code's HTTP hooks: a refusal, a commit and a Stop answered by the run in their HTTP form; another token or path refused, nothing written", () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const refusal = { hook: writeEvent('PreToolUse', '.env', 'toolu_env', 'SECRET=1\n') };
  const { r, record } = runDriver(
    repo,
    'http',
    [
      refusal,
      ...edit('b.txt', 'toolu_b'),
      { hook: { hook_event_name: 'Stop', cwd: '@WT', stop_hook_active: false } },
      { ...refusal, authorization: 'Bearer 0123' },
      { ...refusal, urlPath: '/hooks/other' },
      { ...refusal, rawBody: '{"hook_event_name":"PreToolUse","cwd":"/", "tool_input": {' },
      { ...refusal, rawBody: '{"hook_event_name":"Stop", "cwd": ' },
    ],
    { HAGENT_HTTP_HOOKS: '' },
  );
  assert.is(r.status, 0, r.stderr);
  const [deny, pre, post, stop, badToken, badPath, brokenPre, brokenStop] = record.answers;
  assert.match(deny!.http!, /^http:\/\/127\.0\.0\.1:\d+\/hooks\/claude$/, 'HTTP hooks on loopback');
  assert.is(record.socket !== '', true, 'the socket is still given (hagent mcp, other tools)');
  assert.is(deny!.status, 200);
  const denied = JSON.parse(deny!.stdout).hookSpecificOutput;
  assert.is(denied.hookEventName, 'PreToolUse');
  assert.is(denied.permissionDecision, 'deny');
  assert.match(denied.permissionDecisionReason, /error\[PATH_DENIED\]: \.env/);
  assert.is(pre!.status, 200);
  assert.is(post!.status, 200);
  assert.match(
    JSON.parse(post!.stdout).hookSpecificOutput.additionalContext,
    /hagent recorded this edit as commit [0-9a-f]{12}/,
  );
  assert.is(stop!.status, 200, stop!.stdout);
  assert.is(badToken!.status, 401);
  assert.is(badPath!.status, 404);
  // A body hagent cannot read is still a 200 (anything else lets Claude Code go on unchecked):
  // a PreToolUse is denied, another event told.
  assert.is(brokenPre!.status, 200);
  assert.is(JSON.parse(brokenPre!.stdout).hookSpecificOutput.permissionDecision, 'deny');
  assert.match(brokenPre!.stdout, /the hook event is not JSON/);
  assert.is(brokenStop!.status, 200);
  assert.match(JSON.parse(brokenStop!.stdout).systemMessage, /the hook event is not JSON/);
  assert.is(r.json.hooksServed, 4, 'the refusal, pre, post and Stop; not the refused requests');
  assert.equal(commitsOf(repo, 'http'), ['hagent: Write b.txt']);
  assert.not.ok(existsSync(path.join(r.json.worktree, '.env')), 'nothing written');
});

test.run();
