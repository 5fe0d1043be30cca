/**
 * The land record: what a land leaves on disk while it changes the user's checkout and before
 * the target branch moves. A land killed in that window (kill -9, a crash) would leave the
 * checkout holding the landed files, staged, on a branch that did not move; the next land or
 * `hagent doctor` finds the record and puts the checkout back, file by file, where nobody
 * changed it since (design.md invariant 3: nothing another writer made is overwritten).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import {
  blobId,
  formatOfOid,
  storedBlobIdsOf,
  literalPathspec,
  locateWorktreeDirect,
  lsTree,
  readRefPreferDirect,
  runGit,
  type TreeEntry,
} from '../git/index.js';
import { readEntry, readJsonFile, writeJsonFile } from '../fsx/index.js';

const LandRecordSchema = z.object({
  version: z.literal(1),
  session: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  /** Full ref of the target branch, and its commit when the land began. */
  target: z.string(),
  previous: z.string(),
  /** The merged tree the checkout is being brought to. */
  tree: z.string(),
  /** The checkout of the target that the land updates. */
  worktree: z.string(),
  /** Paths the land changes (relative, `/`-separated). */
  files: z.array(z.string()),
});

/** A land record (see the module comment). */
export type LandRecord = z.infer<typeof LandRecordSchema>;

/**
 * `<git-common-dir>/hagent/land/<session>.json`: a folder of its own, as a session may be named
 * `x.land` and `tx/` holds the apply records.
 */
export function landRecordPath(commonDir: string, session: string): string {
  return path.join(commonDir, 'hagent', 'land', `${session}.json`);
}

/**
 * Writes the land record atomically (temp file + rename). Not fsynced: it guards against the
 * land's process dying, which leaves the page cache whole; git does not fsync the files it
 * checks out either, so after a power loss there is nothing this record could put back.
 */
export async function writeLandRecord(commonDir: string, record: LandRecord): Promise<void> {
  await writeJsonFile(landRecordPath(commonDir, record.session), record, { durable: false });
}

/** Removes the land record of a session (missing is fine). */
export async function removeLandRecord(commonDir: string, session: string): Promise<void> {
  await fs.rm(landRecordPath(commonDir, session), { force: true });
}

/** What {@link recoverLand} did. */
export interface LandRecovery {
  /**
   * `restored`: the target had not moved; the checkout's files were put back to it.
   * `kept`: the target had moved (the land got that far, or someone moved it): nothing to undo.
   * `blocked`: an `index.lock` in the checkout; nothing touched, the record stays.
   * `discarded`: the record was unreadable or its checkout is gone; removed.
   */
  action: 'restored' | 'kept' | 'blocked' | 'discarded';
  target: string | null;
  worktree: string | null;
  /** Paths put back to the target's commit. */
  files: string[];
  /** Paths left alone: their content is neither the target's nor the land's (changed since). */
  outside: string[];
  /** The lock file that blocked the recovery (`blocked` only). */
  indexLock?: string;
}

type Side = TreeEntry | undefined;

/**
 * True when `rel` in `worktree` holds `side` (a file or symlink with that blob and mode; for none,
 * nothing, or a folder when `folderOk`: the other side has files under `rel`).
 */
async function diskMatches(
  worktree: string,
  rel: string,
  side: Side,
  folderOk: boolean,
): Promise<boolean> {
  const e = await readEntry(worktree, rel);
  if (!side) return e.kind === 'missing' || (folderOk && e.kind === 'directory');
  if (e.kind === 'symlink' && side.mode === '120000') {
    const link = await fs
      .readlink(path.join(worktree, rel), { encoding: 'buffer' })
      .catch(() => null);
    return link !== null && side.oid === blobId(link, formatOfOid(side.oid));
  }
  if (e.kind !== 'file') return false;
  const mode = e.executable ? '100755' : '100644';
  if (side.mode !== mode) return false;
  // The id git would store for these bytes: a checkout with filter or end-of-line attributes holds another form of the blob.
  return (
    side.oid ===
    (await storedBlobIdsOf(worktree, [{ path: rel, bytes: e.bytes }], formatOfOid(side.oid))).get(
      rel,
    )
  );
}

/** Stage-0 index entries of `paths` in a checkout: path → `<mode> <oid>`. */
async function indexEntries(
  worktree: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const r = await runGit(['ls-files', '-s', '-z', '--', ...paths.map(literalPathspec)], {
    cwd: worktree,
  });
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    const m = /^(\d+) ([0-9a-f]+) 0\t(.*)$/s.exec(rec);
    if (m) out.set(m[3]!, `${m[1]} ${m[2]}`);
  }
  return out;
}

/**
 * Finishes the land record of `session`, if any. The caller holds the session's lock, so the
 * land that wrote the record is dead. When the target still points at the record's `previous`:
 * if the land's read-tree wrote the index (every landed path's entry is the land's), every
 * entry goes back to the target's (`git reset`) and each file that holds the target's version
 * or the land's is written back to the target's; otherwise the index stays as the user had it
 * and only files holding the land's version over the target's entry are written back. Files go
 * through `git checkout-index`; a file the land added is removed, with folders left empty. A
 * path holding anything else keeps its bytes and is reported. An `index.lock` in the
 * checkout (a git killed with the land, or one running now) blocks everything: it is reported
 * and the record kept, for the next run. Never throws for a recovery that cannot be done; git
 * failures while restoring are thrown (HagentError GIT_FAILED) with the record kept.
 * @returns what was done, or null when there was no record.
 */
export async function recoverLand(
  cwd: string,
  commonDir: string,
  session: string,
): Promise<LandRecovery | null> {
  const file = landRecordPath(commonDir, session);
  let raw: unknown;
  try {
    raw = await readJsonFile(file);
  } catch {
    raw = undefined;
  }
  if (raw === null) return null;
  const parsed = LandRecordSchema.safeParse(raw);
  if (!parsed.success) {
    await removeLandRecord(commonDir, session);
    return { action: 'discarded', target: null, worktree: null, files: [], outside: [] };
  }
  const r = parsed.data;
  const base = { target: r.target, worktree: r.worktree };
  const current = await readRefPreferDirect(cwd, commonDir, r.target);
  if (current !== r.previous) {
    await removeLandRecord(commonDir, session);
    return { action: 'kept', ...base, files: [], outside: [] };
  }
  const gitDir =
    locateWorktreeDirect(r.worktree)?.gitDir ??
    (await runGit(['rev-parse', '--path-format=absolute', '--git-dir'], {
      cwd: r.worktree,
      allowFailure: true,
    }).then(
      (g) => (g.exitCode === 0 ? g.stdout.toString('utf8').trim() : null),
      () => null,
    ));
  if (!gitDir) {
    await removeLandRecord(commonDir, session);
    return { action: 'discarded', ...base, files: [], outside: [] };
  }
  const indexLock = path.join(gitDir, 'index.lock');
  if (
    await fs.stat(indexLock).then(
      () => true,
      () => false,
    )
  ) {
    return { action: 'blocked', ...base, files: [], outside: [], indexLock };
  }
  const [before, landed] = await Promise.all([
    lsTree(cwd, r.previous, r.files),
    lsTree(cwd, r.tree, r.files),
  ]);
  const key = (e: TreeEntry | undefined) => (e ? `${e.mode} ${e.oid}` : null);
  const under = (tree: Map<string, TreeEntry>, rel: string) =>
    [...tree.keys()].some((k) => k.startsWith(`${rel}/`));
  // Did the land's read-tree get as far as writing the index? Then every landed path's entry
  // is the land's, and the index before it was the target's on those paths (read-tree -m
  // refuses otherwise). If not, the index is still the user's, and stays as it is.
  const staged = await indexEntries(r.worktree, r.files);
  const committed = r.files.every((rel) => (staged.get(rel) ?? null) === key(landed.get(rel)));
  const restore: string[] = [];
  const outside: string[] = [];
  for (const rel of r.files) {
    const p = before.get(rel);
    const t = landed.get(rel);
    const atTarget = await diskMatches(r.worktree, rel, p, under(before, rel));
    const atLand = !atTarget && (await diskMatches(r.worktree, rel, t, under(landed, rel)));
    if (committed ? atTarget || atLand : atLand && (staged.get(rel) ?? null) === key(p))
      restore.push(rel);
    else if (!atTarget) outside.push(rel);
  }
  // Index entries back to the target's commit (entries it lacks are removed), for every landed
  // path when the land wrote them; a file changed since keeps its bytes either way.
  if (committed)
    await runGit(['reset', '-q', r.previous, '--', ...r.files.map(literalPathspec)], {
      cwd: r.worktree,
    });
  if (restore.length) {
    // …then the files: the land's additions removed (with the folders that held only them), and
    // the target's versions written from the index.
    for (const rel of restore.filter((x) => !before.has(x))) {
      await fs.rm(path.join(r.worktree, rel), { force: true });
      for (let dir = path.posix.dirname(rel); dir !== '.'; dir = path.posix.dirname(dir)) {
        if (
          !(await fs.rmdir(path.join(r.worktree, dir)).then(
            () => true,
            () => false,
          ))
        )
          break;
      }
    }
    const present = restore.filter((rel) => before.has(rel));
    if (present.length)
      await runGit(['checkout-index', '-f', '-q', '--', ...present], { cwd: r.worktree });
  }
  await removeLandRecord(commonDir, session);
  return { action: 'restored', ...base, files: restore, outside };
}
