/**
 * No work lost (docs/reliability.md "No work lost"): states users and agents make every day in
 * which hagent must lose nothing and write nothing where it may not, each through the real CLI in
 * a real repository.
 * 1. Outside edits made before an agent's shell command get their own outside commit first (hook
 *    path), so the command's commit, and its undo, hold only what the command changed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const test = suite('no work lost');

const hook = (cwd: string, args: string[], payload: unknown) =>
  hagent(cwd, ['hook', ...args], { input: JSON.stringify(payload) });

test('1. hook: a human edit before a Bash call is its own outside commit; the exec commit and its undo hold only the command', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'o1']);
  writeFileSync(path.join(wt, 'a.txt'), 'one\nhuman line\n');
  const bash = (event: string) => ({
    hook_event_name: event,
    session_id: 's',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_b',
    tool_input: { command: 'echo agent > b.txt' },
  });
  const pre = hook(wt, ['claude'], bash('PreToolUse'));
  assert.is(pre.status, 0, pre.stderr);
  writeFileSync(path.join(wt, 'b.txt'), 'agent\n');
  const post = hook(wt, ['claude'], bash('PostToolUse'));
  assert.is(post.status, 0, post.stderr);
  assert.equal(git(repo, 'log', '--format=%s', 'main..hagent/o1').split('\n'), [
    'hagent: exec echo agent > b.txt',
    'hagent: outside edits (M a.txt)',
  ]);
  assert.equal(git(repo, 'show', '--format=', '--name-only', 'hagent/o1').split('\n'), ['b.txt']);
  // The agent's undo takes back its own command only: the human's line stays, committed.
  const undo = hagent(wt, ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.is(git(repo, 'show', 'hagent/o1:a.txt'), 'one\nhuman line');
});

test.run();
