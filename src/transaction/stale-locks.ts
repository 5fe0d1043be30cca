/**
 * git lock files left in a session worktree by a git that was killed outside any hagent
 * transaction (the agent's `git add` killed by a timeout, a crash): every later git command
 * there refuses until the lock goes, and recovery of a transaction (recover.ts) removes only the
 * locks made since that transaction started. Before each write, a lock no live process can hold
 * is removed; one that a process may hold is waited for a moment, then refused with GIT_LOCKED
 * naming the lock and how to clear it.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { parseGitFile, removeGitLock } from '../git/index.js';
import { gitLockMayBeHeld } from '../lock/index.js';

/** The lock files of a worktree's git dir that every write of hagent needs free. */
const WORKTREE_LOCKS = ['index.lock', 'HEAD.lock'];

/** How long a lock that a live process may hold is waited for. */
const HELD_WAIT_MS = 2000;

/**
 * Removes the session worktree's `index.lock` and `HEAD.lock` when no live process has them
 * open or runs git in that worktree (lock/gitLockMayBeHeld, through /proc); waits up to 2 s for
 * one that may be held. Costs one read and two stats when there is no lock.
 * @throws HagentError GIT_LOCKED naming the lock still there (a git running in the worktree, or
 *   a system without /proc, where no holder can be ruled out).
 */
export async function clearStaleWorktreeLocks(session: string, worktree: string): Promise<void> {
  const gitDir = await fs
    .readFile(path.join(worktree, '.git'), 'utf8')
    .then((text) => parseGitFile(worktree, text))
    .catch(() => null);
  if (!gitDir) return;
  for (const name of WORKTREE_LOCKS) {
    const lock = path.join(gitDir, name);
    const until = Date.now() + HELD_WAIT_MS;
    for (;;) {
      if (!(await fs.stat(lock).catch(() => null))) break;
      if (!gitLockMayBeHeld(lock, [worktree, gitDir])) {
        await removeGitLock(lock);
        break;
      }
      if (Date.now() >= until)
        throw new HagentError(
          'GIT_LOCKED',
          `session ${session}: ${lock} exists and a git process may still be using it`,
          { session, path: lock },
          `wait for the git command running in ${worktree} to finish; if none runs (a git was killed), remove ${lock} and run the command again`,
        );
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}
