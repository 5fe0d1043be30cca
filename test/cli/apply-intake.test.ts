// `hagent apply` on what real tools and agents send (patch-language.md §2, §4, §5, §5b), through
// the built CLI in real git repositories: git format-patch output, CR bytes of git diffs, retried
// patches, Delete + Add rewrites, the final-newline spelling, absolute paths (session worktree,
// the user's main checkout, elsewhere), plain diff -u, and the "format" field.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const test = suite('cli: apply intake');

const head = (repo: string, branch: string): string => git(repo, 'rev-parse', branch);
const codex = (...lines: string[]): string =>
  ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');

test("git format-patch output applies through the CLI and gives the commit's tree", () => {
  const repo = makeRepo({ 'a.txt': 'a\nb\nc\n- \n' });
  git(repo, 'checkout', '-q', '-b', 'work');
  writeFileSync(path.join(repo, 'a.txt'), 'a\nB\nc\n- \n');
  git(repo, 'commit', '-qam', 'b to B');
  const mbox = git(repo, 'format-patch', '-1', '--stdout');
  const want = git(repo, 'rev-parse', 'HEAD^{tree}');
  git(repo, 'checkout', '-q', 'main');
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: `${mbox}\n` });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.format, 'unified');
  assert.not.ok((r.json.leniencies as string[]).includes('unified-diff'));
  assert.is(git(repo, 'rev-parse', `${s.branch}^{tree}`), want);
});

test('a git diff of CRLF lines keeps the CR bytes (a new CRLF file stays CRLF)', () => {
  const repo = makeRepo({ 'README.md': '# demo\n' });
  git(repo, 'config', 'core.autocrlf', 'false');
  const s = startSession(repo);
  const diff =
    'diff --git a/w.txt b/w.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,2 @@\n+one\r\n+two\r\n';
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: diff });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'), 'one\r\ntwo\r\n');
});

test('a retried patch is refused NO_CHANGES "looks applied already" with alreadyApplied, nothing committed', () => {
  const repo = makeRepo({ 'a.py': 'def f():\n    return 1\n' });
  const s = startSession(repo);
  const patch = codex(
    '*** Update File: a.py',
    '@@ def f():',
    '-    return 1',
    '+    return 2',
    '*** Add File: b.py',
    '+x = 1',
  );
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
  const before = head(repo, s.branch);
  const again = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(again.status, 1);
  assert.is(again.json.error.code, 'NO_CHANGES');
  assert.is(again.json.error.alreadyApplied, true);
  assert.match(again.json.error.message, /looks applied already/);
  assert.is(head(repo, s.branch), before);
  const human = hagent(s.worktree, ['apply', '-'], { input: patch });
  assert.match(human.stdout + human.stderr, /error\[NO_CHANGES\]: the patch looks applied already/);
});

test("a retry of the session's last patch is NO_CHANGES even when its chunks would match again (an insertion)", () => {
  const repo = makeRepo({ 'a.txt': 'first\nthird\n' });
  const s = startSession(repo);
  const patch = codex('*** Update File: a.txt', '@@', ' third', '+fourth');
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
  const commit = head(repo, s.branch);
  const again = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(again.status, 1);
  assert.is(again.json.error.code, 'NO_CHANGES');
  assert.is(again.json.error.alreadyApplied, true);
  assert.is(again.json.error.commit, commit);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'first\nthird\nfourth\n');
  // after an undo the same patch is new again
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
});

test('Delete File + Add File of one path is one update in the result and the commit, mode kept', () => {
  const repo = makeRepo({ 'run.sh': '#!/bin/sh\necho old\n' });
  git(repo, 'update-index', '--chmod=+x', 'run.sh');
  git(repo, 'commit', '-qm', 'exec');
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input: codex('*** Delete File: run.sh', '*** Add File: run.sh', '+#!/bin/sh', '+echo new'),
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.files, [{ path: 'run.sh', op: 'update', added: 1, removed: 1 }]);
  assert.is(git(repo, 'ls-tree', s.branch, 'run.sh').split(/\s/)[0], '100755');
  assert.is(git(repo, 'show', `${s.branch}:run.sh`), '#!/bin/sh\necho new');
});

test('-last / +last before End of File adds the final newline and says so', () => {
  const repo = makeRepo({ 'n.txt': 'first\nlast' });
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex('*** Update File: n.txt', '@@', '-last', '+last', '*** End of File'),
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.files[0].finalNewline, 'added');
  assert.is(readFileSync(path.join(s.worktree, 'n.txt'), 'utf8'), 'first\nlast\n');
});

test('absolute paths: inside the session worktree made relative, inside the main checkout mapped with a warning, elsewhere denied', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo);
  const inWt = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex(`*** Update File: ${path.join(s.worktree, 'a.txt')}`, '-a', '+A'),
  });
  assert.is(inWt.status, 0, inWt.stdout + inWt.stderr);
  assert.equal(inWt.json.files[0].path, 'a.txt');
  assert.ok((inWt.json.leniencies as string[]).includes('absolute-path'));
  const inMain = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex(`*** Update File: ${path.join(repo, 'b.txt')}`, '-b', '+B'),
  });
  assert.is(inMain.status, 0, inMain.stdout + inMain.stderr);
  assert.ok((inMain.json.leniencies as string[]).includes('main-checkout-path'));
  assert.match((inMain.json.warnings as string[]).join('\n'), /main checkout/);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'B\n');
  assert.is(
    readFileSync(path.join(repo, 'b.txt'), 'utf8'),
    'b\n',
    'the main checkout is untouched',
  );
  const outside = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex('*** Add File: /etc/hagent-test.txt', '+x'),
  });
  assert.is(outside.status, 1);
  assert.is(outside.json.error.code, 'PATH_DENIED');
  const escape = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex(`*** Add File: ${s.worktree}/../x.txt`, '+x'),
  });
  assert.is(escape.json.error.code, 'PATH_DENIED');
  const gitDir = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex(`*** Add File: ${path.join(repo, '.git', 'x')}`, '+x'),
  });
  assert.is(gitDir.json.error.code, 'PATH_DENIED');
});

test('plain diff -u a.orig a.new updates the existing file; neither existing names both headers', () => {
  const repo = makeRepo({ 'a.orig': 'x\n' });
  const s = startSession(repo);
  const diff =
    '--- a.orig\t2026-01-01 00:00:00\n+++ a.new\t2026-01-01 00:00:01\n@@ -1 +1 @@\n-x\n+y\n';
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: diff });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.files[0].path, 'a.orig');
  const none = hagent(s.worktree, ['apply', '-', '--json'], {
    input: diff.replace(/a\.orig/g, 'b.orig').replace(/a\.new/g, 'b.new'),
  });
  assert.is(none.json.error.code, 'FILE_NOT_FOUND');
  assert.match(none.json.error.hint, /b\.orig.*b\.new|b\.new.*b\.orig/);
});

test('a unified-diff deletion whose lines differ from the file is CONTEXT_NOT_FOUND and deletes nothing', () => {
  const repo = makeRepo({ 'd.txt': 'one\ntwo\n' });
  const s = startSession(repo);
  const diff =
    'diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-TWO\n';
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], { input: diff });
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'CONTEXT_NOT_FOUND');
  assert.is(readFileSync(path.join(s.worktree, 'd.txt'), 'utf8'), 'one\ntwo\n');
});

test('a path through a file is a refusal, not an internal error, with or without attributes files', () => {
  for (const files of [
    { 'a.txt': 'a\n' },
    { 'a.txt': 'a\n', '.gitattributes': '*.bin binary\n' },
  ] as Record<string, string>[]) {
    const repo = makeRepo(files);
    const s = startSession(repo);
    const r = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex('*** Update File: a.txt/x', ' a', '+b'),
      unsetEnv: ['GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'],
    });
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'FILE_NOT_FOUND');
  }
});

test.run();
