import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePatch, planPatch } from '../../../src/patch/index.js';
import { codex, errorOf, run, snapshotOf, guarded } from './helpers.js';

const test = guarded(suite('plan'));

// ── §3 locating chunks ─────────────────────────────────────────────────────────────────────────

test('chunks are located in file order with a cursor', () => {
  const { out, plan } = run(
    codex('*** Update File: m.txt', '@@', ' x', '-a', '+A', ' y', '@@', ' x', '-a', '+B'),
    { 'm.txt': 'x\na\ny\nx\na\n' },
  );
  assert.is(out['m.txt'], 'x\nA\ny\nx\nB\n');
  assert.equal(
    plan.files[0]?.chunks.map((c) => c.startLine),
    [1, 4],
  );
});

test('a chunk matching twice is AMBIGUOUS_MATCH with 1-based candidate lines and an anchor hint', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: r.rs', '@@', '-    return 1;', '+    return 2;'), {
      'r.rs': 'fn a() {\n    return 1;\n}\nfn b() {\n    return 1;\n}\n',
    }),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details.candidates, [2, 5]);
  assert.is(e.details.chunk, 1);
  assert.is(e.details.path, 'r.rs');
  assert.ok(e.hint?.includes('@@ fn a() {'), e.hint);
  assert.ok(e.hint?.includes('@@ fn b() {'), e.hint);
});

test('an anchor narrows the search to after the line it names', () => {
  const { out } = run(
    codex('*** Update File: r.rs', '@@ fn b() {', '-    return 1;', '+    return 2;'),
    { 'r.rs': 'fn a() {\n    return 1;\n}\nfn b() {\n    return 1;\n}\n' },
  );
  assert.is(out['r.rs'], 'fn a() {\n    return 1;\n}\nfn b() {\n    return 2;\n}\n');
});

test('stacked anchors narrow step by step', () => {
  const file =
    'class A:\n    def m(self):\n        x = 1\nclass B:\n    def m(self):\n        x = 1\n';
  const { out } = run(
    codex(
      '*** Update File: c.py',
      '@@ class B:',
      '@@     def m(self):',
      '-        x = 1',
      '+        x = 2',
    ),
    { 'c.py': file },
  );
  assert.is(out['c.py'], file.replace(/x = 1\n$/, 'x = 2\n'));
});

test('an anchor may be a prefix of a line only when exactly one line starts with it', () => {
  const file = 'def foo(a, b):\n    return 1\ndef bar():\n    return 1\n';
  assert.is(
    run(codex('*** Update File: f.py', '@@ def bar', '-    return 1', '+    return 9'), {
      'f.py': file,
    }).out['f.py'],
    file.replace(/return 1\n$/, 'return 9\n'),
  );
  const twice = 'def bar_a():\n    return 1\ndef bar_b():\n    return 1\n';
  const e = errorOf(() =>
    run(codex('*** Update File: f.py', '@@ def bar', '-    return 1', '+    return 9'), {
      'f.py': twice,
    }),
  );
  assert.is(e.code, 'AMBIGUOUS_MATCH');
  assert.equal(e.details.candidates, [1, 3]);
});

test('an anchor that matches nothing is CONTEXT_NOT_FOUND', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: f.py', '@@ def nope():', '-x', '+y'), { 'f.py': 'x\n' }),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.chunk, 1);
  assert.ok(e.hint);
});

test('a pure insertion goes right after its last anchor', () => {
  const { out } = run(codex('*** Update File: m.py', '@@ def f():', '+    # note'), {
    'm.py': 'def f():\n    pass\ndef g():\n    pass\n',
  });
  assert.is(out['m.py'], 'def f():\n    # note\n    pass\ndef g():\n    pass\n');
});

test('a pure insertion without anchor goes at the end of the file', () => {
  assert.is(
    run(codex('*** Update File: a.txt', '+tail'), { 'a.txt': 'a\n' }).out['a.txt'],
    'a\ntail\n',
  );
});

test('End of File matches only at the very end', () => {
  const { out } = run(
    codex(
      '*** Update File: e.txt',
      '@@',
      '-marker',
      '-end',
      '+marker-changed',
      '+end',
      '*** End of File',
    ),
    { 'e.txt': 'marker\nend\nmiddle\nmarker\nend\n' },
  );
  assert.is(out['e.txt'], 'marker\nend\nmiddle\nmarker-changed\nend\n');
});

test('End of File counts a trailing blank line of the file as part of the file', () => {
  const patch = codex('*** Update File: b.txt', '@@', '-last', '+LAST', '*** End of File');
  const e = errorOf(() => run(patch, { 'b.txt': 'x\nlast\n\n' }));
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.ok(e.hint?.includes('blank line'), e.hint);
  const withBlank = codex('*** Update File: b.txt', '@@', '-last', '+LAST', ' ', '*** End of File');
  assert.is(run(withBlank, { 'b.txt': 'x\nlast\n\n' }).out['b.txt'], 'x\nLAST\n\n');
});

test('a failed match whose old side ends with an empty line is retried once without it', () => {
  const { out, plan } = run(codex('*** Update File: a.txt', '@@', ' a', '-b', '+B', ''), {
    'a.txt': 'a\nb\nc\n',
  });
  assert.is(out['a.txt'], 'a\nB\nc\n');
  assert.ok(plan.leniencies.includes('one-blank-line-retry'));
});

test('the retry is not needed when the file has the empty line', () => {
  const { out, plan } = run(codex('*** Update File: a.txt', '@@', ' a', '-b', '+B', ''), {
    'a.txt': 'a\nb\n\nc\n',
  });
  assert.is(out['a.txt'], 'a\nB\n\nc\n');
  assert.not.ok(plan.leniencies.includes('one-blank-line-retry'));
});

test('two chunks claiming the same lines are OVERLAPPING_CHUNKS', () => {
  const e = errorOf(() =>
    run(
      codex('*** Update File: o.txt', '@@', '-y', '+Y', '@@', '-y', '-z', '+Z', '*** End of File'),
      { 'o.txt': 'x\ny\nz\n' },
    ),
  );
  assert.is(e.code, 'OVERLAPPING_CHUNKS');
  assert.is(e.details.chunk, 2);
  assert.is(e.details.line, 2);
});

test('context not found names the closest region and the first differing line', () => {
  const file = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const e = errorOf(() =>
    run(
      codex(
        '*** Update File: a.txt',
        '@@',
        ' line 11',
        ' line 12',
        '-line 13 typo',
        '+x',
        ' line 14',
      ),
      { 'a.txt': file },
    ),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.line, 13);
  assert.ok(e.hint?.includes('lines 11-14'), e.hint);
  assert.ok(e.hint?.includes('"line 13"'), e.hint);
  assert.ok(e.hint?.includes('"line 13 typo"'), e.hint);
});

test('context not found without any similar line still gives a hint', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: a.txt', '@@', ' one', '-TWO', '+2'), { 'a.txt': 'zzz\n' }),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.ok(e.hint && e.hint.length > 0);
});

test('an anchor found only above the cursor is reported with its line', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: a.py', '@@', '-b', '+B', '@@ def f():', '-c', '+C'), {
      'a.py': 'def f():\nb\nc\n',
    }),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.is(e.details.line, 1);
  assert.is(e.details.chunk, 2);
  assert.ok(e.hint?.includes('file order'), e.hint);
});

test('a chunk repeating its anchor as first context line gets a specific hint', () => {
  const e = errorOf(() =>
    run(
      codex('*** Update File: a.py', '@@ def f():', ' def f():', '-    return 1', '+    return 2'),
      { 'a.py': 'def f():\n    return 1\n' },
    ),
  );
  assert.is(e.code, 'CONTEXT_NOT_FOUND');
  assert.ok(e.hint?.includes('repeats its @@ anchor'), e.hint);
});

// ── §4 byte fidelity ───────────────────────────────────────────────────────────────────────────

test('context lines keep the file bytes whatever level matched', () => {
  const { out, plan } = run(
    codex('*** Update File: q.txt', '@@', ' say "hi"', '  \tindented', '-old line', '+new line'),
    { 'q.txt': 'say \u201Chi\u201D\n\tindented  \nold line\n' },
  );
  assert.is(out['q.txt'], 'say \u201Chi\u201D\n\tindented  \nnew line\n');
  assert.is(plan.files[0]?.level, 'unicode');
});

test('a CRLF file stays CRLF', () => {
  assert.is(
    run(codex('*** Update File: w.txt', '@@', ' a', '-b', '+B', '+C'), {
      'w.txt': 'a\r\nb\r\nc\r\n',
    }).out['w.txt'],
    'a\r\nB\r\nC\r\nc\r\n',
  );
});

test('a mixed-ending file keeps each untouched line and gives new lines the dominant ending', () => {
  assert.is(
    run(codex('*** Update File: m.txt', '@@', ' a', '-b', '+B'), { 'm.txt': 'a\r\nb\r\nc\nd\r\n' })
      .out['m.txt'],
    'a\r\nB\r\nc\nd\r\n',
  );
});

test('a lone-CR file keeps its CR endings', () => {
  assert.is(
    run(codex('*** Update File: m.txt', '@@', ' a', '-b', '+B'), { 'm.txt': 'a\rb\rc\r' }).out[
      'm.txt'
    ],
    'a\rB\rc\r',
  );
});

test('a CRLF patch applied to an LF file writes LF, and to a CRLF file writes CRLF', () => {
  const patch = codex('*** Update File: a.txt', '@@', ' a', '-b', '+B').replace(/\n/g, '\r\n');
  assert.is(run(patch, { 'a.txt': 'a\nb\n' }).out['a.txt'], 'a\nB\n');
  assert.is(run(patch, { 'a.txt': 'a\r\nb\r\n' }).out['a.txt'], 'a\r\nB\r\n');
});

test('a BOM stays', () => {
  assert.is(
    run(codex('*** Update File: b.txt', '@@', ' head', '-body', '+BODY'), {
      'b.txt': '\uFEFFhead\nbody\n',
    }).out['b.txt'],
    '\uFEFFhead\nBODY\n',
  );
});

test('a file without final newline stays without one, even when its last line changes', () => {
  assert.is(
    run(codex('*** Update File: n.txt', '@@', '-line1', '+LINE1'), {
      'n.txt': 'line1\nline2\nline3',
    }).out['n.txt'],
    'LINE1\nline2\nline3',
  );
  assert.is(
    run(codex('*** Update File: n.txt', '@@', '-line3', '+LINE3', '+line4'), {
      'n.txt': 'line1\nline3',
    }).out['n.txt'],
    'line1\nLINE3\nline4',
  );
});

test('a file without final newline whose last line becomes empty keeps that empty line (terminated)', () => {
  // An unterminated empty last line would be no line at all: the line the patch wrote would vanish.
  const patch = codex('*** Update File: m.js', '@@', ' a', ' b', '-c', '+', '*** End of File');
  assert.is(run(patch, { 'm.js': 'a\nb\nc' }).out['m.js'], 'a\nb\n\n');
  assert.is(
    run(codex('*** Update File: m.js', '@@', ' a', '-b', '+B'), { 'm.js': 'a\nb' }).out['m.js'],
    'a\nB',
  );
});

test('a pure insertion whose lines already stand where it goes is NO_CHANGES; a chunk with context whose old side matches applies (§4)', () => {
  // No old side at all (an anchored insertion, an append): its lines in place mean a retry.
  const anchored = codex('*** Update File: a.py', '@@ def f():', '+    # note');
  assert.is(
    errorOf(() => run(anchored, { 'a.py': 'def f():\n    # note\n    pass\n' })).code,
    'NO_CHANGES',
  );
  assert.is(
    errorOf(() => run(codex('*** Update File: a.txt', '+tail'), { 'a.txt': 'a\ntail\n' })).code,
    'NO_CHANGES',
  );
  // "Already applied" is only concluded when the old side is not found (patch-language.md §4): an
  // insertion whose context still matches is applied, as repetitive files need (a retry of the
  // session's last patch is caught by apply from the session head, see test/cli/apply-intake).
  const top = codex('*** Update File: a.txt', '@@', '+// header', ' first', ' second');
  const once = run(top, { 'a.txt': 'first\nsecond\nthird\n' }).out['a.txt'] as string;
  assert.is(once, '// header\nfirst\nsecond\nthird\n');
  assert.is(
    run(top, { 'a.txt': once }).out['a.txt'],
    '// header\n// header\nfirst\nsecond\nthird\n',
  );
  const end = codex('*** Update File: a.txt', '@@', ' third', '+fourth');
  assert.is(
    run(end, { 'a.txt': 'first\nthird\nfourth\n' }).out['a.txt'],
    'first\nthird\nfourth\nfourth\n',
  );
  // its old side is not at the end, its new side is: applied already
  const eof = codex('*** Update File: a.txt', '@@', ' third', '+fourth', '*** End of File');
  assert.is(errorOf(() => run(eof, { 'a.txt': 'first\nthird\nfourth\n' })).code, 'NO_CHANGES');
  // an insertion between two context lines: its old side is gone, its new side there
  const mid = codex('*** Update File: a.txt', '@@', ' first', '+new', ' third');
  assert.is(errorOf(() => run(mid, { 'a.txt': 'first\nnew\nthird\n' })).code, 'NO_CHANGES');
});

test('a chunk whose old side matches only loosely while its new side stands exactly is NO_CHANGES (applied already)', () => {
  const file = 'class A:\n    x = 1\n    y = 2\nclass B:\n  x = 1\n  y = 2\n';
  const patch = codex('*** Update File: c.py', '@@', '     x = 1', '-    y = 2', '+    y = 3');
  const once = run(patch, { 'c.py': file }).out['c.py'] as string;
  assert.is(once, file.replace('    y = 2', '    y = 3'));
  const e = errorOf(() => run(patch, { 'c.py': once }));
  assert.is(e.code, 'NO_CHANGES');
  assert.is(e.details.line, 2);
});

test('a chunk found only after dropping its last blank line, whose new side stands exactly, is NO_CHANGES', () => {
  const file = 'a\nb\nc\n\nx\na\nb\nc\ny\n';
  const patch = codex('*** Update File: t.txt', '@@', ' a', '-b', '+B', ' c', ' ');
  const once = run(patch, { 't.txt': file }).out['t.txt'] as string;
  assert.is(once, 'a\nB\nc\n\nx\na\nb\nc\ny\n');
  assert.is(errorOf(() => run(patch, { 't.txt': once })).code, 'NO_CHANGES');
});

test('an insertion whose last added line recreates its context applies where its context matches (§4)', () => {
  const patch = codex('*** Update File: s.js', '@@', ' ', '+test(1);', '+', ' if (x) {');
  const once = run(patch, { 's.js': 'a\n\nif (x) {\n}\n' }).out['s.js'] as string;
  assert.is(once, 'a\n\ntest(1);\n\nif (x) {\n}\n');
  assert.is(run(patch, { 's.js': once }).out['s.js'], 'a\n\ntest(1);\n\ntest(1);\n\nif (x) {\n}\n');
});

test('a pure insertion next to different lines still applies', () => {
  assert.is(
    run(codex('*** Update File: a.txt', '@@', '+// header', ' first'), {
      'a.txt': '// other\nfirst\n',
    }).out['a.txt'],
    '// other\n// header\nfirst\n',
  );
});

test('a file ending in a blank line keeps it', () => {
  assert.is(
    run(codex('*** Update File: b.txt', '@@', '-alpha', '+ALPHA'), { 'b.txt': 'alpha\nbeta\n\n' })
      .out['b.txt'],
    'ALPHA\nbeta\n\n',
  );
});

test('the executable bit is kept on update and on move', () => {
  const exec = { text: '#!/bin/sh\necho one\n', mode: '100755' as const };
  assert.is(
    run(codex('*** Update File: run.sh', '-echo one', '+echo two'), { 'run.sh': exec }).plan
      .files[0]?.mode,
    '100755',
  );
  const moved = run(codex('*** Update File: run.sh', '*** Move to: bin/run.sh'), { 'run.sh': exec })
    .plan.files[0];
  assert.equal(
    [moved?.op, moved?.path, moved?.from, moved?.mode],
    ['move', 'bin/run.sh', 'run.sh', '100755'],
  );
});

test('files with NUL bytes or invalid UTF-8 are UNSUPPORTED_FILE', () => {
  const patch = codex('*** Update File: b.bin', '-x', '+y');
  assert.is(
    errorOf(() => run(patch, { 'b.bin': new Uint8Array([120, 0, 10]) })).code,
    'UNSUPPORTED_FILE',
  );
  const latin1 = errorOf(() => run(patch, { 'b.bin': new Uint8Array([120, 0xe9, 10]) }));
  assert.is(latin1.code, 'UNSUPPORTED_FILE');
  assert.is(latin1.details.path, 'b.bin');
});

test('a Codex add writes lines joined with LF plus a final LF', () => {
  assert.is(run(codex('*** Add File: h.txt', '+hello', '+world')).out['h.txt'], 'hello\nworld\n');
  assert.is(run(codex('*** Add File: e.txt')).out['e.txt'], '');
});

// ── §4 no-op, §5 file operations ───────────────────────────────────────────────────────────────

test('a patch whose every op is a no-op is NO_CHANGES', () => {
  assert.is(
    errorOf(() =>
      run(codex('*** Update File: m.txt', '@@', '-line2', '+line2'), { 'm.txt': 'line1\nline2\n' }),
    ).code,
    'NO_CHANGES',
  );
});

test('a single no-op among real changes is a warning', () => {
  const { plan } = run(
    codex('*** Update File: m.txt', '-same', '+same', '*** Add File: n.txt', '+new'),
    { 'm.txt': 'same\n' },
  );
  assert.is(plan.files[0]?.noop, true);
  assert.is(plan.warnings.length, 1);
  assert.ok(plan.warnings[0]?.includes('m.txt'));
});

test('Add onto an existing file or directory is FILE_EXISTS', () => {
  assert.is(
    errorOf(() => run(codex('*** Add File: n.txt', '+x'), { 'n.txt': 'keep me\n' })).code,
    'FILE_EXISTS',
  );
  assert.is(
    errorOf(() => run(codex('*** Add File: d', '+x'), { d: 'directory' })).code,
    'FILE_EXISTS',
  );
});

test('Move onto an existing file is FILE_EXISTS', () => {
  assert.is(
    errorOf(() =>
      run(codex('*** Update File: a.txt', '*** Move to: b.txt'), {
        'a.txt': 'a\n',
        'b.txt': 'b\n',
      }),
    ).code,
    'FILE_EXISTS',
  );
});

test('a move onto itself is a plain update', () => {
  const { plan, out } = run(
    codex('*** Update File: foo.txt', '*** Move to: foo.txt', '@@', '-before', '+after'),
    { 'foo.txt': 'before\n' },
  );
  assert.equal([plan.files[0]?.op, plan.files[0]?.from], ['update', undefined]);
  assert.is(out['foo.txt'], 'after\n');
});

test('Update, Delete or Move of a missing path or a directory is FILE_NOT_FOUND', () => {
  assert.is(
    errorOf(() => run(codex('*** Update File: nope.txt', '-x', '+y'))).code,
    'FILE_NOT_FOUND',
  );
  // A Delete of a missing path alone looks applied (patch-language.md §4); beside a real change it is refused.
  const gone = errorOf(() => run(codex('*** Delete File: nope.txt')));
  assert.is(gone.code, 'NO_CHANGES');
  assert.is(gone.details.alreadyApplied, true);
  assert.is(
    errorOf(() =>
      run(codex('*** Delete File: nope.txt', '*** Update File: a.txt', '-a', '+A'), {
        'a.txt': 'a\n',
      }),
    ).code,
    'FILE_NOT_FOUND',
  );
  assert.is(
    errorOf(() => run(codex('*** Update File: nope.txt', '*** Move to: b.txt'))).code,
    'FILE_NOT_FOUND',
  );
  assert.is(
    errorOf(() => run(codex('*** Delete File: d'), { d: 'directory' })).code,
    'FILE_NOT_FOUND',
  );
  assert.is(
    errorOf(() => run(codex('*** Update File: d', '-x', '+y'), { d: 'directory' })).code,
    'FILE_NOT_FOUND',
  );
});

test('two ops on one path are DUPLICATE_PATH, a move destination included', () => {
  const e = errorOf(() =>
    run(codex('*** Update File: d.txt', '-a', '+A', '*** Update File: d.txt', '-b', '+B'), {
      'd.txt': 'a\nb\n',
    }),
  );
  assert.is(e.code, 'DUPLICATE_PATH');
  assert.is(e.details.path, 'd.txt');
  const m = errorOf(() =>
    run(codex('*** Update File: a.txt', '*** Move to: b.txt', '*** Add File: b.txt', '+x'), {
      'a.txt': 'a\n',
    }),
  );
  assert.is(m.code, 'DUPLICATE_PATH');
  assert.is(m.details.path, 'b.txt');
});

test('an op that fails leaves no partial plan: the whole patch is refused', () => {
  const e = errorOf(() =>
    run(
      codex(
        '*** Add File: created.txt',
        '+hello',
        '*** Update File: missing.txt',
        '@@',
        '-old',
        '+new',
      ),
    ),
  );
  assert.is(e.code, 'FILE_NOT_FOUND');
  assert.is(e.details.path, 'missing.txt');
});

test('added and removed count the real change; a delete counts the file, an add its lines', () => {
  const { plan } = run(
    codex(
      '*** Update File: a.txt',
      '@@',
      ' a',
      '-b',
      '-c',
      '+c',
      '+d',
      '*** Delete File: g.txt',
      '*** Add File: n.txt',
      '+1',
      '+2',
      '+3',
    ),
    { 'a.txt': 'a\nb\nc\n', 'g.txt': 'x\ny\n' },
  );
  assert.equal(
    plan.files.map((f) => [f.op, f.added, f.removed]),
    [
      ['update', 1, 1],
      ['delete', 0, 2],
      ['add', 3, 0],
    ],
  );
});

test('the file level is the loosest chunk level', () => {
  const { plan } = run(codex('*** Update File: a.txt', '@@', '-a', '+A', '@@', '-  b', '+B'), {
    'a.txt': 'a\nb\n',
  });
  assert.is(plan.files[0]?.level, 'trim');
  assert.equal(
    plan.files[0]?.chunks.map((c) => c.level),
    ['exact', 'trim'],
  );
});

test('the planner reports a snapshot missing a path as INTERNAL', () => {
  const parsed = parsePatch(codex('*** Delete File: a.txt'));
  assert.is(errorOf(() => planPatch(parsed, new Map())).code, 'INTERNAL');
});

test('every planner error carries a hint', () => {
  const parsed = parsePatch(codex('*** Update File: a.txt', '-zz', '+y'));
  const e = errorOf(() => planPatch(parsed, snapshotOf({ 'a.txt': 'x\n' })));
  assert.ok(typeof e.hint === 'string' && e.hint.length > 0);
});

test('200 chunks on a 10,000-line file are planned in under 50 ms', () => {
  const lines = Array.from({ length: 10_000 }, (_, i) =>
    i % 5 === 0 ? '' : i % 5 === 1 ? '  }' : `    value_${i} = compute(${i})`,
  );
  const ops: string[] = ['*** Update File: big.py'];
  for (let k = 0; k < 200; k++) {
    const at = 10 + k * 49;
    ops.push(
      '@@',
      ` ${lines[at - 1]}`,
      `-${lines[at]}`,
      `+${lines[at]} # changed`,
      ` ${lines[at + 1]}`,
    );
  }
  const parsed = parsePatch(codex(...ops));
  const snapshot = snapshotOf({ 'big.py': lines.join('\n') + '\n' });
  // Best of 5 (the first runs warm the JIT; the machine may be shared).
  let ms = Infinity;
  let plan = planPatch(parsed, snapshot);
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    plan = planPatch(parsed, snapshot);
    ms = Math.min(ms, performance.now() - t0);
  }
  assert.is(plan.files[0]?.chunks.length, 200);
  assert.is(plan.files[0]?.added, 200);
  assert.ok(ms < 50, `took ${ms.toFixed(1)} ms`);
});

test.run();
