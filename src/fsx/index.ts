/**
 * fsx: the only module that writes files. Worktree files go through the staged transaction of
 * stage.ts (temp files beside the targets, renames, folder fsync) after an lstat of every path
 * component; hagent's own JSON records go through {@link writeJsonFile}. Also the reads the
 * planner needs as a snapshot.
 * Owns no policy: callers decide which paths are allowed. Every call goes through the
 * {@link FileSystem} of filesystem.ts, so a test can run one operation on a faulty one.
 */
import { constants as fsConstants, realpathSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { currentFileSystem, writeAllSync } from './filesystem.js';

/** What is on disk at one worktree-relative path, found with lstat (symlinks are not followed). */
export type DiskEntry =
  | { kind: 'file'; bytes: Buffer; executable: boolean }
  | { kind: 'missing'; underFile?: string }
  | { kind: 'directory' }
  | { kind: 'symlink'; component: string }
  | { kind: 'other' };

/**
 * lstat of every component of `rel` under `root`, then the file's bytes.
 * A symlink in any component (including the last) is reported as `symlink` with the component
 * (Rule: patch-language.md §5b). A missing parent makes the path `missing`; a parent that is a
 * file (or anything but a folder) makes it `missing` with `underFile` naming that parent, since
 * nothing can be created at the path until the file is gone.
 * @param root absolute worktree root; @param rel `/`-separated, normalized, relative.
 */
export async function readEntry(root: string, rel: string): Promise<DiskEntry> {
  // A file replaced or deleted between its lstat and its read (an editor saving) is read again.
  for (let attempt = 0; ; attempt++) {
    try {
      return await readEntryOnce(root, rel);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 2) throw e;
    }
  }
}

/** Files up to this size are read synchronously by {@link readEntry}. */
const SYNC_READ_MAX_BYTES = 1024 * 1024;

async function readEntryOnce(root: string, rel: string): Promise<DiskEntry> {
  const fs = currentFileSystem();
  const parts = rel.split('/');
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    // Synchronous, as in assertNoSymlink: each lstat ~20 µs against a thread-pool round trip.
    let st;
    try {
      st = fs.lstatSync(cur);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'missing' };
      throw e;
    }
    if (!st) return { kind: 'missing' };
    if (st.isSymbolicLink()) return { kind: 'symlink', component: parts.slice(0, i + 1).join('/') };
    const last = i === parts.length - 1;
    if (!last) {
      if (!st.isDirectory()) return { kind: 'missing', underFile: parts.slice(0, i + 1).join('/') };
      continue;
    }
    if (st.isDirectory()) return { kind: 'directory' };
    if (!st.isFile()) return { kind: 'other' };
    // A small file is read at once too (four thread-pool round trips otherwise); a large one
    // without holding up the event loop.
    const bytes = st.size <= SYNC_READ_MAX_BYTES ? fs.readFileSync(cur) : await fs.readFile(cur);
    return { kind: 'file', bytes, executable: (st.mode & 0o111) !== 0 };
  }
  return { kind: 'missing' };
}

/**
 * Re-checks that no component of `rel` (other than the missing tail) is a symlink, right before
 * a write. The lstats are synchronous: ~20 µs each against ~0.4 ms for a thread-pool round trip,
 * and they run one after another anyway (10 ms → under 1 ms for a 3-file patch six folders deep).
 * @throws HagentError PATH_DENIED naming the symlinked component.
 */
export async function assertNoSymlink(root: string, rel: string): Promise<void> {
  const fs = currentFileSystem();
  const parts = rel.split('/');
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    try {
      const st = fs.lstatSync(cur);
      if (!st) return;
      if (st.isSymbolicLink()) {
        const component = parts.slice(0, i + 1).join('/');
        throw new HagentError(
          'PATH_DENIED',
          `${rel}: ${component} is a symbolic link`,
          { path: rel, component },
          'hagent never writes through a symlink; edit the file it points to by its real path inside the worktree',
        );
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw e;
    }
  }
}

/** Reads a JSON file; null when it does not exist. */
export async function readJsonFile(file: string): Promise<unknown | null> {
  try {
    return JSON.parse((await currentFileSystem().readFile(file)).toString('utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Writes one of hagent's JSON records (a session, the intent of a transaction) durably and
 * atomically, pretty with a final newline, creating its folder: a temp file beside it
 * (`<name>.<pid>-<random>.tmp`, exclusive create), written, fsynced, renamed over `file`, then
 * the folder fsynced, so after a crash `file` holds the old record or the new one, whole.
 * `mode` is the new file's (default 0644; 0600 for a secret).
 * With `durable: false` both fsyncs are left to the caller ({@link fsyncPaths} on the file and
 * its folder), who can then wait for them together with others: until they are done, a crash of
 * the machine (not of the process) may lose the record.
 * write-file-atomic did the same minus the folder fsync, but its first write in a process took
 * ~15 ms (module set-up, realpath, ownership checks) against ~2 ms here plus the two fsyncs.
 * The calls are synchronous: eight thread-pool round trips cost more than the work, and nothing
 * else runs meanwhile (watcher events wait in the queue, none is lost).
 * @throws the file system's error; the temp file is removed first.
 */
export async function writeJsonFile(
  file: string,
  value: unknown,
  options: { durable?: boolean; mode?: number } = {},
): Promise<void> {
  const fs = currentFileSystem();
  const durable = options.durable ?? true;
  const dir = path.dirname(file);
  fs.mkdirSync(dir);
  const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    const fd = fs.openSync(
      tmp,
      fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
      options.mode ?? 0o644,
    );
    try {
      writeAllSync(fs, fd, Buffer.from(`${JSON.stringify(value, null, 2)}\n`), tmp);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (error) {
    try {
      fs.rmSync(tmp);
    } catch {
      // the error that matters is the first one; a temp file left is removed by recovery
    }
    throw error;
  }
  if (!durable) return;
  try {
    const folder = fs.openSync(dir, fsConstants.O_RDONLY);
    try {
      fs.fsyncSync(folder);
    } finally {
      fs.closeSync(folder);
    }
  } catch {
    // some file systems refuse fsync on folders; the rename is still atomic
  }
}

/** Copies one file (bytes and mode) creating parent folders; never overwrites an existing path. */
export async function copyFileNoClobber(from: string, to: string): Promise<boolean> {
  const fs = currentFileSystem();
  await fs.mkdir(path.dirname(to));
  try {
    await fs.copyFile(from, to, fsConstants.COPYFILE_EXCL);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

export * from './stage.js';
export {
  currentFileSystem,
  nodeFileSystem,
  withFileSystem,
  type DirEntry,
  type FileHandle,
  type FileSystem,
  type Stat,
} from './filesystem.js';

/**
 * `p` with every symlink resolved, or — when it does not exist (yet, or any more) — made absolute
 * as it is: paths compared across worktrees, sandboxes and records must meet whatever the links.
 */
export function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
