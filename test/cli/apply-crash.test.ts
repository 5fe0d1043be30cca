/**
 * An apply killed (kill -9) after its files and index, before its one ref transaction: the
 * record holds the branch, the redo ref and the session's notes ref, so the next command moves
 * them together — no commit without its note, no note lock to clear, nothing half done.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('apply killed before its ref transaction');

t('the next command moves the branch and the notes ref of the killed apply together', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'k1']);
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n';
  const killed = hagent(s.worktree, ['apply', '-', '--json'], {
    input: patch,
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.is(git(repo, 'rev-parse', s.branch), s.base, 'no ref moved');
  assert.is(git(repo, 'for-each-ref', 'refs/notes/'), '');
  const st = hagent(repo, ['session', 'status', 'k1', '--json']);
  assert.is(st.json.interrupted.command, 'apply');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(d.json.recoveries[0].action, 'completed');
  const head = git(repo, 'rev-parse', s.branch);
  assert.is(git(repo, 'show', `${head}:a.txt`), 'A');
  assert.is(git(repo, 'notes', '--ref=hagent-sessions/k1', 'show', head), patch.trimEnd());
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'A\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
});

t.run();
