/**
 * An undo or redo killed (kill -9) between its files and its refs: the record of the one
 * transaction names the session branch and the redo ref together, so the next command finishes
 * both — the redo is never lost (before, the redo ref was written after the record was removed).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('undo killed before its ref transaction');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

t('an undo killed before its refs moved is finished by the next command, redo included', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'u1']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') });
  assert.is(applied.status, 0, applied.stdout);
  const killed = hagent(s.worktree, ['undo', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  const record = path.join(repo, '.git', 'hagent', 'tx', 'u1.json');
  assert.ok(existsSync(record), 'the record names what was left half done');
  assert.equal(
    JSON.parse(readFileSync(record, 'utf8')).refs.map((r: { ref: string }) => r.ref),
    ['refs/heads/hagent/u1', 'refs/hagent/u1/redo'],
  );
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(d.json.recoveries[0].action, 'completed');
  assert.is(git(repo, 'rev-parse', s.branch), s.base);
  assert.is(git(repo, 'rev-parse', 'refs/hagent/u1/redo'), applied.json.commit, 'redo kept');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(redo.status, 0, redo.stdout);
  assert.is(git(repo, 'rev-parse', s.branch), applied.json.commit);
});

t('a redo killed before its refs moved is finished: branch forward, redo ref gone', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'u2']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') });
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
  const killed = hagent(s.worktree, ['undo', '--redo', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  const next = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'A', 'B') });
  assert.is(next.status, 0, next.stdout);
  assert.is(next.json.recovery.action, 'completed');
  assert.is(next.json.parent, applied.json.commit, 'the redo was finished first');
  assert.is(git(repo, 'for-each-ref', 'refs/hagent/u2/redo'), '');
});

t.run();
