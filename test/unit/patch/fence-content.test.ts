// Rule: patch-language.md §2.2 — unwrapping a Markdown fence or prose never cuts inside the patch:
// only a fence line OUTSIDE the patch's own lines (outside every hunk, chunk or Add body) closes a
// fence. A Markdown file's own fence lines (" ```" context, "+```" added, "-```" removed) are content.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch } from '../../../src/patch/index.js';
import { codex, errorOf, guarded, run } from './helpers.js';

const test = guarded(suite('fence-content'));
const F = '```';
const doc = `a\n${F}\nb\n`;

const docHunk = [
  '--- a/doc.md',
  '+++ b/doc.md',
  '@@ -1,3 +1,3 @@',
  '-a',
  '+A',
  ` ${F}`,
  '-b',
  '+B',
];
const gitDoc = ['diff --git a/doc.md b/doc.md', ...docHunk];

test('unified diff: a context line " ```" is content, not a closing fence', () => {
  const text = [...gitDoc, ''].join('\n');
  const p = parsePatch(text);
  assert.equal(p.leniencies, []);
  assert.is(p.format, 'unified');
  assert.is(run(text, { 'doc.md': doc }).out['doc.md'], `A\n${F}\nB\n`);
});

test('unified diff: a file after a hunk holding " ```" is still read (no MULTIPLE_PATCHES)', () => {
  const text = [
    ...gitDoc,
    'diff --git a/x.txt b/x.txt',
    '--- a/x.txt',
    '+++ b/x.txt',
    '@@ -1 +1 @@',
    '-x',
    '+y',
    '',
  ].join('\n');
  const { out } = run(text, { 'doc.md': doc, 'x.txt': 'x\n' });
  assert.is(out['doc.md'], `A\n${F}\nB\n`);
  assert.is(out['x.txt'], 'y\n');
});

test('unified diff: changes only after a " ```" context line are applied (no NO_CHANGES)', () => {
  const text = [
    '--- a/doc.md',
    '+++ b/doc.md',
    '@@ -1,3 +1,3 @@',
    ' a',
    ` ${F}`,
    '-b',
    '+B',
    '',
  ].join('\n');
  assert.is(run(text, { 'doc.md': doc }).out['doc.md'], `a\n${F}\nB\n`);
});

test('unified diff: added and removed fence lines ("+```", "-```") are content', () => {
  const text = [
    '--- a/doc.md',
    '+++ b/doc.md',
    '@@ -1,2 +1,2 @@',
    ' a',
    `-${F}`,
    `+${F}js`,
    '@@ -3 +3,2 @@',
    ' b',
    `+${F}`,
    '',
  ].join('\n');
  assert.is(run(text, { 'doc.md': doc }).out['doc.md'], `a\n${F}js\nb\n${F}\n`);
});

test('unified diff: a fenced diff whose hunk holds " ```" is unwrapped at its real closing fence', () => {
  const text = ['Here is the change:', `${F}diff`, ...gitDoc, F, 'It uppercases a and b.', ''].join(
    '\n',
  );
  const p = parsePatch(text);
  assert.equal([...p.leniencies].sort(), ['fence', 'prose']);
  assert.is(run(text, { 'doc.md': doc }).out['doc.md'], `A\n${F}\nB\n`);
});

test('unified diff: a fenced diff with a plain closing fence still works', () => {
  const text = [`${F}diff`, '--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-x', '+y', F, ''].join(
    '\n',
  );
  assert.equal(parsePatch(text).leniencies, ['fence']);
  assert.is(run(text, { 'a.txt': 'x\n' }).out['a.txt'], 'y\n');
});

test('unified diff: a closing fence ends a hunk whose counts are too large', () => {
  const text = [
    `${F}diff`,
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,5 +1,5 @@',
    '-x',
    '+y',
    F,
    '',
  ].join('\n');
  const p = parsePatch(text);
  assert.ok(
    p.leniencies.includes('fence') && p.leniencies.includes('hunk-counts'),
    String(p.leniencies),
  );
  assert.is(run(text, { 'a.txt': 'x\n' }).out['a.txt'], 'y\n');
});

test('unified diff: an indented closing fence after a complete hunk closes a fenced diff', () => {
  const text = [
    `  ${F}diff`,
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1 +1 @@',
    '-x',
    '+y',
    `  ${F}`,
    '',
  ].join('\n');
  assert.is(run(text, { 'a.txt': 'x\n' }).out['a.txt'], 'y\n');
});

test('unified diff: in a fenced diff, " ```" followed by more hunk lines is content even when the counts are too small', () => {
  const text = [
    `${F}diff`,
    '--- a/doc.md',
    '+++ b/doc.md',
    '@@ -1,1 +1,1 @@',
    '-a',
    '+A',
    ` ${F}`,
    '-b',
    '+B',
    F,
    '',
  ].join('\n');
  assert.is(run(text, { 'doc.md': doc }).out['doc.md'], `A\n${F}\nB\n`);
});

test('unified diff: two fenced diffs are still MULTIPLE_PATCHES', () => {
  const one = [`${F}diff`, '--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-x', '+y', F].join('\n');
  const e = errorOf(() => parsePatch(`${one}\nand\n${one}\n`));
  assert.is(e.code, 'MULTIPLE_PATCHES');
});

test('Codex: a context line " ```" and an added "+```" inside a chunk are content', () => {
  const patch = codex(
    '*** Update File: doc.md',
    '@@',
    '-a',
    '+A',
    ` ${F}`,
    '+' + F + 'sh',
    '-b',
    '+B',
  );
  assert.is(run(patch, { 'doc.md': doc }).out['doc.md'], `A\n${F}\n${F}sh\nB\n`);
});

test('Codex: a fenced patch holding " ```" context and "+```" Add lines is unwrapped at its real fence', () => {
  const patch = `${F}patch\n${codex('*** Update File: doc.md', '@@', '-a', '+A', ` ${F}`, '-b', '+B', '*** Add File: n.md', '+x', `+${F}`, '+y')}${F}\n`;
  const { out, plan } = run(patch, { 'doc.md': doc });
  assert.is(out['doc.md'], `A\n${F}\nB\n`);
  assert.is(out['n.md'], `x\n${F}\ny\n`);
  assert.equal(plan.leniencies, ['fence']);
});

test('Codex: an Add body without "+" keeps its fence lines as content', () => {
  const patch = `${F}\n${codex('*** Add File: n.md', 'x', `${F}js`, 'y', F)}${F}\n`;
  assert.is(run(patch).out['n.md'], `x\n${F}js\ny\n${F}\n`);
});

test.run();
