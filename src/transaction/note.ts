/**
 * The note that keeps a commit's patch text (`refs/notes/hagent`), written under a lock shared by
 * every session of the repository: `git notes add` moves the notes ref without a compare-and-swap,
 * so two sessions adding notes at the same moment lost one of them (found by a hostile test:
 * 33 notes for 40 commits with 4 sessions applying in parallel).
 */
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
export async function storeNote(commonDir: string, cwd: string, commit: string, text: string, direct?: Omit<DirectNote, 'commonDir' | 'commit' | 'text'>): Promise<void> {
  await withSessionLock(commonDir, NOTES_LOCK_ID, { command: 'note' }, { timeoutMs: 10_000 }, async () => {
    if (direct && await addNoteDirect({ ...direct, commonDir, commit, text })) return;
    await addNote(cwd, commit, text);
  });
}
