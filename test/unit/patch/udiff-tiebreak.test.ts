// Rule: patch-language.md §2 ("the numbers are hints") read with §3.3 (uniqueness): a unified-diff
// hunk whose old side matches several places at its level is taken at the one candidate that starts
// exactly at its `@@ -l` line (original-file numbering, where `git apply` puts it), with leniency
// `line-number-tiebreak`; when no candidate starts there it stays AMBIGUOUS_MATCH. Never for Codex.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { codex, errorOf, guarded, run } from './helpers.js';

const test = guarded(suite('udiff-tiebreak'));

/** Six identical functions: every body line repeats. */
const file = [0, 1, 2, 3, 4, 5].map((i) => `def f${i}():\n    x = 1\n    return x\n`).join('\n');

/** What `git diff -U1` prints for: f1's x = 2, two lines inserted in f3, and f4's blank line replaced. */
const gitDiff = [
  'diff --git a/a.py b/a.py',
  'index 9c5081f..322c0bc 100644',
  '--- a/a.py',
  '+++ b/a.py',
  '@@ -5,3 +5,3 @@ def f0():',
  ' def f1():',
  '-    x = 1',
  '+    x = 2',
  '     return x',
  '@@ -14,2 +14,4 @@ def f3():',
  '     x = 1',
  '+    y = 0',
  '+    y = 1',
  '     return x',
  '@@ -19,3 +21,3 @@ def f4():',
  '     return x',
  '-',
  '+    x = 3',
  ' def f5():',
  '',
].join('\n');

test('a real git diff with repeated context lands where its @@ -l lines say, reporting line-number-tiebreak', () => {
  const { out, plan } = run(gitDiff, { 'a.py': file });
  const want = file.split('\n');
  want[5] = '    x = 2';
  want.splice(14, 0, '    y = 0', '    y = 1');
  want[21] = '    x = 3';
  assert.is(out['a.py'], want.join('\n'));
  assert.ok(plan.leniencies.includes('line-number-tiebreak'), String(plan.leniencies));
  assert.equal(
    plan.files[0]?.chunks.map((c) => c.startLine),
    [5, 14, 19],
  );
});

test("the -l number is in the original file: a later hunk is not shifted by earlier hunks' delta", () => {
  // Hunk 2 adds two lines; hunk 3's -19 is still line 19 of the original (its +21 is in the new file).
  const { plan } = run(gitDiff, { 'a.py': file });
  assert.is(plan.files[0]?.chunks[2]?.startLine, 19);
});

test('a hint off by one line picks nothing: AMBIGUOUS_MATCH with every candidate', () => {
  const text = '--- a/a.py\n+++ b/a.py\n@@ -7,2 +7,2 @@\n-    x = 1\n+    x = 2\n     return x\n';
  const e = errorOf(() => run(text, { 'a.py': file }));
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details.candidates, [2, 6, 10, 14, 18, 22]);
});

test('a hint far from every candidate is AMBIGUOUS_MATCH', () => {
  const text =
    '--- a/a.py\n+++ b/a.py\n@@ -300,2 +300,2 @@\n-    x = 1\n+    x = 2\n     return x\n';
  assert.is(errorOf(() => run(text, { 'a.py': file })).code, 'AMBIGUOUS_MATCH');
});

test('the hint never overrides content: a unique match elsewhere wins and needs no tie-break', () => {
  const text = '--- a/a.py\n+++ b/a.py\n@@ -2,2 +2,2 @@\n def f4():\n-    x = 1\n+    x = 4\n';
  const { out, plan } = run(text, { 'a.py': file });
  assert.ok(out['a.py']?.includes('def f4():\n    x = 4\n'));
  assert.not.ok(plan.leniencies.includes('line-number-tiebreak'));
});

test('a Codex chunk under a "@@ -l,n +l,n @@" anchor gets no tie-break (the numbers are ignored there)', () => {
  const e = errorOf(() =>
    run(
      codex(
        '*** Update File: a.py',
        '@@ -6,2 +6,2 @@',
        '-    x = 1',
        '+    x = 2',
        '     return x',
      ),
      { 'a.py': file },
    ),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
});

test.run();
