/**
 * What `hagent integrate` (project scope, the file left untracked as a user leaves it) protects,
 * with the real Claude Code and Codex CLIs driven by the scripted model server on loopback:
 * `claude --worktree NAME` makes a session whose worktree carries hagent's hooks although the
 * hook file is not committed (and that file never enters a session commit), and an agent started
 * in the main checkout has its writes and destructive git refused with how to enter a session.
 * Skipped (and said so) when a CLI cannot be installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, runAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer, type Step } from '../helpers/model-server.js';
import { git, hagent, makeRepo } from '../helpers/index.js';

const test = suite('agent wiring after hagent integrate (project scope, uncommitted)');
const claude = agentBinary('claude');
const codex = agentBinary('codex');
const itClaude = testOrSkip(test, 'real Claude Code', 'skip' in claude ? claude.skip : undefined);
const itCodex = testOrSkip(test, 'real Codex', 'skip' in codex ? codex.skip : undefined);

/**
 * The real Claude Code with `args` in `cwd`, against the scripted `steps`, hagent on PATH as
 * `npm install -g` puts it: its exit status and output, and each tool call's result text.
 */
async function runClaude(cwd: string, steps: Step[], args: string[]) {
  const server = await startModelServer(steps);
  try {
    const bin = (claude as { bin: string }).bin;
    const env = { ...agentEnv('claude', server.url, bin), PATH: pathWithHagent() };
    const r = await runAsync(bin, [...args, '--dangerously-skip-permissions'], cwd, env);
    assert.is(r.status, 0, r.stderr + r.stdout);
    return { ...r, result: (id: string) => server.results.get(id)?.text ?? '' };
  } finally {
    await server.close();
  }
}

itClaude(
  'claude --worktree NAME with an untracked .claude/settings.json: the session worktree has hagent hooks (Write is a commit, .env refused); the hook file is in no commit',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
    const r = await runClaude(
      repo,
      [
        (wd) => ({
          calls: [
            { id: 'toolu_w', name: 'Write', input: { file_path: `${wd}/wt.txt`, content: 'x\n' } },
          ],
        }),
        (wd) => ({
          calls: [
            {
              id: 'toolu_env',
              name: 'Write',
              input: { file_path: `${wd}/.env`, content: 'S=1\n' },
            },
          ],
        }),
        { text: 'Done.' },
      ],
      ['--worktree', 'wt-u', '-p', 'edit'],
    );
    assert.match(r.result('toolu_env'), /error\[PATH_DENIED\]/);
    assert.equal(git(repo, 'log', '--reverse', '--format=%s', 'main..hagent/wt-u').split('\n'), [
      'hagent: Write wt.txt',
    ]);
    assert.not.match(git(repo, 'log', '--name-only', '--format=', 'main..hagent/wt-u'), /\.claude/);
    const wt = hagent(repo, ['session', 'status', 'wt-u', '--json']).json.worktree as string;
    assert.not.ok(existsSync(path.join(wt, '.env')));
    // The worktree carries the wiring: doctor finds nothing missing, git sees nothing there.
    const doctor = hagent(repo, ['doctor', '--json']);
    assert.not.ok(
      doctor.json.findings.some((f: { kind: string }) => f.kind === 'agent-wiring'),
      doctor.stdout,
    );
    assert.is(git(wt, 'status', '--porcelain'), '');
    assert.is(hagent(repo, ['review', '--session', 'wt-u', '--json']).json.files.length, 1);
  },
);

itClaude(
  'plain claude in the integrated main checkout: Write and Edit and git reset --hard are refused with how to start a session; the checkout and its branch are untouched',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'second');
    const head = git(repo, 'rev-parse', 'HEAD');
    assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
    const r = await runClaude(
      repo,
      [
        (wd) => ({
          calls: [{ id: 'toolu_read', name: 'Read', input: { file_path: `${wd}/a.txt` } }],
        }),
        (wd) => ({
          calls: [
            {
              id: 'toolu_edit',
              name: 'Edit',
              input: { file_path: `${wd}/a.txt`, old_string: 'one', new_string: 'two' },
            },
          ],
        }),
        (wd) => ({
          calls: [
            { id: 'toolu_w', name: 'Write', input: { file_path: `${wd}/n.txt`, content: 'n\n' } },
          ],
        }),
        {
          calls: [
            { id: 'toolu_reset', name: 'Bash', input: { command: 'git reset --hard HEAD~1' } },
          ],
        },
        { calls: [{ id: 'toolu_log', name: 'Bash', input: { command: 'git log --oneline' } }] },
        { text: 'Done.' },
      ],
      ['-p', 'edit', '--output-format', 'json'],
    );
    for (const id of ['toolu_edit', 'toolu_w', 'toolu_reset']) {
      assert.match(r.result(id), /error\[MAIN_CHECKOUT\]/, `${id}: ${r.result(id)}`);
      assert.match(r.result(id), /claude --worktree/);
    }
    assert.not.match(r.result('toolu_log'), /MAIN_CHECKOUT/);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
    assert.not.ok(existsSync(path.join(repo, 'n.txt')));
    assert.is(git(repo, 'rev-parse', 'HEAD'), head);
  },
);

itClaude(
  'hagent run claude in a repository with committed hagent hooks: each event is handled once (one refused command, one blocked attempt)',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
    git(repo, 'add', '.claude/settings.json');
    git(repo, 'commit', '-q', '-m', 'hagent hooks');
    const server = await startModelServer([
      {
        calls: [
          {
            id: 'toolu_push',
            name: 'Bash',
            input: { command: 'git push --force origin HEAD:main' },
          },
        ],
      },
      { text: 'Done.' },
    ]);
    try {
      const bin = (claude as { bin: string }).bin;
      const env = { ...agentEnv('claude', server.url, bin), PATH: pathWithHagent() };
      const r = await hagentAsync(
        repo,
        [
          'run',
          'claude',
          '--name',
          'once',
          '--json',
          '--',
          '-p',
          'x',
          '--dangerously-skip-permissions',
        ],
        env,
      );
      assert.is(r.status, 0, r.stderr + r.stdout);
      assert.match(server.results.get('toolu_push')?.text ?? '', /error\[GUARD_BLOCKED\]/);
      const summary = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{') + 1));
      assert.is(summary.blocked.length, 1, JSON.stringify(summary.blocked));
    } finally {
      await server.close();
    }
  },
);

itCodex(
  'plain codex in the integrated main checkout: apply_patch and git reset --hard are refused with how to start a session',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'second');
    const head = git(repo, 'rev-parse', 'HEAD');
    assert.is(hagent(repo, ['integrate', 'codex']).status, 0);
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n';
    const server = await startModelServer([
      { calls: [{ id: 'call_patch', name: 'apply_patch', input: patch }] },
      {
        calls: [
          { id: 'call_reset', name: 'exec_command', input: { cmd: 'git reset --hard HEAD~1' } },
        ],
      },
      { text: 'Done.' },
    ]);
    try {
      const bin = (codex as { bin: string }).bin;
      const env = { ...agentEnv('codex', server.url, bin), PATH: pathWithHagent() };
      const r = await runAsync(
        bin,
        [
          'exec',
          '--skip-git-repo-check',
          '--dangerously-bypass-approvals-and-sandbox',
          '--dangerously-bypass-hook-trust',
          // Codex reads a project's .codex/ only in a project the user trusted.
          '--trust',
          'edit',
        ],
        repo,
        env,
      );
      assert.is(r.status, 0, r.stderr + r.stdout);
      const res = (id: string) => server.results.get(id)?.text ?? '';
      for (const id of ['call_patch', 'call_reset']) {
        assert.match(res(id), /error\[MAIN_CHECKOUT\]/, `${id}: ${res(id)}`);
        assert.match(res(id), /hagent run codex/);
      }
      assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
      assert.is(git(repo, 'rev-parse', 'HEAD'), head);
    } finally {
      await server.close();
    }
  },
);

test.run();
