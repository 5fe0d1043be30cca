/**
 * hagent's MCP server under a sandboxed `hagent run claude` (real Claude Code, scripted model
 * server on loopback): the `hagent mcp` Claude Code starts inside the sandbox asks the run for a
 * server outside it and passes the bytes (src/mcp/proxy.ts, src/agents/hook-server.ts). So
 * `mcp__hagent__apply_patch` becomes a commit on the session branch (it failed inside: the
 * sandbox keeps hagent's records read-only), the MCP `exec` still runs its command in the
 * sandbox (a write to the user's checkout is refused), and the agent's own shell and `git
 * commit` inside keep working after both. Skipped (and said so) when the CLI or bubblewrap cannot
 * run here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, hagent, makeRepo } from '../helpers/index.js';

const test = suite('real Claude Code: hagent mcp under a sandboxed hagent run');
const found = agentBinary('claude');
const bwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0;
const it = testOrSkip(
  test,
  'real Claude Code: hagent mcp under a sandboxed hagent run',
  'skip' in found ? found.skip : bwrap ? undefined : 'bubblewrap (bwrap) cannot start here',
);

/** Pids of processes still running `hagent mcp --session id`. */
function serversLeft(id: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
        return cmd.includes('mcp') && cmd.includes('--session') && cmd.includes(id);
      } catch {
        return false;
      }
    })
    .map(Number);
}

it('hagent run claude (sandbox on): mcp__hagent__apply_patch commits on the session branch; the MCP exec stays walled in; the agent commits inside afterwards', async () => {
  const repo = realpathSync(makeRepo({ 'a.txt': 'one\n' }));
  const integrate = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--json']);
  assert.is(integrate.status, 0, integrate.stderr);
  git(repo, 'add', '.mcp.json', '.claude/settings.json');
  git(repo, 'commit', '-q', '-m', 'hagent MCP server, strict mode');
  // A script the guard cannot read: it finds the user's checkout at run time and writes there.
  const script =
    'R=$(git worktree list --porcelain | head -1 | cut -d" " -f2-)\necho pwned > "$R/outside.txt"\necho "sandbox=$HAGENT_SANDBOX"\n';
  const patch = `*** Begin Patch\n*** Add File: c.txt\n+sea\n*** Add File: w.sh\n${script
    .trimEnd()
    .split('\n')
    .map((l) => `+${l}`)
    .join('\n')}\n*** End Patch\n`;
  const server = await startModelServer([
    { calls: [{ id: 'toolu_patch', name: 'mcp__hagent__apply_patch', input: { patch } }] },
    { calls: [{ id: 'toolu_exec', name: 'mcp__hagent__exec', input: { command: 'bash w.sh' } }] },
    {
      calls: [
        {
          id: 'toolu_commit',
          name: 'Bash',
          input: {
            command:
              'echo mine > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -q -m "agent commit" && git log --format=%s -3',
            description: 'commit',
          },
        },
      ],
    },
    { text: 'Done.' },
  ]);
  try {
    const env: Record<string, string> = {
      ...agentEnv('claude', server.url, (found as { bin: string }).bin),
      PATH: pathWithHagent(),
    };
    // The user once accepted Claude Code's trust dialog in the repository (worktrees share it):
    // only then does it start the project's MCP server.
    writeFileSync(
      path.join(env.HOME!, '.claude.json'),
      JSON.stringify({ projects: { [repo]: { hasTrustDialogAccepted: true } } }),
    );
    const r = await hagentAsync(
      repo,
      [
        'run',
        'claude',
        '--name',
        'mr1',
        '--json',
        '--',
        '-p',
        'make the scripted edits',
        '--dangerously-skip-permissions',
      ],
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const summary = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{') + 1));
    assert.equal(summary.sandbox, { on: true });
    const res = (id: string) => server.results.get(id);

    // apply_patch: served outside the sandbox, a commit on the session branch.
    assert.ok(res('toolu_patch'), 'the agent called mcp__hagent__apply_patch');
    assert.not.ok(res('toolu_patch')!.isError, res('toolu_patch')!.text);
    assert.match(res('toolu_patch')!.text, /c\.txt/);
    assert.is(git(repo, 'show', 'hagent/mr1:c.txt'), 'sea');

    // The server that applied it ran outside, started by the run (its log line), and is gone.
    assert.match(
      readFileSync(path.join(repo, '.git', 'hagent', 'agents', 'mr1', 'mcp.log'), 'utf8'),
      /hagent mcp: serving session mr1/,
    );
    assert.equal(serversLeft('mr1'), [], 'the run ended the MCP server it started');

    // exec: still inside the sandbox; the write to the user's checkout refused there.
    const exec = res('toolu_exec');
    assert.ok(exec, 'the agent called mcp__hagent__exec');
    assert.match(exec!.text, /sandbox=mr1/, exec!.text);
    assert.match(exec!.text, /Read-only file system|read-only/, exec!.text);
    assert.not.ok(existsSync(path.join(repo, 'outside.txt')), "the user's checkout is untouched");
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');

    // The agent's own sandbox still works after both: its commit inside sits on the patch's.
    const commit = res('toolu_commit');
    assert.match(commit?.text ?? '', /agent commit/, commit?.text);
    const log = git(repo, 'log', '--format=%s', `main..hagent/mr1`).split('\n');
    assert.is(log[0], 'agent commit', log.join(' | '));
    assert.is(git(repo, 'show', 'hagent/mr1:own.txt'), 'mine');
    assert.is(git(repo, 'show', 'hagent/mr1:c.txt'), 'sea', 'the patch is under the agent commit');
    assert.is(summary.commits >= 2, true, JSON.stringify(summary));
  } finally {
    await server.close();
  }
});

test.run();
