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
import { writeTreeWithChanges, type PathChange } from './tree.js';
import { lsTree, type TreeChange } from './plumbing.js';

/** Identity of hagent's internal commits (merge scaffolding, land bases): fixed, so equal inputs give equal objects. */
const INTERNAL_IDENT = 'hagent <hagent@localhost> 0 +0000';

/**
 * Writes a commit object whose identity and time are fixed (`hagent <hagent@localhost> 0 +0000`):
 * for hagent's internal commits, which no user reads as authored work. The same tree, parents and
 * message always give the same id. In-process with `store`, else `git hash-object -t commit -w`.
 * @returns its id. @throws HagentError GIT_FAILED.
 */
export async function writeInternalCommit(
  cwd: string,
  store: LooseObjectStore | null,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<string> {
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
export async function mergeTrees(
  cwd: string,
  store: LooseObjectStore | null,
  base: string,
  ours: string,
  theirs: string,
): Promise<TreeMerge> {
  const { merged } = await runMergeTree(cwd, store, base, ours, theirs, ['--name-only']);
  const { tree, conflicts } = parseMergeTree(merged.stdout);
  return { tree, clean: merged.exitCode === 0, conflicts: merged.exitCode === 1 ? conflicts : [] };
}

/** The scaffolding commits over `base` and `git merge-tree --write-tree -z --no-messages` of them. */
async function runMergeTree(
  cwd: string,
  store: LooseObjectStore | null,
  base: string,
  ours: string,
  theirs: string,
  extra: readonly string[],
) {
  const root = await writeInternalCommit(cwd, store, base, [], 'hagent: merge base\n');
  const [o, t] = await Promise.all([
    writeInternalCommit(cwd, store, ours, [root], 'hagent: ours\n'),
    writeInternalCommit(cwd, store, theirs, [root], 'hagent: theirs\n'),
  ]);
  const merged = await runGit(
    ['merge-tree', '--write-tree', '-z', ...extra, '--no-messages', o, t],
    { cwd, allowFailure: true },
  );
  if (merged.exitCode !== 0 && merged.exitCode !== 1) {
    throw new HagentError('GIT_FAILED', `git merge-tree failed: ${merged.stderr.trim()}`, {
      stderr: merged.stderr.trim(),
    });
  }
  return { merged, root, o, t };
}

/** One unmerged index entry of a conflict, as `git merge` writes it (`git ls-files -u`). */
export interface ConflictStage {
  mode: string;
  oid: string;
  /** 1 the merge base's, 2 ours, 3 theirs. */
  stage: number;
  path: string;
}

/** Names written on conflict markers: `<<<<<<< ours`, `||||||| base` (diff3 style), `>>>>>>> theirs`. */
export interface MergeLabels {
  ours: string;
  theirs: string;
  base: string;
}

/** Result of {@link mergeTreesForWorktree}: a {@link TreeMerge} with the index stages of its conflicts. */
export interface WorktreeMerge extends TreeMerge {
  stages: ConflictStage[];
}

/**
 * Parses `git merge-tree --write-tree -z --no-messages` (without `--name-only`): the tree id,
 * then one `<mode> <oid> <stage>\t<path>` record per unmerged entry. Pure.
 */
export function parseMergeTreeStages(out: Buffer): { tree: string; stages: ConflictStage[] } {
  const parts = out.toString('utf8').split('\0');
  const tree = (parts.shift() ?? '').trim();
  const stages: ConflictStage[] = [];
  for (const rec of parts) {
    const m = /^(\d+) ([0-9a-f]+) ([123])\t(.+)$/s.exec(rec);
    if (m) stages.push({ mode: m[1]!, oid: m[2]!, stage: Number(m[3]), path: m[4]! });
  }
  return { tree, stages };
}

/**
 * Rewrites the labels of conflict marker lines in `text`: merge-tree names the sides by the
 * arguments it was given (hagent's scaffolding commits `ours` and `theirs`, the base by its
 * abbreviated id), a reader wants what `git merge` writes. Only a marker line (seven or more
 * of one marker character, a space, then exactly one of those ids, optionally `:path`) changes;
 * CRLF files keep their line ends. Pure.
 */
export function relabelMarkers(
  text: Buffer,
  ids: { ours: string; theirs: string; base: string },
  labels: MergeLabels,
): Buffer {
  const s = text.toString('latin1');
  const out = s.replace(
    /^(<{7,}|\|{7,}|>{7,}) ([0-9a-f]{4,64})(?=[:\r\n]|$)/gm,
    (line, marker: string, id: string) => {
      if (marker[0] === '<' && id === ids.ours) return `${marker} ${labels.ours}`;
      if (marker[0] === '>' && id === ids.theirs) return `${marker} ${labels.theirs}`;
      if (marker[0] === '|' && ids.base.startsWith(id)) return `${marker} ${labels.base}`;
      return line;
    },
  );
  return out === s ? text : Buffer.from(out, 'latin1');
}

/**
 * The merge of {@link mergeTrees} for a worktree that will hold it with its conflicts, as `git
 * merge` would leave them: the unmerged entries git writes for each conflict (`stages`: a
 * rename/modify conflict has all three stages at the new path, as `git ls-files -u` shows after
 * `git merge`), and conflict markers labelled with `labels` instead of internal commit ids.
 * @throws HagentError GIT_FAILED.
 */
export async function mergeTreesForWorktree(
  cwd: string,
  store: LooseObjectStore | null,
  base: string,
  ours: string,
  theirs: string,
  labels: MergeLabels,
): Promise<WorktreeMerge> {
  const { merged, root, o, t } = await runMergeTree(cwd, store, base, ours, theirs, []);
  const parsed = parseMergeTreeStages(merged.stdout);
  const clean = merged.exitCode === 0;
  const conflicts = clean ? [] : [...new Set(parsed.stages.map((e) => e.path))];
  if (clean) return { tree: parsed.tree, clean, conflicts, stages: [] };
  // The conflicted files of the merged tree are blobs with markers: relabel them.
  const changes: PathChange[] = [];
  for (const e of (await lsTree(cwd, parsed.tree, conflicts)).values()) {
    if (e.type !== 'blob' || e.mode === '120000') continue;
    const bytes = (await runGit(['cat-file', 'blob', e.oid], { cwd })).stdout;
    const relabelled = relabelMarkers(bytes, { ours: o, theirs: t, base: root }, labels);
    if (relabelled === bytes) continue;
    // Stored as is (no clean filter): the bytes are the merged blob's, markers relabelled.
    const oid =
      store && e.oid.length === 40
        ? await writeLooseObject(store, 'blob', relabelled)
        : (await runGit(['hash-object', '-w', '--stdin'], { cwd, input: relabelled })).stdout
            .toString('utf8')
            .trim();
    changes.push({ path: e.path, mode: e.mode, oid });
  }
  const tree = changes.length
    ? await writeTreeWithChanges(cwd, parsed.tree, changes, undefined, store)
    : parsed.tree;
  return { tree, clean, conflicts, stages: parsed.stages };
}

/**
 * The paths of `changes` whose new side `treeish` holds already: the same mode and blob, or,
 * for a deletion, no entry. Such a change brings nothing new onto `treeish` (it came from there,
 * or the same edit was made on both sides).
 */
export async function changesHeldBy(
  cwd: string,
  treeish: string,
  changes: readonly TreeChange[],
): Promise<Set<string>> {
  const held = new Set<string>();
  if (changes.length === 0) return held;
  const entries = await lsTree(
    cwd,
    treeish,
    changes.map((c) => c.path),
  );
  for (const c of changes) {
    const e = entries.get(c.path);
    if (c.status === 'D' ? !e : e?.oid === c.newOid && e.mode === c.newMode) held.add(c.path);
  }
  return held;
}
