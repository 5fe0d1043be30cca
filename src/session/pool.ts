/**
 * The pool of recycled worktrees (README "Recycled worktrees"): clean worktrees of ended
 * sessions, detached, kept in `<root>/.pool/<stamp>-<hex>` so that session start moves one to
 * the new base — writing only the files changed since, keeping the dependency folders — instead
 * of checking out the whole tree. Session ids never start with `.`, so `.pool` is no session's.
 *
 * Rules: only a worktree whose session has landed (or is empty) and that holds nothing git does
 * not already have enters the pool; a pooled worktree with anything unexpected is never reused,
 * and is removed only after whatever git does not ignore in it is kept in a commit
 * (`refs/hagent/pool-kept/<name>`). Claiming an entry is a rename, so two session starts never
 * take the same one.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  commitTree,
  deleteRef,
  detachHead,
  removeIgnoredFiles,
  statusRecords,
  switchToNewBranch,
  treeOfIndexFile,
  updateRefCas,
  worktreeGitDirSync,
  worktreeRemove,
  type WorktreeAt,
  pointWorktreeAdminAt,
  removeWorktreeAdmin,
} from '../git/index.js';
import { DEFAULT_POLICY, type Policy } from '../policy/index.js';
import { stageWorktree, type StagedWorktree } from './snapshot.js';
import { realOrResolved } from '../fsx/index.js';

/** Ignored folders a pooled worktree keeps by default (with what `.worktreeinclude` names). */
export const DEPENDENCY_FOLDERS: readonly string[] = [
  'node_modules/',
  '.venv/',
  'venv/',
  'target/',
  'vendor/',
];

/** One worktree of the pool. `admin` is its folder in `<common-dir>/worktrees/` (null: git does not know it). */
export interface PoolEntry {
  name: string;
  path: string;
  admin: string | null;
  exists: boolean;
}

/** In `<root>/.pool`: the git common dir the pool belongs to, so that doctor can tell a pool whose repository is gone. */
const OWNER_FILE = '.owner';

/**
 * Pools beside this repository's folder (`<root>/../*​/.pool`) whose repository no longer
 * exists: their worktrees can no longer be checked against a commit, so they are reported for
 * the user to remove, never removed. Only for roots shared by repositories (not `git-dir`).
 */
export async function orphanPools(root: string): Promise<{ pool: string; repository: string }[]> {
  const shared = path.dirname(root);
  const out: { pool: string; repository: string }[] = [];
  for (const name of await fs.readdir(shared).catch(() => [] as string[])) {
    const dir = poolDir(path.join(shared, name));
    const owner = (await readText(path.join(dir, OWNER_FILE)))?.trim();
    if (owner && !(await exists(path.join(owner, 'HEAD'))))
      out.push({ pool: dir, repository: owner });
  }
  return out;
}

/** `<root>/.pool`. */
export function poolDir(root: string): string {
  return path.join(root, '.pool');
}

const real = realOrResolved;

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return null;
  }
}

/** `--git-dir` and `--work-tree` of a pool entry git knows. */
/** Where git runs for `entry`: its folder, with its own git dir named when it has one. */
function at(entry: PoolEntry): WorktreeAt {
  return entry.admin ? { worktree: entry.path, gitDir: entry.admin } : { worktree: entry.path };
}

const exists = (p: string): Promise<boolean> =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );

/**
 * The pool of one repository, oldest first: the folders in `<root>/.pool` and the worktrees git
 * knows (`<common-dir>/worktrees/*​/gitdir`) whose folder is or was there.
 */
export async function listPool(commonDir: string, root: string): Promise<PoolEntry[]> {
  const dir = poolDir(root);
  const realDir = real(dir);
  const byPath = new Map<string, PoolEntry>();
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    if (name === OWNER_FILE) continue;
    const p = path.join(realDir, name);
    byPath.set(p, { name, path: p, admin: null, exists: true });
  }
  const adminRoot = path.join(commonDir, 'worktrees');
  for (const a of await fs.readdir(adminRoot).catch(() => [] as string[])) {
    const gitFile = (await readText(path.join(adminRoot, a, 'gitdir')))?.trim();
    if (!gitFile || path.dirname(path.dirname(gitFile)) !== realDir) continue;
    const p = path.dirname(gitFile);
    const entry = byPath.get(p) ?? { name: path.basename(p), path: p, admin: null, exists: false };
    entry.admin = path.join(adminRoot, a);
    byPath.set(p, entry);
  }
  return [...byPath.values()].sort((x, y) => x.name.localeCompare(y.name));
}

/**
 * Moves a pool entry's folder to `to` and tells git (its admin `gitdir`), as `git worktree move`
 * does, without a process. The rename is the claim: it fails (false) when another process took
 * the entry first.
 */
async function moveEntry(entry: PoolEntry, to: string): Promise<boolean> {
  await fs.mkdir(path.dirname(to), { recursive: true });
  try {
    await fs.rename(entry.path, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const dest = path.join(real(path.dirname(to)), path.basename(to));
  if (entry.admin) await pointWorktreeAdminAt(entry.admin, dest);
  entry.path = dest;
  return true;
}

/** Why a pooled worktree must not be reused, or null when it is exactly what the pool put there. */
async function unexpected(entry: PoolEntry): Promise<string | null> {
  if (!entry.exists) return 'its folder is missing';
  if (!entry.admin) return 'git does not know it as a worktree';
  const linked = worktreeGitDirSync(entry.path);
  if (!linked || real(linked) !== real(entry.admin)) return 'its .git file points elsewhere';
  if (await exists(path.join(entry.admin, 'locked'))) return 'it is locked (git worktree lock)';
  if (await exists(path.join(entry.admin, 'index.lock'))) return 'its index is locked (index.lock)';
  if (await exists(path.join(entry.admin, 'modules'))) return 'it has submodules';
  const head = (await readText(path.join(entry.admin, 'HEAD')))?.trim() ?? '';
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head)) return 'its HEAD is not detached';
  return null;
}

/**
 * Changes git would keep (tracked changes, untracked files it does not ignore) in a pooled
 * worktree, `[]` when clean; asked with its own git dir named, whatever its `.git` file says.
 */
async function uncommitted(entry: PoolEntry, untracked: 'normal' | 'all'): Promise<string[]> {
  const records = await statusRecords(at(entry), { untracked, submodules: true });
  return records.map((rec) => rec.slice(3));
}

/**
 * Every pool entry with what session start would find wrong with it (`problem`, null when it
 * would reuse it) and the commit it is detached at. Changes nothing.
 */
export async function inspectPool(
  commonDir: string,
  root: string,
): Promise<{ entry: PoolEntry; problem: string | null; commit: string | null }[]> {
  const out: { entry: PoolEntry; problem: string | null; commit: string | null }[] = [];
  for (const entry of await listPool(commonDir, root)) {
    let problem = entry.name.startsWith('.')
      ? 'an earlier removal did not finish'
      : await unexpected(entry);
    if (!problem) {
      const dirty = await uncommitted(entry, 'normal');
      if (dirty.length)
        problem = `it has changes git does not ignore (${dirty.slice(0, 3).join(', ')}${dirty.length > 3 ? ', …' : ''})`;
    }
    const commit = entry.admin
      ? ((await readText(path.join(entry.admin, 'HEAD')))?.trim() ?? null)
      : null;
    out.push({ entry, problem, commit });
  }
  return out;
}

/** What session start got from the pool. */
export interface Taken {
  /** Name the worktree had in the pool. */
  name: string;
  /** The commit it was detached at (the ended session's head). */
  from: string;
}

/** A pool entry removed, and the commit that keeps what it held (null: it held nothing git keeps). */
export interface Discarded {
  name: string;
  reason: string;
  kept: string | null;
  removed: boolean;
}

/**
 * Takes the newest usable pooled worktree for a new session: moves it to `worktree`, checks it,
 * and switches it to a new branch `branch` at `base` (git's two-way checkout: only the files that
 * differ between its commit and `base` are written; ignored files stay). Entries found unusable
 * on the way are removed (see {@link discardPoolEntry}) and reported in `discarded`.
 * @returns null when the pool has nothing usable (the caller then checks out afresh).
 * @throws HagentError GIT_FAILED only when keeping a broken entry's bytes failed.
 */
export async function takeFromPool(
  commonDir: string,
  cwd: string,
  root: string,
  worktree: string,
  branch: string,
  base: string,
): Promise<{ taken: Taken | null; discarded: Discarded[] }> {
  const discarded: Discarded[] = [];
  for (const entry of (await listPool(commonDir, root)).reverse()) {
    if (entry.name.startsWith('.')) continue; // being removed (see discardPoolEntry)
    try {
      const taken = await takeEntry(commonDir, cwd, root, entry, worktree, branch, base, discarded);
      if (taken) return { taken, discarded };
    } catch (e) {
      // An unforeseen failure (a file system refusing the rename, …) must not fail the start:
      // the entry goes back beside the pool, and the start checks out afresh.
      if (entry.path === path.join(real(path.dirname(worktree)), path.basename(worktree))) {
        await moveEntry(entry, path.join(poolDir(root), `.discard-${entry.name}`)).catch(
          () => false,
        );
      }
      discarded.push({
        name: entry.name,
        reason: `unexpected failure: ${(e as Error).message}`,
        kept: null,
        removed: false,
      });
    }
  }
  return { taken: null, discarded };
}

/** One entry's turn in {@link takeFromPool}: the entry taken, or null (it was discarded, or another start took it). */
async function takeEntry(
  commonDir: string,
  cwd: string,
  root: string,
  entry: PoolEntry,
  worktree: string,
  branch: string,
  base: string,
  discarded: Discarded[],
): Promise<Taken | null> {
  if (!entry.exists) {
    discarded.push(await discardPoolEntry(commonDir, cwd, root, entry, 'its folder is missing'));
    return null;
  }
  if (!(await moveEntry(entry, worktree))) return null; // another session start took it
  let reason = await unexpected(entry);
  if (!reason) {
    const dirty = await uncommitted(entry, 'normal');
    if (dirty.length)
      reason = `it has changes git does not ignore (${dirty.slice(0, 3).join(', ')}${dirty.length > 3 ? ', …' : ''})`;
  }
  if (!reason) {
    const from = (await readText(path.join(entry.admin!, 'HEAD')))!.trim();
    const refused = await switchToNewBranch(at(entry), branch, base);
    if (refused === null) return { name: entry.name, from };
    reason = `git switch failed: ${refused}`;
    await deleteRef(cwd, `refs/heads/${branch}`, base);
  }
  discarded.push(await discardPoolEntry(commonDir, cwd, root, entry, reason));
  return null;
}

/**
 * Puts an ended session's worktree into the pool: detaches its HEAD (files untouched), removes
 * every ignored file `keep` (gitignore patterns) does not name, moves it to `<root>/.pool/`, then
 * removes the oldest entries past `limit`. The caller has checked that its session landed (or is
 * empty) and that it holds no uncommitted or untracked file git does not ignore.
 * @returns false (nothing changed) when it is locked, has submodules or a locked index.
 * @throws HagentError GIT_FAILED (the caller then removes the worktree as before).
 */
export async function enterPool(
  commonDir: string,
  cwd: string,
  worktree: string,
  root: string,
  limit: number,
  keep: readonly string[],
): Promise<boolean> {
  const admin = worktreeGitDirSync(worktree);
  if (!admin) return false;
  for (const f of ['locked', 'index.lock', 'modules'])
    if (await exists(path.join(admin, f))) return false;
  // Its own git dir named: were the `.git` file to vanish meanwhile, git must not find another
  // repository above the folder (a home folder kept in git) and clean that.
  await detachHead({ worktree, gitDir: admin });
  await removeIgnoredFiles({ worktree, gitDir: admin }, keep);
  const name = `${String(Date.now()).padStart(13, '0')}-${randomBytes(3).toString('hex')}`;
  await moveEntry({ name, path: worktree, admin, exists: true }, path.join(poolDir(root), name));
  await fs
    .writeFile(path.join(poolDir(root), OWNER_FILE), `${real(commonDir)}\n`, { flag: 'wx' })
    .catch(() => undefined);
  await trimPool(commonDir, cwd, root, limit).catch(() => undefined); // doctor trims what is left
  return true;
}

/** Removes the oldest pool entries past `limit` (each as {@link discardPoolEntry} does). */
export async function trimPool(
  commonDir: string,
  cwd: string,
  root: string,
  limit: number,
): Promise<Discarded[]> {
  const entries = await listPool(commonDir, root);
  const out: Discarded[] = [];
  for (const entry of entries.slice(0, Math.max(0, entries.length - limit)))
    out.push(
      await discardPoolEntry(commonDir, cwd, root, entry, `the pool holds at most ${limit}`),
    );
  return out;
}

/**
 * Removes a pool entry without losing a byte: whatever git does not ignore that differs from its
 * commit (or, when git no longer knows the folder, every file git does not ignore) is first
 * committed and kept as `refs/hagent/pool-kept/<name>`; only then is the folder removed. A
 * folder that is gone only has git's record of it removed. An existing entry is first claimed
 * (renamed to `.discard-<name>`), so that a session start cannot take it meanwhile.
 * When keeping fails, nothing is removed (`removed: false`).
 */
export async function discardPoolEntry(
  commonDir: string,
  cwd: string,
  root: string,
  entry: PoolEntry,
  reason: string,
): Promise<Discarded> {
  const name = entry.name.replace(/^\.discard-/, '');
  if (!entry.exists) {
    if (entry.admin) await removeWorktreeAdmin(entry.admin);
    return { name, reason, kept: null, removed: true };
  }
  const claimed = path.join(poolDir(root), `.discard-${name}`);
  if (entry.path !== claimed && !(await moveEntry(entry, claimed)))
    return { name, reason, kept: null, removed: false };
  let kept: string | null;
  try {
    kept = await keepBytes(commonDir, cwd, entry);
  } catch {
    return { name, reason, kept: null, removed: false };
  }
  if (entry.admin) {
    if (!(await worktreeRemove(cwd, entry.path, true))) {
      await fs.rm(entry.path, { recursive: true, force: true });
      await removeWorktreeAdmin(entry.admin);
    }
  } else {
    await fs.rm(entry.path, { recursive: true, force: true });
  }
  return { name, reason, kept, removed: true };
}

/**
 * Commits what a worktree holds that git does not ignore, when it differs from the worktree's
 * commit, with a temporary index (the worktree's own index is left as it is), and keeps the
 * commit as `refs/hagent/pool-kept/<name>`. Null when there is nothing to keep.
 * @throws HagentError GIT_FAILED.
 */
async function keepBytes(commonDir: string, cwd: string, entry: PoolEntry): Promise<string | null> {
  const head = entry.admin ? ((await readText(path.join(entry.admin, 'HEAD')))?.trim() ?? '') : '';
  const known = entry.admin !== null && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head);
  if (known && (await uncommitted(entry, 'all')).length === 0) return null;
  const { commit } = await commitWorktreeBytes(
    commonDir,
    cwd,
    known ? at(entry) : { worktree: entry.path, gitDir: commonDir },
    known ? path.join(entry.admin!, 'index') : null,
    known ? [head] : [],
    `hagent: what a pooled worktree held when it was removed (${entry.name})\n`,
  );
  await updateRefCas(
    cwd,
    `refs/hagent/pool-kept/${entry.name}`,
    commit,
    null,
    'hagent: pooled worktree kept',
  );
  return commit;
}

/**
 * Commits everything a worktree holds that git does not ignore (tracked and untracked files, the
 * files of nested repositories) on `parents`, through a temporary index made from `fromIndex`
 * when given (only changed files are read again), so the worktree's own index is left as it is;
 * what `policy` refuses is left out and never hashed (snapshot.ts). The commit is unreferenced:
 * the caller keeps it under a ref. @returns its id and what was left out.
 * @throws HagentError GIT_FAILED.
 */
export async function commitWorktreeBytes(
  commonDir: string,
  cwd: string,
  where: WorktreeAt,
  fromIndex: string | null,
  parents: readonly string[],
  message: string,
  policy: Policy = DEFAULT_POLICY,
): Promise<{ commit: string } & StagedWorktree> {
  const index = path.join(
    commonDir,
    'hagent',
    `keep-${process.pid}-${Math.random().toString(36).slice(2)}.index`,
  );
  await fs.mkdir(path.dirname(index), { recursive: true });
  try {
    if (fromIndex) await fs.copyFile(fromIndex, index).catch(() => undefined);
    const staged = await stageWorktree(where, policy, { indexFile: index });
    const tree = await treeOfIndexFile(where, index);
    return { commit: await commitTree(cwd, tree, parents, message), ...staged };
  } finally {
    await fs.rm(index, { force: true });
  }
}
