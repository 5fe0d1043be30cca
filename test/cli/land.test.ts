/**
 * `hagent land` and `hagent land --undo` through the real CLI on real repositories.
 * Also: a land killed before its one ref transaction, the approval ref, and a dirty target.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  diffSnapshots,
  git,
  GIT_ENV,
  hagent,
  makeRepo,
  repoWithSession,
  snapshotTree,
  startSession,
  tempDir,
  updatePatch,
  look,
} from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('land');

t('land squashes approved work onto the checked-out target and updates only those files', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(repo, 'b.txt'), 'user edit, not landed\n');
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'three', 'THREE') });
  const notApproved = hagent(repo, ['land', '--json']);
  assert.is(notApproved.status, 1);
  assert.is(notApproved.json.error.code, 'NOT_APPROVED');
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const before = git(repo, 'rev-parse', 'main');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.mode, 'squash');
  assert.is(r.json.previous, before);
  assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  assert.is(git(repo, 'rev-parse', 'main^'), before, 'one squashed commit');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nTWO\nTHREE\n');
  assert.is(
    readFileSync(path.join(repo, 'b.txt'), 'utf8'),
    'user edit, not landed\n',
    "the user's other edit is kept",
  );
  assert.is(git(repo, 'status', '--porcelain'), ' M b.txt');
  assert.match(git(repo, 'log', '-1', '--format=%B', 'main'), /land session s1 \(2 patches/);
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.json.error.code, 'NOTHING_TO_LAND');
  const end = hagent(repo, ['session', 'end', '--json']);
  assert.is(end.status, 0, 'a squash-landed session counts as landed');
});

t('a session keeps working after a land: the second land brings only what is new', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Add File: CHANGES.md\n+one\n*** End Patch\n',
  });
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  writeFileSync(path.join(repo, 'b.txt'), 'user change on main\n');
  git(repo, 'commit', '-q', '-am', 'user');
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Update File: CHANGES.md\n one\n+two\n*** End Patch\n',
  });
  const second = hagent(repo, ['land', '--yes', '--json']);
  assert.is(second.status, 0, second.stdout);
  assert.equal(second.json.files, [{ path: 'CHANGES.md', status: 'M' }]);
  assert.is(readFileSync(path.join(repo, 'CHANGES.md'), 'utf8'), 'one\ntwo\n');
  assert.is(
    readFileSync(path.join(repo, 'b.txt'), 'utf8'),
    'user change on main\n',
    "the target's own change stays",
  );
});

t('a partial land does not count as landed: session end still refuses', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], {
    input:
      '*** Begin Patch\n*** Update File: a.txt\n-two\n+TWO\n*** Update File: b.txt\n-bee\n+BEE\n*** End Patch\n',
  });
  look(repo);
  hagent(repo, ['review', '--approve', 'b.txt']);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].landed, false);
  const end = hagent(repo, ['session', 'end', '--json']);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.equal(end.json.error.files, ['a.txt'], 'only the part that has not landed');
});

t('land --merge keeps the session history as a second parent', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  const r = hagent(repo, ['land', '--merge', '--yes', '--json', '-m', 'feat: two']);
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'rev-parse', 'main^2'), git(repo, 'rev-parse', 'hagent/s1'));
  assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'feat: two');
});

t('land of a partial approval brings only the approved files', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], {
    input:
      '*** Begin Patch\n*** Update File: a.txt\n-two\n+TWO\n*** Update File: b.txt\n-bee\n+BEE\n*** End Patch\n',
  });
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'b.txt', '--json']).status, 0);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [{ path: 'b.txt', status: 'M' }]);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  assert.match(
    git(repo, 'log', '-1', '--format=%s', 'main'),
    /\(1 patch, 1 file\) \(approved: 1 of/,
  );
  assert.is(readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'BEE\n');
});

t('land refuses when the head moved after approval, unless --yes', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  look(repo);
  hagent(repo, ['review', '--approve']);
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('b.txt', 'bee', 'BEE') });
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'APPROVAL_OUTDATED');
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'BEE\n');
});

t('land with conflicts lists the paths and writes nothing', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'SESSION') });
  writeFileSync(path.join(repo, 'a.txt'), 'one\nUSER\nthree\n');
  git(repo, 'commit', '-q', '-am', 'user change');
  const main = git(repo, 'rev-parse', 'main');
  const snap = snapshotTree(repo);
  const r = hagent(repo, ['land', '--yes', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'LAND_CONFLICT');
  assert.equal(r.json.error.files, ['a.txt']);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(diffSnapshots(snapshotTree(repo), snap), null);
});

t('land onto a dirty overlapping file lists it and touches nothing', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\nthree\nuser line\n');
  const main = git(repo, 'rev-parse', 'main');
  const r = hagent(repo, ['land', '--yes', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.equal(r.json.error.files, ['a.txt']);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\nuser line\n');
  assert.is(git(repo, 'rev-parse', 'main'), main);
  const untracked = makeRepo({ 'x.txt': 'x\n' });
  const s2 = startSession(untracked);
  hagent(s2.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Add File: new.txt\n+from agent\n*** End Patch\n',
  });
  writeFileSync(path.join(untracked, 'new.txt'), 'user file\n');
  const r2 = hagent(untracked, ['land', '--yes', '--json']);
  assert.is(r2.json.error.code, 'DIRTY_TARGET');
  assert.is(readFileSync(path.join(untracked, 'new.txt'), 'utf8'), 'user file\n');
});

t(
  'land refuses, touching nothing, what read-tree would overwrite silently or what git status calls dirty',
  () => {
    // An ignored file at a path the land adds (read-tree alone would overwrite it).
    const ignored = makeRepo({ '.gitignore': '*.log\n', 'x.txt': 'x\n' });
    const s1 = startSession(ignored);
    hagent(s1.worktree, ['apply', '-'], {
      input: '*** Begin Patch\n*** Add File: out.log\n+from agent\n*** End Patch\n',
    });
    writeFileSync(path.join(ignored, 'out.log'), 'user log\n');
    const r1 = hagent(ignored, ['land', '--yes', '--json']);
    assert.is(r1.json.error?.code, 'DIRTY_TARGET', r1.stdout);
    assert.equal(r1.json.error.files, ['out.log']);
    assert.is(readFileSync(path.join(ignored, 'out.log'), 'utf8'), 'user log\n');
    // A file the land changes that the user deleted (read-tree would bring it back).
    const { repo, s } = repoWithSession();
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
    const main = git(repo, 'rev-parse', 'main');
    rmSync(path.join(repo, 'a.txt'));
    const r2 = hagent(repo, ['land', '--yes', '--json']);
    assert.is(r2.json.error?.code, 'DIRTY_TARGET', r2.stdout);
    assert.equal(r2.json.error.files, ['a.txt']);
    assert.not.ok(existsSync(path.join(repo, 'a.txt')));
    // A staged change to it: read-tree refuses, git status names it.
    git(repo, 'checkout', '-q', '--', 'a.txt');
    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\nthree\nstaged\n');
    git(repo, 'add', 'a.txt');
    const r3 = hagent(repo, ['land', '--yes', '--json']);
    assert.is(r3.json.error?.code, 'DIRTY_TARGET', r3.stdout);
    assert.equal(r3.json.error.files, ['a.txt']);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\nstaged\n');
    assert.is(git(repo, 'rev-parse', 'main'), main);
    // Clean again: a land that deletes a file and adds a folder of the same name goes through.
    git(repo, 'reset', '-q', '--hard');
    const s2 = startSession(repo, ['--name', 's2']);
    const r4 = hagent(s2.worktree, ['apply', '-', '--json', '--yes'], {
      input:
        '*** Begin Patch\n*** Delete File: b.txt\n*** Add File: b.txt/inner.txt\n+inner\n*** End Patch\n',
    });
    assert.is(r4.status, 0, r4.stdout);
    const landed = hagent(repo, ['land', '--session', 's2', '--yes', '--json']);
    assert.is(landed.status, 0, landed.stdout);
    assert.is(readFileSync(path.join(repo, 'b.txt', 'inner.txt'), 'utf8'), 'inner\n');
    assert.is(git(repo, 'status', '--porcelain'), '');
  },
);

t(
  "land: an ignored symlink where the land needs a folder is refused; a sparse checkout's absent file is not a deletion",
  () => {
    const repo = makeRepo({ '.gitignore': 'nm\n', 'x.txt': 'x\n', 'd/y.txt': 'y\n' });
    const s = startSession(repo);
    hagent(s.worktree, ['apply', '-'], {
      input: '*** Begin Patch\n*** Add File: nm/pkg.txt\n+p\n*** End Patch\n',
    });
    const outside = tempDir();
    writeFileSync(path.join(outside, 'o.txt'), 'o\n');
    symlinkSync(outside, path.join(repo, 'nm'));
    const r = hagent(repo, ['land', '--yes', '--json']);
    assert.is(r.json.error?.code, 'DIRTY_TARGET', r.stdout);
    assert.equal(r.json.error.files, ['nm/pkg.txt']);
    assert.ok(lstatSync(path.join(repo, 'nm')).isSymbolicLink(), 'the symlink is kept');
    assert.not.ok(existsSync(path.join(outside, 'pkg.txt')));
    // Sparse: d/ is not checked out; a land that changes d/y.txt goes through.
    const sparse = makeRepo({ 'x.txt': 'x\n', 'd/y.txt': 'y\n' });
    const s2 = startSession(sparse);
    hagent(s2.worktree, ['apply', '-'], { input: updatePatch('d/y.txt', 'y', 'Y') });
    git(sparse, 'sparse-checkout', 'set', '--no-cone', '/*.txt');
    assert.not.ok(existsSync(path.join(sparse, 'd', 'y.txt')));
    const landed = hagent(sparse, ['land', '--yes', '--json']);
    assert.is(landed.status, 0, landed.stdout);
    assert.is(git(sparse, 'show', 'HEAD:d/y.txt'), 'Y');
    assert.is(git(sparse, 'status', '--porcelain'), '');
  },
);

t('land refuses while the target is being rebased or is checked out twice', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  writeFileSync(path.join(repo, 'b.txt'), 'user\n');
  git(repo, 'commit', '-q', '-am', 'user');
  const main = git(repo, 'rev-parse', 'main');
  spawnSync('git', ['rebase', '-q', '-i', 'HEAD~1'], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV, GIT_SEQUENCE_EDITOR: "sed -i 's/^pick/edit/'" },
  });
  const r = hagent(repo, ['land', '--yes', '--json']);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.match(r.json.error.message, /rebased/);
  git(repo, 'rebase', '--abort');
  assert.is(git(repo, 'rev-parse', 'main'), main);
  const other = path.join(tempDir(), 'second');
  git(repo, 'worktree', 'add', '-q', '-f', other, 'main');
  const twice = hagent(repo, ['land', '--yes', '--json']);
  assert.is(twice.json.error.code, 'DIRTY_TARGET');
  assert.match(twice.json.error.message, /2 worktrees/);
  assert.is(git(repo, 'rev-parse', 'main'), main);
});

t('land when the target is not checked out only moves the ref', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  git(repo, 'checkout', '-q', '-b', 'other');
  const r = hagent(repo, ['land', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(r.json.updatedWorktree, null);
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

// land through the real CLI in the states real users create: a second land of a session, partial
// approval then the rest, several sessions on one target, a target whose commits were discarded or
// amended, a session whose work is on the target by content. Nothing already on the target is ever
// taken back, and "landed" is always true.

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

function apply(worktree: string, patch: string): string {
  const r = hagent(worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return r.json.commit;
}

function approveAndLand(repo: string, session: string, paths: string[] = []): any {
  look(repo, session);
  const a = hagent(repo, ['review', '--session', session, '--approve', ...paths, '--json']);
  assert.is(a.status, 0, a.stdout + a.stderr);
  const l = hagent(repo, ['land', '--session', session, '--json']);
  assert.is(l.status, 0, l.stdout + l.stderr);
  return l.json;
}

function state(repo: string, id: string): string {
  return hagent(repo, ['session', 'list', '--json']).json.sessions.find((s: any) => s.id === id)
    .state;
}

t(
  'a second land keeps the user commit that the first land merged (no revert of committed work)',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
    const s = startSession(repo, ['--name', 's1']);
    apply(s.worktree, updatePatch('c.txt', 'l5', 'AGENT-l5'));
    writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nl5\n');
    git(repo, 'commit', '-qam', 'user edits line 1');
    approveAndLand(repo, 's1');
    assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nAGENT-l5\n');
    apply(s.worktree, updatePatch('c.txt', 'l3', 'AGENT-l3'));
    const second = approveAndLand(repo, 's1');
    assert.equal(second.files, [{ path: 'c.txt', status: 'M' }]);
    assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n', 'the user line stays');
    assert.is(git(repo, 'show', 'main:c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5');
    assert.is(git(repo, 'status', '--porcelain'), '');
    assert.is(state(repo, 's1'), 'landed');
    assert.is(hagent(repo, ['session', 'end', 's1', '--json']).status, 0);
  },
);

t('a second land keeps a user commit made after the first land', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
  const s = startSession(repo, ['--name', 's1']);
  apply(s.worktree, updatePatch('c.txt', 'l5', 'AGENT-l5'));
  approveAndLand(repo, 's1');
  writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nAGENT-l5\n');
  git(repo, 'commit', '-qam', 'user after the land');
  apply(s.worktree, updatePatch('c.txt', 'l3', 'AGENT-l3'));
  approveAndLand(repo, 's1');
  assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n');
});

t('--merge lands keep every change already on the target too', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
  const s = startSession(repo, ['--name', 'm']);
  apply(s.worktree, updatePatch('c.txt', 'l5', 'AGENT-l5'));
  writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nl5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(hagent(repo, ['land', '--merge', '--yes', '--json']).status, 0);
  apply(s.worktree, updatePatch('c.txt', 'l3', 'AGENT-l3'));
  const r = hagent(repo, ['land', '--merge', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n');
  assert.is(
    git(repo, 'rev-list', '--parents', '-n1', 'main').split(' ').length,
    3,
    'a merge commit',
  );
});

t('partial approval, then the rest: the rest lands, then the session is landed', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo, ['--name', 'p']);
  apply(
    s.worktree,
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
  );
  approveAndLand(repo, 'p', ['a.txt']);
  assert.is(read(repo, 'a.txt'), 'A\n');
  assert.is(read(repo, 'b.txt'), 'b\n');
  assert.is(state(repo, 'p'), 'open');
  const end = hagent(repo, ['session', 'end', 'p', '--json']);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.equal(end.json.error.files, ['b.txt']);
  const review = hagent(repo, ['review', '--session', 'p', '--json']).json;
  assert.equal(
    review.files.map((f: any) => f.path),
    ['b.txt'],
    'review shows what is left to land',
  );
  assert.is(review.since, 'landed');
  look(repo, 'p');
  const again = hagent(repo, ['review', '--session', 'p', '--approve', 'a.txt', '--json']);
  assert.is(again.status, 2);
  assert.match(again.json.error.message, /a\.txt \(landed already\)/);
  const rest = approveAndLand(repo, 'p', ['b.txt']);
  assert.equal(rest.files, [{ path: 'b.txt', status: 'M' }]);
  assert.is(read(repo, 'b.txt'), 'B\n');
  assert.is(state(repo, 'p'), 'landed');
  assert.is(hagent(repo, ['session', 'end', 'p', '--json']).status, 0);
});

t(
  'a land that merged an overlapping user edit counts as landed; the next land starts from it',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\nl6\n' });
    const s = startSession(repo, ['--name', 'o']);
    apply(s.worktree, updatePatch('c.txt', 'l2', 'NEW'));
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nNEW\nl3\nl4\nl5\nuser6\n');
    git(repo, 'commit', '-qam', 'user made the same change and more');
    const first = hagent(repo, ['land', '--session', 'o', '--yes', '--json']);
    assert.is(first.json.error.code, 'NOTHING_TO_LAND', 'the target holds the change already');
    assert.match(first.json.error.message, /recorded as landed/);
    assert.is(read(repo, 'c.txt'), 'l1\nNEW\nl3\nl4\nl5\nuser6\n');
    assert.is(state(repo, 'o'), 'landed');
    apply(s.worktree, updatePatch('c.txt', 'l4', 'L4'));
    const next = hagent(repo, ['land', '--session', 'o', '--yes', '--json']);
    assert.is(next.status, 0, next.stdout);
    assert.is(read(repo, 'c.txt'), 'l1\nNEW\nl3\nL4\nl5\nuser6\n');
    assert.is(
      hagent(repo, ['session', 'end', 'o', '--json']).status,
      0,
      'no UNLANDED_WORK for files the target holds',
    );
  },
);

t('work the target already holds by content is recorded as landed', () => {
  const repo = makeRepo({ 'c.txt': 'x\n' });
  const s = startSession(repo, ['--name', 'same']);
  apply(s.worktree, updatePatch('c.txt', 'x', 'y'));
  writeFileSync(path.join(repo, 'c.txt'), 'y\n');
  git(repo, 'commit', '-qam', 'user did the same');
  assert.is(state(repo, 'same'), 'landed');
  const r = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(r.json.error.code, 'NOTHING_TO_LAND');
  assert.is(git(repo, 'rev-list', '--count', 'main'), '2', 'no commit made');
});

t("several sessions landing on one target in turn keep each other's lines", () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n' });
  const a = startSession(repo, ['--name', 'a']);
  const b = startSession(repo, ['--name', 'b']);
  apply(a.worktree, updatePatch('c.txt', 'l1', 'A1'));
  apply(b.worktree, updatePatch('c.txt', 'l10', 'B10'));
  approveAndLand(repo, 'a');
  approveAndLand(repo, 'b');
  apply(a.worktree, updatePatch('c.txt', 'l4', 'A4'));
  approveAndLand(repo, 'a');
  apply(b.worktree, updatePatch('c.txt', 'l7', 'B7'));
  approveAndLand(repo, 'b');
  assert.is(read(repo, 'c.txt'), 'A1\nl2\nl3\nA4\nl5\nl6\nB7\nl8\nl9\nB10\n');
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
});

t('a target commit discarded after session start is not brought back by the land', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  writeFileSync(path.join(repo, 'u.txt'), 'user file\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'user commit');
  const s = startSession(repo, ['--name', 'd']);
  git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
  const review = hagent(repo, ['review', '--session', 'd', '--json']);
  assert.equal(
    review.json.files.map((f: any) => f.path),
    ['a.txt'],
  );
  const l = approveAndLand(repo, 'd');
  assert.equal(l.files, [{ path: 'a.txt', status: 'M' }], 'exactly what review showed');
  assert.is(git(repo, 'ls-tree', '--name-only', 'main'), 'a.txt');
});

t(
  'an amended target commit does not make the land conflict on a file the session never touched',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'one\n' });
    writeFileSync(path.join(repo, 'u.txt'), 'two\n');
    git(repo, 'commit', '-qam', 'user');
    const s = startSession(repo, ['--name', 'am']);
    writeFileSync(path.join(repo, 'u.txt'), 'three\n');
    git(repo, 'commit', '-q', '--amend', '-am', 'user, amended');
    apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
    const l = approveAndLand(repo, 'am');
    assert.equal(l.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(read(repo, 'u.txt'), 'three\n');
  },
);

t('a brand-new session is empty, not landed', () => {
  const repo = makeRepo();
  startSession(repo, ['--name', 'new']);
  const list = hagent(repo, ['session', 'list', '--json']).json.sessions[0];
  assert.is(list.state, 'empty');
  assert.is(list.landed, false);
  assert.is(hagent(repo, ['session', 'status', 'new', '--json']).json.state, 'empty');
});

t(
  'session end --force off a TTY needs --yes, and keeps the ended ref only when work is dropped',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'f']);
    apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
    const refused = hagent(repo, ['session', 'end', 'f', '--force']);
    assert.is(refused.status, 1);
    assert.match(refused.stderr, /CONFIRMATION_REQUIRED/);
    assert.is(git(repo, 'rev-parse', '--verify', '-q', 'hagent/f').length, 40, 'nothing removed');
    const ended = hagent(repo, ['session', 'end', 'f', '--force', '--yes', '--json']);
    assert.is(ended.status, 0, ended.stdout);
    assert.is(ended.json.keptAs, 'refs/hagent/f/ended');
    assert.equal(ended.json.unlanded, ['a.txt']);
    startSession(repo, ['--name', 'g']);
    const empty = hagent(repo, ['session', 'end', 'g', '--force', '--json']);
    assert.is(empty.status, 0, 'nothing to drop: no confirmation needed');
    assert.is(empty.json.keptAs, null);
    assert.is(git(repo, 'for-each-ref', 'refs/hagent/g/'), '');
  },
);

t('a later session of the same name starts from its own base, not the old land base', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\n' });
  let s = startSession(repo, ['--name', 'again']);
  apply(s.worktree, updatePatch('c.txt', 'l1', 'X1'));
  approveAndLand(repo, 'again');
  assert.is(hagent(repo, ['session', 'end', 'again', '--json']).status, 0);
  git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  s = startSession(repo, ['--name', 'again']);
  apply(s.worktree, updatePatch('c.txt', 'l2', 'X2'));
  approveAndLand(repo, 'again');
  assert.is(read(repo, 'c.txt'), 'l1\nX2\n');
});

t('land --yes after the head moved past a partial approval lands the whole head', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const s = startSession(repo, ['--name', 'py']);
  apply(
    s.worktree,
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
  );
  look(repo, 'py');
  assert.is(hagent(repo, ['review', '--session', 'py', '--approve', 'a.txt', '--json']).status, 0);
  apply(s.worktree, updatePatch('c.txt', 'c', 'C'));
  const r = hagent(repo, ['land', '--session', 'py', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(
    r.json.files.map((f: any) => f.path),
    ['a.txt', 'b.txt', 'c.txt'],
  );
  assert.is(state(repo, 'py'), 'landed');
});

t(
  'a land the user took off the target (reset past it) is not landed any more, and lands again',
  () => {
    const repo = makeRepo({ 'a.txt': '1\n2\n3\n' });
    const s = startSession(repo, ['--name', 'dr']);
    apply(s.worktree, updatePatch('a.txt', '2', '2S'));
    assert.is(hagent(repo, ['land', '--session', 'dr', '--yes', '--json']).status, 0);
    git(repo, 'reset', '-q', '--hard', 'HEAD~1');
    writeFileSync(path.join(repo, 'u.txt'), 'u\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user');
    assert.is(state(repo, 'dr'), 'approved', 'approved, no longer landed');
    assert.is(hagent(repo, ['session', 'end', 'dr', '--json']).json.error.code, 'UNLANDED_WORK');
    const again = hagent(repo, ['land', '--session', 'dr', '--yes', '--json']);
    assert.is(again.status, 0, again.stdout);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), '1\n2S\n3\n');
  },
);

t(
  "the agent's git commit of protected paths is reported, and land refuses it until --allow-denied",
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'g']);
    apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
    mkdirSync(path.join(s.worktree, '.hagent', 'hooks'), { recursive: true });
    writeFileSync(path.join(s.worktree, '.env'), 'SECRET=1\n');
    writeFileSync(path.join(s.worktree, '.hagent', 'config.json'), '{}\n');
    writeFileSync(path.join(s.worktree, '.hagent', 'hooks', 'pre-apply'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(s.worktree, '.hagent', 'hooks', 'pre-apply'), 0o755);
    git(s.worktree, 'add', '-f', '.env', '.hagent');
    git(s.worktree, 'commit', '-qm', 'agent commit');
    const status = hagent(repo, ['session', 'status', 'g', '--json']).json;
    assert.is(status.drift.kind, 'outside-commits');
    assert.is(status.drift.commits.length, 1);
    const review = hagent(repo, ['review', '--session', 'g', '--json']).json;
    assert.equal(
      review.patches.map((p: any) => p.outside),
      [true, false],
    );
    assert.equal(review.files.map((f: any) => f.path).sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
      'a.txt',
    ]);
    const before = git(repo, 'rev-parse', 'main');
    const refused = hagent(repo, ['land', '--session', 'g', '--yes', '--json']);
    assert.is(refused.status, 1);
    assert.is(refused.json.error.code, 'LAND_DENIED');
    assert.equal(refused.json.error.files.sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
    ]);
    assert.match(refused.json.error.hint, /--allow-denied/);
    assert.is(git(repo, 'rev-parse', 'main'), before, 'nothing landed');
    assert.not.ok(existsSync(path.join(repo, '.env')));
    look(repo, 'g');
    const partial = hagent(repo, ['review', '--session', 'g', '--approve', 'a.txt', '--json']);
    assert.is(partial.status, 0);
    const safe = hagent(repo, ['land', '--session', 'g', '--json']);
    assert.is(safe.status, 0, safe.stdout);
    assert.equal(safe.json.files, [{ path: 'a.txt', status: 'M' }], 'the approved safe part lands');
    look(repo, 'g');
    assert.is(hagent(repo, ['review', '--session', 'g', '--approve', '--json']).status, 0);
    const forced = hagent(repo, ['land', '--session', 'g', '--allow-denied', '--json']);
    assert.is(forced.status, 0, forced.stdout);
    assert.equal(forced.json.allowedDenied.map((d: any) => d.path).sort(), [
      '.env',
      '.hagent/config.json',
      '.hagent/hooks/pre-apply',
    ]);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'SECRET=1\n');
  },
);

t('a symlink committed by the agent is refused at land', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'l']);
  git(
    s.worktree,
    'update-index',
    '--add',
    '--cacheinfo',
    `120000,${git(s.worktree, 'hash-object', '-w', '--stdin', '--path=x')},link`,
  );
  git(s.worktree, 'commit', '-qm', 'a link');
  const r = hagent(repo, ['land', '--session', 'l', '--yes', '--json']);
  assert.is(r.json.error.code, 'LAND_DENIED');
  assert.equal(r.json.error.denied, [{ path: 'link', reason: 'a symbolic link' }]);
});

t(
  'a reset past the base keeps the dropped commits, cannot land, and the hint brings them back',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user commit');
    const s = startSession(repo, ['--name', 'r']);
    const mine = apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
    git(s.worktree, 'reset', '-q', '--hard', 'HEAD~2');
    const status = hagent(repo, ['session', 'status', 'r', '--json']).json;
    assert.is(status.drift.kind, 'rewound');
    assert.is(status.drift.pastBase, true);
    assert.is(status.drift.lastHead, mine);
    assert.is(
      git(repo, 'rev-parse', status.drift.keptAs),
      mine,
      'the dropped commit is kept reachable',
    );
    const land = hagent(repo, ['land', '--session', 'r', '--yes', '--json']);
    assert.is(land.json.error.code, 'SESSION_DRIFTED');
    assert.is(
      git(repo, 'ls-tree', '--name-only', 'main'),
      'a.txt\nu.txt',
      'the user commit is still on main',
    );
    const cmd = /git reset --hard ([0-9a-f]{12})/.exec(land.json.error.hint);
    assert.ok(cmd, land.json.error.hint);
    git(s.worktree, 'reset', '-q', '--hard', cmd![1]!);
    const again = hagent(repo, ['land', '--session', 'r', '--yes', '--json']);
    assert.is(again.status, 0, again.stdout);
    assert.equal(again.json.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(git(repo, 'ls-tree', '--name-only', 'main'), 'a.txt\nu.txt');
  },
);

t(
  "after the agent rebased onto the target, review and land hold only the session's own change",
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'u\n' });
    const s = startSession(repo, ['--name', 'rb']);
    apply(s.worktree, updatePatch('a.txt', 'a', 'A'));
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'commit', '-qam', 'user commit');
    git(s.worktree, 'rebase', '-q', 'main');
    const review = hagent(repo, ['review', '--session', 'rb', '--json']).json;
    assert.is(review.since, 'target');
    assert.equal(
      review.files.map((f: any) => f.path),
      ['a.txt'],
    );
    assert.equal(review.patches.length, 1, "the user's commit is not a session patch");
    assert.is(review.drift.kind, 'rewound');
    assert.is(review.drift.pastBase, false);
    const land = hagent(repo, ['land', '--session', 'rb', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout);
    assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(readFileSync(path.join(repo, 'u.txt'), 'utf8'), 'user\n');
  },
);

// A session started on a detached HEAD has no target branch: land, land --undo and session update
// refuse it (DETACHED_TARGET, exit 1) and leave everything as it was; the hint's way out (merge
// hagent/<id> yourself) works.

function detachedSession(): { repo: string; worktree: string; head: string } {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  git(repo, 'checkout', '-q', '--detach');
  const s = startSession(repo, ['--name', 'd1']);
  assert.is(s.target, null, 'a session from a detached HEAD has no target');
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, worktree: s.worktree, head: git(repo, 'rev-parse', 'HEAD') };
}

t('land refuses a session without a target branch; merging hagent/<id> yourself works', () => {
  const { repo, head } = detachedSession();
  const r = hagent(repo, ['land', '--session', 'd1', '--yes', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'DETACHED_TARGET');
  assert.is(r.json.error.session, 'd1');
  assert.match(r.json.error.message, /session d1 has no target branch \(.*detached HEAD\)/);
  assert.match(r.json.error.hint, /merge hagent\/d1 yourself/);
  assert.is(git(repo, 'rev-parse', 'HEAD'), head, 'HEAD did not move');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
  const text = hagent(repo, ['land', '--session', 'd1', '--yes']);
  assert.is(text.status, 1);
  assert.match(text.stderr, /^error\[DETACHED_TARGET\]: session d1 has no target branch/);
  assert.match(text.stderr, /hint: .*merge hagent\/d1 yourself/);
  // The hint, followed: the work is on hagent/d1 and merges like any branch.
  git(repo, 'merge', '-q', '--ff-only', 'hagent/d1');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'two\n');
});

t('land --undo and session update refuse it too, with a hint of their own', () => {
  const { repo, worktree } = detachedSession();
  const branch = git(repo, 'rev-parse', 'hagent/d1');
  const undo = hagent(repo, ['land', '--undo', '--session', 'd1', '--yes', '--json']);
  assert.is(undo.status, 1, undo.stdout + undo.stderr);
  assert.is(undo.json.error.code, 'DETACHED_TARGET');
  assert.match(undo.json.error.message, /session d1 has no target branch/);
  assert.match(undo.json.error.hint, /no land to undo/);
  const update = hagent(worktree, ['session', 'update', '--json']);
  assert.is(update.status, 1, update.stdout + update.stderr);
  assert.is(update.json.error.code, 'DETACHED_TARGET');
  assert.match(update.json.error.message, /session d1 has no target branch/);
  assert.match(update.json.error.hint, /nothing to update it with; merge the branch you want/);
  assert.is(git(repo, 'rev-parse', 'hagent/d1'), branch, 'the session branch did not move');
  assert.is(git(worktree, 'status', '--porcelain'), '');
});

// `hagent land --undo` (and `hagent undo --land`) through the real CLI: the target goes back by
// compare-and-swap, a checked-out target gets back only the files that still hold the landed bytes,
// the session is approved and not landed again, and a land that moved on or was pushed is refused
// with nothing touched.

function landed(files: Record<string, string>, patch: string, name = 'u') {
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', name]);
  const a = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(a.status, 0, a.stdout);
  look(repo, name);
  assert.is(hagent(repo, ['review', '--session', name, '--approve', '--json']).status, 0);
  const l = hagent(repo, ['land', '--session', name, '--json']);
  assert.is(l.status, 0, l.stdout);
  return { repo, s, land: l.json };
}

const PATCH =
  '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: n.txt\n+new\n*** Delete File: d.txt\n*** End Patch\n';

t('takes the land back, puts back the checkout, and land lands it again', () => {
  const { repo, land } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.undone, land.commit);
  assert.is(r.json.restored, land.previous);
  assert.is(git(repo, 'rev-parse', 'main'), land.previous);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
  assert.is(readFileSync(path.join(repo, 'd.txt'), 'utf8'), 'd\n');
  assert.not.ok(existsSync(path.join(repo, 'n.txt')));
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].state, 'approved');
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 0, again.stdout);
  assert.is(
    git(repo, 'rev-parse', 'main^{tree}'),
    git(repo, 'rev-parse', `${land.commit}^{tree}`),
    'the same tree lands again',
  );
});

t('a file changed since the land keeps its bytes and is listed', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  writeFileSync(path.join(repo, 'n.txt'), 'user edit\n');
  const r = hagent(repo, ['undo', '--land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['n.txt']);
  assert.is(readFileSync(path.join(repo, 'n.txt'), 'utf8'), 'user edit\n');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
  // The land's index entry goes with it: nothing landed stays staged for the next commit.
  assert.is(git(repo, 'diff', '--cached', '--name-only'), '');
  assert.is(git(repo, 'status', '--porcelain'), '?? n.txt');
});

t('a file the user staged since the land keeps its staged entry too', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  writeFileSync(path.join(repo, 'n.txt'), 'user edit\n');
  git(repo, 'add', 'n.txt');
  const r = hagent(repo, ['undo', '--land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['n.txt']);
  assert.is(git(repo, 'show', ':n.txt'), 'user edit', 'what the user staged stays staged');
});

t('refused when the target moved on, naming the commits on top', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  writeFileSync(path.join(repo, 'x.txt'), 'x\n');
  git(repo, 'add', 'x.txt');
  git(repo, 'commit', '-qm', 'on top');
  const head = git(repo, 'rev-parse', 'main');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.json.error.code, 'TARGET_MOVED');
  assert.match(r.json.error.message, /1 commit on top/);
  assert.match(r.json.error.hint, /git revert/);
  assert.is(git(repo, 'rev-parse', 'main'), head);
});

t('refused when the land was pushed', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  const remote = tempDir('hagent-remote-');
  git(remote, 'init', '-q', '--bare');
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', '-u', 'origin', 'main');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.json.error.code, 'LAND_PUSHED');
  git(repo, 'branch', '--unset-upstream');
  const unset = hagent(repo, ['land', '--undo', '--json']);
  assert.is(
    unset.json.error.code,
    'LAND_PUSHED',
    'any remote-tracking branch that holds it counts',
  );
  assert.equal(unset.json.error.remotes, ['refs/remotes/origin/main']);
});

t('the last land is found past a later land that only recorded changes the target held', () => {
  const { repo, s, land } = landed(
    { 'a.txt': '1\n2\n3\n4\n5\n' },
    '*** Begin Patch\n*** Update File: a.txt\n-1\n+S1\n*** End Patch\n',
  );
  writeFileSync(path.join(repo, 'a.txt'), 'S1\n2\n3\n4\nU5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Update File: a.txt\n-5\n+U5\n*** End Patch\n',
    }).status,
    0,
  );
  const recorded = hagent(repo, ['land', '--yes', '--json']);
  assert.is(recorded.json.error.code, 'NOTHING_TO_LAND');
  git(repo, 'reset', '-q', '--hard', land.commit);
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(r.json.undone, land.commit);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), '1\n2\n3\n4\n5\n');
});

t('undoing a second land goes back to what the first one landed', () => {
  const { repo, s } = landed(
    { 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' },
    '*** Begin Patch\n*** Update File: c.txt\n-l5\n+S5\n*** End Patch\n',
  );
  writeFileSync(path.join(repo, 'c.txt'), 'U1\nl2\nl3\nl4\nS5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Update File: c.txt\n-l3\n+S3\n*** End Patch\n',
    }).status,
    0,
  );
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nS3\nl4\nS5\n');
  assert.is(hagent(repo, ['land', '--undo', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nl3\nl4\nS5\n');
  const review = hagent(repo, ['review', '--json']).json;
  assert.equal(
    review.files.map((f: any) => f.path),
    ['c.txt'],
  );
  assert.match(review.diff, /\+S3/);
  assert.not.match(review.diff, /^\+S5/m, 'the first land is still landed');
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nS3\nl4\nS5\n');
});

// A land killed (kill -9) after it changed the user's checkout and before the target branch moved:
// the next land or `hagent doctor` puts the checkout back (transaction/recover.ts). The kill is exact: a
// git wrapper on PATH runs the real `read-tree` of the land, then kills hagent.

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/**
 * PATH with a `git` that kills its parent (hagent) right after the first `read-tree -m -u`
 * (the land's update of the checkout), or right before it (`before`); `halfway` instead leaves the state of a read-tree killed
 * while writing: the first landed file written, the index untouched and its index.lock left.
 */
function killingGit(
  mode: 'before' | 'after' | 'halfway',
  firstFile?: { path: string; text: string },
): Record<string, string> {
  const bin = tempDir('hagent-killgit-');
  const body =
    mode === 'before'
      ? 'kill -9 $PPID; exit 0'
      : mode === 'after'
        ? `"${REAL_GIT}" "$@"; kill -9 $PPID; exit 0`
        : `printf '%s' '${firstFile!.text}' > '${firstFile!.path}'; : > "$(${JSON.stringify(REAL_GIT)} rev-parse --git-dir)/index.lock"; kill -9 $PPID; exit 0`;
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" read-tree -m -u "*) ${body} ;;
esac
exec "${REAL_GIT}" "$@"
`,
    { mode: 0o755 },
  );
  return { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}

/** A repo whose session changed a.txt, added new.txt and deleted gone.txt, approved. */
function approvedSession(): { repo: string; worktree: string; main: string } {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'keep.txt': 'k\n' });
  const s = startSession(repo, ['--name', 's1']);
  const patch =
    '*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+TWO\n*** Add File: dir/new.txt\n+new\n*** Delete File: gone.txt\n*** End Patch\n';
  const applied = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  return { repo, worktree: s.worktree, main: git(repo, 'rev-parse', 'main') };
}

function killedLand(repo: string, env: Record<string, string>): void {
  const r = hagent(repo, ['land', '--json'], { env });
  assert.is(r.status, -1, `hagent was killed (status ${r.status}: ${r.stdout}${r.stderr})`);
}

t('a land killed after the checkout changed: the next land puts it back, then lands', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  assert.is(git(repo, 'rev-parse', 'main'), main, 'the target did not move');
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'one\nTWO\n',
    'the checkout holds the landed files',
  );
  assert.ok(git(repo, 'status', '--porcelain').length > 0);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered.action, 'restored');
  assert.equal([...r.json.recovered.files].sort(), ['a.txt', 'dir/new.txt', 'gone.txt']);
  assert.is(r.json.previous, main);
  assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  assert.is(git(repo, 'status', '--porcelain'), '', 'the checkout matches the landed commit');
  assert.is(readFileSync(path.join(repo, 'dir', 'new.txt'), 'utf8'), 'new\n');
  assert.not.ok(existsSync(path.join(repo, 'gone.txt')));
});

t('doctor puts the checkout back; a file changed since the kill is left alone and reported', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  writeFileSync(path.join(repo, 'a.txt'), 'the user typed this after the crash\n');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  const f = d.json.findings.find((x: { kind: string }) => x.kind === 'interrupted-land');
  assert.ok(f, JSON.stringify(d.json.findings));
  assert.is(f.fixed, true);
  assert.equal([...f.paths].sort(), ['dir/new.txt', 'gone.txt']);
  assert.match(f.hint, /a\.txt/);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'the user typed this after the crash\n',
    "the user's bytes are kept",
  );
  assert.is(
    readFileSync(path.join(repo, 'gone.txt'), 'utf8'),
    'bye\n',
    'a file the land deleted is back',
  );
  assert.not.ok(
    existsSync(path.join(repo, 'dir')),
    'a file the land added is gone, with its folder',
  );
  assert.is(git(repo, 'status', '--porcelain'), ' M a.txt', 'only the user edit remains, unstaged');
  const again = hagent(repo, ['doctor', '--json']);
  assert.not.ok(
    again.json.findings.some((x: { kind: string }) => x.kind === 'interrupted-land'),
    'the record is gone',
  );
});

t('after a kill, a target the user moved is left as it is', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  git(repo, 'commit', '-q', '-m', 'the user committed what was staged');
  const moved = git(repo, 'rev-parse', 'main');
  assert.is.not(moved, main);
  const d = hagent(repo, ['doctor', '--json']);
  const f = d.json.findings.find((x: { kind: string }) => x.kind === 'interrupted-land');
  assert.match(f.message, /already moved/);
  assert.is(git(repo, 'rev-parse', 'main'), moved);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nTWO\n');
});

t(
  "a land killed inside read-tree (its git's index.lock left, no one holds it): the lock goes, the checkout is put back, the land goes",
  () => {
    const { repo } = approvedSession();
    const lock = path.join(repo, '.git', 'index.lock');
    killedLand(repo, killingGit('halfway', { path: 'a.txt', text: 'one\nTWO\n' }));
    assert.ok(existsSync(lock));
    const r = hagent(repo, ['land', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.recovered.action, 'restored');
    assert.not.ok(existsSync(lock));
    assert.is(git(repo, 'status', '--porcelain'), '');
    assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  },
);

t(
  'the same lock held open by a live process: refused with the lock named, nothing touched; once it is let go, the land goes',
  () => {
    const { repo, main } = approvedSession();
    const lock = path.join(repo, '.git', 'index.lock');
    killedLand(repo, killingGit('halfway', { path: 'a.txt', text: 'one\nTWO\n' }));
    const holder = spawn('sh', ['-c', `exec 9<>"$1"; echo open; exec sleep 60`, 'sh', lock], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      // Wait until the holder has the lock open.
      for (let i = 0; i < 200 && !heldBy(holder.pid!, lock); i++) spawnSync('sleep', ['0.02']);
      assert.ok(heldBy(holder.pid!, lock), 'the holder has the lock open');
      const blocked = hagent(repo, ['land', '--json']);
      assert.is(blocked.status, 1);
      assert.is(blocked.json.error.code, 'DIRTY_TARGET');
      assert.ok(blocked.json.error.hint.includes(lock), blocked.json.error.hint);
      assert.ok(existsSync(lock), 'a held lock stays');
      assert.is(git(repo, 'rev-parse', 'main'), main);
      assert.is(
        readFileSync(path.join(repo, 'a.txt'), 'utf8'),
        'one\nTWO\n',
        'nothing touched while locked',
      );
    } finally {
      holder.kill('SIGKILL');
    }
    for (let i = 0; i < 200 && heldBy(holder.pid!, lock); i++) spawnSync('sleep', ['0.02']);
    const r = hagent(repo, ['land', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.recovered.action, 'restored');
    assert.is(git(repo, 'status', '--porcelain'), '');
  },
);

/** Whether process `pid` has `file` open (Linux /proc). */
function heldBy(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === realpathSync(file);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

t('a land refused for a dirty file leaves no record behind', () => {
  const { repo } = approvedSession();
  writeFileSync(path.join(repo, 'a.txt'), 'dirty\n');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.not.ok(existsSync(path.join(repo, '.git', 'hagent', 'land', 's1.json')));
});

t('a killed land leaves its record where every transaction of the session keeps it', () => {
  const { repo } = approvedSession();
  killedLand(repo, killingGit('after'));
  // One record schema and one place for every kind of transaction (transaction/record.ts).
  const record = JSON.parse(
    readFileSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json'), 'utf8'),
  );
  assert.is(record.kind, 'land');
  assert.is(record.worktrees[0].owner, 'checkout');
  assert.equal(
    record.refs.map((r: { ref: string }) => r.ref),
    [
      'refs/heads/main',
      'refs/hagent/s1/landed/1',
      'refs/hagent/s1/land-base',
      'refs/hagent/s1/approved',
    ],
  );
});

t(
  'a land killed before read-tree leaves the index as the user had it (staged-only and removed entries)',
  () => {
    const { repo, main } = approvedSession();
    writeFileSync(path.join(repo, 'staged.txt'), 'only in the index\n');
    git(repo, 'add', 'staged.txt');
    spawnSync('rm', [path.join(repo, 'staged.txt')]);
    git(repo, 'rm', '-q', '--cached', 'keep.txt');
    const before = git(repo, 'status', '--porcelain');
    killedLand(repo, killingGit('before'));
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(git(repo, 'rev-parse', 'main'), main);
    assert.is(git(repo, 'status', '--porcelain'), before, 'nothing of the user changed');
    assert.match(git(repo, 'ls-files', '-s', 'staged.txt'), /staged\.txt/);
  },
);

t('a file the land turned into a folder comes back as the file', () => {
  const repo = makeRepo({ x: 'a file\n', 'keep.txt': 'k\n' });
  const s = startSession(repo, ['--name', 's1']);
  const patch =
    '*** Begin Patch\n*** Delete File: x\n*** Add File: x/inside.txt\n+inside\n*** End Patch\n';
  const applied = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const main = git(repo, 'rev-parse', 'main');
  killedLand(repo, killingGit('after'));
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(readFileSync(path.join(repo, 'x'), 'utf8'), 'a file\n');
  assert.is(git(repo, 'status', '--porcelain'), '');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(readFileSync(path.join(repo, 'x', 'inside.txt'), 'utf8'), 'inside\n');
});

// A land killed (kill -9) after it updated the user's checkout, before its one ref transaction
// (target, landed/<n> and land base together): the next command puts the checkout back and no
// ref moved, so the land after it lands everything once, without a false conflict.

t('the checkout is put back, no ref moved, and the next land lands it', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'l1']);
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n';
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const main = git(repo, 'rev-parse', 'main');
  const killed = hagent(repo, ['land', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(
    git(repo, 'for-each-ref', '--format=%(refname)', 'refs/hagent/l1/'),
    'refs/hagent/l1/approved\nrefs/hagent/l1/head',
    'landed/<n> and land base unmoved; the approval as review --approve made it, the kept head as the apply left it',
  );
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered.action, 'restored');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'ONE\n');
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  assert.is(git(repo, 'rev-parse', 'refs/hagent/l1/land-base^2'), r.json.commit);
});

// --- The approval ref ---
// Where a session's approval lives: `refs/hagent/<id>/approved`, a commit whose parent is the
// approved head and whose message holds the approved paths, moved by review --approve, land and
// session end in their ref transactions. A session's JSON approval (earlier versions) is still
// honoured. Also: a session end killed at its ref transaction is finished by the next command.

const REF = 'refs/hagent/s1/approved';

/** The ref's id, or '' when it does not exist. */
function refOf(repo: string, ref: string): string {
  return git(repo, 'for-each-ref', '--format=%(objectname)', ref);
}

/** A session s1 with two files changed, one patch each; its head. */
function twoFiles(): { repo: string; worktree: string; head: string } {
  const { repo, s } = repoWithSession();
  for (const [file, from, to] of [
    ['a.txt', 'two', 'TWO'],
    ['b.txt', 'bee', 'BEE'],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch(file, from, to) });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  return { repo, worktree: s.worktree, head: git(repo, 'rev-parse', 'hagent/s1') };
}

const sessionFile = (repo: string) => path.join(repo, '.git', 'hagent', 'sessions', 's1.json');

t('review --approve points the approval ref at a commit of the head and the paths', () => {
  const { repo, head } = twoFiles();
  assert.is(refOf(repo, REF), '', 'no approval yet');
  look(repo);
  const r = hagent(repo, ['review', '--approve', 'a.txt', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.approval.paths, ['a.txt']);
  const oid = refOf(repo, REF);
  assert.ok(oid, 'the ref exists');
  assert.is(git(repo, 'rev-parse', `${oid}^@`), head, 'its only parent is the approved head');
  assert.is(git(repo, 'rev-parse', `${oid}^{tree}`), git(repo, 'rev-parse', `${head}^{tree}`));
  assert.match(git(repo, 'log', '-1', '--format=%B', oid), /"paths":\["a.txt"\]/);
  assert.is(JSON.parse(readFileSync(sessionFile(repo), 'utf8')).approval, null, 'not in the JSON');
  const status = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(status.json.approved, true);
  assert.is(status.json.state, 'approved');
  // Approving again (all paths) moves the ref to a new commit: the last approval counts.
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  assert.is.not(refOf(repo, REF), oid);
  assert.match(git(repo, 'log', '-1', '--format=%B', REF), /"paths":null/);
  assert.is(git(repo, 'fsck', '--no-progress', '--no-dangling', '--strict').trim(), '');
});

t('land keeps the approval it landed in the same ref transaction as the target', () => {
  const { repo, head } = twoFiles();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'a.txt', '--json']).status, 0);
  const approved = refOf(repo, REF);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(
    r.json.files.map((f: { path: string }) => f.path),
    ['a.txt'],
  );
  assert.is(refOf(repo, REF), approved, 'verified, not moved');
});

t(
  'land --yes without an approval records the one it used, in the ref transaction of the target',
  () => {
    const { repo, head } = twoFiles();
    const next = hagent(repo, ['land', '--yes', '--json']);
    assert.is(next.status, 0, next.stdout + next.stderr);
    const after = refOf(repo, REF);
    assert.ok(after, 'the approval ref exists');
    assert.is(git(repo, 'rev-parse', `${after}^@`), head);
    assert.match(git(repo, 'log', '-1', '--format=%B', after), /"paths":null/);
    const line = git(repo, 'reflog', 'show', '-1', '--format=%gs', REF);
    assert.is(line, git(repo, 'reflog', 'show', '-1', '--format=%gs', 'refs/heads/main'));
    assert.match(line, /hagent land s1/);
  },
);

t('land --undo leaves the approval, so the session is approved again', () => {
  const { repo } = twoFiles();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const approved = refOf(repo, REF);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.state, 'landed');
  const undo = hagent(repo, ['land', '--undo', '--session', 's1', '--json']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.is(refOf(repo, REF), approved);
  const status = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(status.json.state, 'approved');
  assert.is(status.json.approved, true);
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 0, 'landed again without a new approval: ' + again.stdout);
});

t("a session's JSON approval of an earlier version is still honoured", () => {
  const { repo, head } = twoFiles();
  const record = JSON.parse(readFileSync(sessionFile(repo), 'utf8'));
  record.approval = { head, paths: ['b.txt'], at: '2025-01-01T00:00:00.000Z' };
  writeFileSync(sessionFile(repo), JSON.stringify(record));
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.state, 'approved');
  const review = hagent(repo, ['review', '--json']);
  assert.equal(review.json.approval.paths, ['b.txt']);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(
    r.json.files.map((f: { path: string }) => f.path),
    ['b.txt'],
    'only the approved path',
  );
  assert.ok(refOf(repo, REF), 'the land wrote the approval into the ref');
  assert.match(git(repo, 'log', '-1', '--format=%B', REF), /"paths":\["b.txt"\]/);
});

t('session end deletes the approval ref with the branch', () => {
  const { repo } = twoFiles();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  const r = hagent(repo, ['session', 'end', 's1', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(refOf(repo, REF), '');
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
});

t('a session end killed at its ref transaction is finished by doctor', () => {
  const { repo, worktree, head } = twoFiles();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const killed = hagent(repo, ['session', 'end', 's1', '--force', '--yes', '--json'], {
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.ok(existsSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json')), 'its record stays');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.ok(
    d.json.findings.some((f: { message: string }) => /session end was completed/.test(f.message)),
  );
  assert.not.ok(existsSync(worktree), 'the worktree is removed');
  assert.not.ok(existsSync(sessionFile(repo)), 'the metadata is removed');
  assert.not.ok(existsSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json')));
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
  assert.is(refOf(repo, REF), '');
  assert.is(refOf(repo, 'refs/hagent/s1/ended'), head, 'the unlanded work stays reachable');
  assert.not.match(git(repo, 'worktree', 'list', '--porcelain'), /s1/);
});

t('a session end killed at its ref transaction is finished by session end again', () => {
  const { repo, worktree } = twoFiles();
  const killed = hagent(repo, ['session', 'end', 's1', '--force', '--yes', '--json'], {
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1);
  const r = hagent(repo, ['session', 'end', 's1', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered, 'completed');
  assert.not.ok(existsSync(worktree));
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
  assert.is(
    hagent(repo, ['session', 'status', 's1', '--json']).json.error.code,
    'SESSION_NOT_FOUND',
  );
});

// --- A dirty target ---
// `hagent land` refused by the checkout of the target: DIRTY_TARGET says what is in the way (the
// files, first 20 in the message and all in `files`; or the index.lock a git left) and how to go
// on.

const human = { unsetEnv: ['HAGENT_AGENT'] } as const;

/** 25 files, all changed by an approved session. */
function approvedOver25() {
  const files: Record<string, string> = {};
  for (let i = 0; i < 25; i++) files[`f${String(i).padStart(2, '0')}.txt`] = `x${i}\n`;
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', 'd']);
  for (let i = 0; i < 25; i++)
    writeFileSync(path.join(s.worktree, `f${String(i).padStart(2, '0')}.txt`), `y${i}\n`);
  assert.is(hagent(s.worktree, ['sync']).status, 0);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json'], human).status, 0);
  return { repo, s };
}

t('25 dirty files: message names the first 20 and "… and 5 more", files all 25, hint works', () => {
  const { repo } = approvedOver25();
  for (let i = 0; i < 25; i++)
    writeFileSync(path.join(repo, `f${String(i).padStart(2, '0')}.txt`), 'mine\n');
  const r = hagent(repo, ['land', '--json'], human);
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.is(r.json.error.files.length, 25);
  assert.match(
    r.json.error.message,
    /25 files .* uncommitted changes in .*: f00\.txt, .*f19\.txt … and 5 more \(use --json for all\)$/,
  );
  assert.not.match(r.json.error.message, /f20\.txt/);
  assert.match(r.json.error.hint, /stash push --include-untracked\)/);
  assert.match(r.json.error.hint, /hagent doctor/);
  assert.match(r.json.error.hint, /hagent land --undo/);
  git(repo, 'stash', 'push', '-q', '--include-untracked');
  assert.is(hagent(repo, ['land', '--json'], human).status, 0, 'after the stash the land goes');
});

t(
  'an index.lock left in the checkout: the message and hint name it; removing it lets land go',
  () => {
    const { repo } = approvedOver25();
    const lock = path.join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    const r = hagent(repo, ['land'], human);
    assert.is(r.status, 1);
    assert.match(r.stderr, /error\[DIRTY_TARGET\]: .*index\.lock/);
    assert.match(
      r.stderr,
      /hint: another git command holds .*index\.lock: wait for it; if none runs/,
    );
    rmSync(lock);
    assert.is(
      hagent(repo, ['land', '--json'], human).status,
      0,
      'with the lock gone the land goes',
    );
  },
);

t.run();
