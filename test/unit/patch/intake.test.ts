import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch } from '../../../src/patch/index.js';
import { codex, errorOf, guarded } from './helpers.js';

const test = guarded(suite('intake'));
const simple = codex('*** Update File: a.txt', '-x', '+y');

test('a bare Codex patch needs no leniency', () => {
  const p = parsePatch(simple);
  assert.is(p.format, 'codex');
  assert.equal(p.leniencies, []);
  assert.equal(p.ops, [
    {
      kind: 'update',
      path: 'a.txt',
      chunks: [
        {
          anchors: [],
          oldLines: ['x'],
          newLines: ['y'],
          endOfFile: false,
          lineKinds: '-+',
          patchLine: 3,
        },
      ],
      patchLine: 2,
    },
  ]);
});

for (const lang of ['', 'patch', 'diff', 'text']) {
  test(`a patch in a \`\`\`${lang} fence is unwrapped and reported as fence`, () => {
    const p = parsePatch('```' + lang + '\n' + simple + '```\n');
    assert.equal(p.leniencies, ['fence']);
    assert.is(p.ops.length, 1);
  });
}

test('prose around the patch is ignored and reported as prose', () => {
  const p = parsePatch('Sure, here you go:\n\n```patch\n' + simple + '```\nThis renames x.\n');
  assert.equal(p.leniencies.sort(), ['fence', 'prose']);
});

test('two complete patches are refused with MULTIPLE_PATCHES', () => {
  const e = errorOf(() =>
    parsePatch('first:\n```\n' + simple + '```\nsecond:\n```\n' + simple + '```\n'),
  );
  assert.is(e.code, 'MULTIPLE_PATCHES');
});

for (const opener of ["apply_patch <<'EOF'", 'apply_patch <<EOF', 'apply_patch <<"EOF"']) {
  test(`a heredoc wrapper ${opener} is unwrapped`, () => {
    const p = parsePatch(`${opener}\n${simple}EOF\n`);
    assert.equal(p.leniencies, ['heredoc']);
    assert.is(p.cwd, undefined);
  });
}

test('a heredoc after cd DIR && records DIR as cwd without applying it', () => {
  const p = parsePatch(`cd src/app && apply_patch <<'PATCH'\n${simple}PATCH\n`);
  assert.is(p.cwd, 'src/app');
  assert.equal(p.ops[0]?.path, 'a.txt');
  assert.is(parsePatch(`cd "my dir" && apply_patch <<EOF\n${simple}EOF\n`).cwd, 'my dir');
});

test('CRLF line breaks in the patch text are accepted and reported', () => {
  const p = parsePatch(simple.replace(/\n/g, '\r\n'));
  assert.equal(p.leniencies, ['crlf-patch']);
  const op = p.ops[0];
  assert.ok(op?.kind === 'update');
  if (op?.kind === 'update') assert.equal(op.chunks[0]?.newLines, ['y']);
});

test('a JSON command wrapper is unwrapped', () => {
  const p = parsePatch(JSON.stringify({ command: ['apply_patch', simple] }));
  assert.equal(p.leniencies, ['json-wrapper']);
  assert.is(p.ops.length, 1);
});

test('a JSON input wrapper is unwrapped', () => {
  const p = parsePatch(JSON.stringify({ input: simple }));
  assert.equal(p.leniencies, ['json-wrapper']);
});

test('a JSON bash -lc heredoc call is unwrapped twice', () => {
  const p = parsePatch(
    JSON.stringify({ command: ['bash', '-lc', `apply_patch <<'EOF'\n${simple}EOF\n`] }),
  );
  assert.equal(p.leniencies.sort(), ['heredoc', 'json-wrapper']);
});

test('JSON without any patch is PATCH_SYNTAX', () => {
  assert.is(errorOf(() => parsePatch('{"input": "hello"}')).code, 'PATCH_SYNTAX');
});

test('invisible characters on marker lines are accepted and reported', () => {
  const p = parsePatch(
    '\uFEFF*** Begin Patch\n*** Update File: a.txt\u200B\n-x\n+y\n\u00A0*** End Patch\n',
  );
  assert.ok(p.leniencies.includes('invisible-chars'));
  assert.equal(p.ops[0]?.path, 'a.txt');
});

test('text without any patch is PATCH_SYNTAX at line 1', () => {
  const e = errorOf(() => parsePatch('just some words\n'));
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 1);
  assert.ok(e.hint);
});

test('a patch without End Patch is refused (a truncated patch is never applied)', () => {
  const e = errorOf(() => parsePatch('*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n'));
  assert.is(e.code, 'PATCH_SYNTAX');
});

test('ops after a premature End Patch are PATCH_SYNTAX with the 1-based line', () => {
  const e = errorOf(() =>
    parsePatch(
      '*** Begin Patch\n*** Update File: f.txt\n-a\n+b\n*** End Patch\n*** Add File: g.txt\n+x\n*** End Patch\n',
    ),
  );
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 6);
});

test('a header without *** after End Patch is also caught', () => {
  const e = errorOf(() => parsePatch(simple + 'Delete File: b.txt\n'));
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 6);
});

test('prose without markers after End Patch is fine', () => {
  const p = parsePatch(simple + '\nThat is all.\n');
  assert.equal(p.leniencies, ['prose']);
});

test('a second Begin Patch before End Patch is PATCH_SYNTAX', () => {
  const e = errorOf(() =>
    parsePatch('*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Begin Patch\n*** End Patch\n'),
  );
  assert.is(e.code, 'PATCH_SYNTAX');
  assert.is(e.details.line, 5);
});

test('a 10 MB patch parses in linear time', () => {
  const body: string[] = [];
  for (let i = 0; i < 400_000; i++) body.push(`+line number ${i} of the file`);
  const make = (n: number): string =>
    `*** Begin Patch\n*** Add File: big.txt\n${body.slice(0, n).join('\n')}\n*** End Patch\n`;
  const full = make(400_000);
  const half = make(100_000);
  assert.ok(full.length > 10_000_000);
  const best = (text: string): number => {
    let min = Infinity;
    for (let k = 0; k < 2; k++) {
      const t0 = performance.now();
      parsePatch(text);
      min = Math.min(min, performance.now() - t0);
    }
    return min;
  };
  const tQuarter = best(half);
  const tFull = best(full);
  const op = parsePatch(make(10)).ops[0];
  assert.ok(op?.kind === 'add' && op.lines.length === 10);
  // 4x the input: linear ≈ 4x the time. Only a guard against gross blowups on a loaded machine:
  // the figure itself is measured by bench/patch-engine.ts.
  assert.ok(
    tFull < tQuarter * 20 + 1000,
    `quarter ${tQuarter.toFixed(0)} ms, full ${tFull.toFixed(0)} ms`,
  );
  assert.ok(tFull < 5000, `took ${tFull} ms`);
});

test.run();
