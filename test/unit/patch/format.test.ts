import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatResult } from '../../../src/patch/index.js';
import { guarded } from './helpers.js';

const test = guarded(suite('format'));

test('success keeps Codex shape: A / M / D lines in patch order, a move as M of the new path', () => {
  const text = formatResult({
    ok: true,
    files: [
      { path: 'new.py', op: 'add', added: 2, removed: 0 },
      { path: 'a.py', op: 'update', added: 1, removed: 1, level: 'exact' },
      { path: 'old.txt', op: 'delete', added: 0, removed: 3 },
      { path: 'b/moved.py', op: 'move', from: 'moved.py', added: 0, removed: 0 },
    ],
    leniencies: [],
    warnings: [],
  });
  assert.is(
    text,
    'Success. Updated the following files:\nA new.py\nM a.py\nD old.txt\nM b/moved.py\n',
  );
});

test('success adds warnings, loose levels and leniencies only when present', () => {
  const text = formatResult({
    ok: true,
    files: [{ path: 'a.py', op: 'update', added: 1, removed: 1, level: 'trim' }],
    leniencies: ['fence', 'crlf-patch'],
    warnings: ['b.py: the update changes nothing (no-op)'],
  });
  assert.is(
    text,
    'Success. Updated the following files:\nM a.py\nwarning: b.py: the update changes nothing (no-op)\nmatched loosely: a.py (trim)\nleniencies: fence, crlf-patch\n',
  );
});

test('failure is error[CODE]: message with indented details and the hint', () => {
  const text = formatResult({
    ok: false,
    error: {
      code: 'AMBIGUOUS_MATCH',
      message: 'r.rs: chunk 1 matches 2 places',
      path: 'r.rs',
      chunk: 1,
      line: 2,
      candidates: [2, 5],
      hint: 'add an @@ anchor',
    },
  });
  assert.is(
    text,
    'error[AMBIGUOUS_MATCH]: r.rs: chunk 1 matches 2 places\n  path: r.rs\n  chunk: 1\n  line: 2\n  candidates: lines 2, 5\n  hint: add an @@ anchor\n',
  );
  assert.is(
    formatResult({ ok: false, error: { code: 'PATCH_SYNTAX', message: 'no patch' } }),
    'error[PATCH_SYNTAX]: no patch\n',
  );
});

test('color wraps the status letters and the code in ANSI codes only when asked', () => {
  const ok = {
    ok: true as const,
    files: [{ path: 'a', op: 'add' as const, added: 1, removed: 0 }],
  };
  assert.not.ok(formatResult(ok).includes('\u001b['));
  assert.ok(formatResult(ok, { color: true }).includes('\u001b[32mA\u001b[0m a'));
  assert.ok(
    formatResult({ ok: false, error: { code: 'X', message: 'm' } }, { color: true }).startsWith(
      '\u001b[31merror[X]\u001b[0m: m',
    ),
  );
});

test('a HagentError JSON is a valid error for formatResult', async () => {
  const { HagentError } = await import('../../../src/errors.js');
  const e = new HagentError(
    'FILE_EXISTS',
    'cannot add a.txt: it already exists',
    { path: 'a.txt' },
    'use Update File',
  );
  assert.is(
    formatResult({ ok: false, error: e.toJSON() }),
    'error[FILE_EXISTS]: cannot add a.txt: it already exists\n  path: a.txt\n  hint: use Update File\n',
  );
});

test.run();
