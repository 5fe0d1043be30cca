/** Journal: one JSON line per attempt, concurrent writers, damaged lines, filters. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isHagentError } from '../../../src/errors.js';
import {
  appendJournal,
  journalPath,
  readJournal,
  type JournalInput,
} from '../../../src/journal/index.js';
import { tempDir } from '../../helpers/index.js';
import { guarded } from '../patch/helpers.js';

const test = guarded(suite('journal'));
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'child.ts');

const entry = (over: Partial<JournalInput> = {}): JournalInput => ({
  session: 's1',
  command: 'apply',
  ok: true,
  files: ['a.txt'],
  ...over,
});

test('an entry is appended as one JSON line, creating the folder, with mode 0600', async () => {
  const dir = tempDir();
  await appendJournal(dir, entry({ base: 'a'.repeat(40), head: 'b'.repeat(40), durationMs: 12.5 }));
  const text = readFileSync(journalPath(dir), 'utf8');
  assert.is(journalPath(dir), path.join(dir, 'hagent', 'journal.jsonl'));
  assert.is(text.split('\n').length, 2);
  assert.ok(text.endsWith('\n'));
  const line = JSON.parse(text);
  assert.is(line.session, 's1');
  assert.is(line.ok, true);
  assert.is(line.head, 'b'.repeat(40));
  assert.ok(!Number.isNaN(Date.parse(line.time)));
  assert.is(statSync(journalPath(dir)).mode & 0o777, 0o600);
});

test('the patch is kept redacted, with the SHA-256 of the original text', async () => {
  const dir = tempDir();
  const patch =
    '*** Begin Patch\n*** Add File: .env\n+API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123\n*** End Patch\n';
  const written = await appendJournal(dir, entry({ patch }));
  assert.is(written.patchSha256, createHash('sha256').update(patch).digest('hex'));
  assert.not.match(readFileSync(journalPath(dir), 'utf8'), 'ghp_');
  assert.match(written.patch!, '+API_TOKEN=[REDACTED:');
  assert.is(written.redactions, 1);
});

test('an entry that does not fit the schema is refused with INTERNAL and nothing is written', async () => {
  const dir = tempDir();
  try {
    await appendJournal(dir, { ...entry(), session: 42 as unknown as string });
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.ok(isHagentError(e) && e.code === 'INTERNAL', String(e));
  }
  assert.equal(await readJournal(dir), { entries: [], damaged: 0 });
});

test('a missing journal reads as empty', async () => {
  assert.equal(await readJournal(tempDir()), { entries: [], damaged: 0 });
});

test('reading filters failed attempts, one session, and keeps the newest N last', async () => {
  const dir = tempDir();
  for (let i = 0; i < 6; i++) {
    await appendJournal(
      dir,
      entry({
        session: i % 2 ? 'b' : 'a',
        ok: i % 3 !== 0,
        message: `m${i}`,
        ...(i % 3 === 0 ? { code: 'STALE_FILE' } : {}),
      }),
    );
  }
  const all = await readJournal(dir);
  assert.equal(
    all.entries.map((e) => e.message),
    ['m0', 'm1', 'm2', 'm3', 'm4', 'm5'],
  );
  assert.equal(
    (await readJournal(dir, { failed: true })).entries.map((e) => e.message),
    ['m0', 'm3'],
  );
  assert.equal(
    (await readJournal(dir, { session: 'b' })).entries.map((e) => e.message),
    ['m1', 'm3', 'm5'],
  );
  assert.equal(
    (await readJournal(dir, { limit: 2 })).entries.map((e) => e.message),
    ['m4', 'm5'],
  );
  assert.equal((await readJournal(dir, { limit: 0 })).entries, []);
  assert.equal(
    (await readJournal(dir, { session: 'b', failed: true, limit: 1 })).entries.map(
      (e) => e.message,
    ),
    ['m3'],
  );
});

test('damaged lines are skipped and counted: bad JSON, wrong shape, an unterminated tail', async () => {
  const dir = tempDir();
  await appendJournal(dir, entry({ message: 'first' }));
  appendFileSync(journalPath(dir), '{"time": "x", "sess\n');
  appendFileSync(journalPath(dir), '{"time":"2026-01-01T00:00:00Z","ok":"yes"}\n');
  await appendJournal(dir, entry({ message: 'second' }));
  appendFileSync(journalPath(dir), '{"time":"2026-01-01T00:00:00Z","session":"s1","comm');
  const r = await readJournal(dir);
  assert.equal(
    r.entries.map((e) => e.message),
    ['first', 'second'],
  );
  assert.is(r.damaged, 3);
});

test('eight processes appending at once leave only whole lines, none lost', async () => {
  const dir = tempDir();
  const js = path.join(tempDir(), 'child.mjs');
  await build({
    entryPoints: [CHILD],
    outfile: js,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  const perWriter = 20;
  const codes = await Promise.all(
    Array.from(
      { length: 8 },
      (_, w) =>
        new Promise<number | null>((resolve) => {
          const c = spawn(process.execPath, [js, dir, String(w), String(perWriter)], {
            stdio: 'inherit',
          });
          c.on('exit', resolve);
        }),
    ),
  );
  assert.equal(codes, Array(8).fill(0));
  const text = readFileSync(journalPath(dir), 'utf8');
  const lines = text.split('\n');
  assert.is(lines.pop(), '');
  assert.is(lines.length, 8 * perWriter);
  for (const line of lines) JSON.parse(line); // throws on an interleaved line
  const r = await readJournal(dir);
  assert.is(r.damaged, 0);
  assert.is(r.entries.length, 8 * perWriter);
  for (let w = 0; w < 8; w++) {
    const mine = r.entries.filter((e) => e.session === `s${w}`);
    assert.is(mine.length, perWriter);
    assert.ok(mine.every((e) => e.patch!.includes(`+line ${w}-`) && e.patch!.length > 30_000));
  }
});

test.run();
