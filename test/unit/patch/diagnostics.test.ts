// Rule: patch-language.md §3.3, §3.8, §6 (diagnostics that teach): refusals carry
// structured details an agent can act on, through parsePatch/planPatch and formatResult.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatResult, parsePatch } from '../../../src/patch/index.js';
import { codex, errorOf, guarded, run } from './helpers.js';

const test = guarded(suite('diagnostics'));
const rs = 'fn a() {\n    return 1;\n}\nfn b() {\n    let x = 0;\n    return 1;\n}\n';

test('CONTEXT_NOT_FOUND: chunk, chunkFirstLine, closest range and the first difference, side by side', () => {
  const e = errorOf(() =>
    run(
      codex(
        '*** Update File: r.rs',
        '@@',
        ' fn b() {',
        '     let x = 0;',
        '-    return 3;',
        '+    return 2;',
      ),
      { 'r.rs': rs },
    ),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.chunk, 1);
  assert.is(e.details['chunkFirstLine'], 'fn b() {');
  assert.equal(e.details['closest'], { startLine: 4, endLine: 6 });
  assert.equal(e.details['firstDifference'], {
    line: 6,
    file: '    return 1;',
    patch: '    return 3;',
  });
  assert.is(e.details.line, 6);
  assert.ok(e.hint?.includes('file "    return 1;" | patch "    return 3;"'), e.hint);
  const text = formatResult({
    ok: false,
    error: { ...e.details, code: e.code, message: e.message, hint: e.hint } as never,
  });
  assert.ok(
    text.includes(
      '  closest: lines 4-6\n  first difference at line 6:\n    file:  "    return 1;"\n    patch: "    return 3;"\n',
    ),
    text,
  );
});

test('CONTEXT_NOT_FOUND: the second chunk is numbered 2; a chunk running past the end shows file null', () => {
  const e = errorOf(() =>
    run(
      codex(
        '*** Update File: r.rs',
        '@@',
        '-fn a() {',
        '+fn A() {',
        '@@',
        ' }',
        '-fn b() {',
        '+fn B() {',
        '     let x = 0;',
        '     return 1;',
        ' }',
        ' fn c() {',
      ),
      { 'r.rs': rs },
    ),
  );
  assert.is(e.details.chunk, 2);
  assert.is(e.details['chunkFirstLine'], '}');
  assert.equal(e.details['firstDifference'], { line: 8, file: null, patch: 'fn c() {' });
});

test('CONTEXT_NOT_FOUND: a region that matches whole but lies before the cursor reports no false difference', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@ fn b() {', '-fn a() {', '+fn A() {'), { 'r.rs': rs }),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.equal(e.details['closest'], { startLine: 1, endLine: 1 });
  assert.is(e.details['firstDifference'], undefined);
  assert.ok(e.hint?.includes('chunks must follow file order'), e.hint);
});

test('AMBIGUOUS_MATCH: every candidate, and for each the enclosing definition line above it', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@', '-    return 1;', '+    return 2;'), { 'r.rs': rs }),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details.candidates, [2, 6]);
  assert.equal(e.details['suggestedAnchors'], [
    { candidate: 2, line: 1, text: 'fn a() {' },
    { candidate: 6, line: 4, text: 'fn b() {' },
  ]);
  assert.ok(
    e.hint?.startsWith('for the match at line 2, add the anchor "@@ fn a() {" (line 1)'),
    e.hint,
  );
  // An anchor alone cannot single out the first of several matches: the hint says what else to add.
  assert.ok(e.hint?.includes('extend the chunk with the next'), e.hint);
});

test('AMBIGUOUS_MATCH: the suggested anchor for the last candidate does make the chunk unique', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@', '-    return 1;', '+    return 2;'), { 'r.rs': rs }),
  );
  const last = (e.details['suggestedAnchors'] as { text: string }[])[1] as { text: string };
  const { out } = run(
    codex('*** Update File: r.rs', `@@ ${last.text}`, '-    return 1;', '+    return 2;'),
    { 'r.rs': rs },
  );
  assert.is(out['r.rs'], rs.replace(/return 1;\n}\n$/, 'return 2;\n}\n'));
});

test('AMBIGUOUS_MATCH of an anchor prefix lists each line it could name', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@ fn', '-    return 1;', '+    return 2;'), {
      'r.rs': rs,
    }),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details['suggestedAnchors'], [
    { line: 1, text: 'fn a() {' },
    { line: 4, text: 'fn b() {' },
  ]);
});

test('PATCH_SYNTAX: the 1-based line, its text and the forms expected there', () => {
  const e = errorOf(() => parsePatch(codex('*** Update File: r.rs', '@@', ' a', 'oops')));
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 5);
  assert.is(e.details['text'], 'oops');
  const expected = e.details['expected'] as string[];
  assert.ok(
    Array.isArray(expected) &&
      expected.includes(' CONTEXT') &&
      expected.includes('@@ ANCHOR') &&
      expected.includes('*** End Patch'),
    String(expected),
  );
});

test('PATCH_SYNTAX in a unified diff hunk and for a missing End Patch', () => {
  const u = errorOf(() => parsePatch('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\nwhat\n'));
  assert.equal([u.details.line, u.details['text']], [5, 'what']);
  assert.ok((u.details['expected'] as string[]).includes('-REMOVED'));
  const t = errorOf(() => parsePatch('*** Begin Patch\n*** Add File: a\n+x\n'));
  assert.equal(
    [t.details.line, t.details['text'], t.details['expected']],
    [4, '', ['*** End Patch']],
  );
  const h = errorOf(() => parsePatch('*** Begin Patch\nUpdate a.txt\n*** End Patch\n'));
  assert.equal([h.details.line, h.details['text']], [2, 'Update a.txt']);
  assert.ok((h.details['expected'] as string[]).includes('*** Update File: PATH'));
});

test('every plan reports the level each chunk matched and the leniencies used', () => {
  const { plan } = run(
    codex(
      '*** Update File: r.rs',
      '@@ fn b() {',
      '     let x = 0;  ',
      '-    return 1;',
      '+    return 2;',
    ),
    { 'r.rs': rs },
  );
  assert.equal(
    plan.files[0]?.chunks.map((c) => c.level),
    ['trim-end'],
  );
  assert.is(plan.files[0]?.level, 'trim-end');
  assert.equal(plan.leniencies, []);
});

test('CONTEXT_NOT_FOUND: the closest region is the one with the most equal lines, blank lines counted (4 of 5, not an earlier 2 of 5)', () => {
  const file = [
    'fn decoy() {',
    '    let y = 1;',
    '    done();',
    '}',
    'fn real() {',
    '    let y = 1;',
    '',
    '    step();',
    '',
    '    done();',
    '}',
    '',
  ].join('\n');
  const e = errorOf(() =>
    run(
      codex(
        '*** Update File: r.rs',
        '@@',
        '     let y = 1;',
        ' ',
        '-    stop();',
        '+    go();',
        ' ',
        '     done();',
      ),
      { 'r.rs': file },
    ),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.equal(e.details['closest'], { startLine: 6, endLine: 10 });
  assert.ok(e.hint?.includes('(4 of 5 lines match)'), e.hint);
  assert.equal(e.details['firstDifference'], {
    line: 8,
    file: '    step();',
    patch: '    stop();',
  });
});

test('AMBIGUOUS_MATCH: two matches in one function get different anchors, each one that singles its match out', () => {
  const file = [
    'fn main() {',
    '    // first',
    '    x += 1;',
    '    // second',
    '    x += 1;',
    '}',
    '',
  ].join('\n');
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@', '-    x += 1;', '+    x += 2;'), { 'r.rs': file }),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  const anchors = e.details['suggestedAnchors'] as { candidate: number; text: string }[];
  assert.equal(
    anchors.map((a) => a.text),
    ['fn main() {', '    // second'],
  );
  const { out } = run(
    codex('*** Update File: r.rs', `@@ ${anchors[1]!.text.trim()}`, '-    x += 1;', '+    x += 2;'),
    { 'r.rs': file },
  );
  assert.is(out['r.rs'], file.replace(/x \+= 1;\n}/, 'x += 2;\n}'));
});

test.run();
