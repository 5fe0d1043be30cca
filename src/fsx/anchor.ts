/**
 * Folders of a worktree held open by descriptor, so that a write lands in the folder hagent
 * checked and never through a symlink another process puts in its place meanwhile. An lstat of
 * each component followed by a write by path leaves a window: between the two, `d/` can be
 * swapped for a symlink to a folder outside the worktree, and the write follows it. Here each
 * folder is opened one component at a time from the worktree root with O_DIRECTORY|O_NOFOLLOW,
 * and its entries are named through the descriptor as `/proc/self/fd/<fd>/<name>`: the kernel
 * resolves that path from the open folder itself (openat semantics, which node lacks), so a
 * symlink swapped in later is never followed, and files are created with O_NOFOLLOW too.
 * A folder moved out of the worktree while it is open is caught by {@link FolderAnchors.verify}
 * (the descriptor's current path, from /proc).
 * Where /proc/self/fd is missing (not Linux), entries are named by path after an lstat of each
 * component: the window stays, as small as the calls allow.
 */
import { constants as fsConstants, existsSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { currentFileSystem } from './filesystem.js';

const PROC_FD = '/proc/self/fd';
/** Whether descriptors can be named as paths here (Linux). Checked once. */
let procFd: boolean | undefined;
const hasProcFd = (): boolean => (procFd ??= process.platform === 'linux' && existsSync(PROC_FD));

/** Flags that create a file and never follow a symlink at its name. */
export const CREATE_NOFOLLOW =
  fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0);

const codeOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;

/** PATH_DENIED for a folder of `rel` that is a symlink (the same refusal as assertNoSymlink). */
function symlinkDenied(rel: string, component: string): HagentError {
  return new HagentError(
    'PATH_DENIED',
    `${rel}: ${component} is a symbolic link`,
    { path: rel, component },
    'hagent never writes through a symlink; edit the file it points to by its real path inside the worktree',
  );
}

/** EXTERNAL_EDIT for a folder that another process moved, replaced or removed during a write. */
function folderMoved(dir: string): HagentError {
  return new HagentError(
    'EXTERNAL_EDIT',
    `${dir} was moved, replaced or removed by another process while hagent wrote into it`,
    { path: dir },
    'nothing of the patch was written outside the worktree and nothing of it remains; apply again when the other process is done',
  );
}

/**
 * The open folders of one worktree for one write. Every path it returns stays valid until
 * {@link close}; callers finish their calls before closing.
 */
export class FolderAnchors {
  /** Worktree-relative folder ('.' for the root) → its descriptor. */
  private readonly fds = new Map<string, number>();
  /** Descriptors of folders removed meanwhile: kept open until close, so no number is reused. */
  private readonly retired: number[] = [];
  /** Every descriptor opened → its folder, to name a path in an error. */
  private readonly names = new Map<number, string>();
  private readonly realRoot: string;

  constructor(private readonly root: string) {
    this.realRoot = hasProcFd() ? realpathSync(root) : root;
  }

  /**
   * The path that names worktree entry `rel` (`/`-separated) inside its folder as opened now,
   * following no symlink on the way.
   * @throws HagentError PATH_DENIED when a folder on the way is a symlink; EXTERNAL_EDIT when
   *   one is missing or not a folder.
   */
  at(rel: string): string {
    if (!hasProcFd()) return this.byPath(rel);
    const dir = path.posix.dirname(rel);
    return `${PROC_FD}/${this.folder(dir, rel)}/${path.posix.basename(rel)}`;
  }

  /**
   * Creates the folders of `relDir` that are missing, one at a time, each inside its opened
   * parent (never through a symlink). The first folder created is added to `created`
   * (absolute) at once, so a caller can remove it whatever fails after.
   * @throws as {@link at}, or the error of mkdir.
   */
  async mkdirs(relDir: string, created: string[] = []): Promise<void> {
    if (relDir === '.' || relDir === '') return;
    const fs = currentFileSystem();
    let first = true;
    const parts = relDir.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const p = hasProcFd() ? this.at(dir) : this.byPath(dir);
      const st = await fs.lstat(p).catch(() => null);
      if (st?.isDirectory()) continue;
      if (st?.isSymbolicLink()) throw symlinkDenied(relDir, dir);
      if ((await fs.mkdir(p)) && first) {
        created.push(path.join(this.root, dir));
        first = false;
      }
    }
  }

  /** Removes the empty folder `relDir` (inside its opened parent). @throws rmdir's error. */
  async rmdir(relDir: string): Promise<void> {
    await currentFileSystem().rmdir(this.at(relDir));
    for (const [dir, fd] of this.fds)
      if (dir === relDir || dir.startsWith(`${relDir}/`)) {
        this.fds.delete(dir);
        this.retired.push(fd);
      }
  }

  /**
   * Checks that every folder opened is still inside the worktree (a folder moved out while open
   * keeps its descriptor). @throws HagentError EXTERNAL_EDIT naming the first that is not.
   */
  verify(): void {
    if (!hasProcFd()) return;
    for (const [dir, fd] of this.fds) {
      let now: string;
      try {
        now = readlinkSync(`${PROC_FD}/${fd}`);
      } catch {
        throw folderMoved(dir);
      }
      const want = dir === '.' ? this.realRoot : path.join(this.realRoot, dir);
      if (now !== want) throw folderMoved(dir);
    }
  }

  /** The path error `e` concerns, as the worktree path it stands for (never a /proc path). */
  named(e: unknown): unknown {
    const err = e as NodeJS.ErrnoException;
    if (typeof err?.path !== 'string' || !err.path.startsWith(`${PROC_FD}/`)) return e;
    const m = /^\/proc\/self\/fd\/(\d+)\/(.*)$/.exec(err.path);
    const dir = m ? this.names.get(Number(m[1])) : undefined;
    if (dir === undefined) return e;
    const logical = path.join(this.root, dir, m![2]!);
    err.message = err.message.split(err.path).join(logical);
    err.path = logical;
    return err;
  }

  /** Closes every descriptor. Never throws. */
  close(): void {
    const fs = currentFileSystem();
    for (const fd of [...this.fds.values(), ...this.retired]) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed: nothing to release
      }
    }
    this.fds.clear();
    this.names.clear();
    this.retired.length = 0;
  }

  /** The descriptor of folder `dir`, opening it (and its parents) if needed. */
  private folder(dir: string, rel: string): number {
    const known = this.fds.get(dir);
    if (known !== undefined) return known;
    const fs = currentFileSystem();
    let fd: number;
    if (dir === '.') {
      fd = fs.openSync(this.root, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    } else {
      const parent = this.folder(path.posix.dirname(dir), rel);
      const p = `${PROC_FD}/${parent}/${path.posix.basename(dir)}`;
      try {
        fd = fs.openSync(
          p,
          fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | (fsConstants.O_NOFOLLOW ?? 0),
        );
      } catch (e) {
        const code = codeOf(e);
        if (code === 'ELOOP' || (code === 'ENOTDIR' && fs.lstatSync(p)?.isSymbolicLink()))
          throw symlinkDenied(rel, dir);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw folderMoved(dir);
        throw e;
      }
    }
    this.fds.set(dir, fd);
    this.names.set(fd, dir);
    return fd;
  }

  /** Without /proc: the path of `rel` after an lstat of each of its folders. */
  private byPath(rel: string): string {
    const fs = currentFileSystem();
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (fs.lstatSync(path.join(this.root, dir))?.isSymbolicLink()) throw symlinkDenied(rel, dir);
    }
    return path.join(this.root, rel);
  }
}

/**
 * Runs `fn` with the open folders of `root`, closing them after (whatever `fn` does) and
 * naming the worktree path, not the descriptor's, in a file-system error it throws.
 */
export async function withAnchors<T>(
  root: string,
  fn: (anchors: FolderAnchors) => Promise<T>,
): Promise<T> {
  const anchors = new FolderAnchors(root);
  try {
    return await fn(anchors);
  } catch (e) {
    throw anchors.named(e);
  } finally {
    anchors.close();
  }
}
