import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from './helpers.js';
import { countLines, decodeTextFile, encodeTextFile } from '../../../src/patch/text-file.js';

const test = guarded(suite('text-file'));
const enc = new TextEncoder();

function roundTrip(text: string): void {
  const bytes = enc.encode(text);
  const r = decodeTextFile(bytes);
  assert.is(r.kind, 'text');
  if (r.kind !== 'text') return;
  assert.equal([...encodeTextFile(r.file)], [...bytes], JSON.stringify(text));
}

test('decoding then encoding gives back the same bytes for every line-ending shape', () => {
  for (const t of [
    '',
    'a',
    'a\n',
    'a\r\nb\r\n',
    'a\rb\r',
    'a\nb\r\nc\rd',
    '\uFEFFhead\nbody\n',
    'x\n\n',
    '\n\n\n',
    'no final',
  ])
    roundTrip(t);
});

test('each line keeps its own terminator and a trailing blank line is a line', () => {
  const r = decodeTextFile(enc.encode('a\r\nb\nc\r\n\r\n'));
  assert.is(r.kind, 'text');
  if (r.kind !== 'text') return;
  assert.equal(r.file.texts, ['a', 'b', 'c', '']);
  assert.equal(r.file.eols, ['\r\n', '\n', '\r\n', '\r\n']);
  assert.is(r.file.dominant, '\r\n');
  assert.ok(r.file.finalNewline);
});

test('a lone CR is a terminator and a missing final newline is recorded', () => {
  const r = decodeTextFile(enc.encode('a\rb'));
  if (r.kind !== 'text') throw new Error('not text');
  assert.equal(r.file.texts, ['a', 'b']);
  assert.equal(r.file.eols, ['\r', '']);
  assert.is(r.file.finalNewline, false);
});

test('the BOM is kept out of the first line and flagged', () => {
  const r = decodeTextFile(enc.encode('\uFEFFhead\n'));
  if (r.kind !== 'text') throw new Error('not text');
  assert.ok(r.file.bom);
  assert.equal(r.file.texts, ['head']);
});

test('NUL bytes and invalid UTF-8 are refused', () => {
  assert.is(decodeTextFile(new Uint8Array([97, 0, 98])).kind, 'unsupported');
  assert.is(decodeTextFile(new Uint8Array([0xff, 0xfe, 0x41])).kind, 'unsupported');
  assert.is(decodeTextFile(new Uint8Array([0xc3])).kind, 'unsupported');
});

test('countLines counts LF-terminated lines plus a last line without LF', () => {
  assert.is(countLines(enc.encode('')), 0);
  assert.is(countLines(enc.encode('a\nb\n')), 2);
  assert.is(countLines(enc.encode('a\nb')), 2);
});

test.run();
