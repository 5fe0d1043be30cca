/**
 * fsx: the only module that writes files. Atomic writes (write-file-atomic), an lstat of every
 * path component before any write (design.md: write-file-atomic follows symlinks), directory
 * fsync after renames, and the reads the planner needs as a snapshot.
 * Owns no policy: callers decide which paths are allowed.
 */
import { promises as fs, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { HagentError } from '../errors.js';

/** What is on disk at one worktree-relative path, found with lstat (symlinks are not followed). */
export type DiskEntry =
  | { kind: 'file'; bytes: Buffer; executable: boolean }
  | { kind: 'missing' }
  | { kind: 'directory' }
  | { kind: 'symlink'; component: string }
  | { kind: 'other' };

/**
 * lstat of every component of `rel` under `root`, then the file's bytes.
 * A symlink in any component (including the last) is reported as `symlink` with the component
 * (Rule: patch-language.md §5b). A missing parent makes the path `missing`.
 * @param root absolute worktree root; @param rel `/`-separated, normalized, relative.
 */
export async function readEntry(root: string, rel: string): Promise<DiskEntry> {
  const parts = rel.split('/');
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    let st;
    try {
      st = await fs.lstat(cur);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'missing' };
      throw e;
    }
    if (st.isSymbolicLink()) return { kind: 'symlink', component: parts.slice(0, i + 1).join('/') };
    const last = i === parts.length - 1;
    if (!last) {
      if (!st.isDirectory()) return { kind: 'missing' };
      continue;
    }
    if (st.isDirectory()) return { kind: 'directory' };
    if (!st.isFile()) return { kind: 'other' };
    const bytes = await fs.readFile(cur);
    return { kind: 'file', bytes, executable: (st.mode & 0o111) !== 0 };
  }
  return { kind: 'missing' };
}

/**
 * Re-checks that no component of `rel` (other than the missing tail) is a symlink, right before
 * a write. @throws HagentError PATH_DENIED naming the symlinked component.
 */
export async function assertNoSymlink(root: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    try {
      const st = await fs.lstat(cur);
      if (st.isSymbolicLink()) {
        const component = parts.slice(0, i + 1).join('/');
        throw new HagentError('PATH_DENIED', `${rel}: ${component} is a symbolic link`, { path: rel, component }, 'hagent never writes through a symlink; edit the file it points to by its real path inside the worktree');
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
  }
}

/** One file write of a transaction. `bytes` null deletes the file. `mode` is 0o644 or 0o755. */
export interface FileWrite {
  rel: string;
  bytes: Uint8Array | null;
  mode?: number;
}

/** Prior state of a path, kept in memory so a failed transaction can restore it byte for byte. */
interface Prior {
  rel: string;
  bytes: Buffer | null;
  mode: number;
}

async function readPrior(root: string, rel: string): Promise<Prior> {
  const abs = path.join(root, rel);
  try {
    const st = await fs.lstat(abs);
    if (!st.isFile()) return { rel, bytes: null, mode: 0o644 };
    return { rel, bytes: await fs.readFile(abs), mode: st.mode & 0o777 };
  } catch {
    return { rel, bytes: null, mode: 0o644 };
  }
}

async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await fs.open(dir, fsConstants.O_RDONLY);
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the renames are still atomic.
  } finally {
    await handle?.close();
  }
}

async function applyOne(root: string, w: FileWrite, createdDirs: string[]): Promise<void> {
  const abs = path.join(root, w.rel);
  await assertNoSymlink(root, w.rel);
  if (w.bytes === null) {
    await fs.rm(abs, { force: true });
    await removeEmptyParents(root, w.rel);
    return;
  }
  const dir = path.dirname(abs);
  const made = await fs.mkdir(dir, { recursive: true });
  if (made) createdDirs.push(made);
  await writeFileAtomic(abs, Buffer.from(w.bytes), { mode: w.mode ?? 0o644, fsync: true });
  // write-file-atomic keeps an existing file's mode; set it explicitly so mode changes land.
  if (w.mode !== undefined) await fs.chmod(abs, w.mode);
}

/**
 * Writes every entry all-or-nothing: deletes first (folders left empty are removed, so a file
 * may take a deleted folder's name), then each file atomically (temp + fsync + rename), then the parent directories fsynced. On any failure every path is restored to
 * its prior bytes and mode, and directories the transaction created are removed when empty.
 * @throws the first failure (a HagentError PATH_DENIED for a symlink, or the I/O error).
 */
export async function writeAllOrNothing(root: string, writes: readonly FileWrite[]): Promise<void> {
  const priors = await Promise.all(writes.map((w) => readPrior(root, w.rel)));
  const createdDirs: string[] = [];
  // Deletes first: a patch may replace a file by a folder of the same name (x → x/y).
  const ordered = [...writes.filter((w) => w.bytes === null), ...writes.filter((w) => w.bytes !== null)];
  const done: FileWrite[] = [];
  try {
    for (const w of ordered) {
      await applyOne(root, w, createdDirs);
      done.push(w);
    }
  } catch (error) {
    const written = new Set(done.map((d) => d.rel));
    await restore(root, priors.filter((p) => written.has(p.rel)), createdDirs);
    throw error;
  }
  const dirs = new Set(writes.map((w) => path.dirname(path.join(root, w.rel))));
  await Promise.all([...dirs].map(fsyncDir));
}

async function restore(root: string, priors: readonly Prior[], createdDirs: readonly string[]): Promise<void> {
  for (const p of priors) {
    const abs = path.join(root, p.rel);
    try {
      if (p.bytes === null) {
        const st = await fs.lstat(abs).catch(() => null);
        if (st?.isFile()) await fs.rm(abs, { force: true });
      } else {
        await fs.mkdir(path.dirname(abs), { recursive: true });
        await writeFileAtomic(abs, p.bytes, { mode: p.mode, fsync: true });
        await fs.chmod(abs, p.mode);
      }
    } catch {
      // Keep restoring the others; the caller reports the original failure.
    }
  }
  // Folders the transaction created: remove them, deepest first, if they are empty again.
  for (const top of [...createdDirs].reverse()) {
    await removeEmptyTree(top);
  }
}

/** Removes `dir` and the folders below it that hold no file (fs.mkdir created them all). */
async function removeEmptyTree(dir: string): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await removeEmptyTree(path.join(dir, e.name));
  await fs.rmdir(dir).catch(() => undefined);
}

/** After a delete, removes the folders it left empty (git does not track empty folders). */
async function removeEmptyParents(root: string, rel: string): Promise<void> {
  let dir = path.dirname(rel);
  while (dir && dir !== '.') {
    try {
      await fs.rmdir(path.join(root, dir));
    } catch {
      break;
    }
    dir = path.dirname(dir);
  }
}

/** Reads a JSON file; null when it does not exist. */
export async function readJsonFile(file: string): Promise<unknown | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Writes a JSON file atomically (pretty, final newline), creating its folder. */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, { fsync: true });
}

/** Copies one file (bytes and mode) creating parent folders; never overwrites an existing path. */
export async function copyFileNoClobber(from: string, to: string): Promise<boolean> {
  await fs.mkdir(path.dirname(to), { recursive: true });
  try {
    await fs.copyFile(from, to, fsConstants.COPYFILE_EXCL);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}
