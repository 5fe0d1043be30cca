/**
 * The real Codex CLI after `hagent integrate codex` (no `hagent run`; scripted model server on
 * loopback): the pre-tool hook rewrites each allowed shell command (`exec_command`) to start
 * inside the session's sandbox, with Codex's `updatedInput`. A script the guard cannot read that
 * wipes and overwrites the user's checkout, and `git checkout -- .` aimed at it from that script,
 * change no byte of the checkout (its uncommitted edit included); the command's output shows it
 * ran inside and was refused by the read-only file system; the agent's own `git commit` inside
 * reaches the session. Skipped (and said so) when the CLI or bubblewrap cannot run here.
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
import { git, hagent } from '../helpers/index.js';

const test = suite('real Codex in the sandbox (hagent integrate codex)');
const found = agentBinary('codex');
const it = testOrSkip(
  test,
  'real Codex in the sandbox',
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

it('hagent integrate codex: the pre-tool hook rewrites each exec_command into the sandbox and the real agent runs the rewritten command; the checkout is intact', async () => {
  const { repo, wt, before } = integratedSession('codex', '.codex/hooks.json', 'xs');
  const patch = `*** Begin Patch\n*** Add File: wipe.sh\n${WIPE.map((l) => `+${l}\n`).join('')}*** End Patch\n`;
  const server = await startModelServer([
    { calls: [{ id: 'call_write', name: 'apply_patch', input: patch }] },
    { calls: [{ id: 'call_wipe', name: 'exec_command', input: { cmd: 'bash wipe.sh' } }] },
    {
      calls: [
        {
          id: 'call_commit',
          name: 'exec_command',
          input: {
            cmd: 'echo mine > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -q -m "agent commit" && git log -1 --format=%s',
          },
        },
      ],
    },
    { text: 'Done.' },
  ]);
  try {
    const bin = (found as { bin: string }).bin;
    const env = { ...agentEnv('codex', server.url, bin), PATH: pathWithHagent() };
    const r = await runAsync(
      bin,
      [
        'exec',
        '--skip-git-repo-check',
        // Codex's own sandbox off: hagent's is the wall under test.
        '--dangerously-bypass-approvals-and-sandbox',
        '--dangerously-bypass-hook-trust',
        // Codex reads a project's .codex/ only in a project the user trusted.
        '--trust',
        'clean up',
      ],
      wt,
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const res = (id: string) => server.results.get(id)?.text ?? '';
    assert.match(res('call_write'), /Success\. Updated the following files:\nA wipe\.sh/);
    assert.equal(checkoutHashes(repo), before, "no byte of the user's checkout changed");
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nuser edit\n');
    assert.ok(server.results.has('call_wipe'), 'the wipe ran');
    assert.match(res('call_wipe'), /Read-only file system/, res('call_wipe'));
    assert.match(res('call_wipe'), /sandbox=xs/, 'the command ran inside the sandbox');
    // The post-tool hook read what the sandbox stopped, and its teaching line reached the model
    // (Codex's PostToolUse additionalContext, in the next request).
    assert.ok(
      server.requests.some((q) => JSON.stringify(q.body).includes('hagent sandbox:')),
      'the model was told why',
    );
    const log = hagent(repo, ['log', '--json', '--session', 'xs']);
    const denied = log.json.entries.find((e: { code?: string }) => e.code === 'SANDBOX_DENIED');
    assert.ok(denied, log.stdout);
    assert.match(denied.message, /a\.txt/);
    assert.match(res('call_commit'), /agent commit/, res('call_commit'));
    assert.ok(
      git(repo, 'log', '--format=%s', 'main..hagent/xs').split('\n').includes('agent commit'),
      "the agent's own commit made inside is on the session branch",
    );
    assert.is(git(repo, 'show', 'hagent/xs:own.txt'), 'mine');
  } finally {
    await server.close();
  }
});

test.run();
