/**
 * Two complete patches in one input are refused whole (MULTIPLE_PATCHES, exit 1) naming the line
 * where the second begins; sent one per apply, as the hint says, both apply.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('apply: several patches in one input');

t(
  'two patches in one input: MULTIPLE_PATCHES at the second, nothing written; one by one apply',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
    const s = startSession(repo);
    const head = git(s.worktree, 'rev-parse', 'HEAD');
    const first = '*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** End Patch\n';
    const second = '*** Begin Patch\n*** Update File: a.txt\n-two\n+TWO\n*** End Patch\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: first + second });
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'MULTIPLE_PATCHES');
    assert.is(r.json.error.message, 'the input holds more than one complete patch');
    assert.is(r.json.error.line, 6, 'the line where the second patch begins');
    assert.match(r.json.error.hint, /send one patch per apply/);
    const text = hagent(s.worktree, ['apply', '-'], { input: first + second });
    assert.is(text.status, 1);
    assert.match(text.stderr, /^error\[MULTIPLE_PATCHES\]: the input holds more than one complete/);
    assert.match(text.stderr, /line: 6/);
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      'one\ntwo\n',
      'nothing written',
    );
    assert.is(git(s.worktree, 'rev-parse', 'HEAD'), head, 'no commit');
    for (const patch of [first, second])
      assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'ONE\nTWO\n');
  },
);

t.run();
