/**
 * apply → review → land → undo through the real CLI, and every refusal of the cycle leaving
 * files and refs as they were (issue: the session cycle, "Bad input gets a clear error").
 */
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import {
  GIT_ENV,
  git,
  hagent,
  makeRepo,
  snapshotTree,
  startSession,
  tempDir,
  writeFiles,
  diffSnapshots,
} from '../helpers/index.js';

const t = suite('session cycle');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

function repoWithSession(
  files: Record<string, string> = { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' },
) {
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', 's1']);
  return { repo, s };
}

t('apply commits the patch on the session branch with the patch text in a note', () => {
  const { repo, s } = repoWithSession();
  const patch = upd('a.txt', 'two', 'TWO');
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.ok, true);
  assert.is(r.json.session, 's1');
  assert.equal(r.json.files, [
    { path: 'a.txt', op: 'update', added: 1, removed: 1, level: 'exact' },
  ]);
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
  assert.is(git(repo, 'show', 'hagent/s1:a.txt'), 'one\nTWO\nthree');
  assert.is(git(repo, 'notes', '--ref=hagent-sessions/s1', 'show', r.json.commit), patch.trimEnd());
  assert.match(git(repo, 'log', '-1', '--format=%B', 'hagent/s1'), /Hagent-Session: s1/);
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'one\ntwo\nthree\n',
    "the user's checkout is untouched",
  );
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('apply prints the Codex success shape for humans', () => {
  const { s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-'], {
    input:
      '*** Begin Patch\n*** Add File: n.txt\n+new\n*** Update File: a.txt\n-one\n+ONE\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stderr);
  assert.ok(
    r.stdout.startsWith('Success. Updated the following files:\nA n.txt\nM a.txt\n'),
    r.stdout,
  );
});

t('apply from the main checkout finds the only session, or takes --session', () => {
  const { repo, s } = repoWithSession();
  const patchFile = path.join(tempDir(), 'p.patch');
  writeFileSync(patchFile, upd('b.txt', 'bee', 'BEE'));
  const r = hagent(repo, ['apply', patchFile, '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'BEE\n');
  startSession(repo, ['--name', 's2']);
  const amb = hagent(repo, ['apply', patchFile, '--json']);
  assert.is(amb.status, 1);
  assert.is(amb.json.error.code, 'SESSION_AMBIGUOUS');
  const named = hagent(repo, ['apply', patchFile, '--json', '--session', 's2']);
  assert.is(named.status, 0, named.stdout);
});

t('apply --dry-run reports the files and writes nothing', () => {
  const { repo, s } = repoWithSession();
  const before = git(repo, 'rev-parse', 'hagent/s1');
  const r = hagent(s.worktree, ['apply', '-', '--json', '--dry-run'], {
    input: upd('a.txt', 'two', 'TWO'),
  });
  assert.is(r.status, 0);
  assert.is(r.json.dryRun, true);
  assert.is(r.json.commit, null);
  assert.is(r.json.files[0].path, 'a.txt');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), before);
});

t('apply refuses a file changed outside the session with STALE_FILE and writes nothing', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(s.worktree, 'a.txt'), 'one\ntwo\nthree\nfour\n');
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'two', 'TWO') });
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.is(r.json.error.path, 'a.txt');
  assert.is(
    readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
    'one\ntwo\nthree\nfour\n',
    'the outside bytes survive',
  );
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t(
  'apply outside any session, with a missing file, and with empty stdin: one clear error each',
  () => {
    const repo = makeRepo();
    const none = hagent(repo, ['apply', '-', '--json'], { input: upd('README.md', '# demo', 'x') });
    assert.is(none.status, 1);
    assert.is(none.json.error.code, 'NOT_IN_SESSION');
    startSession(repo);
    const missing = hagent(repo, ['apply', 'no-such.patch', '--json']);
    assert.is(missing.status, 1);
    assert.is(missing.json.error.code, 'PATCH_NOT_FOUND');
    const empty = hagent(repo, ['apply', '-', '--json'], { input: '' });
    assert.is(empty.status, 1);
    assert.is(empty.json.error.code, 'EMPTY_PATCH');
    const human = hagent(repo, ['apply', 'no-such.patch']);
    assert.is(human.status, 1);
    assert.match(human.stderr, /^error\[PATCH_NOT_FOUND\]: .*no-such\.patch/);
    assert.match(human.stderr, /hint: /);
    const outside = hagent(tempDir(), ['apply', '-', '--json'], { input: upd('a', 'b', 'c') });
    assert.is(outside.json.error.code, 'NOT_A_GIT_REPO');
  },
);

t('a patch that is not UTF-8 is refused, never written with replacement characters', () => {
  const { repo, s } = repoWithSession();
  const patchFile = path.join(tempDir(), 'latin1.patch');
  writeFileSync(
    patchFile,
    Buffer.concat([
      Buffer.from('*** Begin Patch\n*** Add File: l.txt\n+caf'),
      Buffer.from([0xe9]),
      Buffer.from('\n*** End Patch\n'),
    ]),
  );
  const r = hagent(s.worktree, ['apply', patchFile, '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'UNSUPPORTED_FILE');
  assert.not.ok(existsSync(path.join(s.worktree, 'l.txt')));
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t('a file can become a folder of the same name in one patch', () => {
  const { repo, s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input:
      '*** Begin Patch\n*** Delete File: b.txt\n*** Add File: b.txt/inner.txt\n+inside\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:b.txt/inner.txt'), 'inside');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  // undo and redo cross the same change both ways (found by a hostile test: STALE_FILE before)
  const undo = hagent(s.worktree, ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'bee\n');
  const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(redo.status, 0, redo.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt/inner.txt'), 'utf8'), 'inside\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('a folder can become a file of the same name in one patch', () => {
  const { repo, s } = repoWithSession({
    'a.txt': 'a\n',
    'q/only.txt': 'o\n',
    'q/deep/two.txt': 't\n',
  });
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input:
      '*** Begin Patch\n*** Delete File: q/only.txt\n*** Delete File: q/deep/two.txt\n*** Add File: q\n+now a file\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:q'), 'now a file');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const partial = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input: '*** Begin Patch\n*** Delete File: q\n*** Add File: q/x/y.txt\n+y\n*** End Patch\n',
  });
  assert.is(partial.status, 0, partial.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:q/x/y.txt'), 'y');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('a new file under a path that is a file is refused whole, tracked or not (found by R4)', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(s.worktree, 'probe.txt'), 'untracked\n');
  for (const [under, patch] of [
    [
      'b.txt',
      '*** Begin Patch\n*** Add File: n.txt\n+n\n*** Add File: b.txt/x\n+x\n*** End Patch\n',
    ],
    [
      'probe.txt',
      '*** Begin Patch\n*** Add File: n.txt\n+n\n*** Add File: probe.txt/x/y\n+x\n*** End Patch\n',
    ],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'FILE_EXISTS');
    assert.is(r.json.error.file, under, r.stdout);
  }
  const both = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Add File: n\n+n\n*** Add File: n/x\n+x\n*** End Patch\n',
  });
  assert.is(both.status, 1, both.stdout);
  assert.is(both.json.error.code, 'DUPLICATE_PATH');
  assert.not.ok(existsSync(path.join(s.worktree, 'n.txt')));
  assert.not.ok(existsSync(path.join(s.worktree, 'n')));
  assert.is(git(s.worktree, 'status', '--porcelain'), '?? probe.txt');
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t('two new files with one name in two new folders are staged apart', () => {
  const { repo, s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Add File: src/one/index.ts\n+1\n*** Add File: src/two/index.ts\n+2\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:src/one/index.ts'), '1');
  assert.is(git(repo, 'show', 'hagent/s1:src/two/index.ts'), '2');
});

t('usage errors exit 2 and --help exits 0 with examples', () => {
  const repo = makeRepo();
  const bad = hagent(repo, ['frobnicate']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /USAGE/);
  const badJson = hagent(repo, ['apply', '--no-such-flag', '--json']);
  assert.is(badJson.status, 2);
  assert.is(badJson.json.error.code, 'USAGE');
  const help = hagent(repo, ['apply', '--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /Examples:/);
});

t('review shows stat, patches and diff; --approve records the head', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Add File: c.txt\n+see\n*** End Patch\n',
  });
  const r = hagent(repo, ['review', '--json']);
  assert.is(r.status, 0);
  assert.equal(r.json.files, [
    { path: 'a.txt', status: 'M', added: 1, removed: 1 },
    { path: 'c.txt', status: 'A', added: 1, removed: 0 },
  ]);
  assert.is(r.json.patches.length, 2);
  assert.equal(r.json.patches[0].files, [{ status: 'A', path: 'c.txt' }]);
  assert.match(r.json.diff, /\+TWO/);
  assert.is(r.json.approval, null);
  const human = hagent(repo, ['review']);
  assert.match(human.stdout, /2 patches, 2 files to land/);
  assert.not.match(human.stdout, /\u001b\[/, 'no colours in a pipe');
  const withText = hagent(repo, ['review', '--patches', '--json']);
  assert.match(withText.json.patches[1].patch, /\*\*\* Update File: a.txt/);
  const a = hagent(repo, ['review', '--approve', '--json']);
  assert.is(a.json.approval.head, git(repo, 'rev-parse', 'hagent/s1'));
  assert.is(a.json.approval.paths, null);
  const bad = hagent(repo, ['review', '--approve', 'zzz.txt', '--json']);
  assert.is(bad.status, 2, 'an unknown path is a usage error');
  assert.is(bad.json.error.code, 'USAGE');
});

t('land squashes approved work onto the checked-out target and updates only those files', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(repo, 'b.txt'), 'user edit, not landed\n');
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'three', 'THREE') });
  const notApproved = hagent(repo, ['land', '--json']);
  assert.is(notApproved.status, 1);
  assert.is(notApproved.json.error.code, 'NOT_APPROVED');
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
  hagent(repo, ['review', '--approve', 'b.txt']);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].landed, false);
  const end = hagent(repo, ['session', 'end', '--json']);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.equal(end.json.error.files, ['a.txt'], 'only the part that has not landed');
});

t('land --merge keeps the session history as a second parent', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
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
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  hagent(repo, ['review', '--approve']);
  hagent(s.worktree, ['apply', '-'], { input: upd('b.txt', 'bee', 'BEE') });
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'APPROVAL_OUTDATED');
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'BEE\n');
});

t('land with conflicts lists the paths and writes nothing', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'SESSION') });
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
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
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
    hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
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
    hagent(s2.worktree, ['apply', '-'], { input: upd('d/y.txt', 'y', 'Y') });
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
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
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
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  git(repo, 'checkout', '-q', '-b', 'other');
  const r = hagent(repo, ['land', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(r.json.updatedWorktree, null);
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

t('undo moves back N patches, files included, and --redo brings them back', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  const unconfirmed = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Add File: sub/new.txt\n+n\n*** Delete File: b.txt\n*** End Patch\n',
  });
  assert.is(
    unconfirmed.json.error.code,
    'CONFIRMATION_REQUIRED',
    'a delete needs a yes without a TTY',
  );
  hagent(s.worktree, ['apply', '-', '--yes'], {
    input:
      '*** Begin Patch\n*** Add File: sub/new.txt\n+n\n*** Delete File: b.txt\n*** End Patch\n',
  });
  const head = git(repo, 'rev-parse', 'hagent/s1');
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '2');
  const u = hagent(s.worktree, ['undo', '--json']);
  assert.is(u.status, 0, u.stdout);
  assert.is(u.json.steps, 1);
  assert.ok(existsSync(path.join(s.worktree, 'b.txt')), 'a deleted file comes back');
  assert.not.ok(existsSync(path.join(s.worktree, 'sub')), 'an added file (and its folder) goes');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const past = hagent(s.worktree, ['undo', '5', '--json']);
  assert.is(past.status, 1);
  assert.is(past.json.error.code, 'UNDO_PAST_BASE');
  assert.is(past.json.error.available, 1);
  const u2 = hagent(s.worktree, ['undo', '--json']);
  assert.is(u2.json.to, git(repo, 'rev-parse', 'main'));
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  const none = hagent(s.worktree, ['undo', '--json']);
  assert.is(none.json.error.code, 'UNDO_PAST_BASE');
  const r = hagent(s.worktree, ['undo', '--redo', '2', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), head);
  assert.ok(existsSync(path.join(s.worktree, 'sub', 'new.txt')));
  const more = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(more.json.error.code, 'NOTHING_TO_REDO');
});

t('undo refuses to overwrite an outside edit with STALE_FILE', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  writeFileSync(path.join(s.worktree, 'a.txt'), 'hand edit\n');
  const head = git(repo, 'rev-parse', 'hagent/s1');
  const r = hagent(s.worktree, ['undo', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'hand edit\n');
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), head);
});

t('a new apply after undo keeps the undone commits reachable', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'two', 'TWO') });
  const undone = git(repo, 'rev-parse', 'hagent/s1');
  hagent(s.worktree, ['undo']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('b.txt', 'bee', 'BEE') }).status,
    0,
  );
  assert.match(
    git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/hagent/s1/undone/'),
    new RegExp(undone),
  );
});

t.run();
