/**
 * `hagent session update` that stops at conflicts: refused (exit 1, MERGE_UNRESOLVED) with the
 * files and the ways on (sync, or git merge --abort) in the hint; the merge stays in progress.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, repoWithSession, updatePatch } from '../helpers/index.js';

const t = suite('session-update-conflicts');

/** A session whose a.txt line two and main's line two both changed. */
function conflicting() {
  const { repo, s } = repoWithSession();
  assert.is(
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'a.txt'), 'one\nMAIN\nthree\n');
  git(repo, 'commit', '-qam', 'user');
  return { repo, s };
}

const mergeHead = (worktree: string) =>
  existsSync(path.join(git(worktree, 'rev-parse', '--absolute-git-dir'), 'MERGE_HEAD'));

t(
  '--json: exit 1, ok false, the result fields kept, error MERGE_UNRESOLVED naming the files',
  () => {
    const { repo, s } = conflicting();
    const r = hagent(repo, ['session', 'update', 's1', '--json']);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.ok, false);
    assert.equal(r.json.conflicts, ['a.txt']);
    assert.is(r.json.commit, null);
    assert.is(r.json.session, 's1');
    assert.is(r.json.error.code, 'MERGE_UNRESOLVED');
    assert.equal(r.json.error.files, ['a.txt']);
    assert.match(r.json.error.message, /stopped at 1 conflicted file: a\.txt/);
    assert.match(r.json.error.hint, /git add it, then run hagent sync --session s1/);
    assert.match(r.json.error.hint, /merge --abort/);
    assert.ok(mergeHead(s.worktree), 'the merge stays in progress');
    assert.match(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), /<<<<<<< HEAD/);
  },
);

t('human: the conflicted files on stdout, error and hint on stderr; both ways on work', () => {
  const { repo, s } = conflicting();
  const r = hagent(repo, ['session', 'update', 's1']);
  assert.is(r.status, 1);
  assert.match(r.stdout, /1 file with conflicts\n {2}C a\.txt/);
  assert.match(r.stderr, /^error\[MERGE_UNRESOLVED\]: merging main into session s1/m);
  assert.match(r.stderr, /hint: .*hagent sync --session s1/);
  // Following the hint's second way: git merge --abort, and the session is as before.
  const abort = r.stderr.match(/git -C (\S+) merge --abort/);
  assert.ok(abort, r.stderr);
  git(abort![1]!, 'merge', '--abort');
  assert.not.ok(mergeHead(s.worktree));
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.outsideEdits.length, 0);
  // Again, and the first way: resolve, git add, hagent sync.
  assert.is(hagent(repo, ['session', 'update', 's1', '--json']).status, 1);
  writeFileSync(path.join(s.worktree, 'a.txt'), 'one\nBOTH\nthree\n');
  git(s.worktree, 'add', 'a.txt');
  const sync = hagent(repo, ['sync', '--session', 's1', '--json']);
  assert.is(sync.status, 0, sync.stdout);
  assert.not.ok(mergeHead(s.worktree));
  assert.is(hagent(repo, ['session', 'update', 's1', '--json']).json.upToDate, true);
});

t('a second update while the merge waits: MERGE_IN_PROGRESS, hint naming merge --abort', () => {
  const { repo } = conflicting();
  hagent(repo, ['session', 'update', 's1']);
  const again = hagent(repo, ['session', 'update', 's1', '--json']);
  assert.is(again.status, 1);
  assert.is(again.json.error.code, 'MERGE_IN_PROGRESS');
  assert.match(again.json.error.hint, /merge --abort/);
});

t.run();
