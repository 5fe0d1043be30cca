/**
 * The real Codex CLI through `hagent run codex -- exec …`, driven by the scripted model server
 * (OpenAI Responses API) on loopback. hagent applies Codex's `apply_patch` with its own engine in
 * the PreToolUse hook and blocks the native call with a Codex-shaped success, so the patch is one
 * commit and is not applied twice; a refused patch comes back with hagent's teaching error; shell
 * commands are guarded before and committed after. And with `hagent integrate codex --mcp
 * --strict --user`: Codex calls hagent's MCP tools, its shell tools are gone. Skipped (and said
 * so) when the CLI cannot be installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, runAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, hagent, makeRepo, look } from '../helpers/index.js';

const test = suite('real Codex CLI through hagent run');
const found = agentBinary('codex');
const it = testOrSkip(test, 'real Codex', 'skip' in found ? found.skip : undefined);

const CODEX_ARGS = [
  '--',
  'exec',
  '--skip-git-repo-check',
  '--dangerously-bypass-approvals-and-sandbox',
  'make the scripted edits',
];

function subjects(repo: string, id: string): string[] {
  const out = git(repo, 'log', '--reverse', '--format=%s', `main..hagent/${id}`);
  return out ? out.split('\n') : [];
}

it('apply_patch is applied once by hagent (one commit, Codex-shaped success); an ambiguous one is refused with candidates; shell edits commit; the guard blocks', async () => {
  const repo = makeRepo({
    'a.txt': 'hi\n',
    'dup.py': 'x = 1\ny = 0\nx = 1\n',
    'gone.txt': 'bye\n',
  });
  const applied =
    '*** Begin Patch\n*** Update File: a.txt\n@@\n-hi\n+hello\n*** Add File: b.txt\n+new file\n*** End Patch\n';
  const deleted = '*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n';
  const ambiguous = '*** Begin Patch\n*** Update File: dup.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n';
  const env = '*** Begin Patch\n*** Add File: .env\n+SECRET=1\n*** End Patch\n';
  const server = await startModelServer([
    { calls: [{ id: 'call_apply', name: 'apply_patch', input: applied }] },
    { calls: [{ id: 'call_delete', name: 'apply_patch', input: deleted }] },
    { calls: [{ id: 'call_ambiguous', name: 'apply_patch', input: ambiguous }] },
    { calls: [{ id: 'call_env', name: 'apply_patch', input: env }] },
    {
      calls: [
        {
          id: 'call_shell',
          name: 'exec_command',
          input: { cmd: 'rm gone.txt && echo shell > sh.txt' },
        },
      ],
    },
    { calls: [{ id: 'call_rm', name: 'exec_command', input: { cmd: 'rm -rf ~' } }] },
    {
      calls: [
        {
          id: 'call_push',
          name: 'exec_command',
          input: { cmd: 'git push --force origin HEAD:main' },
        },
      ],
    },
    {
      calls: [
        { id: 'call_par1', name: 'exec_command', input: { cmd: 'echo one > p1.txt' } },
        { id: 'call_par2', name: 'exec_command', input: { cmd: 'echo two > p2.txt' } },
      ],
    },
    { text: 'All done.' },
  ]);
  try {
    const r = await hagentAsync(
      repo,
      ['run', 'codex', '--name', 'x1', ...CODEX_ARGS],
      agentEnv('codex', server.url, (found as { bin: string }).bin),
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const res = (id: string) => server.results.get(id)?.text ?? '';
    // Codex prefixes the block reason; hagent's text reads as the tool's success.
    assert.match(
      res('call_apply'),
      /Success\. Updated the following files:\nM a\.txt\nA b\.txt\n\(hagent applied this patch atomically as commit [0-9a-f]{12}/,
    );
    assert.match(res('call_ambiguous'), /hagent refused this: error\[AMBIGUOUS_MATCH\]/);
    assert.match(res('call_ambiguous'), /candidates \(lines\): 1, 3/);
    assert.match(res('call_env'), /error\[PATH_DENIED\]/);
    assert.match(res('call_rm'), /error\[GUARD_BLOCKED\]/);
    assert.match(res('call_push'), /error\[GUARD_BLOCKED\]/);
    // Codex went on after each answer: every scripted step was asked for.
    assert.ok(
      server.results.has('call_par1') && server.results.has('call_par2'),
      'Codex continued to the last step',
    );
    const wt = (
      JSON.parse(hagent(repo, ['session', 'status', 'x1', '--json']).stdout) as { worktree: string }
    ).worktree;
    assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'hello\n', 'applied once, not twice');
    assert.is(readFileSync(path.join(wt, 'dup.py'), 'utf8'), 'x = 1\ny = 0\nx = 1\n');
    const log = subjects(repo, 'x1');
    assert.is(log[0], 'hagent: M a.txt, A b.txt');
    assert.is(log[1], 'hagent: D b.txt');
    assert.match(res('call_delete'), /Success\. Updated the following files:\nD b\.txt/);
    assert.is(log[2], 'hagent: exec rm gone.txt && echo shell > sh.txt');
    // Two parallel shell calls: both files are committed (one commit each, or the first takes both).
    const rest = log.slice(3);
    assert.ok(rest.length === 1 || rest.length === 2, rest.join('\n'));
    assert.is(git(repo, 'show', 'hagent/x1:p1.txt'), 'one');
    assert.is(git(repo, 'show', 'hagent/x1:p2.txt'), 'two');
    assert.is(git(wt, 'status', '--porcelain'), '');
    const review = hagent(repo, ['review', '--session', 'x1', '--json']);
    assert.is(review.json.patches.length, log.length);
    look(repo, 'x1');
    assert.is(hagent(repo, ['review', '--session', 'x1', '--approve']).status, 0);
    const land = hagent(repo, ['land', '--session', 'x1', '--json']);
    assert.is(land.status, 0, land.stderr + land.stdout);
    assert.is(git(repo, 'show', 'main:a.txt'), 'hello');
    assert.is(git(repo, 'show', 'main:sh.txt'), 'shell');
    assert.not.ok(git(repo, 'ls-tree', '--name-only', 'main').split('\n').includes('b.txt'));
  } finally {
    await server.close();
  }
});

it("hagent integrate codex --mcp --strict --user: Codex edits through hagent's MCP tools (two commits) and offers no shell tool", async () => {
  const repo = makeRepo({ 'a.txt': 'hi\n' });
  const start = hagent(repo, ['session', 'start', '--name', 'xm', '--json']);
  assert.is(start.status, 0, start.stderr);
  const wt = start.json.worktree as string;
  // Codex calls a namespaced tool: the server's namespace `mcp__hagent`, the tool's own name.
  const patch = '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n';
  const server = await startModelServer([
    {
      calls: [
        {
          id: 'call_mcp_edit',
          namespace: 'mcp__hagent',
          name: 'edit',
          input: { path: 'a.txt', old_string: 'hi', new_string: 'hello' },
        },
      ],
    },
    {
      calls: [
        { id: 'call_mcp_patch', namespace: 'mcp__hagent', name: 'apply_patch', input: { patch } },
      ],
    },
    { calls: [{ id: 'call_shell', name: 'exec_command', input: { cmd: 'echo native > sh.txt' } }] },
    { text: 'All done.' },
  ]);
  try {
    const env: Record<string, string> = {
      ...agentEnv('codex', server.url, (found as { bin: string }).bin),
      PATH: pathWithHagent(),
    };
    // Merged into the test's own CODEX_HOME config.toml, beside its model provider.
    const integrate = hagent(
      repo,
      ['integrate', 'codex', '--mcp', '--strict', '--user', '--json'],
      { env: { HOME: env.HOME!, CODEX_HOME: env.CODEX_HOME! } },
    );
    assert.is(integrate.status, 0, integrate.stderr);
    assert.is(integrate.json.file, path.join(env.CODEX_HOME!, 'config.toml'));
    assert.match(
      readFileSync(integrate.json.file, 'utf8'),
      /model_provider = "scripted"[\s\S]*\[mcp_servers\.hagent\]/,
    );
    // A model Codex has no metadata for: it offers MCP tools at once instead of behind its
    // tool_search, which the scripted server does not speak.
    const r = await runAsync(
      (found as { bin: string }).bin,
      ['exec', '--skip-git-repo-check', '-c', 'model="scripted-model"', 'make the scripted edits'],
      wt,
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const tools = (server.requests.find((q) => q.path.endsWith('/responses'))?.body.tools ??
      []) as { name?: string; type: string }[];
    assert.ok(
      tools.some((t) => t.type === 'namespace' && t.name === 'mcp__hagent'),
      JSON.stringify(tools.map((t) => t.name)),
    );
    assert.not.ok(
      tools.some((t) => t.name === 'exec_command' || t.name === 'shell'),
      'no shell tool offered',
    );
    const res = (id: string) => server.results.get(id)?.text ?? '';
    assert.match(res('call_mcp_edit'), /"ok":true[\s\S]*"path":"a\.txt"/);
    assert.match(res('call_mcp_patch'), /"ok":true[\s\S]*"path":"c\.txt"/);
    assert.match(res('call_shell'), /unsupported call: exec_command/);
    assert.not.ok(existsSync(path.join(wt, 'sh.txt')));
    assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'hello\n');
    const review = hagent(repo, ['review', '--session', 'xm', '--json']);
    assert.is(review.json.patches.length, 2, JSON.stringify(review.json.patches));
    assert.equal(review.json.files.map((f: { path: string }) => f.path).sort(), ['a.txt', 'c.txt']);
  } finally {
    await server.close();
  }
});

test.run();
