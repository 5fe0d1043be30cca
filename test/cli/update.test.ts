/**
 * `hagent session update` through the real CLI, as an agent would use it: a land conflict, the
 * update that leaves conflict markers and a merge in progress, sync refusing while markers remain
 * and concluding the merge once they are gone, then the land; and a clean update.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('session update');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

t('a land conflict, then update, resolve, sync and land: the loop closes', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  const s = startSession(repo, ['--name', 'u']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  git(repo, 'commit', '-qam', 'user');
  const conflict = hagent(repo, ['land', '--session', 'u', '--yes', '--json']);
  assert.is(conflict.json.error.code, 'LAND_CONFLICT');
  assert.match(conflict.json.error.hint, /hagent session update --session u/);
  const update = hagent(repo, ['session', 'update', 'u', '--json']);
  assert.is(update.status, 0, update.stdout + update.stderr);
  assert.equal(update.json.conflicts, ['c.txt']);
  assert.is(update.json.commit, null);
  assert.match(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), /^<<<<<<< /m);
  const again = hagent(repo, ['session', 'update', 'u', '--json']);
  assert.is(again.json.error.code, 'MERGE_IN_PROGRESS');
  assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m, 'git sees the conflict');
  const early = hagent(s.worktree, ['sync', '--json']);
  assert.is(early.json.error.code, 'MERGE_UNRESOLVED');
  assert.equal(early.json.error.files, ['c.txt']);
  writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nRESOLVED\nl3\n');
  assert.is(
    hagent(s.worktree, ['sync', '--json']).json.error.code,
    'MERGE_UNRESOLVED',
    'resolved when git add says so',
  );
  assert.match(early.json.error.hint, /git add FILE/);
  git(s.worktree, 'add', 'c.txt');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.is(
    git(repo, 'rev-list', '--parents', '-n1', 'hagent/u').split(' ').length,
    3,
    'a merge commit',
  );
  assert.not.ok(existsSync(path.join(git(s.worktree, 'rev-parse', '--git-dir'), 'MERGE_HEAD')));
  const review = hagent(repo, ['review', '--session', 'u', '--json']).json;
  assert.is(review.since, 'target');
  assert.equal(
    review.files.map((f: any) => f.path),
    ['c.txt'],
  );
  assert.is(review.drift, null, 'hagent made every move');
  const land = hagent(repo, ['land', '--session', 'u', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nRESOLVED\nl3\n');
  assert.is(hagent(repo, ['session', 'end', 'u', '--json']).status, 0);
});

t(
  'a clean update merges the target in one hagent commit, and the land brings only the session change',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'u\n' });
    const s = startSession(repo, ['--name', 'c']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
      0,
    );
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'commit', '-qam', 'user');
    const update = hagent(repo, ['session', 'update', 'c', '--json']);
    assert.is(update.status, 0, update.stdout);
    assert.equal(update.json.files, [{ path: 'u.txt', status: 'M' }]);
    assert.equal(update.json.conflicts, []);
    assert.is(readFileSync(path.join(s.worktree, 'u.txt'), 'utf8'), 'user\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.match(git(repo, 'log', '-1', '--format=%B', 'hagent/c'), /Hagent-Op: update/);
    const up = hagent(repo, ['session', 'update', 'c', '--json']);
    assert.is(up.json.upToDate, true);
    const land = hagent(repo, ['land', '--session', 'c', '--yes', '--json']);
    assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
    const undo = hagent(s.worktree, ['undo', '--json']);
    assert.is(undo.status, 0, 'the update is undoable like any commit');
  },
);

t('update refuses while outside edits are pending', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'p']);
  writeFileSync(path.join(repo, 'a.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user');
  writeFileSync(path.join(s.worktree, 'new.txt'), 'x\n');
  const r = hagent(repo, ['session', 'update', 'p', '--json']);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.match(r.json.error.hint, /hagent sync --session p/);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n', 'nothing touched');
});

t('--rebase replays the patches on the target; a conflict refuses with nothing written', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'u.txt': 'u\n' });
  const s = startSession(repo, ['--name', 'r']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
    0,
  );
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('b.txt', 'b', 'B') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user');
  const old = git(repo, 'rev-parse', 'hagent/r');
  const r = hagent(repo, ['session', 'update', 'r', '--rebase', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(
    git(repo, 'rev-parse', 'hagent/r~2'),
    git(repo, 'rev-parse', 'main'),
    'two patches on top of main',
  );
  assert.is(
    git(repo, 'rev-parse', `refs/hagent/r/rebased/${old}`),
    old,
    'the old head stays reachable',
  );
  assert.match(
    git(repo, 'notes', '--ref=hagent-sessions/r', 'show', 'hagent/r'),
    /\+B/,
    'the patch text follows the commit',
  );
  const review = hagent(repo, ['review', '--session', 'r', '--json']).json;
  assert.is(review.patches.length, 2);
  assert.is(review.drift, null);
  assert.equal(
    review.files.map((f: any) => f.path),
    ['a.txt', 'b.txt'],
  );
  writeFileSync(path.join(repo, 'a.txt'), 'user A\n');
  git(repo, 'commit', '-qam', 'user conflicts');
  const head = git(repo, 'rev-parse', 'hagent/r');
  const refused = hagent(repo, ['session', 'update', 'r', '--rebase', '--json']);
  assert.is(refused.json.error.code, 'LAND_CONFLICT');
  assert.match(refused.json.error.hint, /hagent session update --session r/);
  assert.is(git(repo, 'rev-parse', 'hagent/r'), head, 'nothing moved');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t(
  "update merges over what has landed: a landed line the user changed since is the user's, not a conflict",
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n', 'o.txt': 'o\n' });
    const s = startSession(repo, ['--name', 'lb']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'A2') }).status,
      0,
    );
    assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nU2\nl3\nl4\nl5\n');
    git(repo, 'commit', '-qam', 'user changes the landed line');
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('o.txt', 'o', 'AO') }).status,
      0,
    );
    const update = hagent(repo, ['session', 'update', 'lb', '--json']);
    assert.is(update.status, 0, update.stdout);
    assert.equal(update.json.conflicts, []);
    assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'l1\nU2\nl3\nl4\nl5\n');
    const review = hagent(repo, ['review', '--session', 'lb', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['o.txt'],
      "only the session's own change is left to land",
    );
    assert.is(hagent(repo, ['land', '--session', 'lb', '--yes', '--json']).status, 0);
    assert.is(
      readFileSync(path.join(repo, 'c.txt'), 'utf8'),
      'l1\nU2\nl3\nl4\nl5\n',
      'the user line stays',
    );
  },
);

t('a conflicted binary file or a line of seven = : git add decides, not the content', () => {
  const repo = makeRepo({
    'b.dat': Buffer.from('base\0bin'),
    'R.rst': 'Install\n=======\n\nstep 1\n',
  });
  const s = startSession(repo, ['--name', 'bin']);
  writeFileSync(path.join(s.worktree, 'b.dat'), Buffer.from('agent\0bin'));
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('R.rst', 'step 1', 'step AGENT') })
      .status,
    0,
  );
  assert.is(hagent(s.worktree, ['sync', '--json']).status, 0);
  writeFileSync(path.join(repo, 'b.dat'), Buffer.from('user\0bin'));
  writeFileSync(path.join(repo, 'R.rst'), 'Install\n=======\n\nstep USER\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', 'bin', '--json']);
  assert.equal(update.json.conflicts.sort(), ['R.rst', 'b.dat']);
  assert.is(
    hagent(s.worktree, ['sync', '--json']).json.error.code,
    'MERGE_UNRESOLVED',
    'the binary conflict is not resolved by leaving it',
  );
  writeFileSync(path.join(s.worktree, 'R.rst'), 'Install\n=======\n\nstep BOTH\n');
  git(s.worktree, 'add', 'R.rst');
  git(s.worktree, 'checkout', '--theirs', 'b.dat');
  git(s.worktree, 'add', 'b.dat');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout);
  assert.is(hagent(repo, ['land', '--session', 'bin', '--yes', '--json']).status, 0);
  assert.is(
    readFileSync(path.join(repo, 'b.dat'), 'latin1'),
    'user\0bin',
    "the user's version, as resolved",
  );
  assert.is(readFileSync(path.join(repo, 'R.rst'), 'utf8'), 'Install\n=======\n\nstep BOTH\n');
});

t('--rebase after a land is refused (the merge knows what landed), and nothing moves', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const s = startSession(repo, ['--name', 'pr']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input:
        '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
    }).status,
    0,
  );
  assert.is(hagent(repo, ['review', '--session', 'pr', '--approve', 'a.txt', '--json']).status, 0);
  assert.is(hagent(repo, ['land', '--session', 'pr', '--json']).status, 0);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'c', 'C') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'U\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'u');
  const head = git(repo, 'rev-parse', 'hagent/pr');
  const r = hagent(repo, ['session', 'update', 'pr', '--rebase', '--json']);
  assert.is(r.json.error.code, 'LAND_CONFLICT');
  assert.match(r.json.error.hint, /hagent session update --session pr/);
  assert.is(git(repo, 'rev-parse', 'hagent/pr'), head);
  const merge = hagent(repo, ['session', 'update', 'pr', '--json']);
  assert.is(merge.status, 0, merge.stdout);
  assert.is(
    readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'),
    'B\n',
    'the unlanded change is still there',
  );
  const review = hagent(repo, ['review', '--session', 'pr', '--json']).json;
  assert.equal(review.files.map((f: any) => f.path).sort(), ['b.txt', 'c.txt']);
});

t("update of a session started on another branch keeps that branch's files", () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'checkout', '-q', '-b', 'feat');
  writeFileSync(path.join(repo, 'f.txt'), 'feature\n');
  git(repo, 'add', 'f.txt');
  git(repo, 'commit', '-qm', 'feat');
  git(repo, 'checkout', '-q', 'main');
  const s = startSession(repo, ['--name', 'fb', '--base', 'feat']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'u\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'user');
  const r = hagent(repo, ['session', 'update', 'fb', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [{ path: 'u.txt', status: 'A' }]);
  assert.is(readFileSync(path.join(s.worktree, 'f.txt'), 'utf8'), 'feature\n');
});

t('a file where the target has a folder is refused by update with nothing written', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'df']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Add File: dir/x.txt\n+x\n*** End Patch\n',
    }).status,
    0,
  );
  writeFileSync(path.join(repo, 'dir'), 'a file\n');
  git(repo, 'add', 'dir');
  git(repo, 'commit', '-qm', 'user file dir');
  const head = git(repo, 'rev-parse', 'hagent/df');
  const r = hagent(repo, ['session', 'update', 'df', '--json']);
  assert.is(r.json.error.code, 'LAND_CONFLICT', r.stdout);
  assert.is(git(repo, 'rev-parse', 'hagent/df'), head);
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'nothing written');
});

t.run();
