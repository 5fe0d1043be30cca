import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from './helpers.js';
import { LineIndex, foldUnicode, seekAnchor, seekSequence } from '../../../src/patch/seek.js';

const test = guarded(suite('seek'));
const idx = (...lines: string[]) => new LineIndex(lines);

test('seek finds an exact unique match and reports its 0-based index', () => {
  assert.equal(seekSequence(idx('a', 'b', 'c'), ['b', 'c'], 0, { endOfFile: false }), {
    kind: 'unique',
    index: 1,
    level: 'exact',
  });
});

test('seek reports ambiguous with both candidate lines', () => {
  const r = seekSequence(
    idx('fn a() {', '    return 1;', '}', 'fn b() {', '    return 1;', '}'),
    ['    return 1;'],
    0,
    { endOfFile: false },
  );
  assert.equal(r, { kind: 'ambiguous', level: 'exact', candidates: [1, 4] });
});

test('seek counts only matches at or after the cursor', () => {
  const r = seekSequence(idx('x', 'y', 'x', 'y'), ['x', 'y'], 1, { endOfFile: false });
  assert.equal(r, { kind: 'unique', index: 2, level: 'exact' });
});

test('seek uses the strictest level that matches and counts uniqueness there', () => {
  // exact matches once; the trimmed comparison would match twice, but exact wins
  const r = seekSequence(idx('  v = 1', 'v = 1'), ['v = 1'], 0, { endOfFile: false });
  assert.equal(r, { kind: 'unique', index: 1, level: 'exact' });
});

test('seek falls back through trim-end, trim and unicode levels', () => {
  assert.equal(seekSequence(idx('a  ', 'b'), ['a', 'b'], 0, { endOfFile: false }), {
    kind: 'unique',
    index: 0,
    level: 'trim-end',
  });
  assert.equal(seekSequence(idx('\ta', 'b'), ['a', 'b'], 0, { endOfFile: false }), {
    kind: 'unique',
    index: 0,
    level: 'trim',
  });
  assert.equal(
    seekSequence(idx('say \u201Chi\u201D \u2014 it\u2019s'), ['say "hi" - it\'s'], 0, {
      endOfFile: false,
    }),
    { kind: 'unique', index: 0, level: 'unicode' },
  );
});

test('seek reports ambiguous at a loose level when the loose level is the first to match', () => {
  const r = seekSequence(idx(' a', 'x', '\ta'), ['a'], 0, { endOfFile: false });
  assert.equal(r, { kind: 'ambiguous', level: 'trim', candidates: [0, 2] });
});

test('unicode folding maps dashes, quotes and spaces listed in the rule', () => {
  assert.is(foldUnicode('\u2010\u2011\u2012\u2013\u2014\u2015\u2212'), '-------');
  assert.is(foldUnicode('\u2018\u2019\u201A\u201B'), "''''");
  assert.is(foldUnicode('\u201C\u201D\u201E\u201F'), '""""');
  assert.is(foldUnicode('a\u00A0b\u2002c\u200Ad\u202Fe\u205Ff\u3000g'), 'a b c d e f g');
});

test('seek with endOfFile only tries the very end of the file', () => {
  const lines = idx('marker', 'end', 'middle', 'marker', 'end');
  assert.equal(seekSequence(lines, ['marker', 'end'], 0, { endOfFile: true }), {
    kind: 'unique',
    index: 3,
    level: 'exact',
  });
  assert.equal(seekSequence(idx('a', 'b', ''), ['a', 'b'], 0, { endOfFile: true }), {
    kind: 'none',
  });
});

test('seek reports none when the pattern is longer than the file or absent', () => {
  assert.equal(seekSequence(idx('a'), ['a', 'b'], 0, { endOfFile: false }), { kind: 'none' });
  assert.equal(seekSequence(idx('a', 'b'), ['c'], 0, { endOfFile: false }), { kind: 'none' });
});

test('seekAnchor takes the first whole-line match after the cursor', () => {
  const lines = idx('class A:', '    def m(self):', 'class B:', '    def m(self):');
  assert.equal(seekAnchor(lines, '    def m(self):', 2), {
    kind: 'found',
    index: 3,
    level: 'exact',
    prefix: false,
  });
  assert.equal(seekAnchor(lines, 'def m(self):', 0), {
    kind: 'found',
    index: 1,
    level: 'trim',
    prefix: false,
  });
});

test('seekAnchor accepts a prefix only when exactly one line starts with it', () => {
  const lines = idx('def foo(a, b):', 'def bar():', 'def baz():');
  assert.equal(seekAnchor(lines, 'def foo', 0), {
    kind: 'found',
    index: 0,
    level: 'trim',
    prefix: true,
  });
  assert.equal(seekAnchor(lines, 'def ba', 0), { kind: 'ambiguous', candidates: [1, 2] });
  assert.equal(seekAnchor(lines, 'def qux', 0), { kind: 'none' });
});

test('seek on a 10,000-line file with 200 lookups stays fast', () => {
  const lines = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? '}' : `line ${i}`));
  const index = new LineIndex(lines);
  const t0 = performance.now();
  let cursor = 0;
  for (let k = 0; k < 200; k++) {
    const at = 20 + k * 49;
    const r = seekSequence(index, lines.slice(at, at + 4), cursor, { endOfFile: false });
    assert.is(r.kind, 'unique');
    if (r.kind === 'unique') cursor = r.index + 4;
  }
  // A guard against quadratic rescans only (the 50 ms figure is measured in bench/patch-engine.ts):
  // a loaded CI machine must not make it flaky.
  assert.ok(performance.now() - t0 < 1000, `took ${performance.now() - t0} ms`);
});

test.run();
