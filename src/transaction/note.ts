/**
 * The note that keeps a commit's patch text (`refs/notes/hagent`), written under a lock shared by
 * every session of the repository: `git notes add` moves the notes ref without a compare-and-swap,
 * so two sessions adding notes at the same moment lost one of them (found by a hostile test:
 * 33 notes for 40 commits with 4 sessions applying in parallel).
 */
import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { addNote, addNoteDirect, type DirectNote } from '../git/index.js';
import { withSessionLock } from '../lock/index.js';

/** The lock id of the notes ref: no session can have it (session ids never end in `.lock`). */
export const NOTES_LOCK_ID = 'notes.lock';

/**
 * Attaches `text` as the note of `commit` (replacing any), byte for byte, holding the
 * repository's notes lock: in-process when `direct` is given and the repository is the plain
 * case (git/notes-direct.ts), else with git.
 * @param commonDir absolute git common dir; @param cwd where git runs (a worktree);
 * @param direct the object store, the worktree's git dir and the identity for an in-process note.
 * @throws HagentError LOCKED after 10 s of waiting; TARGET_MOVED, GIT_FAILED from the update.
 */
export async function storeNote(
  commonDir: string,
  cwd: string,
  commit: string,
  text: string,
  direct?: Omit<DirectNote, 'commonDir' | 'commit' | 'text'>,
): Promise<void> {
  await withSessionLock(
    commonDir,
    NOTES_LOCK_ID,
    { command: 'note' },
    { timeoutMs: 10_000 },
    async () => {
      await clearDeadNotesRefLock(commonDir);
      // Any failure of the in-process note (a concurrent gc, a ref moved by someone else) leaves
      // at most unreferenced objects: git then adds the note.
      if (
        direct &&
        (await addNoteDirect({ ...direct, commonDir, commit, text }).catch(() => false))
      )
        return;
      await addNote(cwd, commit, text);
    },
  );
}

/** How old git's `refs/notes/hagent.lock` must be before hagent takes it for a dead writer's (ms). */
const DEAD_GIT_LOCK_AGE_MS = 2000;

/**
 * Removes `refs/notes/hagent.lock` left by a writer killed while holding it (a killed hagent, or
 * its `git notes` child): every hagent writer holds the notes lock, which the caller holds now,
 * and git holds its lock file for milliseconds, so one that stays 2 s is dead. A younger one is
 * waited for (a user's `git notes` finishing). Without this, every later note would be refused.
 */
async function clearDeadNotesRefLock(commonDir: string): Promise<void> {
  const lock = path.join(commonDir, 'refs', 'notes', 'hagent.lock');
  for (;;) {
    const st = statSync(lock, { throwIfNoEntry: false });
    if (!st) return;
    const age = Date.now() - st.mtimeMs;
    if (age >= DEAD_GIT_LOCK_AGE_MS) {
      rmSync(lock, { force: true });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, DEAD_GIT_LOCK_AGE_MS - age)));
  }
}
