/**
 * The notes that keep each commit's patch text, one notes ref per session
 * (`refs/notes/hagent-sessions/<id>`), so no two sessions ever move the same notes ref and no
 * lock is shared between them. The note commit is written here as an unreferenced object (as
 * `git notes add -f -C <blob>` would make it; notes tree layout: git's notes.c, one level of
 * fanout, which git reads at any size); the caller moves the notes ref in the same ref
 * transaction as the session branch (ref-transaction.ts).
 *
 * Why not `refs/notes/hagent/<id>`: the notes written before per-session refs are kept under
 * `refs/notes/hagent`, and git's files backend cannot hold a ref and a folder of refs under one
 * name. Readers look in the session's ref first, then in that older global ref.
 */
import { HagentError } from '../errors.js';
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { parseRawTree, serializeTree } from './tree.js';
import { runGit, gitText } from './run.js';
import { writeCommit } from './commit-direct.js';
import { formatOfOid } from './object-format.js';

/** The notes ref of patch texts written before notes were kept per session. */
export const GLOBAL_NOTES_REF = 'refs/notes/hagent';
/** The message git gives its notes commits. */
const NOTES_MESSAGE = "Notes added by 'git notes add'\n";

/** The notes ref of one session's patch texts. */
export function sessionNotesRef(sessionId: string): string {
  return `refs/notes/hagent-sessions/${sessionId}`;
}

/** Where a note commit is written from: a worktree, and the loose store when hagent may write it. */
export interface NoteWriter {
  cwd: string;
  commonDir: string;
  /** The worktree's git dir (its `config.worktree`, for the in-process commit); null: git writes it. */
  gitDir: string | null;
  store: LooseObjectStore | null;
}

async function readObject(w: NoteWriter, oid: string, type: 'commit' | 'tree'): Promise<Buffer> {
  const loose = w.store ? readLooseObject(w.store, oid) : null;
  if (loose && loose.type === type) return loose.content;
  return (await runGit(['cat-file', type, oid], { cwd: w.cwd })).stdout;
}

async function writeObject(w: NoteWriter, type: 'blob' | 'tree', bytes: Buffer): Promise<string> {
  if (w.store) return writeLooseObject(w.store, type, bytes);
  return gitText(['hash-object', '-w', '-t', type, '--stdin'], { cwd: w.cwd, input: bytes });
}

/**
 * Writes the notes commit that gives `commit` the note `text` (byte for byte, replacing any),
 * over `parent` (the notes ref's current commit; null for the first note). Nothing points at it
 * until the caller moves the notes ref to it.
 * @returns the notes commit id.
 * @throws HagentError GIT_FAILED from git; INTERNAL for a notes tree laid out deeper than one
 *   fanout level at that place (hagent never writes one): the caller goes on without the note.
 */
export async function writeNoteCommit(
  w: NoteWriter,
  parent: string | null,
  commit: string,
  text: string,
): Promise<string> {
  const format = formatOfOid(commit);
  let root = new Map<string, { mode: string; oid: string }>();
  if (parent) {
    const body = (await readObject(w, parent, 'commit')).toString('latin1');
    const tree = /^tree ([0-9a-f]+)\n/.exec(body)?.[1];
    if (!tree) throw new HagentError('INTERNAL', `notes commit ${parent} has no tree`, {});
    root = parseRawTree(await readObject(w, tree, 'tree'), format);
  }
  const fan = commit.slice(0, 2);
  const rest = commit.slice(2);
  let sub = new Map<string, { mode: string; oid: string }>();
  const existing = root.get(fan);
  if (existing?.mode === '40000') {
    sub = parseRawTree(await readObject(w, existing.oid, 'tree'), format);
    if (sub.get(rest.slice(0, 2))?.mode === '40000')
      throw new HagentError('INTERNAL', `the notes tree of ${parent} has deeper fanout`, {});
  }
  root.delete(commit); // a note kept without fanout is replaced, as -f does
  sub.set(rest, { mode: '100644', oid: await writeObject(w, 'blob', Buffer.from(text, 'utf8')) });
  root.set(fan, { mode: '40000', oid: await writeObject(w, 'tree', serializeTree(sub)) });
  const tree = await writeObject(w, 'tree', serializeTree(root));
  const made = await writeCommit(
    w.cwd,
    w.commonDir,
    w.gitDir,
    w.store,
    tree,
    parent ? [parent] : [],
    NOTES_MESSAGE,
  );
  return made.oid;
}

/**
 * The note of `commit`: from the session's notes ref, else from the global one of older
 * versions; null when neither has one.
 * @throws HagentError GIT_FAILED only when git cannot run.
 */
export async function readSessionNote(
  cwd: string,
  sessionId: string,
  commit: string,
): Promise<string | null> {
  for (const ref of [sessionNotesRef(sessionId), GLOBAL_NOTES_REF]) {
    const r = await runGit(['notes', `--ref=${ref}`, 'show', commit], { cwd, allowFailure: true });
    if (r.exitCode === 0) return r.stdout.toString('utf8');
  }
  return null;
}
