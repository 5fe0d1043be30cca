/**
 * The real Gemini CLI after `hagent integrate gemini` (no `hagent run`; scripted model server on
 * loopback): the BeforeTool hook rewrites each allowed `run_shell_command` to start inside the
 * session's sandbox, with Gemini's `tool_input`. A script the guard cannot read that wipes and
 * overwrites the user's checkout, and `git checkout -- .` aimed at it from that script, change no
 * byte of the checkout (its uncommitted edit included); the command's output shows it ran inside
 * and was refused by the read-only file system, and the AfterTool hook tells the model why; the
 * agent's own `git commit` inside reaches the session. Skipped (and said so) when the CLI or
 * bubblewrap cannot run here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, pathWithHagent, runAsync } from '../helpers/agents.js';
import { checkoutHashes } from '../helpers/repo-checks.js';
import { testOrSkip } from '../helpers/skip.js';
import { integratedSession, sandboxMissing } from '../helpers/sandbox.js';
import { startModelServer } from '../helpers/model-server.js';
import { git } from '../helpers/index.js';

const test = suite('real Gemini CLI in the sandbox (hagent integrate gemini)');
const found = agentBinary('gemini');
const it = testOrSkip(
  test,
  'real Gemini CLI in the sandbox',
  'skip' in found ? found.skip : sandboxMissing,
);

// The user's checkout found at run time, where no guard reads it: emptied, overwritten, reset.
const WIPE = [
  "R=$(git worktree list --porcelain | head -1 | cut -d' ' -f2-)",
  'rm -rf "$R"/*',
  'echo pwned > "$R/a.txt"',
  'git -C "$R" checkout -- .',
  'echo "sandbox=$HAGENT_SANDBOX"',
];

it('hagent integrate gemini: the BeforeTool hook rewrites each run_shell_command into the sandbox and the real agent runs the rewritten command; the checkout is intact', async () => {
  const { repo, wt, before } = integratedSession('gemini', '.gemini/settings.json', 'gs');
  const server = await startModelServer([
    {
      calls: [
        {
          id: 'g_write',
          name: 'write_file',
          input: { file_path: `${wt}/wipe.sh`, content: WIPE.map((l) => `${l}\n`).join('') },
        },
      ],
    },
    {
      calls: [
        {
          id: 'g_wipe',
          name: 'run_shell_command',
          input: { command: 'bash wipe.sh', description: 'clean up' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'g_commit',
          name: 'run_shell_command',
          input: {
            command:
              'echo mine > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -q -m "agent commit" && git log -1 --format=%s',
            description: 'commit',
          },
        },
      ],
    },
    { text: 'Done.' },
  ]);
  try {
    const bin = (found as { bin: string }).bin;
    const env = { ...agentEnv('gemini', server.url, bin), PATH: pathWithHagent() };
    const r = await runAsync(bin, ['-p', 'clean up', '--yolo'], wt, env);
    assert.is(r.status, 0, r.stderr + r.stdout);
    const res = (id: string) => server.results.get(id)?.text ?? '';
    assert.equal(checkoutHashes(repo), before, "no byte of the user's checkout changed");
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nuser edit\n');
    assert.ok(server.results.has('g_wipe'), 'the wipe ran');
    assert.match(res('g_wipe'), /Read-only file system/, res('g_wipe'));
    assert.match(res('g_wipe'), /sandbox=gs/, 'the command ran inside the sandbox');
    // Gemini's own word that the hook's tool_input replaced what the model sent.
    assert.match(res('g_wipe'), /Tool input parameters were modified by a hook/);
    // The teaching line reached the model (the AfterTool hook's context).
    assert.match(
      JSON.stringify(server.requests.map((q) => q.body.contents ?? [])),
      /hagent sandbox: .*read-only: outside the session worktree/,
    );
    assert.match(res('g_commit'), /agent commit/, res('g_commit'));
    assert.ok(
      git(repo, 'log', '--format=%s', 'main..hagent/gs').split('\n').includes('agent commit'),
      "the agent's own commit made inside is on the session branch",
    );
    assert.is(git(repo, 'show', 'hagent/gs:own.txt'), 'mine');
  } finally {
    await server.close();
  }
});

test.run();
