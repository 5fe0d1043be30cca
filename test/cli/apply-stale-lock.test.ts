/**
 * Locks a killed command leaves: the session lock of a dead holder (same host) is taken over at
 * once, even with `--lock-timeout 0`; a live holder's is not. The worktree's index.lock left by a
 * git killed with its apply is cleared by the next command's recovery, which completes the apply.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, repoWithSession, tempDir, updatePatch } from '../helpers/index.js';

const t = suite('apply-stale-lock');
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/** Writes the session lock of `s1` as a holder with `pid` on this host would. */
function writeLock(repo: string, pid: number): string {
  const dir = path.join(repo, '.git', 'hagent', 'locks');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 's1.lock');
  const body = {
    pid,
    hostname: os.hostname(),
    command: 'apply',
    startedAt: new Date().toISOString(),
    token: 'deadbeefdeadbeef0001',
  };
  writeFileSync(file, `${JSON.stringify(body)}\n`);
  return file;
}

/** The pid of a process that has ended (and been reaped). */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => c.on('exit', resolve));
  return c.pid!;
}

t('a dead holder on this host is taken over at once: apply --lock-timeout 0 succeeds', async () => {
  const { repo, s } = repoWithSession();
  const lock = writeLock(repo, await deadPid());
  const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
    input: updatePatch('a.txt', 'two', 'TWO'),
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.not.ok(existsSync(lock), 'released after the apply');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
});

t('a holder that ended but is not reaped yet (a zombie) is dead: taken over at once', async () => {
  const { repo, s } = repoWithSession();
  if (!existsSync('/proc/self/stat')) {
    console.log('  skipped: zombie holder (no /proc on this system)');
    return;
  }
  // The inner sleep ends at once; its parent (exec'd into sleep 30) never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const zombie = Number(
      await new Promise<string>((resolve) =>
        parent.stdout!.once('data', (d) => resolve(String(d))),
      ),
    );
    for (let i = 0; i < 200; i++) {
      const state = readFileSync(`/proc/${zombie}/stat`, 'latin1').split(') ')[1]?.[0];
      if (state === 'Z') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    writeLock(repo, zombie);
    const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
  } finally {
    parent.kill('SIGKILL');
  }
});

t('a live holder is never taken over: LOCKED (exit 1) naming it, its lock left as it was', () => {
  const { repo, s } = repoWithSession();
  const live = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const lock = writeLock(repo, live.pid!);
    const before = readFileSync(lock, 'utf8');
    const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
    });
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'LOCKED');
    assert.is(r.json.error.holder.pid, live.pid);
    assert.match(r.json.error.hint, /wait for the apply command to finish/);
    assert.is(readFileSync(lock, 'utf8'), before);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  } finally {
    live.kill('SIGKILL');
  }
});

/**
 * A `git` on PATH whose `update-index` (the index write of a transaction) takes the worktree's
 * index.lock as git does, then is killed with hagent: the lock stays, with no owner alive.
 */
function killAtIndexWrite(): Record<string, string> {
  const bin = tempDir('hagent-killidx-');
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" update-index "*) : > "$("${REAL_GIT}" rev-parse --absolute-git-dir)/index.lock"; kill -9 $PPID; exit 0 ;;
esac
exec "${REAL_GIT}" "$@"
`,
    { mode: 0o755 },
  );
  return { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}

t(
  'an index.lock left by a git killed with its apply: the next apply completes it, lock gone',
  () => {
    const { s } = repoWithSession();
    const killed = hagent(s.worktree, ['apply', '-'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
      env: killAtIndexWrite(),
    });
    assert.is(killed.status, -1, 'killed');
    const gitDir = git(s.worktree, 'rev-parse', '--absolute-git-dir');
    assert.ok(existsSync(path.join(gitDir, 'index.lock')), 'the killed git left its lock');
    const next = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('b.txt', 'bee', 'BEE'),
    });
    assert.is(next.status, 0, next.stdout + next.stderr);
    assert.is(next.json.recovery.command, 'apply');
    assert.not.ok(existsSync(path.join(gitDir, 'index.lock')));
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t.run();
