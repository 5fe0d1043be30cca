/**
 * The real Claude Code CLI through `hagent run claude`, driven by the scripted model server: a
 * human edit made in the worktree between two of the agent's Bash calls becomes its own outside
 * commit, not part of the next command's commit (docs/reliability.md, "No work lost", class 1).
 * Skipped (and said so) when the CLI cannot be installed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, makeRepo } from '../helpers/index.js';

const test = suite('real Claude Code: outside edits between tool calls');
const found = agentBinary('claude');
const it = testOrSkip(test, 'real Claude Code', 'skip' in found ? found.skip : undefined);

it("a human edit between two Bash calls is its own outside commit; the next command's commit holds only its own file", async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const bash = (id: string, command: string) => ({
    calls: [{ id, name: 'Bash', input: { command, description: 'x' } }],
  });
  const server = await startModelServer([
    bash('toolu_1', 'echo first > b.txt'),
    (wd) => {
      // The human, while the agent thinks: an edit in the session worktree.
      writeFileSync(path.join(wd, 'a.txt'), 'one\nhuman line\n');
      return bash('toolu_2', 'echo second > c.txt');
    },
    { text: 'Done.' },
  ]);
  try {
    const r = await hagentAsync(
      repo,
      [
        'run',
        'claude',
        '--name',
        'oe',
        '--',
        '-p',
        'run the scripted commands',
        '--dangerously-skip-permissions',
        '--output-format',
        'json',
      ],
      agentEnv('claude', server.url, (found as { bin: string }).bin),
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const subjects = git(repo, 'log', '--reverse', '--format=%s', 'main..hagent/oe').split('\n');
    assert.equal(subjects, [
      'hagent: exec echo first > b.txt',
      'hagent: outside edits (M a.txt)',
      'hagent: exec echo second > c.txt',
    ]);
    assert.equal(git(repo, 'show', '--format=', '--name-only', 'hagent/oe').split('\n'), ['c.txt']);
    assert.is(git(repo, 'show', 'hagent/oe:a.txt'), 'one\nhuman line');
  } finally {
    await server.close();
  }
});

test.run();
