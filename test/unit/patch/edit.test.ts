import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { planEdit, planWrite, type FileState } from '../../../src/patch/index.js';
import { errorOf } from './helpers.js';

const test = suite('edit and write planning');

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { ignoreBOM: true });
const file = (text: string | Uint8Array, mode: '100644' | '100755' = '100644'): FileState => ({
  kind: 'file',
  bytes: typeof text === 'string' ? enc.encode(text) : text,
  mode,
});
const out = (state: FileState, oldString: string, newString: string, replaceAll = false) => {
  const f = planEdit({ path: 'f.txt', oldString, newString, replaceAll }, state).files[0]!;
  return { text: dec.decode(f.bytes), f };
};
test('a replacement may start and end inside lines; every other byte stays', () => {
  const { text, f } = out(file('alpha beta\r\ngamma delta\r\n'), 'beta\r\ngamma', 'B\r\nG');
  assert.is(text, 'alpha B\r\nG delta\r\n');
  assert.equal(f.chunks, [{ chunk: 1, level: 'exact', startLine: 1, oldCount: 2, newCount: 2 }]);
  assert.is(f.op, 'update');
  assert.equal([f.added, f.removed], [2, 2]);
});

test('old_string must occur once: several occurrences are AMBIGUOUS_MATCH with their lines, unless replace_all', () => {
  const e = errorOf(() => out(file('x = 1\ny = 2\nx = 1\n'), 'x = 1', 'x = 3'));
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details.candidates, [1, 3]);
  const all = out(file('x = 1\ny = 2\nx = 1\n'), 'x = 1', 'x = 3', true);
  assert.is(all.text, 'x = 3\ny = 2\nx = 3\n');
  assert.equal(
    all.f.chunks.map((c) => c.startLine),
    [1, 3],
  );
});

test('not found is CONTEXT_NOT_FOUND naming the line where its first line occurs', () => {
  const e = errorOf(() => out(file('a\n  b\nc\n'), 'b\nX', 'y'));
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.equal(e.details.closest, { startLine: 2, endLine: 2 });
  assert.match(e.hint ?? '', /line 2/);
});

test('LF line breaks in old_string match a CRLF file, and new_string is written with CRLF', () => {
  const r = planEdit(
    { path: 'f.txt', oldString: 'one\ntwo', newString: 'one\nTWO\nmore' },
    file('one\r\ntwo\r\n'),
  );
  assert.is(dec.decode(r.files[0]!.bytes), 'one\r\nTWO\r\nmore\r\n');
  assert.is(r.warnings.length, 1);
});

test('a BOM, the mode and a missing final newline are kept', () => {
  const { text, f } = out(file('\uFEFFkeep me', '100755'), 'keep', 'kept');
  assert.is(text, '\uFEFFkept me');
  assert.is(f.mode, '100755');
});

test('an empty old_string creates a missing file or fills an empty one, and is refused on a file with content', () => {
  assert.is(
    planEdit({ path: 'n.txt', oldString: '', newString: 'hi\n' }, { kind: 'missing' }).files[0]!.op,
    'add',
  );
  assert.is(out(file(''), '', 'hi\n').text, 'hi\n');
  assert.is(errorOf(() => out(file('x\n'), '', 'hi\n')).code, 'FILE_EXISTS');
});

test('refusals: same strings NO_CHANGES, missing FILE_NOT_FOUND, binary or a folder UNSUPPORTED_FILE', () => {
  assert.is(errorOf(() => out(file('a\n'), 'a', 'a')).code, 'NO_CHANGES');
  assert.is(
    errorOf(() => planEdit({ path: 'f', oldString: 'a', newString: 'b' }, { kind: 'missing' }))
      .code,
    'FILE_NOT_FOUND',
  );
  assert.is(
    errorOf(() => out(file(new Uint8Array([0x61, 0, 0x62])), 'a', 'b')).code,
    'UNSUPPORTED_FILE',
  );
  assert.is(
    errorOf(() => out(file(new Uint8Array([0xff, 0xfe])), 'a', 'b')).code,
    'UNSUPPORTED_FILE',
  );
  assert.is(
    errorOf(() => planEdit({ path: 'd', oldString: 'a', newString: 'b' }, { kind: 'directory' }))
      .code,
    'UNSUPPORTED_FILE',
  );
});

test('write plans an add for a new file and an update (mode kept, lines counted) for an existing one', () => {
  const add = planWrite('n.txt', 'a\nb\n', { kind: 'missing' }).files[0]!;
  assert.equal([add.op, add.mode, add.added, add.removed], ['add', '100644', 2, 0]);
  const upd = planWrite('f.txt', 'a\nB\n', file('a\nb\n', '100755')).files[0]!;
  assert.equal([upd.op, upd.mode, upd.added, upd.removed], ['update', '100755', 1, 1]);
  assert.is(errorOf(() => planWrite('f.txt', 'a\n', file('a\n'))).code, 'NO_CHANGES');
  assert.is(errorOf(() => planWrite('f.txt', 'a\0', { kind: 'missing' })).code, 'UNSUPPORTED_FILE');
});

test.run();
