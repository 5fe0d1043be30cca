/**
 * The real Gemini CLI through `hagent run gemini`, driven by the scripted model server (Gemini
 * API, `streamGenerateContent` as server-sent events) via `GOOGLE_GEMINI_BASE_URL`: write_file,
 * replace and run_shell_command fire hagent's BeforeTool/AfterTool hooks from the per-run system
 * settings file. Skipped (and said so) when the CLI cannot be installed.
 */
import { existsSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync } from '../helpers/agents.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, hagent, makeRepo } from '../helpers/index.js';

const test = suite('real Gemini CLI through hagent run');
const found = agentBinary('gemini');
const it = 'bin' in found ? test : test.skip;

it('write_file and a shell edit become commits; a key file and rm -rf ~ are refused as the tool result', async () => {
  const repo = makeRepo({ 'a.txt': 'hi\n' });
  const server = await startModelServer([
    (wd) => ({ calls: [{ id: 'g_write', name: 'write_file', input: { file_path: `${wd}/new.txt`, content: 'created\n' } }] }),
    // Gemini refuses `.env` itself ("not in workspace"); a key file reaches hagent's policy.
    (wd) => ({ calls: [{ id: 'g_env', name: 'write_file', input: { file_path: `${wd}/deploy.pem`, content: 'KEY\n' } }] }),
    { calls: [{ id: 'g_shell', name: 'run_shell_command', input: { command: 'echo shell > sh.txt', description: 'x' } }] },
    { calls: [{ id: 'g_rm', name: 'run_shell_command', input: { command: 'rm -rf ~', description: 'x' } }] },
    { text: 'All done.' },
  ]);
  try {
    const r = await hagentAsync(repo, ['run', 'gemini', '--name', 'g1', '--json', '--', '-p', 'make the scripted edits', '--yolo'], agentEnv('gemini', server.url, (found as { bin: string }).bin));
    assert.is(r.status, 0, r.stderr + r.stdout);
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

test.run();
