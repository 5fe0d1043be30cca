/**
 * The radar's line ranges (radar/ranges.ts): hunk headers of real `git diff -U0` output, the
 * "intersect or touch" rule, head lines mapped to the land base, and an edit's touched lines.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  anyMeet,
  formatRanges,
  hunkRange,
  parseZeroContextDiff,
  rangesMeet,
  toOldSide,
  touchedLines,
  unquoteGitPath,
} from '../../../src/radar/ranges.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('radar ranges');

const lines = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}`).join('\n') + '\n';

t('parses the hunks of real git diff -U0 output, with added, deleted and odd-named files', () => {
  const repo = makeRepo({
    'a.txt': lines(30),
    'gone.txt': 'x\ny\n',
    'sp ace\tt.txt': 'q\n',
    's p.txt': 'x\n',
  });
  const a = lines(30).replace('10\n', 'TEN\n').replace('20\n', '20\nnew\n').replace('25\n', '');
  writeFileSync(path.join(repo, 'a.txt'), a);
  writeFileSync(path.join(repo, 'new.txt'), 'n1\nn2\n');
  writeFileSync(path.join(repo, 'sp ace\tt.txt'), 'Q\n');
  writeFileSync(path.join(repo, 's p.txt'), 'y\n');
  git(repo, 'rm', '-q', 'gone.txt');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'two');
  const out = git(repo, 'diff', '-U0', '--no-renames', 'HEAD^', 'HEAD');
  const h = parseZeroContextDiff(`${out}\n`);
  assert.equal(h.get('a.txt')!.map(hunkRange), [
    [10, 10],
    [21, 20],
    [25, 25],
  ]);
  assert.equal(h.get('new.txt')!.map(hunkRange), [[1, 0]], 'an added file inserts at the top');
  assert.equal(h.get('gone.txt')!.map(hunkRange), [[1, 2]], 'a deleted file removes every line');
  assert.equal(h.get('sp ace\tt.txt')!.map(hunkRange), [[1, 1]], 'a C-quoted path is unquoted');
  assert.equal(h.get('s p.txt')!.map(hunkRange), [[1, 1]], "a space: git's closing tab dropped");
});

t('unquoteGitPath reads C escapes and octal UTF-8 bytes', () => {
  assert.is(unquoteGitPath('"a\\tb"'), 'a\tb');
  assert.is(unquoteGitPath('"caf\\303\\251.txt"'), 'café.txt');
  assert.is(unquoteGitPath('plain.txt'), 'plain.txt');
});

t('ranges meet when they intersect or touch, and not across an unchanged line', () => {
  assert.ok(rangesMeet([10, 20], [15, 25]), 'intersect');
  assert.ok(rangesMeet([10, 20], [21, 22]), 'touch after');
  assert.ok(rangesMeet([10, 20], [5, 9]), 'touch before');
  assert.not.ok(rangesMeet([10, 20], [22, 30]), 'line 21 between them');
  assert.ok(rangesMeet([11, 10], [10, 10]), 'an insertion after 10 meets a change of 10');
  assert.ok(rangesMeet([11, 10], [11, 11]), 'and of 11');
  assert.not.ok(rangesMeet([11, 10], [9, 9]), 'not of 9: line 10 is between');
  assert.ok(anyMeet([], [[3, 3]]), 'an empty list is the whole file');
  assert.not.ok(anyMeet([[1, 2]], [[5, 6]]));
});

t('toOldSide shifts lines after hunks and widens lines inside one to its old range', () => {
  // 3 lines inserted after old line 5 (new 6-8); old lines 10-11 replaced by one (new 13).
  const hunks = [
    { oldStart: 5, oldCount: 0, newStart: 6, newCount: 3 },
    { oldStart: 10, oldCount: 2, newStart: 13, newCount: 1 },
  ];
  assert.equal(toOldSide([2, 3], hunks), [2, 3], 'before every hunk');
  assert.equal(toOldSide([7, 7], hunks), [6, 5], 'inside an insertion: the insertion point');
  assert.equal(toOldSide([9, 9], hunks), [6, 6], 'after the insertion: shifted by 3');
  assert.equal(toOldSide([13, 13], hunks), [10, 11], 'inside a replacement: its old lines');
  assert.equal(toOldSide([20, 21], hunks), [18, 19], 'after both: shifted by 3 - 1');
});

t('touchedLines gives the span between common prefix and suffix, in old lines', () => {
  assert.equal(touchedLines('a\nb\nc\nd\n', 'a\nB\nc\nd\n'), [[2, 2]]);
  assert.equal(touchedLines('a\nb\nc\n', 'a\nb\nx\nc\n'), [[3, 2]], 'an insertion after line 2');
  assert.equal(touchedLines('a\nb\nc\n', 'a\nc\n'), [[2, 2]], 'a deletion');
  assert.equal(touchedLines('a\nb\n', 'a\nb\n'), []);
  assert.equal(touchedLines('a\nb', 'a\nb\n'), [[2, 2]], 'the final newline counts');
});

t('formatRanges reads as a message', () => {
  assert.is(formatRanges([[10, 20]]), 'lines 10–20');
  assert.is(formatRanges([[7, 7]]), 'line 7');
  assert.is(formatRanges([[11, 10]]), 'lines after 10');
  assert.is(formatRanges([]), 'the whole file');
});

t.run();
