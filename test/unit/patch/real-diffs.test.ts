// Rules for what real tools and agents send (patch-language.md §2 "A unified diff", §2.4, §2.8,
// §4 byte fidelity and "Already applied", §5 Delete File + Add File): git format-patch output,
// CR bytes in unified diffs, repetitive files, deletions checked against the file, submodules,
// plain `diff -u a.orig a.new`, retried patches, whole-file rewrites, the missing final newline.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch } from '../../../src/patch/index.js';
import { codex, errorOf, guarded, run } from './helpers.js';

const test = guarded(suite('real diffs'));

const formatPatch = (hunk: string[], signature = true): string =>
  [
    'From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001',
    'From: A U Thor <author@example.com>',
    'Date: Thu, 7 Apr 2005 15:13:13 -0700',
    'Subject: [PATCH] b to B',
    '',
    '---',
    ' a.txt | 2 +-',
    ' 1 file changed, 1 insertion(+), 1 deletion(-)',
    '',
    'diff --git a/a.txt b/a.txt',
    'index 1111111..2222222 100644',
    '--- a/a.txt',
    '+++ b/a.txt',
    ...hunk,
    ...(signature ? ['-- ', '2.39.5', ''] : []),
    '',
  ].join('\n');

test('a format-patch hunk is read by its counts: the "-- " signature is trailing text, not a removed line', () => {
  const text = formatPatch(['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c']);
  const p = parsePatch(text);
  assert.is(p.format, 'unified');
  assert.is(p.leniencies.includes('hunk-counts'), false);
  assert.is(run(text, { 'a.txt': 'a\nb\nc\n' }).out['a.txt'], 'a\nB\nc\n');
  // a file with a line "- " right after the hunk: never deleted (the wrong tree of old)
  assert.is(run(text, { 'a.txt': 'a\nb\nc\n- \nd\n' }).out['a.txt'], 'a\nB\nc\n- \nd\n');
  // without the signature too
  assert.is(
    run(formatPatch(['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c'], false), { 'a.txt': 'a\nb\nc\n' })
      .out['a.txt'],
    'a\nB\nc\n',
  );
});

test('a format-patch whose last file is new is read up to its counts', () => {
  const text = [
    'diff --git a/n.txt b/n.txt',
    'new file mode 100644',
    'index 0000000..1111111',
    '--- /dev/null',
    '+++ b/n.txt',
    '@@ -0,0 +1,2 @@',
    '+x',
    '+y',
    '-- ',
    '2.39.5',
    '',
  ].join('\n');
  assert.is(run(text).out['n.txt'], 'x\ny\n');
});

test('a multi-commit format-patch touching one file twice applies both commits in order', () => {
  const one = formatPatch(['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c']);
  const two = formatPatch(['@@ -1,3 +1,3 @@', ' a', '-B', '+BB', ' c']);
  const { plan, out } = run(one + two, { 'a.txt': 'a\nb\nc\n' });
  assert.is(out['a.txt'], 'a\nBB\nc\n');
  assert.is(plan.files.length, 1);
  assert.is(plan.files[0]?.op, 'update');
  assert.is(plan.files[0]?.added, 1);
  assert.is(plan.files[0]?.removed, 1);
});

test('CR bytes of unified-diff lines are content: a new CRLF file stays CRLF, a last line "abc\\r" keeps its CR', () => {
  const add =
    'diff --git a/w.txt b/w.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,2 @@\n+one\r\n+abc\r\n\\ No newline at end of file\n';
  const p = parsePatch(add);
  assert.is(p.leniencies.includes('crlf-patch'), false);
  assert.is(run(add).out['w.txt'], 'one\r\nabc\r');
});

test('CR bytes of unified-diff lines are content: "+TWO\\r" in an LF file writes CRLF, "-two" / "+two\\r" is a change', () => {
  const up = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\r\n three\n';
  assert.is(run(up, { 'f.txt': 'one\ntwo\nthree\n' }).out['f.txt'], 'one\nTWO\r\nthree\n');
  const eol = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+two\r\n three\n';
  assert.is(run(eol, { 'f.txt': 'one\ntwo\nthree\n' }).out['f.txt'], 'one\ntwo\r\nthree\n');
  // and the other way: a git diff turning a CRLF line into LF
  const back = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n+two\n three\r\n';
  assert.is(
    run(back, { 'f.txt': 'one\r\ntwo\r\nthree\r\n' }).out['f.txt'],
    'one\r\ntwo\nthree\r\n',
  );
});

test('a unified diff whose own header lines end in CRLF was converted in transport: crlf-patch, CRs dropped', () => {
  const text = '--- a/f.txt\r\n+++ b/f.txt\r\n@@ -1,2 +1,2 @@\r\n one\r\n-two\r\n+TWO\r\n';
  const p = parsePatch(text);
  assert.ok(p.leniencies.includes('crlf-patch'));
  assert.is(run(text, { 'f.txt': 'one\ntwo\n' }).out['f.txt'], 'one\nTWO\n');
  // ... and in a CRLF file, the replaced line keeps its CRLF
  assert.is(run(text, { 'f.txt': 'one\r\ntwo\r\n' }).out['f.txt'], 'one\r\nTWO\r\n');
});

test('an insertion-only hunk in a repetitive file applies at its place although its new side occurs', () => {
  const file = 'x\nx\nx\ny\n';
  const text = '--- a/s.txt\n+++ b/s.txt\n@@ -2,2 +2,3 @@\n x\n+x\n x\n';
  // old side "x x" matches at lines 1 and 2: the hunk's own line (2) decides; no NO_CHANGES
  assert.is(run(text, { 's.txt': file }).out['s.txt'], 'x\nx\nx\nx\ny\n');
  const unique = '--- a/s.txt\n+++ b/s.txt\n@@ -3,2 +3,3 @@\n x\n+x\n y\n';
  assert.is(run(unique, { 's.txt': file }).out['s.txt'], 'x\nx\nx\nx\ny\n');
});

test("a unified-diff deletion must remove exactly the file's lines, else CONTEXT_NOT_FOUND", () => {
  const del =
    'diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n';
  assert.is(run(del, { 'd.txt': 'one\ntwo\n' }).plan.files[0]?.op, 'delete');
  assert.is(run(del, { 'd.txt': 'one\r\ntwo\r\n' }).plan.files[0]?.op, 'delete');
  const e = errorOf(() => run(del, { 'd.txt': 'one\nTWO\n' }));
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.line, 2);
  assert.is(errorOf(() => run(del, { 'd.txt': 'one\ntwo\nthree\n' })).code, 'CONTEXT_NOT_FOUND');
  // a Codex Delete File has no content to check
  assert.is(
    run(codex('*** Delete File: d.txt'), { 'd.txt': 'anything\n' }).plan.files[0]?.op,
    'delete',
  );
});

test('submodule entries are UNSUPPORTED_FILE "submodule", on add and on update alike', () => {
  const update =
    'diff --git a/sub b/sub\nindex 1111111..2222222 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1111111111111111111111111111111111111111\n+Subproject commit 2222222222222222222222222222222222222222\n';
  const add =
    'diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..2222222\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 2222222222222222222222222222222222222222\n';
  const plain =
    '--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1111111111111111111111111111111111111111\n+Subproject commit 2222222222222222222222222222222222222222\n';
  for (const text of [update, add, plain]) {
    const e = errorOf(() => parsePatch(text));
    assert.is(e.code, 'UNSUPPORTED_FILE');
    assert.is(e.details.reason, 'submodule');
    assert.match(e.message, /submodule/);
  }
});

test('plain diff -u a.orig a.new updates the file that exists (the +++ name when both do)', () => {
  const text =
    '--- a.orig\t2026-01-01 00:00:00\n+++ a.new\t2026-01-01 00:00:01\n@@ -1 +1 @@\n-x\n+y\n';
  assert.equal(run(text, { 'a.orig': 'x\n' }).out, { 'a.orig': 'y\n' });
  assert.equal(run(text, { 'a.new': 'x\n' }).out, { 'a.new': 'y\n' });
  assert.equal(run(text, { 'a.orig': 'x\n', 'a.new': 'x\n' }).out, { 'a.new': 'y\n' });
  const e = errorOf(() => run(text));
  assert.is(e.code, 'FILE_NOT_FOUND');
  assert.match(e.hint ?? '', /a\.orig/);
  assert.match(e.hint ?? '', /a\.new/);
  assert.equal(e.details.paths, ['a.new', 'a.orig']);
});

test('a blank line after *** End of File, before End Patch or the next op, is a stray blank line', () => {
  const before = codex('*** Update File: a.txt', '@@', ' a', '+b', '*** End of File', '');
  const p = parsePatch(before);
  assert.ok(p.leniencies.includes('stray-blank-line'));
  assert.is(run(before, { 'a.txt': 'a\n' }).out['a.txt'], 'a\nb\n');
  const next = codex(
    '*** Update File: a.txt',
    '@@',
    ' a',
    '+b',
    '*** End of File',
    '',
    '*** Add File: c.txt',
    '+c',
  );
  assert.equal(run(next, { 'a.txt': 'a\n' }).out, { 'a.txt': 'a\nb\n', 'c.txt': 'c\n' });
});

test('mixed line endings: a replaced line keeps the ending of the line it replaces, an insertion the line before it', () => {
  const file = 'one\r\ntwo\nthree\r\nfour\n';
  assert.is(
    run(codex('*** Update File: m.txt', '@@', ' two', '-three', '+THREE'), { 'm.txt': file }).out[
      'm.txt'
    ],
    'one\r\ntwo\nTHREE\r\nfour\n',
  );
  assert.is(
    run(codex('*** Update File: m.txt', '@@', ' one', '-two', '+TWO', '+2b'), { 'm.txt': file })
      .out['m.txt'],
    'one\r\nTWO\n2b\nthree\r\nfour\n',
  );
  assert.is(
    run(codex('*** Update File: m.txt', '@@', ' three', '+3b', ' four'), { 'm.txt': file }).out[
      'm.txt'
    ],
    'one\r\ntwo\nthree\r\n3b\r\nfour\n',
  );
  assert.is(
    run(codex('*** Update File: m.txt', '@@', '+zero', ' one'), { 'm.txt': file }).out['m.txt'],
    'zero\r\none\r\ntwo\nthree\r\nfour\n',
  );
});

test('an already-applied Codex patch is NO_CHANGES "looks applied already" with alreadyApplied', () => {
  const patch = codex(
    '*** Update File: a.py',
    '@@ def f():',
    '-    return 1',
    '+    return 2',
    '*** Add File: b.py',
    '+x = 1',
    '*** Delete File: c.py',
    '*** Update File: d.py',
    '*** Move to: e.py',
    '@@',
    '-d',
    '+e',
  );
  const before = { 'a.py': 'def f():\n    return 1\n', 'c.py': 'c\n', 'd.py': 'd\n' };
  const once = run(patch, before).out;
  assert.equal(once, { 'a.py': 'def f():\n    return 2\n', 'b.py': 'x = 1\n', 'e.py': 'e\n' });
  const e = errorOf(() => run(patch, once));
  assert.is(e.code, 'NO_CHANGES');
  assert.is(e.details.alreadyApplied, true);
  assert.match(e.message, /looks applied already/);
});

test('a partly applied patch names the chunks that look applied in the refusal of the first failing one', () => {
  const patch = codex('*** Update File: a.txt', '@@', '-one', '+ONE', '@@', '-three', '+THREE');
  const e = errorOf(() => run(patch, { 'a.txt': 'ONE\ntwo\nTHREEE\n' }));
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.chunk, 2);
  assert.equal(e.details.appliedChunks, [1]);
  assert.match(e.message, /chunk 1 looks applied already/);
  // some chunks applied, others still to do: refused, naming them
  const mixed = errorOf(() => run(patch, { 'a.txt': 'ONE\ntwo\nthree\n' }));
  assert.is(mixed.code, 'CONTEXT_NOT_FOUND');
  assert.equal(mixed.details.appliedChunks, [1]);
});

test('Delete File then Add File of one path is one whole-file update, mode kept, and its retry is NO_CHANGES', () => {
  const patch = codex('*** Delete File: r.sh', '*** Add File: r.sh', '+#!/bin/sh', '+echo new');
  const { plan, out } = run(patch, { 'r.sh': { text: '#!/bin/sh\necho old\n', mode: '100755' } });
  assert.is(out['r.sh'], '#!/bin/sh\necho new\n');
  assert.is(plan.files.length, 1);
  assert.is(plan.files[0]?.op, 'update');
  assert.is(plan.files[0]?.mode, '100755');
  assert.is(plan.files[0]?.added, 1);
  assert.is(plan.files[0]?.removed, 1);
  const retry = errorOf(() => run(patch, { 'r.sh': '#!/bin/sh\necho new\n' }));
  assert.is(retry.code, 'NO_CHANGES');
  assert.is(retry.details.alreadyApplied, true);
  // an Add alone onto an existing file names the replacement form in its hint
  const e = errorOf(() => run(codex('*** Add File: r.sh', '+x'), { 'r.sh': 'y\n' }));
  assert.is(e.code, 'FILE_EXISTS');
  assert.match(e.hint ?? '', /Delete File: r\.sh.*Add File: r\.sh/);
  // other pairs stay DUPLICATE_PATH
  assert.is(
    errorOf(() => run(codex('*** Add File: r.sh', '+x', '*** Delete File: r.sh'), {})).code,
    'DUPLICATE_PATH',
  );
});

test('-last / +last before *** End of File adds the missing final newline, reported as finalNewline added', () => {
  const patch = codex('*** Update File: n.txt', '@@', '-last', '+last', '*** End of File');
  const { plan, out } = run(patch, { 'n.txt': 'first\nlast' });
  assert.is(out['n.txt'], 'first\nlast\n');
  assert.is(plan.files[0]?.finalNewline, 'added');
  // without End of File, or on a file that has its newline, it stays a no-op
  assert.is(
    errorOf(() =>
      run(codex('*** Update File: n.txt', '@@', '-last', '+last'), { 'n.txt': 'first\nlast' }),
    ).code,
    'NO_CHANGES',
  );
  assert.is(errorOf(() => run(patch, { 'n.txt': 'first\nlast\n' })).code, 'NO_CHANGES');
});

test('a retried git diff with a mode change is NO_CHANGES "looks applied already"', () => {
  const text =
    'diff --git a/r.sh b/r.sh\nold mode 100644\nnew mode 100755\n--- a/r.sh\n+++ b/r.sh\n@@ -1 +1 @@\n-echo 1\n+echo 2\n';
  const once = run(text, { 'r.sh': 'echo 1\n' });
  assert.is(once.plan.files[0]?.mode, '100755');
  const e = errorOf(() => run(text, { 'r.sh': { text: 'echo 2\n', mode: '100755' } }));
  assert.is(e.code, 'NO_CHANGES');
  assert.is(e.details.alreadyApplied, true);
});

test('a Codex insertion into a repetitive file applies where its context matches, though its new side occurs', () => {
  const patch = codex('*** Update File: x.txt', '@@', ' x', ' x', ' x', '+x', ' y');
  assert.is(run(patch, { 'x.txt': 'x\nx\nx\nx\ny\n' }).out['x.txt'], 'x\nx\nx\nx\nx\ny\n');
});

test.run();
