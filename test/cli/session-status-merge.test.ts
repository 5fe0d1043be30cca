/**
 * `hagent session status` while a `session update` merge waits in the worktree, through the real
 * CLI: the merge, its conflicted and unresolved files and the way to finish or abort it, in the
 * text and in `--json` (`merge`).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, updatePatch } from '../helpers/index.js';

const t = suite('session-status-merge');

/** A session whose update stopped at a conflict in a.txt (b.txt merged cleanly). */
function conflicted() {
  const repo = makeRepo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
  const s = startSession(repo, ['--name', 'mg']);
  assert.is(
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'session') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'a.txt'), 'main\n');
  writeFileSync(path.join(repo, 'b.txt'), 'BEE\n');
  git(repo, 'commit', '-q', '-am', 'main moves');
  const u = hagent(repo, ['session', 'update', '--json']);
  assert.is(u.json.error.code, 'MERGE_UNRESOLVED', u.stdout);
  return { repo, s, target: git(repo, 'rev-parse', 'main') };
}

t('status shows the merge in progress, what is unresolved, and how to finish or abort it', () => {
  const { repo, s, target } = conflicted();
  const json = hagent(repo, ['session', 'status', '--json']);
  assert.is(json.status, 0, json.stdout);
  assert.equal(
    { ...json.json.merge, hint: undefined },
    {
      mergeHead: target,
      byUpdate: true,
      conflicted: ['a.txt'],
      unresolved: ['a.txt'],
      hint: undefined,
    },
  );
  assert.match(json.json.merge.hint, /git add it, then run hagent sync --session mg/);
  assert.match(json.json.merge.hint, new RegExp(`git -C ${s.worktree} merge --abort`));
  const text = hagent(repo, ['session', 'status']);
  assert.match(
    text.stdout,
    /merge in progress: [0-9a-f]{12} \(hagent session update of main\), 1 of 1 conflicted file unresolved:\n {4}C a\.txt\n {4}hint: /,
  );
  // Resolved and added: the merge still waits, and the hint says sync concludes it.
  writeFileSync(path.join(s.worktree, 'a.txt'), 'both\n');
  git(s.worktree, 'add', 'a.txt');
  const resolved = hagent(repo, ['session', 'status', '--json']).json.merge;
  assert.equal(resolved.unresolved, []);
  assert.match(
    resolved.hint,
    /^every conflict is resolved: conclude the merge with hagent sync --session mg/,
  );
  assert.match(
    hagent(repo, ['session', 'status']).stdout,
    /every conflict resolved:\n {4}R a\.txt/,
  );
  // Following the hint concludes it: no merge shown any more.
  assert.is(hagent(repo, ['sync', '--session', 'mg', '--json']).status, 0);
  assert.is(hagent(repo, ['session', 'status', '--json']).json.merge, null);
  assert.not.match(hagent(repo, ['session', 'status']).stdout, /merge in progress/);
});

t('a merge given up with git merge --abort is no longer shown', () => {
  const { repo, s } = conflicted();
  git(s.worktree, 'merge', '--abort');
  const json = hagent(repo, ['session', 'status', '--json']);
  assert.is(json.json.merge, null);
  assert.equal(json.json.outsideEdits, []);
});

t('no merge: merge is null', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  startSession(repo, ['--name', 'nm']);
  assert.is(hagent(repo, ['session', 'status', '--json']).json.merge, null);
});

t.run();
