/**
 * The real Claude Code CLI in hagent's sandbox (scripted model server on loopback), both ways in:
 * `hagent run claude` starts the whole agent inside it, and after `hagent integrate claude` the
 * pre-tool hook rewrites each allowed Bash command to start inside it. Either way a script the
 * guard cannot read that wipes the user's checkout, and `git checkout -- .` aimed at it from a
 * script, change no byte of the checkout (its uncommitted edit included), the agent is told why,
 * and the agent's own `git commit` inside reaches the session. Skipped (and said so) when the CLI
 * or bubblewrap cannot run here.
 */
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, pathWithHagent, runAsync } from '../helpers/agents.js';
import { checkoutHashes } from '../helpers/repo-checks.js';
import { integratedSession, sandboxMissing } from '../helpers/sandbox.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer, type ModelServer, type Step } from '../helpers/model-server.js';
import { git, makeRepo } from '../helpers/index.js';

const test = suite('real Claude Code in the sandbox');
const found = agentBinary('claude');
const it = testOrSkip(
  test,
  'real Claude Code in the sandbox',
  'skip' in found ? found.skip : sandboxMissing,
);

/** The script: the agent writes two scripts the guard cannot read, runs them, then commits inside. */
function script(): Step[] {
  return [
    (wd) => ({
      calls: [
        {
          id: 'toolu_write',
          name: 'Write',
          input: {
            file_path: `${wd}/wipe.sh`,
            // The user's checkout found at run time, where no guard reads it.
            content: `R=$(git worktree list --porcelain | head -1 | cut -d' ' -f2-)\nrm -rf "$R"/*\ngit -C "$R" checkout -- .\necho "sandbox=$HAGENT_SANDBOX"\n`,
          },
        },
      ],
    }),
    {
      calls: [
        {
          id: 'toolu_wipe',
          name: 'Bash',
          input: { command: 'bash wipe.sh', description: 'clean up' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'toolu_commit',
          name: 'Bash',
          input: {
            command:
              'echo mine > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -q -m "agent commit" && git log -1 --format=%s',
            description: 'commit',
          },
        },
      ],
    },
    { text: 'Done.' },
  ];
}

/** Every text the agent sent the model (tool results and hook context), as one string. */
function allText(server: ModelServer): string {
  return JSON.stringify(server.requests.map((q) => q.body.messages ?? []));
}

function checkWall(repo: string, before: Map<string, string>, server: ModelServer, id: string) {
  assert.equal(checkoutHashes(repo), before, "no byte of the user's checkout changed");
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nuser edit\n');
  const wipe = server.results.get('toolu_wipe');
  assert.ok(wipe, 'the wipe ran');
  assert.match(wipe!.text, /Read-only file system/);
  assert.match(wipe!.text, new RegExp(`sandbox=${id}`), 'the command ran inside the sandbox');
  // The teaching line reached the model (the post-tool hook's context).
  assert.match(allText(server), /hagent sandbox: .*read-only: outside the session worktree/);
  const commit = server.results.get('toolu_commit');
  assert.match(commit?.text ?? '', /agent commit/, commit?.text);
  assert.ok(
    git(repo, 'log', '--format=%s', `main..hagent/${id}`).split('\n').includes('agent commit'),
    "the agent's own commit made inside is on the session branch",
  );
  assert.is(git(repo, 'show', `hagent/${id}:own.txt`), 'mine');
}

it('hagent run claude: the whole agent inside; a hidden script wiping the checkout and its git checkout -- . change nothing; the agent is told why; its own commit reaches the session', async () => {
  const repo = realpathSync(makeRepo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' }));
  writeFileSync(path.join(repo, 'a.txt'), 'one\nuser edit\n');
  const before = checkoutHashes(repo);
  const server = await startModelServer(script());
  try {
    const env = agentEnv('claude', server.url, (found as { bin: string }).bin);
    const r = await hagentAsync(
      repo,
      [
        'run',
        'claude',
        '--name',
        'sb1',
        '--json',
        '--',
        '-p',
        'clean up',
        '--dangerously-skip-permissions',
      ],
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const summary = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{') + 1));
    assert.equal(summary.sandbox, { on: true });
    checkWall(repo, before, server, 'sb1');
  } finally {
    await server.close();
  }
});

it('hagent integrate claude: the pre-tool hook rewrites each Bash command into the sandbox and the real agent runs the rewritten command; the checkout is intact', async () => {
  const { repo, wt, before } = integratedSession('claude', '.claude/settings.json', 'sb2');
  const server = await startModelServer(script());
  try {
    const env = {
      ...agentEnv('claude', server.url, (found as { bin: string }).bin),
      PATH: pathWithHagent(),
    };
    const r = await runAsync(
      (found as { bin: string }).bin,
      ['-p', 'clean up', '--dangerously-skip-permissions', '--output-format', 'json'],
      wt,
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    checkWall(repo, before, server, 'sb2');
  } finally {
    await server.close();
  }
});

test.run();
