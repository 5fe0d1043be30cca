/**
 * Three-way merges of trees with a merge base chosen by the caller, not by history.
 *
 * A land merges what a session changed since what it already landed: that merge base is a tree
 * hagent knows (its land base), which history cannot tell git (a squash land leaves no ancestry).
 * `git merge-tree --write-tree --merge-base` came in git 2.40; hagent supports 2.38, so the same
 * result is had on every version from two throw-away commits over one root commit holding the base
 * tree: their only common ancestor is that root, so merge-tree takes it as the merge base.
 */
import { HagentError } from '../errors.js';
import { runGit } from './run.js';
import { writeLooseObject, type LooseObjectStore } from './loose.js';

/** Identity of hagent's internal commits (merge scaffolding, land bases): fixed, so equal inputs give equal objects. */
const INTERNAL_IDENT = 'hagent <hagent@localhost> 0 +0000';

/**
 * Writes a commit object whose identity and time are fixed (`hagent <hagent@localhost> 0 +0000`):
 * for hagent's internal commits, which no user reads as authored work. The same tree, parents and
 * message always give the same id. In-process with `store`, else `git hash-object -t commit -w`.
 * @returns its id. @throws HagentError GIT_FAILED.
 */
export async function writeInternalCommit(cwd: string, store: LooseObjectStore | null, tree: string, parents: readonly string[], message: string): Promise<string> {
  const text = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}author ${INTERNAL_IDENT}\ncommitter ${INTERNAL_IDENT}\n\n${message.endsWith('\n') ? message : `${message}\n`}`;
  const bytes = Buffer.from(text, 'utf8');
  if (store && tree.length === 40) return writeLooseObject(store, 'commit', bytes);
  const r = await runGit(['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd, input: bytes });
  return r.stdout.toString('utf8').trim();
}

/** Parses `git merge-tree --write-tree -z --name-only --no-messages`: tree id, then conflicted paths. Pure. */
export function parseMergeTree(out: Buffer): { tree: string; conflicts: string[] } {
  const parts = out.toString('utf8').split('\0');
  const tree = (parts.shift() ?? '').trim();
  return { tree, conflicts: [...new Set(parts.filter(Boolean))] };
}

/** Result of {@link mergeTrees}: the merged tree (with conflict markers where `conflicts` is not empty). */
export interface TreeMerge {
  tree: string;
  /** False when git reported conflicts; `conflicts` then lists their paths. */
  clean: boolean;
  conflicts: string[];
}

/**
 * The three-way merge of tree `ours` and tree `theirs` over the merge base tree `base`, as
 * `git merge-tree --write-tree` computes it (rename detection included). Writes only objects no
 * ref points at.
 * @throws HagentError GIT_FAILED when git cannot merge (not for conflicts: those are listed).
 */
export async function mergeTrees(cwd: string, store: LooseObjectStore | null, base: string, ours: string, theirs: string): Promise<TreeMerge> {
  const root = await writeInternalCommit(cwd, store, base, [], 'hagent: merge base\n');
  const [o, t] = await Promise.all([
    writeInternalCommit(cwd, store, ours, [root], 'hagent: ours\n'),
    writeInternalCommit(cwd, store, theirs, [root], 'hagent: theirs\n'),
  ]);
  const merged = await runGit(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', o, t], { cwd, allowFailure: true });
  if (merged.exitCode !== 0 && merged.exitCode !== 1) {
    throw new HagentError('GIT_FAILED', `git merge-tree failed: ${merged.stderr.trim()}`, { stderr: merged.stderr.trim() });
  }
  const { tree, conflicts } = parseMergeTree(merged.stdout);
  return { tree, clean: merged.exitCode === 0, conflicts: merged.exitCode === 1 ? conflicts : [] };
}
