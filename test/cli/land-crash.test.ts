/**
 * A land killed (kill -9) after it updated the user's checkout, before its one ref transaction
 * (target, landed/<n> and land base together): the next command puts the checkout back and no
 * ref moved, so the land after it lands everything once, without a false conflict.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('land killed before its ref transaction');

t('the checkout is put back, no ref moved, and the next land lands it', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'l1']);
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n';
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const main = git(repo, 'rev-parse', 'main');
  const killed = hagent(repo, ['land', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(git(repo, 'for-each-ref', 'refs/hagent/l1/'), '', 'landed/<n> and land base unmoved');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered.action, 'restored');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'ONE\n');
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  assert.is(git(repo, 'rev-parse', 'refs/hagent/l1/land-base^2'), r.json.commit);
});

t.run();
