import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch, type PatchOp } from '../../../src/patch/index.js';
import { codex, errorOf, guarded } from './helpers.js';

const test = guarded(suite('parse-codex'));

function update(op: PatchOp | undefined) {
  if (op?.kind !== 'update') throw new Error(`expected an update, got ${op?.kind}`);
  return op;
}

test('the grammar gives add, delete and update ops in patch order with 1-based patch lines', () => {
  const p = parsePatch(
    codex(
      '*** Add File: n.txt',
      '+fresh',
      '*** Update File: k.txt',
      ' one',
      '-two',
      '+TWO',
      '*** Delete File: g.txt',
    ),
  );
  assert.equal(
    p.ops.map((o) => [o.kind, o.path, o.patchLine]),
    [
      ['add', 'n.txt', 2],
      ['update', 'k.txt', 4],
      ['delete', 'g.txt', 8],
    ],
  );
  assert.equal(p.ops[0], {
    kind: 'add',
    path: 'n.txt',
    lines: ['fresh'],
    finalNewline: true,
    patchLine: 2,
  });
});

test('an update with Move to and no chunks is a pure rename', () => {
  const op = update(parsePatch(codex('*** Update File: a.txt', '*** Move to: b.txt')).ops[0]);
  assert.is(op.moveTo, 'b.txt');
  assert.equal(op.chunks, []);
});

test('an empty line inside a chunk is an empty context line', () => {
  const op = update(parsePatch(codex('*** Update File: k.txt', '@@', ' c', '', '-b', '+B')).ops[0]);
  assert.equal(op.chunks[0]?.oldLines, ['c', '', 'b']);
  assert.equal(op.chunks[0]?.newLines, ['c', '', 'B']);
  assert.is(op.chunks[0]?.lineKinds, '  -+');
});

test('stacked @@ anchors belong to one chunk', () => {
  const op = update(
    parsePatch(
      codex(
        '*** Update File: c.py',
        '@@ class B:',
        '@@     def m(self):',
        '-        x = 1',
        '+        x = 2',
      ),
    ).ops[0],
  );
  assert.is(op.chunks.length, 1);
  assert.equal(op.chunks[0]?.anchors, ['class B:', '    def m(self):']);
});

test('a bare @@ adds no anchor and starts a new chunk', () => {
  const op = update(
    parsePatch(
      codex('*** Update File: m.txt', '@@', ' l1', '-l2', '+L2', '@@', ' l6', '-l7', '+L7'),
    ).ops[0],
  );
  assert.is(op.chunks.length, 2);
  assert.equal(op.chunks[1]?.anchors, []);
  assert.is(op.chunks[1]?.patchLine, 7);
});

test('End of File marks the chunk', () => {
  const op = update(
    parsePatch(codex('*** Update File: e.txt', '@@', '-end', '+END', '*** End of File')).ops[0],
  );
  assert.ok(op.chunks[0]?.endOfFile);
});

test('leniency 1: whitespace around marker lines is accepted and reported', () => {
  const p = parsePatch('  *** Begin Patch\n*** Update File: a.txt  \n-x\n+y\n*** End Patch   \n');
  assert.equal(p.leniencies, ['marker-whitespace']);
  assert.is(p.ops[0]?.path, 'a.txt');
});

test('leniency 1: an indented op header inside an update still ends the op', () => {
  const p = parsePatch(codex('*** Update File: a.txt', '-x', '+y', '  *** Delete File: b.txt'));
  assert.equal(
    p.ops.map((o) => o.kind),
    ['update', 'delete'],
  );
});

test('leniency 6: op headers without *** are accepted in header position', () => {
  const p = parsePatch(codex('Update File: a.txt', '@@', ' x', '-y', '+z', 'Delete File: b.txt'));
  assert.equal(
    p.ops.map((o) => [o.kind, o.path]),
    [
      ['update', 'a.txt'],
      ['delete', 'b.txt'],
    ],
  );
  assert.equal(p.leniencies, ['header-prefix']);
});

test('leniency 6 limit: a header-like line inside an Add body is content', () => {
  const p = parsePatch(
    codex('*** Add File: docs/howto.md', '+# How to', '+Delete File: app.py', '+is a line of text'),
  );
  assert.is(p.ops.length, 1);
  const op = p.ops[0];
  assert.ok(op?.kind === 'add' && op.lines[1] === 'Delete File: app.py');
});

test('leniency 6 limit: a header-like line inside an un-prefixed Add body is content', () => {
  const p = parsePatch(codex('*** Add File: notes.md', 'intro', 'Delete File: app.py', 'end'));
  assert.is(p.ops.length, 1);
  const op = p.ops[0];
  assert.ok(op?.kind === 'add');
  if (op?.kind === 'add') assert.equal(op.lines, ['intro', 'Delete File: app.py', 'end']);
});

test('leniency 6 limit: a context line saying Update File is content', () => {
  const op = update(
    parsePatch(codex('*** Update File: a.md', ' Update File: x', '-y', '+z')).ops[0],
  );
  assert.equal(op.chunks[0]?.oldLines, ['Update File: x', 'y']);
});

test('leniency 7: an Add body without + prefixes is accepted when no line has one', () => {
  const p = parsePatch(codex('*** Add File: a.py', 'def f():', '    return 1', '- a bullet'));
  const op = p.ops[0];
  assert.ok(op?.kind === 'add');
  if (op?.kind === 'add') assert.equal(op.lines, ['def f():', '    return 1', '- a bullet']);
  assert.equal(p.leniencies, ['add-without-plus']);
});

test('leniency 7 limit: an Add body mixing lines with and without + is refused', () => {
  const e1 = errorOf(() => parsePatch(codex('*** Add File: a.py', '+def f():', '    return 1')));
  assert.is(e1.code, 'PATCH_SYNTAX');
  assert.is(e1.details.line, 4);
  const e2 = errorOf(() => parsePatch(codex('*** Add File: a.py', 'def f():', '+    return 1')));
  assert.is(e2.code, 'PATCH_SYNTAX');
  assert.is(e2.details.line, 4);
});

test('leniency 7 limit: an un-prefixed Add body containing a *** line is refused', () => {
  const e = errorOf(() =>
    parsePatch(codex('*** Add File: a.md', 'title', '*** emphasis ***', 'more')),
  );
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 4);
});

test('leniency 8: one stray blank line before the next header or End Patch is accepted', () => {
  const p = parsePatch(codex('*** Add File: a.txt', '+a', '', '*** Delete File: b.txt', ''));
  assert.equal(
    p.ops.map((o) => o.kind),
    ['add', 'delete'],
  );
  const add = p.ops[0];
  assert.ok(add?.kind === 'add' && add.lines.length === 1);
  assert.ok(p.leniencies.includes('stray-blank-line'));
});

test('leniency 8: a blank line between + lines of an Add body is an empty line of the file', () => {
  const add = parsePatch(codex('*** Add File: a.txt', '+a', '', '+b')).ops[0];
  assert.ok(add?.kind === 'add');
  if (add?.kind === 'add') assert.equal(add.lines, ['a', '', 'b']);
});

test('leniency 8: a stray blank after a pure insertion is not turned into context', () => {
  const op = update(
    parsePatch(codex('*** Update File: m.py', '@@ def f():', '+    # note', '')).ops[0],
  );
  assert.equal(op.chunks[0]?.oldLines, []);
  assert.equal(op.chunks[0]?.newLines, ['    # note']);
});

test('leniency 9: decorated markers and any letter case are accepted and reported', () => {
  const p = parsePatch('*** Begin Patch ***\n*** update file: a.txt\n-x\n+y\n*** END PATCH ***\n');
  assert.equal(p.leniencies.sort(), ['decorated-marker', 'letter-case']);
  assert.equal(p.ops[0]?.path, 'a.txt');
  const q = parsePatch('*** begin patch\n*** ADD FILE: b.txt\n+b\n*** end patch\n');
  assert.equal(q.leniencies, ['letter-case']);
});

test('leniency 11: a unified hunk header is an anchor of its trailing text, numbers ignored', () => {
  const p = parsePatch(
    codex(
      '*** Update File: a.py',
      '@@ -12,7 +12,8 @@ def f():',
      '-    return 1',
      '+    return 2',
      '@@ -40,3 +41,3 @@',
      '-z',
      '+Z',
    ),
  );
  const op = update(p.ops[0]);
  assert.equal(
    op.chunks.map((c) => c.anchors),
    [['def f():'], []],
  );
  assert.equal(p.leniencies, ['udiff-anchor']);
});

test('an unknown *** marker is PATCH_SYNTAX with its line', () => {
  const e = errorOf(() =>
    parsePatch(codex('*** Update File: a.txt', '-x', '+y', '*** Rename File: b.txt')),
  );
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 5);
});

test('a line that is not a chunk line is PATCH_SYNTAX with its line', () => {
  const e = errorOf(() => parsePatch(codex('*** Update File: a.txt', '-x', '+y', 'oops')));
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 5);
  assert.ok(e.hint);
});

test('an update with no chunks and no move is PATCH_SYNTAX', () => {
  assert.is(errorOf(() => parsePatch(codex('*** Update File: a.txt'))).code, 'PATCH_SYNTAX');
});

test('an anchor with no chunk lines is PATCH_SYNTAX', () => {
  assert.is(
    errorOf(() => parsePatch(codex('*** Update File: a.txt', '@@ def f():'))).code,
    'PATCH_SYNTAX',
  );
});

test('a chunk line after End of File without a new @@ is PATCH_SYNTAX', () => {
  assert.is(
    errorOf(() => parsePatch(codex('*** Update File: a.txt', '-x', '+y', '*** End of File', '-z')))
      .code,
    'PATCH_SYNTAX',
  );
});

test('an op header with no path is PATCH_SYNTAX', () => {
  assert.is(errorOf(() => parsePatch(codex('*** Delete File: '))).code, 'PATCH_SYNTAX');
});

test('content lines that look like markers after + or - are content', () => {
  const p = parsePatch(codex('*** Add File: doc.md', '+*** End Patch', '+*** Begin Patch'));
  const op = p.ops[0];
  assert.ok(op?.kind === 'add');
  if (op?.kind === 'add') assert.equal(op.lines, ['*** End Patch', '*** Begin Patch']);
});

test('an empty patch parses to no ops', () => {
  assert.equal(parsePatch('*** Begin Patch\n*** End Patch\n').ops, []);
});

test.run();
