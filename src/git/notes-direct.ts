/**
 * Adding a note to `refs/notes/hagent` without spawning git, as `git notes --ref=hagent add -f
 * -C <blob> <commit>` would (git-notes(1); notes tree layout: git's notes.c): the note is a blob
 * of the exact text, kept in the notes tree under the commit's id split after two hex digits
 * (`ab/cdef…`, one level of fanout, which git reads at any size and rewrites to its own layout
 * the next time it writes notes); the notes commit has the previous one as parent, the message
 * git gives it, and the identity of the commit it annotates; the ref moves by compare-and-swap
 * with git's reflog line. The caller holds the repository's notes lock.
 *
 * Answers "ask git" before writing anything when the notes ref, its commit or the trees on the
 * way are not loose objects this process may read (a packed or replaced history), or when the
 * tree already uses deeper fanout than one level at that place.
 */
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { readRefsDirect } from './refs-direct.js';
import { parseRawTree, serializeTree } from './tree.js';
import { updateRefDirect } from './ref-update-direct.js';
import { isOid } from './object-format.js';

/** The notes ref hagent keeps patch texts under. */
export const NOTES_REF = 'refs/notes/hagent';
/** The message of git's notes commits, and the reflog line of their ref update. */
const NOTES_MESSAGE = "Notes added by 'git notes add'";

/** One note to add with {@link addNoteDirect}. */
export interface DirectNote {
  store: LooseObjectStore;
  /** Absolute git common dir. */
  commonDir: string;
  /** Absolute git dir of the worktree making the update. */
  gitDir: string;
  /** The annotated commit (a full id of the store's format). */
  commit: string;
  /** The note's exact text. */
  text: string;
  /** `Name <email> <seconds> <±hhmm>` of the notes commit's author and committer. */
  author: string;
  committer: string;
}

function readObject(store: LooseObjectStore, oid: string, type: string): Buffer | null {
  try {
    const o = readLooseObject(store, oid);
    return o && o.type === type ? o.content : null;
  } catch {
    return null;
  }
}

/**
 * Adds (or replaces) the note of `n.commit` (module header).
 * @returns true when the notes ref moved; false when nothing was written and git must do it.
 * @throws HagentError TARGET_MOVED when the notes ref moved meanwhile (someone outside hagent's
 *   notes lock); the file system's error when an object cannot be written.
 */
export async function addNoteDirect(n: DirectNote): Promise<boolean> {
  if (!isOid(n.commit, n.store.format)) return false;
  const refs = await readRefsDirect(n.commonDir, [NOTES_REF]);
  if (!refs) return false;
  const parent = refs.get(NOTES_REF) ?? null;
  let root = new Map<string, { mode: string; oid: string }>();
  if (parent) {
    const commit = readObject(n.store, parent, 'commit');
    const tree = commit ? /^tree ([0-9a-f]+)\n/.exec(commit.toString('latin1'))?.[1] : undefined;
    const raw = tree ? readObject(n.store, tree, 'tree') : null;
    if (!raw) return false;
    root = parseRawTree(raw, n.store.format);
  }
  const fan = n.commit.slice(0, 2);
  const rest = n.commit.slice(2);
  let sub = new Map<string, { mode: string; oid: string }>();
  const existing = root.get(fan);
  if (existing) {
    const raw = existing.mode === '40000' ? readObject(n.store, existing.oid, 'tree') : null;
    if (!raw) return false;
    sub = parseRawTree(raw, n.store.format);
    if (sub.get(rest.slice(0, 2))?.mode === '40000') return false; // deeper fanout: git places it
  }
  root.delete(n.commit); // a note kept without fanout is replaced, as -f does
  sub.set(rest, {
    mode: '100644',
    oid: await writeLooseObject(n.store, 'blob', Buffer.from(n.text, 'utf8')),
  });
  root.set(fan, {
    mode: '40000',
    oid: await writeLooseObject(n.store, 'tree', serializeTree(sub)),
  });
  const tree = await writeLooseObject(n.store, 'tree', serializeTree(root));
  const body = `tree ${tree}\n${parent ? `parent ${parent}\n` : ''}author ${n.author}\ncommitter ${n.committer}\n\n${NOTES_MESSAGE}\n`;
  const notesCommit = await writeLooseObject(n.store, 'commit', Buffer.from(body, 'utf8'));
  return updateRefDirect({
    commonDir: n.commonDir,
    gitDir: n.gitDir,
    ref: NOTES_REF,
    newOid: notesCommit,
    oldOid: parent,
    committer: n.committer,
    message: `notes: ${NOTES_MESSAGE}`,
  });
}
