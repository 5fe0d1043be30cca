/**
 * `hagent log`: the journal of applied and refused attempts, through the real CLI.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, startSession, updatePatch } from '../helpers/index.js';

const t = suite('log');

t('the journal records applied and blocked attempts with their hints', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'a', 'A') });
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'zzz', 'Q') });
  const all = hagent(repo, ['log', '--json']);
  assert.is(all.status, 0);
  const entries = all.json.entries;
  assert.is(entries.length, 2);
  assert.is(entries[0].ok, true);
  assert.equal(entries[0].files, ['a.txt']);
  assert.is(entries[1].ok, false);
  assert.is(entries[1].code, 'CONTEXT_NOT_FOUND');
  assert.ok(entries[1].hint);
  const failed = hagent(repo, ['log', '--failed']);
  assert.match(failed.stdout, /blocked/);
  assert.match(failed.stdout, /CONTEXT_NOT_FOUND/);
  assert.not.match(failed.stdout, /^applied/m);
});

t.run();
