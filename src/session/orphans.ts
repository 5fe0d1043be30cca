/**
 * Session worktree folders whose repository is gone. Session worktrees live in one folder per
 * repository under a root shared by every repository (`~/.cache/hagent/worktrees/<repo-key>/`,
 * session/where.ts); when a repository is deleted (a clone in a temp folder, a test suite) its
 * folder stays. Each folder names its repository: the `.git` file of each worktree in it
 * (`gitdir: <common dir>/worktrees/<name>`) and the pool's owner file.
 *
 * A repository that is not there may only be unmounted (a removable disk, a network share):
 * its worktrees are then never removed without the human naming them. The rule
 * ({@link mayBeUnmounted}): the path is under a place where systems mount disks (`/mnt`,
 * `/media`, `/run/media`, `/Volumes`, `/net`), under a mount point `/etc/fstab` lists, or the
 * nearest folder of it that exists is an empty one (a mount point with nothing mounted).
 */
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseGitFile } from '../git/index.js';

/** One repository folder of the shared root whose repository is not where it was. */
export interface OrphanFolder {
  /** The folder (`<root>/<repo-key>`): session worktrees and the pool of one repository. */
  path: string;
  /** The git common dir its worktrees name (null: none names one: an empty leftover). */
  repository: string | null;
  /**
   * `gone`: the repository does not exist, and nothing says it may only be unmounted;
   * `unmounted`: it may be on a disk that is not mounted now ({@link mayBeUnmounted}).
   */
  state: 'gone' | 'unmounted';
  /** Session worktrees in it (folder names; `.pool` not counted). */
  worktrees: string[];
  /** Bytes of every file below it (apparent sizes); null when not measured. */
  bytes: number | null;
}

const exists = (p: string): Promise<boolean> =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );

/** The common dir a worktree `.git` file names (`<common>/worktrees/<name>`), or null. */
async function repositoryOf(worktree: string): Promise<string | null> {
  const text = await fs.readFile(path.join(worktree, '.git'), 'utf8').catch(() => null);
  const gitDir = text === null ? null : parseGitFile(worktree, text);
  if (!gitDir || path.basename(path.dirname(gitDir)) !== 'worktrees') return null;
  return path.dirname(path.dirname(gitDir));
}

/** Mount points `/etc/fstab` lists (its second field), other than `/` and swap. */
function fstabMountPoints(): string[] {
  try {
    return readFileSync('/etc/fstab', 'utf8')
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[1] ?? '')
      .filter((p) => p.startsWith('/') && p !== '/');
  } catch {
    return [];
  }
}

/** A repository folder's name under the shared root (session/where.ts `repoKey`). */
const REPO_KEY = /^[A-Za-z0-9_][A-Za-z0-9._-]*-[0-9a-f]{12}$/;

const MOUNT_PLACES = ['/mnt', '/media', '/run/media', '/Volumes', '/net'];

/**
 * Whether the missing path `p` may be on a file system that is not mounted now (rule: module
 * header). False means the repository was deleted or moved.
 */
export async function mayBeUnmounted(p: string): Promise<boolean> {
  const abs = path.resolve(p);
  const under = (dir: string) => abs === dir || abs.startsWith(`${dir}/`);
  if (MOUNT_PLACES.some(under) || fstabMountPoints().some(under)) return true;
  let at = path.dirname(abs);
  while (!(await exists(at)) && at !== path.dirname(at)) at = path.dirname(at);
  if (at === path.dirname(at)) return false;
  const names = await fs.readdir(at).catch(() => null);
  return names !== null && names.length === 0;
}

/** Apparent size in bytes of every file below `dir` (symlinks counted, never followed). */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await folderBytes(p);
    else
      total += await fs.lstat(p).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

/**
 * The repository folders of the shared root `shared` (the parent of every repository's
 * worktree folder) whose repository is not there, with their sizes when `measure`. Reads one
 * `.git` file per folder (the first worktree that has one) and the pool's owner file: cheap
 * enough for session start without `measure`.
 */
export async function orphanFolders(
  shared: string,
  options: { measure?: boolean; skip?: string } = {},
): Promise<OrphanFolder[]> {
  const out: OrphanFolder[] = [];
  const names = await fs.readdir(shared, { withFileTypes: true }).catch(() => []);
  for (const n of names) {
    // Only folders named as hagent names them (repoKey): a configured root may hold others.
    if (!n.isDirectory() || !REPO_KEY.test(n.name)) continue;
    const dir = path.join(shared, n.name);
    if (options.skip && path.resolve(options.skip) === dir) continue;
    const children = (await fs.readdir(dir, { withFileTypes: true }).catch(() => []))
      .filter((c) => c.isDirectory())
      .map((c) => c.name);
    const worktrees = children.filter((c) => !c.startsWith('.'));
    let repository: string | null = null;
    for (const w of worktrees) {
      repository = await repositoryOf(path.join(dir, w));
      if (repository) break;
    }
    if (!repository) {
      const owner = await fs.readFile(path.join(dir, '.pool', '.owner'), 'utf8').catch(() => '');
      repository = owner.trim() || null;
    }
    // A folder naming no repository and holding worktrees is someone's: left alone.
    if (!repository && worktrees.length) continue;
    if (repository && (await exists(path.join(repository, 'HEAD')))) continue;
    out.push({
      path: dir,
      repository,
      state: repository && (await mayBeUnmounted(repository)) ? 'unmounted' : 'gone',
      worktrees,
      bytes: options.measure ? await folderBytes(dir) : null,
    });
  }
  return out;
}

/**
 * Removes the orphan folder `o` found by {@link orphanFolders}, after checking again that it is
 * still a folder (not a symlink) of `shared` whose repository is still not there.
 * @returns whether it was removed.
 */
export async function removeOrphanFolder(shared: string, o: OrphanFolder): Promise<boolean> {
  if (path.dirname(path.resolve(o.path)) !== path.resolve(shared)) return false;
  const st = await fs.lstat(o.path).catch(() => null);
  if (!st?.isDirectory()) return false;
  if (o.repository && (await exists(path.join(o.repository, 'HEAD')))) return false;
  await fs.rm(o.path, { recursive: true, force: true });
  return true;
}

/** A byte count for people: `1.8 GB`, `12 MB`, `640 kB`, `12 B`. Pure. */
export function humanBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** How often session start looks for orphan folders: once a day per shared root. */
const CHECK_EVERY_MS = 24 * 60 * 60 * 1000;

/**
 * The note session start prints when the shared root `shared` holds worktree folders of
 * repositories that are gone: at most once a day (the mtime of `<shared>/.orphans-checked`),
 * and without sizes (reading 1 GB of folders is doctor's and gc's job), so it costs one stat on
 * most starts and a read of one `.git` file per repository folder on the first of the day.
 * @returns the note, or null (nothing found, or checked within the day). Never throws.
 */
export async function orphanNote(shared: string): Promise<string | null> {
  try {
    const stamp = path.join(shared, '.orphans-checked');
    const st = await fs.stat(stamp).catch(() => null);
    if (st && Date.now() - st.mtimeMs < CHECK_EVERY_MS) return null;
    await fs.writeFile(stamp, '');
    const found = await orphanFolders(shared);
    if (!found.length) return null;
    const gone = found.filter((o) => o.state === 'gone').length;
    const count = found.reduce((n, o) => n + o.worktrees.length, 0);
    return `${count} session worktree${count === 1 ? '' : 's'} in ${found.length} folder${found.length === 1 ? '' : 's'} of ${shared} belong${count === 1 ? 's' : ''} to repositories that are not there${gone < found.length ? ` (${found.length - gone} may only be unmounted)` : ''}: see them and their sizes with hagent gc --dry-run, drop them with hagent gc`;
  } catch {
    return null;
  }
}
