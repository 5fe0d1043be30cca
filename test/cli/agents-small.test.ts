/**
 * The smaller agent items of the wiring work, through the spawned CLI: `hagent run` ends with the
 * approval step (review, review --approve, land); Cursor answers to both its names in run,
 * integrate and hook; under `hagent run` a hagent hook the repository also wires stands aside
 * for the run's own; the end of a turn with nothing to adopt writes no journal line.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const test = suite('agents: smaller items');

/** A stand-in agent that exits at once with `status`. */
function fakeAgent(status: number): string {
  const bin = path.join(tempDir('hagent-fake-agent-'), 'agent');
  writeFileSync(bin, `#!/bin/sh\nexit ${status}\n`, { mode: 0o755 });
  return bin;
}

test('hagent run ends with the approval step: review, then review --approve, then land', () => {
  const repo = makeRepo();
  const bin = path.join(tempDir('hagent-fake-agent-'), 'agent');
  writeFileSync(bin, '#!/bin/sh\necho made > made.txt\nexit 0\n', { mode: 0o755 });
  const r = hagent(repo, ['run', 'claude', '--name', 'n1'], { env: { HAGENT_CLAUDE_BIN: bin } });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /Next: hagent review, then hagent review --approve, then hagent land/);
  assert.match(r.stdout, /hagent review --session n1 --approve/);
});

test('cursor and cursor-agent: run, integrate and hook take either name', () => {
  const repo = makeRepo();
  const bin = fakeAgent(0);
  for (const name of ['cursor', 'cursor-agent']) {
    const r = hagent(repo, ['run', name, '--name', `c-${name}`, '--json'], {
      env: { HAGENT_CURSOR_AGENT_BIN: bin },
    });
    assert.is(r.status, 0, `${name}: ${r.stderr}`);
    assert.is(r.json.agent, 'cursor-agent');
  }
  const integrate = hagent(repo, ['integrate', 'cursor-agent', '--json']);
  assert.is(integrate.status, 0, integrate.stderr);
  assert.is(integrate.json.agent, 'cursor');
  assert.is(hagent(repo, ['integrate', 'cursor-agent', '--mcp', '--json']).status, 0);
  const hook = hagent(repo, ['hook', 'cursor-agent'], { input: '{}' });
  assert.is(hook.status, 0, hook.stderr);
  assert.is(hook.stdout, '{}\n');
});

test("under hagent run, a hagent hook the repository wires stands aside for the run's own: one refusal, not two", () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'd1']);
  const payload = JSON.stringify({
    hook_event_name: 'PreToolUse',
    cwd: s.worktree,
    tool_name: 'Bash',
    tool_use_id: 'toolu_1',
    tool_input: { command: 'git push --force origin HEAD:main' },
  });
  const env = { HAGENT_SESSION: 'd1', HAGENT_WORKTREE: s.worktree, HAGENT_RUN_HOOKS: '1' };
  const project = hagent(s.worktree, ['hook', 'claude'], { input: payload, env });
  assert.is(project.status, 0, project.stderr);
  const own = hagent(s.worktree, ['hook', 'claude'], {
    input: payload,
    env: { ...env, HAGENT_HOOK_SOURCE: 'run' },
  });
  assert.is(own.status, 2);
  assert.match(own.stderr, /error\[GUARD_BLOCKED\]/);
  const log = hagent(repo, ['log', '--session', 'd1', '--failed', '--json']);
  assert.is(log.json.entries.length, 1, log.stdout);
});

test('Stop and SessionEnd with nothing to adopt write no journal line', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'e1']);
  for (const event of ['Stop', 'SessionEnd']) {
    const r = hagent(s.worktree, ['hook', 'claude'], {
      input: JSON.stringify({ hook_event_name: event, cwd: s.worktree }),
    });
    assert.is(r.status, 0, r.stderr);
  }
  const log = hagent(repo, ['log', '--session', 'e1', '--json']);
  assert.equal(
    log.json.entries.filter((e: { command: string }) => e.command !== 'session start'),
    [],
    log.stdout,
  );
  // What is left over is still adopted, and journaled.
  writeFileSync(path.join(s.worktree, 'left.txt'), 'x\n');
  hagent(s.worktree, ['hook', 'claude'], {
    input: JSON.stringify({ hook_event_name: 'Stop', cwd: s.worktree }),
  });
  assert.is(git(repo, 'log', '-1', '--format=%s', 'hagent/e1').startsWith('hagent:'), true);
  assert.is(
    hagent(repo, ['log', '--session', 'e1', '--json']).json.entries.filter(
      (e: { command: string }) => e.command === 'sync',
    ).length,
    1,
  );
});

test.run();
