/** `hagent log` (runLog) on a real repository's journal: human notes and --json. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { runLog } from '../../../src/commands/log.js';
import { isHagentError } from '../../../src/errors.js';
import { appendJournal, journalPath } from '../../../src/journal/index.js';
import type { Io } from '../../../src/output/index.js';
import { makeRepo } from '../../helpers/index.js';
import { guarded } from '../patch/helpers.js';

const test = guarded(suite('hagent log'));

function io(cwd: string): { io: Io; out: () => string } {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (d: Buffer) => chunks.push(d));
  const value: Io = {
    stdout,
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    color: false,
    interactive: false,
    cwd,
    env: {},
  };
  return { io: value, out: () => Buffer.concat(chunks).toString('utf8') };
}

async function repoWithJournal(): Promise<string> {
  const repo = makeRepo();
  const commonDir = path.join(repo, '.git');
  await appendJournal(commonDir, {
    time: '2026-01-01T10:00:00.000Z',
    session: 'fix-login',
    command: 'apply',
    ok: true,
    files: ['a.txt', 'b.txt'],
    base: '1'.repeat(40),
    head: '2'.repeat(40),
  });
  await appendJournal(commonDir, {
    time: '2026-01-01T10:01:00.000Z',
    session: 'fix-login',
    command: 'apply',
    ok: false,
    code: 'STALE_FILE',
    message: 'a.txt changed outside the session',
    hint: 'run hagent sync, then rebuild the patch',
    files: ['a.txt'],
  });
  await appendJournal(commonDir, {
    time: '2026-01-01T10:02:00.000Z',
    session: 'other',
    command: 'undo',
    ok: true,
    files: [],
  });
  return repo;
}

test('the human view shows applied and blocked notes, with the blocked hint repeated', async () => {
  const repo = await repoWithJournal();
  const { io: i, out } = io(repo);
  assert.is(await runLog({}, i), 0);
  const text = out();
  assert.match(
    text,
    /^applied {2}2026-01-01 10:00:00Z {2}fix-login {2}apply {2}head 222222222222$/m,
  );
  assert.match(text, /^ {9}files: a\.txt, b\.txt$/m);
  assert.match(text, /^blocked {2}2026-01-01 10:01:00Z {2}fix-login {2}apply {2}STALE_FILE$/m);
  assert.match(text, /^ {9}a\.txt changed outside the session$/m);
  assert.match(text, /^ {9}hint: run hagent sync, then rebuild the patch$/m);
  assert.match(text, '3 shown: 2 applied, 1 blocked');
  assert.not.match(text, '\u001b[');
});

test('--failed shows only blocked attempts and -n the newest ones', async () => {
  const repo = await repoWithJournal();
  const a = io(repo);
  await runLog({ failed: true }, a.io);
  assert.not.match(a.out(), 'applied ');
  assert.match(a.out(), 'blocked ');
  const b = io(repo);
  await runLog({ n: 1 }, b.io);
  assert.match(b.out(), 'undo');
  assert.not.match(b.out(), 'STALE_FILE');
});

test('--json prints {entries, damaged} with damaged lines counted', async () => {
  const repo = await repoWithJournal();
  appendFileSync(journalPath(path.join(repo, '.git')), 'not json\n');
  const { io: i, out } = io(repo);
  await runLog({ json: true, session: 'fix-login' }, i);
  const parsed = JSON.parse(out());
  assert.is(parsed.damaged, 1);
  assert.equal(
    parsed.entries.map((e: { ok: boolean }) => e.ok),
    [true, false],
  );
  assert.is(parsed.entries[1].hint, 'run hagent sync, then rebuild the patch');
});

test('an empty journal says so', async () => {
  const { io: i, out } = io(makeRepo());
  await runLog({}, i);
  assert.match(out(), 'The journal is empty');
});

test('a negative -n is a USAGE error', async () => {
  try {
    await runLog({ n: -1 }, io(makeRepo()).io);
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.ok(isHagentError(e) && e.code === 'USAGE', String(e));
  }
});

test.run();
