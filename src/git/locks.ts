/**
 * git's lock files (`index.lock`, `<ref>.lock`): the one primitive that removes one, so no module
 * outside src/git deletes git's files. Which locks may go is the caller's policy.
 */
import { promises as fs } from 'node:fs';

/**
 * Removes `lock` if it was made since `since` (epoch ms, with a second of clock slack) once it
 * is `staleMs` old, waiting (at most `staleMs`) for a git that may still hold it; a lock older
 * than `since`, or one gone meanwhile, stays untouched. `ownerGone`, when given and true, says
 * no live process can hold it (its git was killed too): it is removed at once, not after
 * waiting. Never throws for a missing file.
 */
export async function removeLockMadeSince(
  lock: string,
  since: number,
  staleMs: number,
  ownerGone?: () => boolean,
): Promise<void> {
  for (;;) {
    const st = await fs.stat(lock).catch(() => null);
    if (!st || !(st.mtimeMs >= since - 1000)) return;
    const age = Date.now() - st.mtimeMs;
    if (age >= staleMs || ownerGone?.()) {
      await fs.rm(lock, { force: true });
      return;
    }
    await new Promise((res) => setTimeout(res, Math.min(100, staleMs - age)));
  }
}

/** Removes git lock file `lock` now (the caller proved no live git holds it). Never throws for a missing file. */
export async function removeGitLock(lock: string): Promise<void> {
  await fs.rm(lock, { force: true });
}
