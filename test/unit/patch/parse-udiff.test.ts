import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch } from '../../../src/patch/index.js';
import { errorOf, run, guarded } from './helpers.js';

const test = guarded(suite('parse-udiff'));

test('a multi-file git diff gives one op per file and is reported as the unified format, with no leniency', () => {
  const text = [
    'diff --git a/a.txt b/a.txt',
    'index 1111111..2222222 100644',
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,3 +1,3 @@',
    ' a',
    '-b',
    '+B',
    ' c',
    'diff --git a/src/b.txt b/src/b.txt',
    '--- a/src/b.txt',
    '+++ b/src/b.txt',
    '@@ -2 +2 @@ fn header()',
    '-x',
    '+y',
    '',
  ].join('\n');
  const p = parsePatch(text);
  assert.is(p.format, 'unified');
  assert.equal(p.leniencies, []);
  assert.is(p.format, 'unified');
  assert.equal(
    p.ops.map((o) => [o.kind, o.path]),
    [
      ['update', 'a.txt'],
      ['update', 'src/b.txt'],
    ],
  );
  const { out } = run(text, { 'a.txt': 'a\nb\nc\n', 'src/b.txt': 'w\nx\nz\n' });
  assert.is(out['a.txt'], 'a\nB\nc\n');
  assert.is(out['src/b.txt'], 'w\ny\nz\n');
});

test('hunk line numbers are only hints: off numbers still apply by content', () => {
  const text = '--- a/a.txt\n+++ b/a.txt\n@@ -90,3 +90,3 @@\n a\n-b\n+B\n c\n';
  const p = parsePatch(text);
  const op = p.ops[0];
  assert.ok(op?.kind === 'update' && op.chunks[0]?.oldStartHint === 90);
  assert.is(run(text, { 'a.txt': 'a\nb\nc\n' }).out['a.txt'], 'a\nB\nc\n');
});

test('new file and deleted file headers become add and delete', () => {
  const text = [
    'diff --git a/new.sh b/new.sh',
    'new file mode 100755',
    'index 0000000..1111111',
    '--- /dev/null',
    '+++ b/new.sh',
    '@@ -0,0 +1,2 @@',
    '+#!/bin/sh',
    '+echo hi',
    'diff --git a/old.txt b/old.txt',
    'deleted file mode 100644',
    '--- a/old.txt',
    '+++ /dev/null',
    '@@ -1 +0,0 @@',
    '-bye',
  ].join('\n');
  const p = parsePatch(text);
  assert.equal(p.ops[0], {
    kind: 'add',
    path: 'new.sh',
    lines: ['#!/bin/sh', 'echo hi'],
    finalNewline: true,
    mode: '100755',
    patchLine: 1,
  });
  assert.equal(p.ops[1], { kind: 'delete', path: 'old.txt', removedLines: ['bye'], patchLine: 9 });
  const { plan, out } = run(text, { 'old.txt': 'bye\n' });
  assert.is(out['new.sh'], '#!/bin/sh\necho hi\n');
  assert.is(plan.files[0]?.mode, '100755');
  assert.is(plan.files[1]?.removed, 1);
});

test('a rename with edits becomes a move with chunks', () => {
  const text = [
    'diff --git a/old.py b/pkg/new.py',
    'similarity index 80%',
    'rename from old.py',
    'rename to pkg/new.py',
    '--- a/old.py',
    '+++ b/pkg/new.py',
    '@@ -1,2 +1,2 @@',
    ' def f():',
    '-    return 1',
    '+    return 2',
  ].join('\n');
  const { plan, out } = run(text, {
    'old.py': { text: 'def f():\n    return 1\n', mode: '100755' },
  });
  assert.is(plan.files[0]?.op, 'move');
  assert.is(plan.files[0]?.from, 'old.py');
  assert.is(plan.files[0]?.mode, '100755');
  assert.is(out['pkg/new.py'], 'def f():\n    return 2\n');
});

test('a pure rename without hunks becomes a move', () => {
  const text =
    'diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n';
  const op = parsePatch(text).ops[0];
  assert.ok(op?.kind === 'update' && op.moveTo === 'b.txt' && op.chunks.length === 0);
});

test('a mode change is kept as newMode and planned as a change', () => {
  const text = 'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n';
  const { plan } = run(text, { 'run.sh': 'echo\n' });
  assert.is(plan.files[0]?.mode, '100755');
  assert.is(plan.files[0]?.noop, false);
});

test('No newline at end of file markers are honoured on both sides', () => {
  const drop =
    '--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n';
  assert.is(run(drop, { 'n.txt': 'a\nb\n' }).out['n.txt'], 'a\nb');
  const add =
    '--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n';
  assert.is(run(add, { 'n.txt': 'a\nb' }).out['n.txt'], 'a\nb\n');
  const newFile = '--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n';
  assert.is(run(newFile).out['x.txt'], 'x');
});

test('GIT binary patch and Binary files differ are UNSUPPORTED_FILE', () => {
  const e1 = errorOf(() =>
    parsePatch('diff --git a/i.png b/i.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\nabc\n'),
  );
  assert.is(e1.code, 'UNSUPPORTED_FILE');
  assert.is(e1.details.path, 'i.png');
  const e2 = errorOf(() =>
    parsePatch(
      'diff --git a/i.png b/i.png\nindex 1..2 100644\nBinary files a/i.png and b/i.png differ\n',
    ),
  );
  assert.is(e2.code, 'UNSUPPORTED_FILE');
});

test('a plain diff -u with timestamps and no a/ b/ prefixes is accepted', () => {
  const text =
    '--- a.txt.orig\t2024-01-01 10:00:00.000000000 +0000\n+++ a.txt\t2024-01-01 10:01:00.000000000 +0000\n@@ -1,2 +1,2 @@\n-x\n+X\n y\n';
  const p = parsePatch(text);
  assert.equal(
    p.ops.map((o) => o.path),
    ['a.txt'],
  );
  assert.is(run(text, { 'a.txt': 'x\ny\n' }).out['a.txt'], 'X\ny\n');
});

test('quoted paths with C escapes are decoded as git writes them', () => {
  const text =
    'diff --git "a/t\\303\\251st \\"q\\".txt" "b/t\\303\\251st \\"q\\".txt"\n--- "a/t\\303\\251st \\"q\\".txt"\n+++ "b/t\\303\\251st \\"q\\".txt"\n@@ -1 +1 @@\n-a\n+b\n';
  assert.equal(parsePatch(text).ops[0]?.path, 'tést "q".txt');
});

test('paths with spaces in an unquoted diff --git line are split correctly', () => {
  const text = 'diff --git a/my file.txt b/my file.txt\nold mode 100644\nnew mode 100755\n';
  assert.equal(parsePatch(text).ops[0]?.path, 'my file.txt');
});

test('a copy becomes an add of the new path with the source content and hunks', () => {
  const text =
    'diff --git a/a.txt b/c.txt\nsimilarity index 90%\ncopy from a.txt\ncopy to c.txt\n--- a/a.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n';
  const p = parsePatch(text);
  assert.equal(p.ops[0]?.kind, 'add');
  const { plan, out } = run(text, { 'a.txt': 'one\ntwo\n' });
  assert.is(out['c.txt'], 'one\n2\n');
  assert.is(plan.files[0]?.from, 'a.txt');
  assert.is(plan.files.length, 1);
});

test('a symlink mode is UNSUPPORTED_FILE', () => {
  assert.is(
    errorOf(() =>
      parsePatch(
        'diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n',
      ),
    ).code,
    'UNSUPPORTED_FILE',
  );
});

test('a zero-context insertion hunk goes after the line its header names', () => {
  const text = '--- a/a.txt\n+++ b/a.txt\n@@ -2,0 +3 @@\n+inserted\n';
  assert.is(run(text, { 'a.txt': '1\n2\n3\n' }).out['a.txt'], '1\n2\ninserted\n3\n');
});

test('a hunk whose counts are too small still takes all its lines and reports hunk-counts', () => {
  const text = '--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n a\n-b\n+B\n c\n';
  const p = parsePatch(text);
  assert.ok(p.leniencies.includes('hunk-counts'));
  assert.is(run(text, { 'a.txt': 'a\nb\nc\n' }).out['a.txt'], 'a\nB\nc\n');
});

test('a fenced diff with prose around it is unwrapped', () => {
  const text = 'Here:\n```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n```\nDone.\n';
  const p = parsePatch(text);
  assert.equal(p.leniencies.sort(), ['fence', 'prose']);
  assert.is(run(text, { 'a.txt': 'x\n' }).out['a.txt'], 'y\n');
});

test('a line that breaks a hunk is PATCH_SYNTAX with its line', () => {
  const e = errorOf(() => parsePatch('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\nwhat\n'));
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 5);
});

test.run();
