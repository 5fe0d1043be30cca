/**
 * The real Gemini CLI through `hagent run gemini`, driven by the scripted model server (Gemini
 * API, `streamGenerateContent` as server-sent events) via `GOOGLE_GEMINI_BASE_URL`: write_file,
 * replace and run_shell_command fire hagent's BeforeTool/AfterTool hooks from the per-run system
 * settings file. And with `hagent integrate gemini --mcp --strict`: hagent's MCP tools do the
 edits and Gemini's own tool exclusion refuses write_file and replace. Skipped (and said so) when
 the CLI cannot be installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, runAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, hagent, makeRepo } from '../helpers/index.js';

const test = suite('real Gemini CLI through hagent run');
const found = agentBinary('gemini');
const it = testOrSkip(test, 'real Gemini CLI', 'skip' in found ? found.skip : undefined);

it('write_file and a shell edit become commits; a key file and rm -rf ~ are refused as the tool result', async () => {
  const repo = makeRepo({ 'a.txt': 'hi\n' });
  const server = await startModelServer([
    (wd) => ({
      calls: [
        {
          id: 'g_write',
          name: 'write_file',
          input: { file_path: `${wd}/new.txt`, content: 'created\n' },
        },
      ],
    }),
    // Gemini refuses `.env` itself ("not in workspace"); a key file reaches hagent's policy.
    (wd) => ({
      calls: [
        {
          id: 'g_env',
          name: 'write_file',
          input: { file_path: `${wd}/deploy.pem`, content: 'KEY\n' },
        },
      ],
    }),
    {
      calls: [
        {
          id: 'g_shell',
          name: 'run_shell_command',
          input: { command: 'echo shell > sh.txt', description: 'x' },
        },
      ],
    },
    {
      calls: [
        { id: 'g_rm', name: 'run_shell_command', input: { command: 'rm -rf ~', description: 'x' } },
      ],
    },
    { text: 'All done.' },
  ]);
  try {
    const r = await hagentAsync(
      repo,
      ['run', 'gemini', '--name', 'g1', '--json', '--', '-p', 'make the scripted edits', '--yolo'],
      agentEnv('gemini', server.url, (found as { bin: string }).bin),
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const served = (
      JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{') + 1)) as { hooksServed: number | null }
    ).hooksServed;
    // The real agent's hook processes reached this run's hook server (not only their fallback).
    assert.ok((served ?? 0) > 0, `hooks served: ${served}`);
    const wt = hagent(repo, ['session', 'status', 'g1', '--json']).json.worktree as string;
    const text = (id: string) => server.results.get(id)?.text ?? '';
    assert.match(text('g_env'), /hagent refused this: error\[PATH_DENIED\]/);
    assert.match(text('g_rm'), /GUARD_BLOCKED/);
    assert.not.ok(existsSync(`${wt}/deploy.pem`));
    const log = git(repo, 'log', '--reverse', '--format=%s', 'main..hagent/g1').split('\n');
    assert.equal(log, ['hagent: write_file new.txt', 'hagent: exec echo shell > sh.txt']);
  } finally {
    await server.close();
  }
});

it('hagent integrate gemini --mcp --strict: mcp_hagent_edit and mcp_hagent_apply_patch are two commits; write_file and replace are excluded by Gemini itself, also under --yolo', async () => {
  const repo = makeRepo({ 'a.txt': 'hi\n' });
  assert.is(hagent(repo, ['integrate', 'gemini', '--mcp', '--strict']).status, 0);
  git(repo, 'add', '.gemini/settings.json');
  git(repo, 'commit', '-q', '-m', 'hagent MCP server, strict mode');
  const start = hagent(repo, ['session', 'start', '--name', 'gm', '--json']);
  assert.is(start.status, 0, start.stderr);
  const wt = start.json.worktree as string;
  const server = await startModelServer([
    {
      calls: [
        {
          id: 'g_mcp_edit',
          name: 'mcp_hagent_edit',
          input: { path: 'a.txt', old_string: 'hi', new_string: 'hello' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'g_mcp_patch',
          name: 'mcp_hagent_apply_patch',
          input: { patch: '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'g_write',
          name: 'write_file',
          input: { file_path: `${wt}/native.txt`, content: 'native\n' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'g_replace',
          name: 'replace',
          input: { file_path: `${wt}/a.txt`, old_string: 'hello', new_string: 'native' },
        },
      ],
    },
    { text: 'All done.' },
  ]);
  try {
    const env = {
      ...agentEnv('gemini', server.url, (found as { bin: string }).bin),
      PATH: pathWithHagent(),
    };
    // --yolo approves every call that is offered; excluded tools are not offered at all.
    const r = await runAsync(
      (found as { bin: string }).bin,
      ['-p', 'make the scripted edits', '--yolo'],
      wt,
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const res = (id: string) => server.results.get(id);
    for (const id of ['g_mcp_edit', 'g_mcp_patch'])
      assert.ok(res(id) && !res(id)!.isError, `${id}: ${res(id)?.text}`);
    assert.match(res('g_mcp_edit')!.text, /Success\. Updated the following files:\nM a\.txt/);
    assert.match(res('g_mcp_patch')!.text, /Success\. Updated the following files:\nA c\.txt/);
    for (const [id, tool] of [
      ['g_write', 'write_file'],
      ['g_replace', 'replace'],
    ] as const) {
      assert.ok(res(id)?.isError, `${id} refused`);
      assert.match(res(id)!.text, new RegExp(`Tool "${tool}" not found`));
    }
    assert.not.ok(existsSync(path.join(wt, 'native.txt')));
    assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'hello\n');
    const review = hagent(repo, ['review', '--session', 'gm', '--json']);
    assert.is(review.json.patches.length, 2, JSON.stringify(review.json.patches));
    assert.equal(review.json.files.map((f: { path: string }) => f.path).sort(), ['a.txt', 'c.txt']);
  } finally {
    await server.close();
  }
});

test.run();
