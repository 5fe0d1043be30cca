// Rule: patch-language.md §5 (Add/Move onto an existing path → FILE_EXISTS) read for a directory:
// a directory is free for an Add or Move when every file under it is deleted (or moved away) by the
// same patch — which the planner can know only when the snapshot lists those files
// (`{kind: 'directory', files}`); without the list a directory is never free.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch, pathsToRead, planPatch, type FileState } from '../../../src/patch/index.js';
import { codex, errorOf, guarded } from './helpers.js';

const test = guarded(suite('dir-to-file'));
const enc = new TextEncoder();
const dec = new TextDecoder();

function plan(patch: string, states: Record<string, FileState>) {
  const parsed = parsePatch(patch);
  const snapshot = new Map<string, FileState>();
  for (const p of pathsToRead(parsed)) snapshot.set(p, states[p] ?? { kind: 'missing' });
  return planPatch(parsed, snapshot);
}
const file = (text: string): FileState => ({
  kind: 'file',
  bytes: enc.encode(text),
  mode: '100644',
});

test('pathsToRead is unchanged: the deleted file and the new path', () => {
  assert.equal(pathsToRead(parsePatch(codex('*** Delete File: x/y', '*** Add File: x', '+hi'))), [
    'x/y',
    'x',
  ]);
});

test('Delete x/y then Add x: the folder becomes a file when the snapshot lists x/y as its only file', () => {
  const p = plan(codex('*** Delete File: x/y', '*** Add File: x', '+hi'), {
    'x/y': file('old\n'),
    x: { kind: 'directory', files: ['y'] },
  });
  assert.equal(
    p.files.map((f) => [f.op, f.path]),
    [
      ['delete', 'x/y'],
      ['add', 'x'],
    ],
  );
  assert.is(dec.decode(p.files[1]?.bytes), 'hi\n');
});

test('the Add may come before the Deletes; nested files count', () => {
  const p = plan(
    codex('*** Add File: x', '+hi', '*** Delete File: x/a/b', '*** Delete File: x/c'),
    {
      'x/a/b': file('1\n'),
      'x/c': file('2\n'),
      x: { kind: 'directory', files: ['a/b', 'c'] },
    },
  );
  assert.equal(
    p.files.map((f) => f.op),
    ['add', 'delete', 'delete'],
  );
});

test('a file moved away counts as vacating the folder (Move x/y → x)', () => {
  const p = plan(codex('*** Update File: x/y', '*** Move to: x'), {
    'x/y': file('keep\n'),
    x: { kind: 'directory', files: ['y'] },
  });
  assert.equal(
    p.files.map((f) => [f.op, f.path, f.from]),
    [['move', 'x', 'x/y']],
  );
});

test('a file left under the folder keeps FILE_EXISTS, naming what remains', () => {
  const e = errorOf(() =>
    plan(codex('*** Delete File: x/y', '*** Add File: x', '+hi'), {
      'x/y': file('old\n'),
      x: { kind: 'directory', files: ['y', 'z'] },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
  assert.equal(e.details.remaining, ['x/z']);
  assert.ok(e.message.includes('x/z'), e.message);
});

test('without the files list a directory is never free (FILE_EXISTS, as before)', () => {
  const e = errorOf(() =>
    plan(codex('*** Delete File: x/y', '*** Add File: x', '+hi'), {
      'x/y': file('old\n'),
      x: { kind: 'directory' },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
  assert.ok(e.message.includes('(a directory)'), e.message);
});

test('deleting only a sibling path with the same prefix does not vacate the folder', () => {
  const e = errorOf(() =>
    plan(codex('*** Delete File: xy', '*** Add File: x', '+hi'), {
      xy: file('1\n'),
      x: { kind: 'directory', files: ['y'] },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
});

test('a Move onto a folder that the patch does not empty is FILE_EXISTS', () => {
  const e = errorOf(() =>
    plan(codex('*** Update File: a.txt', '*** Move to: x'), {
      'a.txt': file('a\n'),
      x: { kind: 'directory', files: ['y'] },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
});

test('Add under a file the patch keeps is FILE_EXISTS naming the file (never a half-made folder)', () => {
  const e = errorOf(() =>
    plan(codex('*** Add File: probe.txt/x', '+a'), {
      'probe.txt/x': { kind: 'missing', underFile: 'probe.txt' },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
  assert.is(e.details.file, 'probe.txt');
  assert.ok(e.hint?.includes('*** Delete File: probe.txt'), e.hint);
});

test('Add under a file the patch deletes or moves away is free (a file becomes a folder)', () => {
  const del = plan(codex('*** Add File: f/x', '+a', '*** Delete File: f'), {
    f: file('1\n'),
    'f/x': { kind: 'missing', underFile: 'f' },
  });
  assert.equal(
    del.files.map((f) => [f.op, f.path]),
    [
      ['add', 'f/x'],
      ['delete', 'f'],
    ],
  );
  const moved = plan(codex('*** Update File: f', '*** Move to: f/x'), {
    f: file('1\n'),
    'f/x': { kind: 'missing', underFile: 'f' },
  });
  assert.equal(
    moved.files.map((f) => [f.op, f.path, f.from]),
    [['move', 'f/x', 'f']],
  );
});

test('a Move under a file the patch keeps is FILE_EXISTS', () => {
  const e = errorOf(() =>
    plan(codex('*** Update File: a.txt', '*** Move to: f/a.txt'), {
      'a.txt': file('a\n'),
      'f/a.txt': { kind: 'missing', underFile: 'f' },
    }),
  );
  assert.is(e.code, 'FILE_EXISTS');
});

test('one patch naming a path as a file and as a folder is DUPLICATE_PATH, whatever the order', () => {
  for (const ops of [
    ['*** Add File: d', '+1', '*** Add File: d/e/f', '+2'],
    ['*** Add File: d/e/f', '+2', '*** Add File: d', '+1'],
    ['*** Update File: a.txt', '*** Move to: d', '*** Add File: d/x', '+2'],
  ]) {
    const e = errorOf(() => plan(codex(...ops), { 'a.txt': file('a\n') }));
    assert.is(e.code, 'DUPLICATE_PATH', ops.join(' | '));
    assert.is(e.details.path, 'd');
  }
  // a shared name prefix is not a folder
  const ok = plan(codex('*** Add File: d', '+1', '*** Add File: dx/y', '+2'), {});
  assert.is(ok.files.length, 2);
});

test.run();
