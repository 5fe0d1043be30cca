/**
 * A git lock file left in a session worktree by a git killed outside any hagent transaction:
 * the next write removes it when no live process can hold it (Linux, /proc), and refuses with
 * GIT_LOCKED naming the lock and how to clear it while a process has it open. Before, every
 * apply failed with a bare GIT_FAILED that named no lock.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, repoWithSession, updatePatch } from '../helpers/index.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('stale git lock in a session worktree');
const noProc = existsSync('/proc/self/fd') ? undefined : 'needs /proc to prove a lock dead';

/** The session worktree's git dir (where its index.lock goes). */
const gitDirOf = (worktree: string) =>
  path.resolve(worktree, git(worktree, 'rev-parse', '--git-dir'));

for (const name of ['index.lock', 'HEAD.lock'])
  testOrSkip(
    t,
    'stale git lock',
    noProc,
  )(`an orphaned ${name} (its git killed) is removed by the next apply, which succeeds`, () => {
    const { s } = repoWithSession();
    const lock = path.join(gitDirOf(s.worktree), name);
    writeFileSync(lock, '');
    const r = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.not.ok(existsSync(lock), 'the dead lock was removed');
    assert.match(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), /TWO/);
  });

t(
  'an index.lock a live process holds open is refused as GIT_LOCKED naming it, nothing written',
  async () => {
    const { s } = repoWithSession();
    const lock = path.join(gitDirOf(s.worktree), 'index.lock');
    writeFileSync(lock, '');
    // A process that keeps the lock open, as a running git does.
    const holder = spawn(
      process.execPath,
      ['-e', `require('fs').openSync(${JSON.stringify(lock)}, 'r'); setInterval(() => {}, 1000);`],
      { stdio: 'ignore' },
    );
    try {
      await new Promise((res) => setTimeout(res, 300));
      const head = git(s.worktree, 'rev-parse', 'HEAD');
      const r = hagent(s.worktree, ['apply', '-', '--json'], {
        input: updatePatch('a.txt', 'two', 'TWO'),
      });
      assert.is(r.status, 1, r.stdout + r.stderr);
      assert.is(r.json.error.code, 'GIT_LOCKED');
      assert.is(r.json.error.path, lock);
      assert.match(r.json.error.hint, /remove .*index\.lock/);
      assert.ok(existsSync(lock), 'a lock that may be held is never removed');
      assert.is(git(s.worktree, 'rev-parse', 'HEAD'), head);
      assert.match(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), /two/);
    } finally {
      holder.kill();
    }
  },
);

t.run();
