/** Session lock: real files, real processes racing, a holder killed with SIGKILL. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  readFileSync,
  readdirSync,
  writeFileSync,
  mkdirSync,
  utimesSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isHagentError, type HagentError } from '../../../src/errors.js';
import {
  clearDeadTargetLocks,
  readLockHolder,
  withSessionLock,
  UNPARSABLE_MAX_AGE_MS,
} from '../../../src/lock/index.js';
import { tempDir } from '../../helpers/index.js';
import { guarded } from '../patch/helpers.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'child.ts');
const test = guarded(suite('lock'));

let childJs = '';
// Bundled once with esbuild: six `node --import tsx` start-ups cost seconds on a small machine,
// which would hide the races the tests are after behind start-up time.
test.before(async () => {
  childJs = path.join(tempDir(), 'child.mjs');
  await build({
    entryPoints: [CHILD],
    outfile: childJs,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
});

function child(args: string[]): ChildProcess {
  return spawn(process.execPath, [childJs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function exited(c: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    c.exitCode !== null || c.signalCode !== null
      ? resolve(c.exitCode)
      : c.on('exit', (code) => resolve(code)),
  );
}

/** Resolves once the child printed `locked`. */
function locked(c: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    c.stderr!.on('data', (d) => (err += d));
    c.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('locked')) resolve();
    });
    c.on('exit', (code) => reject(new Error(`holder exited (${code}) before locking: ${err}`)));
  });
}

async function lockedError(p: Promise<unknown>): Promise<HagentError> {
  try {
    await p;
  } catch (e) {
    if (isHagentError(e)) return e;
    throw e;
  }
  throw new Error('expected a HagentError');
}

test('the lock is taken, the holder named in its file, and released after fn', async () => {
  const dir = tempDir();
  const seen = await withSessionLock(dir, 's1', { command: 'apply' }, {}, async () =>
    readLockHolder(dir, 's1'),
  );
  assert.ok(seen);
  assert.is(seen.holder?.pid, process.pid);
  assert.is(seen.holder?.command, 'apply');
  assert.is(seen.holder?.hostname, os.hostname());
  assert.ok(!Number.isNaN(Date.parse(seen.holder!.startedAt)));
  assert.is(seen.state, 'alive');
  assert.is(seen.path, path.join(dir, 'hagent', 'locks', 's1.lock'));
  assert.not.ok(existsSync(seen.path));
  assert.is(await readLockHolder(dir, 's1'), null);
});

test('the lock is released when fn throws, and the error passes through unchanged', async () => {
  const dir = tempDir();
  const boom = new Error('boom');
  try {
    await withSessionLock(dir, 's1', { command: 'apply' }, {}, async () => {
      throw boom;
    });
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.is(e, boom);
  }
  assert.is(await readLockHolder(dir, 's1'), null);
});

test('a second taker in the same process waits for the first and then runs', async () => {
  const dir = tempDir();
  const order: string[] = [];
  const first = withSessionLock(dir, 's1', { command: 'one' }, {}, async () => {
    order.push('one:in');
    await new Promise((r) => setTimeout(r, 50));
    order.push('one:out');
  });
  await new Promise((r) => setTimeout(r, 5));
  const second = withSessionLock(dir, 's1', { command: 'two' }, {}, async () => {
    order.push('two:in');
  });
  await Promise.all([first, second]);
  assert.equal(order, ['one:in', 'one:out', 'two:in']);
});

test('locks of different sessions do not block each other', async () => {
  const dir = tempDir();
  const r = await withSessionLock(dir, 'a', { command: 'apply' }, {}, () =>
    withSessionLock(dir, 'b', { command: 'apply' }, { timeoutMs: 0 }, async () => 'both'),
  );
  assert.is(r, 'both');
});

test('LOCKED after the timeout names the live holder: pid, command, host and start', async () => {
  const dir = tempDir();
  const holder = child(['hold', dir, 's1', 'land']);
  try {
    await locked(holder);
    const t0 = Date.now();
    const e = await lockedError(
      withSessionLock(dir, 's1', { command: 'apply' }, { timeoutMs: 300 }, async () => 'ran'),
    );
    const waited = Date.now() - t0;
    assert.is(e.code, 'LOCKED');
    assert.ok(waited >= 280, `waited ${waited} ms`);
    const h = e.details.holder as {
      pid: number;
      command: string;
      hostname: string;
      startedAt: string;
    };
    assert.is(h.pid, holder.pid);
    assert.is(h.command, 'land');
    assert.is(h.hostname, os.hostname());
    assert.match(e.message, `pid ${holder.pid}`);
    assert.match(e.message, 'land');
    assert.ok(e.hint && e.hint.includes('--lock-timeout'));
    const status = await readLockHolder(dir, 's1');
    assert.is(status?.state, 'alive');
  } finally {
    holder.kill('SIGKILL');
    await exited(holder);
  }
});

test('a holder killed with SIGKILL is taken over at once', async () => {
  const dir = tempDir();
  const holder = child(['hold', dir, 's1', 'apply']);
  await locked(holder);
  holder.kill('SIGKILL');
  await exited(holder);
  const status = await readLockHolder(dir, 's1');
  assert.is(status?.state, 'dead');
  assert.is(status?.holder?.pid, holder.pid);
  const t0 = Date.now();
  const r = await withSessionLock(
    dir,
    's1',
    { command: 'apply' },
    { timeoutMs: 2000 },
    async () => (await readLockHolder(dir, 's1'))?.holder?.pid,
  );
  assert.is(r, process.pid);
  assert.ok(Date.now() - t0 < 500, 'took over without waiting for the timeout');
  assert.is(await readLockHolder(dir, 's1'), null);
});

test("doctor's sweep clears a land target lock whose holder was killed, and leaves a live holder's", async () => {
  const dir = tempDir();
  const targets = path.join(dir, 'hagent', 'locks', 'targets');
  const dead = child(['hold-target', dir, 'refs/heads/main', 'land']);
  await locked(dead);
  dead.kill('SIGKILL');
  await exited(dead);
  const live = child(['hold-target', dir, 'refs/heads/other', 'land']);
  await locked(live);
  try {
    assert.is(readdirSync(targets).filter((n) => n.endsWith('.lock')).length, 2);
    const cleared = await clearDeadTargetLocks(dir);
    assert.is(cleared.length, 1);
    assert.not.ok(existsSync(cleared[0]!), "the dead holder's lock file is gone");
    assert.equal(
      readdirSync(targets).filter((n) => n.endsWith('.lock')).length,
      1,
      'the live holder keeps its lock',
    );
  } finally {
    live.kill('SIGKILL');
    await exited(live);
  }
});

test('a lock file with an unparsable body is taken over only once it is old', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'hagent', 'locks', 's1.lock');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '');
  const e = await lockedError(
    withSessionLock(dir, 's1', { command: 'apply' }, { timeoutMs: 50 }, async () => 'ran'),
  );
  assert.is(e.code, 'LOCKED');
  assert.is(e.details.holder, null);
  const old = (Date.now() - UNPARSABLE_MAX_AGE_MS - 5000) / 1000;
  utimesSync(file, old, old);
  assert.is((await readLockHolder(dir, 's1'))?.state, 'dead');
  assert.is(
    await withSessionLock(dir, 's1', { command: 'apply' }, { timeoutMs: 50 }, async () => 'ran'),
    'ran',
  );
});

test('a lock naming a pid that no longer exists on this host is taken over', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'hagent', 'locks', 's1.lock');
  mkdirSync(path.dirname(file), { recursive: true });
  const gone = child(['race', dir, 'unused', '0', path.join(dir, 'x')]);
  await exited(gone);
  writeFileSync(
    file,
    JSON.stringify({
      pid: gone.pid,
      hostname: os.hostname(),
      command: 'apply',
      startedAt: new Date().toISOString(),
      token: 'deadbeefdeadbeef',
    }),
  );
  assert.is(
    await withSessionLock(dir, 's1', { command: 'apply' }, { timeoutMs: 50 }, async () => 'ran'),
    'ran',
  );
});

test('a lock held on another host is never broken: LOCKED names that host', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'hagent', 'locks', 's1.lock');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      pid: 999999,
      hostname: 'elsewhere.example',
      command: 'undo',
      startedAt: '2026-01-01T00:00:00.000Z',
      token: 'cafebabecafebabe',
    }),
  );
  const e = await lockedError(
    withSessionLock(dir, 's1', { command: 'apply' }, { timeoutMs: 30 }, async () => 'ran'),
  );
  assert.is(e.code, 'LOCKED');
  assert.match(e.message, 'elsewhere.example');
  assert.ok(e.hint?.includes('another host'));
  assert.is((await readLockHolder(dir, 's1'))?.state, 'unknown');
  assert.ok(existsSync(file));
});

test('a session id that cannot name a file is refused with USAGE', async () => {
  const e = await lockedError(
    withSessionLock(tempDir(), '../x', { command: 'apply' }, {}, async () => 'ran'),
  );
  assert.is(e.code, 'USAGE');
});

test('six processes racing for one lock never hold it at the same time', async () => {
  const dir = tempDir();
  const log = path.join(dir, 'log');
  writeFileSync(log, '');
  const rounds = 15;
  const kids = Array.from({ length: 6 }, () => child(['race', dir, 's1', String(rounds), log]));
  const errs = kids.map((k) => {
    let s = '';
    k.stderr!.on('data', (d) => (s += d));
    return () => s;
  });
  const codes = await Promise.all(kids.map(exited));
  assert.equal(
    codes,
    kids.map(() => 0),
    errs.map((f) => f()).join('\n'),
  );
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  assert.is(lines.length, 6 * rounds * 2);
  for (let i = 0; i < lines.length; i += 2) {
    const [enter, exit] = [lines[i]!, lines[i + 1]!];
    assert.ok(
      enter.startsWith('enter ') && exit === `exit ${enter.slice(6)}`,
      `overlap at line ${i + 1}: ${enter} / ${exit}`,
    );
  }
  assert.equal(
    readdirSync(path.join(dir, 'hagent', 'locks')).filter((n) => n.endsWith('.lock')),
    [],
  );
});

test('waiters racing to take over a SIGKILLed holder: exactly one wins at a time', async () => {
  const dir = tempDir();
  const log = path.join(dir, 'log');
  writeFileSync(log, '');
  const holder = child(['hold', dir, 's1', 'apply']);
  await locked(holder);
  const kids = Array.from({ length: 6 }, () => child(['race', dir, 's1', '5', log]));
  await new Promise((r) => setTimeout(r, 300)); // let them all wait on the live holder
  holder.kill('SIGKILL');
  const codes = await Promise.all(kids.map(exited));
  assert.equal(
    codes,
    kids.map(() => 0),
  );
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  assert.is(lines.length, 6 * 5 * 2);
  for (let i = 0; i < lines.length; i += 2) {
    assert.is(lines[i + 1], `exit ${lines[i]!.slice(6)}`, `overlap at line ${i + 1}`);
  }
});

test("the lock appears with its body (temp file, then link); a dead taker's body temp is swept on release", async () => {
  const common = tempDir();
  const locks = path.join(common, 'hagent', 'locks');
  mkdirSync(locks, { recursive: true });
  const stray = path.join(locks, 's1.lock.tmp-999999999-abcd1234');
  writeFileSync(stray, '{"pid":999999999}\n');
  let during: string[] = [];
  await withSessionLock(common, 's1', { command: 'test' }, {}, async () => {
    const body = JSON.parse(readFileSync(path.join(locks, 's1.lock'), 'utf8'));
    assert.is(body.pid, process.pid);
    during = readdirSync(locks).filter(
      (n) => n.startsWith('s1.lock.tmp-') && n !== path.basename(stray),
    );
  });
  assert.equal(during, [], 'our own body temp is gone once the lock is taken');
  assert.not.ok(existsSync(stray), 'the stray temp of a dead process is removed');
  assert.not.ok(existsSync(path.join(locks, 's1.lock')));
});

test('a holder pid reused by another process (its start time differs) is dead; the same process is alive', async () => {
  const common = tempDir();
  const locks = path.join(common, 'hagent', 'locks');
  mkdirSync(locks, { recursive: true });
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const stat = readFileSync(`/proc/${other.pid}/stat`, 'latin1');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const body = (startTicks: number) =>
      `${JSON.stringify({ pid: other.pid, hostname: os.hostname(), command: 'apply', startedAt: new Date().toISOString(), token: 'abcdef0123456789', startTicks })}\n`;
    writeFileSync(path.join(locks, 'r1.lock'), body(ticks - 1));
    let ran = false;
    await withSessionLock(common, 'r1', { command: 'test' }, { timeoutMs: 0 }, async () => {
      ran = true;
    });
    assert.ok(ran, 'taken over at once: the pid belongs to a later process');
    writeFileSync(path.join(locks, 'r2.lock'), body(ticks));
    let error: unknown = null;
    await withSessionLock(
      common,
      'r2',
      { command: 'test' },
      { timeoutMs: 0 },
      async () => undefined,
    ).catch((e) => {
      error = e;
    });
    assert.ok(
      isHagentError(error) && (error as HagentError).code === 'LOCKED',
      'the very holder process is alive',
    );
  } finally {
    other.kill('SIGKILL');
  }
});

test.run();
