// Rule: patch-language.md §4 (byte fidelity) on the fast path: an ASCII file's untouched lines are
// copied from its bytes; a non-ASCII file is re-encoded from its lines. Both must give the same bytes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { codex, guarded, run } from './helpers.js';

const test = guarded(suite('splice'));

const cases: [string, string, string[], string][] = [
  [
    'insertion at the end of a file without final newline',
    'a\nb',
    ['*** Update File: f', '+c'],
    'a\nb\nc',
  ],
  ['replacement of the unterminated last line', 'a\nb', ['*** Update File: f', '-b', '+B'], 'a\nB'],
  [
    'CRLF file with a chunk in the middle',
    'a\r\nb\r\nc\r\n',
    ['*** Update File: f', ' a', '-b', '+B', '+X', ' c'],
    'a\r\nB\r\nX\r\nc\r\n',
  ],
  [
    "mixed endings keep each untouched line's own, and a replaced line the ending of the line it replaces",
    'a\r\nb\nc\rd\n',
    ['*** Update File: f', ' b', '-c', '+C'],
    'a\r\nb\nC\rd\n',
  ],
  ['BOM file', '\uFEFFa\nb\n', ['*** Update File: f', '-a', '+A'], '\uFEFFA\nb\n'],
  [
    'two chunks with untouched runs between and after',
    '1\n2\n3\n4\n5\n6\n',
    ['*** Update File: f', '@@', '-2', '+two', '@@', '-5', '+five'],
    '1\ntwo\n3\n4\nfive\n6\n',
  ],
  ['deleting the last lines', 'a\nb\nc\n', ['*** Update File: f', ' a', '-b', '-c'], 'a\n'],
];

for (const [name, before, ops, after] of cases) {
  test(`ASCII: ${name}`, () => {
    assert.is(run(codex(...ops), { f: before }).out['f'], after);
  });
  test(`non-ASCII: ${name}`, () => {
    // The same case with "a" → "ä" and "1" → "¹" in the file, the chunk lines and the result.
    const u = (x: string): string => x.replace(/a/g, 'ä').replace(/1/g, '¹');
    const opsU = ops.map((l, i) => (i === 0 ? l : u(l)));
    assert.is(run(codex(...opsU), { f: u(before) }).out['f'], u(after));
  });
}

test.run();
