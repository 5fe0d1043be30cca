/**
 * Building a new root tree from a commit and a few changed paths without reading or writing an
 * index: only the trees on the changed paths are read (`git cat-file --batch`) and written
 * (`git mktree --batch`), so the cost grows with the patch, not with the repository
 * (the figure "apply on 100,000 files ÷ apply on 1,000 files ≤ 1.2", docs/performance.md).
 */
import { HagentError } from '../errors.js';
import { formatOfOid, hashObject, oidByteLength, type ObjectFormat } from './object-format.js';
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { runGit } from './run.js';
import type { CatFileBatch } from './batch.js';

/** One change: `oid` null removes the path. `mode` is git's octal string (100644, 100755). */
export interface PathChange {
  path: string;
  mode: string;
  oid: string | null;
}

interface Entry {
  mode: string;
  oid: string;
}

/**
 * Parses a raw tree object (`<mode> <name>\0<id bytes>`…, ids of 20 bytes for SHA-1 and 32 for
 * SHA-256) into name → entry. Pure.
 * @throws HagentError INTERNAL when the bytes are not a tree of `format` (a truncated entry),
 *   rather than reading past them.
 */
export function parseRawTree(raw: Buffer, format: ObjectFormat): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  const idLength = oidByteLength(format);
  let i = 0;
  while (i < raw.length) {
    const space = raw.indexOf(0x20, i);
    const nul = space < 0 ? -1 : raw.indexOf(0, space);
    if (nul < 0 || nul + 1 + idLength > raw.length)
      throw new HagentError(
        'INTERNAL',
        `a tree object does not parse as ${format} (entry at byte ${i})`,
        { format },
      );
    const mode = raw.toString('latin1', i, space);
    const name = raw.toString('utf8', space + 1, nul);
    entries.set(name, {
      mode: mode.padStart(6, '0') === '040000' ? '40000' : mode,
      oid: raw.toString('hex', nul + 1, nul + 1 + idLength),
    });
    i = nul + 1 + idLength;
  }
  return entries;
}

/** git's tree entry order: byte order of names, a tree's name compared as if it ended in `/`. Pure. */
function sortKey(name: string, mode: string): Buffer {
  return Buffer.from(mode === '40000' ? `${name}/` : name, 'utf8');
}

/** The raw bytes of a tree object holding `entries`. Pure. */
export function serializeTree(entries: ReadonlyMap<string, Entry>): Buffer {
  const sorted = [...entries].sort(([a, ea], [b, eb]) =>
    Buffer.compare(sortKey(a, ea.mode), sortKey(b, eb.mode)),
  );
  return Buffer.concat(
    sorted.flatMap(([name, e]) => [
      Buffer.from(`${e.mode} ${name}\0`, 'utf8'),
      Buffer.from(e.oid, 'hex'),
    ]),
  );
}

/** C-quotes a name the way git prints unusual paths, so `mktree` (without -z) reads it back. Pure. */
export function quoteName(name: string): string {
  if (!/["\\\n\t\r\u0000-\u001f\u007f]/.test(name)) return name;
  const map: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '\n': '\\n',
    '\t': '\\t',
    '\r': '\\r',
  };
  let out = '"';
  for (const ch of name) {
    if (map[ch]) out += map[ch];
    else if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)
      out += `\\${ch.charCodeAt(0).toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Trees of one commit by folder ('' is the root): name → entry. */
export type CommitTrees = Map<string, Map<string, Entry>>;

/**
 * The trees at `dirs` of `commit` read from loose objects in-process, or null when one of the
 * objects on the way is not loose (or `store` may not be read): see {@link readTrees}.
 */
function readTreesLoose(
  store: LooseObjectStore,
  commit: string,
  dirs: readonly string[],
): CommitTrees | null {
  const c = readLooseObject(store, commit);
  if (!c || c.type !== 'commit') return null;
  const m = /^tree ([0-9a-f]+)\n/.exec(c.content.toString('latin1', 0, 80));
  if (!m || m[1]!.length !== commit.length) return null;
  const byId = new Map<string, Map<string, Entry> | null>();
  const tree = (oid: string): Map<string, Entry> | null => {
    if (!byId.has(oid)) {
      const o = readLooseObject(store, oid);
      byId.set(oid, o && o.type === 'tree' ? parseRawTree(o.content, store.format) : null);
    }
    return byId.get(oid)!;
  };
  const trees: CommitTrees = new Map();
  for (const d of dirs) {
    let entries = tree(m[1]!);
    if (!entries) return null;
    for (const name of d === '' ? [] : d.split('/')) {
      const e: Entry | undefined = entries.get(name);
      if (!e || e.mode !== '40000') {
        entries = new Map(); // a new folder, or a file where the folder would be: as cat-file's "missing" or non-tree answer
        break;
      }
      entries = tree(e.oid);
      if (!entries) return null;
    }
    trees.set(d, new Map(entries));
  }
  return trees;
}

/** Most bytes of packed objects {@link readTrees} copies into loose ones per read. */
const LOOSEN_MAX_BYTES = 1 << 20;

/**
 * Reads the trees at `dirs` ('' is the root) of `commit`: from loose objects in-process when all
 * of them are loose (with `store`; an apply's head trees on the paths it touches usually are,
 * written by the previous apply), else with one `cat-file --batch`. Missing or non-tree paths
 * map to an empty tree. What git read from a pack (the commit and those trees: an agent's first
 * edit of a path, whose trees are the base commit's) is then written loose into a readable
 * `store` too, the same bytes under the same ids, so the next process reading them (the edit's
 * post-tool hook, the next edit in that folder) skips the spawn; `git gc` drops the copies.
 */
async function readTrees(
  cwd: string,
  commit: string,
  dirs: readonly string[],
  store?: LooseObjectStore | null,
  batch?: CatFileBatch,
): Promise<CommitTrees> {
  const trees: CommitTrees = new Map();
  if (dirs.length === 0) return trees;
  const loose = store ? readTreesLoose(store, commit, dirs) : null;
  if (loose) return loose;
  const loosen = store?.readable === true;
  const names = [
    ...(loosen ? [commit] : []),
    ...dirs.map((d) => (d === '' ? `${commit}^{tree}` : `${commit}:${d}`)),
  ];
  const out = batch
    ? await batch.contents(names)
    : (await runGit(['cat-file', '--batch'], { cwd, input: `${names.join('\n')}\n` })).stdout;
  const copies: { type: 'commit' | 'tree'; body: Buffer }[] = [];
  let pos = 0;
  for (const [i, d] of [...(loosen ? [null] : []), ...dirs].entries()) {
    const eol = out.indexOf(0x0a, pos);
    const header = out.toString('utf8', pos, eol).split(' ');
    pos = eol + 1;
    if (header.length === 3) {
      const size = Number(header[2]);
      const body = out.subarray(pos, pos + size);
      pos += size + 1;
      if (header[1] === 'tree' || (i === 0 && loosen && header[1] === 'commit'))
        copies.push({ type: header[1] as 'commit' | 'tree', body });
      if (d !== null)
        trees.set(
          d,
          header[1] === 'tree' ? parseRawTree(body, formatOfOid(header[0]!)) : new Map(),
        );
    } else if (d !== null) {
      trees.set(d, new Map()); // "<name> missing": a new folder
    }
  }
  if (loosen && copies.reduce((n, c) => n + c.body.length, 0) <= LOOSEN_MAX_BYTES)
    // Named by their own bytes: a copy can only ever be the object git read. Best effort.
    await Promise.all(copies.map((c) => writeLooseObject(store!, c.type, c.body))).catch(
      () => undefined,
    );
  return trees;
}

/** The object format of `commit`: from its length when it is a full id, else asked of git. */
async function commitFormat(cwd: string, commit: string): Promise<ObjectFormat> {
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) return formatOfOid(commit);
  return formatOfOid(
    (
      await runGit(['rev-parse', '--verify', '--end-of-options', `${commit}^{commit}`], { cwd })
    ).stdout
      .toString('latin1')
      .trim(),
  );
}

/** Every folder on the way to `paths` ('' included). Pure. */
function foldersOf(paths: readonly string[]): Set<string> {
  const dirs = new Set<string>(['']);
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return dirs;
}

/**
 * The trees of `commit` on the way to `paths`, read as {@link readTrees} says: enough to say what
 * the commit holds at each path ({@link entriesAt}) and to build the next tree
 * ({@link writeTreeWithChanges}) without reading them again.
 * @throws HagentError GIT_FAILED.
 */
export async function readCommitTrees(
  cwd: string,
  commit: string,
  paths: readonly string[],
  store?: LooseObjectStore | null,
  batch?: CatFileBatch,
): Promise<CommitTrees> {
  return readTrees(cwd, commit, [...foldersOf(paths)], store, batch);
}

/**
 * The submodule (gitlink, mode 160000) each of `paths` is or lies inside in `trees`: path → the
 * gitlink's path; paths outside every submodule are absent. `trees` must hold the folders on the
 * way ({@link readCommitTrees}). Pure.
 */
export function submodulesOf(trees: CommitTrees, paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i - 1).join('/');
      if (trees.get(dir)?.get(parts[i - 1]!)?.mode === '160000') {
        out.set(p, parts.slice(0, i).join('/'));
        break;
      }
    }
  }
  return out;
}

/**
 * What `trees` hold at each of `paths` (which must all lie in them), as `git ls-tree -r` would
 * list it: files, symlinks (type blob) and submodules (type commit); a folder or nothing is
 * absent from the map. Pure.
 */
export function entriesAt(
  trees: CommitTrees,
  paths: readonly string[],
): Map<string, { mode: string; type: string; oid: string; path: string }> {
  const out = new Map<string, { mode: string; type: string; oid: string; path: string }>();
  for (const p of paths) {
    const slash = p.lastIndexOf('/');
    const e = trees.get(slash < 0 ? '' : p.slice(0, slash))?.get(p.slice(slash + 1));
    if (!e || e.mode === '40000') continue;
    out.set(p, {
      mode: e.mode,
      type: e.mode === '160000' ? 'commit' : 'blob',
      oid: e.oid,
      path: p,
    });
  }
  return out;
}

/**
 * Writes the root tree of `commit` with `changes` applied. `mktree --missing` is used because
 * git 2.39's batch mode does not see the subtrees it wrote earlier in the same batch; every id is
 * computed here and checked against git's, and every blob was stored before the call. Folders emptied by the changes
 * disappear; a file may become a folder and back. Tree ids are computed in-process and checked
 * against the ids git reports. `known`: trees of `commit` already read ({@link readCommitTrees});
 * only the folders it lacks are read. With `store` ({@link looseObjectStore}) the trees are
 * written in-process as loose objects instead of through `mktree` (the same bytes: the tree
 * format is checked against git's in test/unit/git).
 * @returns the new root tree id. @throws HagentError GIT_FAILED (or INTERNAL when git's ids differ).
 */
export async function writeTreeWithChanges(
  cwd: string,
  commit: string,
  changes: readonly PathChange[],
  known?: CommitTrees,
  store?: LooseObjectStore | null,
  batch?: CatFileBatch,
): Promise<string> {
  const format = await commitFormat(cwd, commit);
  const dirs = foldersOf(changes.map((c) => c.path));
  const depth = (d: string) => (d === '' ? 0 : d.split('/').length);
  const ordered = [...dirs].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  const trees = await readTrees(
    cwd,
    commit,
    ordered.filter((d) => !known?.has(d)),
    store,
    batch,
  );
  for (const d of ordered) if (!trees.has(d)) trees.set(d, new Map(known!.get(d)!)); // copies: the caller's stay as read
  for (const c of changes) {
    const slash = c.path.lastIndexOf('/');
    const dir = slash < 0 ? '' : c.path.slice(0, slash);
    const name = c.path.slice(slash + 1);
    if (c.oid === null) trees.get(dir)!.delete(name);
    else trees.get(dir)!.set(name, { mode: c.mode, oid: c.oid });
  }
  // Deepest folders first: each new subtree id goes into its parent.
  const written: { dir: string; raw: Buffer; oid: string; entries: Map<string, Entry> }[] = [];
  let rootId = '';
  for (const dir of ordered) {
    const entries = trees.get(dir)!;
    const raw = serializeTree(entries);
    const oid = hashObject('tree', raw, format);
    if (dir === '') rootId = oid;
    else {
      const slash = dir.lastIndexOf('/');
      const parent = trees.get(slash < 0 ? '' : dir.slice(0, slash))!;
      const name = dir.slice(slash + 1);
      // An emptied folder disappears, unless a file took its name in the same change.
      if (entries.size === 0) {
        if (parent.get(name)?.mode === '40000') parent.delete(name);
      } else parent.set(name, { mode: '40000', oid });
    }
    if (entries.size > 0 || dir === '') written.push({ dir, raw, oid, entries });
  }
  if (store) {
    await Promise.all(written.map((t) => writeLooseObject(store, 'tree', t.raw)));
    return rootId;
  }
  const input = written
    .map((t) =>
      [...t.entries]
        .map(
          ([name, e]) =>
            `${e.mode === '40000' ? '040000' : e.mode} ${e.mode === '40000' ? 'tree' : e.mode === '160000' ? 'commit' : 'blob'} ${e.oid}\t${quoteName(name)}\n`,
        )
        .join(''),
    )
    .join('\n');
  const out = (
    await runGit(['mktree', '--missing', '--batch'], { cwd, input: `${input}\n` })
  ).stdout
    .toString('utf8')
    .trim()
    .split('\n');
  written.forEach((t, i) => {
    if (out[i] !== t.oid)
      throw new HagentError(
        'INTERNAL',
        `tree ${t.dir || '(root)'}: git wrote ${out[i]}, hagent computed ${t.oid}`,
      );
  });
  return rootId;
}
