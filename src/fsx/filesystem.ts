/**
 * The file system fsx writes through: one small interface with exactly the calls fsx makes, its
 * implementation on node:fs, and a scope that runs one operation on another implementation
 * (Codex's apply-patch takes its `ExecutorFileSystem` the same way). The scope is an
 * AsyncLocalStorage: a test wraps one apply in it to inject faults (a full disk, a failing fsync,
 * short writes), and nothing outside that call sees them — no global to reset, and concurrent
 * calls keep their own file system. The default costs one store lookup per call.
 * Sync and async calls stay as fsx chose them (the sync ones avoid thread-pool round trips).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as nodeFs from 'node:fs';

/** What fsx reads of an lstat or fstat. */
export type Stat = Pick<
  nodeFs.Stats,
  'isFile' | 'isDirectory' | 'isSymbolicLink' | 'mode' | 'size' | 'ino' | 'dev'
>;

/** What fsx reads of a folder entry. */
export type DirEntry = Pick<nodeFs.Dirent, 'name' | 'isDirectory'>;

/** An open file. `write` may write fewer bytes than asked (as write(2)): fsx loops. */
export interface FileHandle {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  chmod(mode: number): Promise<void>;
  sync(): Promise<void>;
  stat(): Promise<Stat>;
  close(): Promise<void>;
}

/**
 * Every file-system call of fsx. Paths are absolute; errors are node's (`code`, `syscall`,
 * `path`), which `toHagentError` turns into IO_FAILED. `rm` and `rmSync` remove a file and
 * accept a missing one; `mkdir` and `mkdirSync` are recursive and return the first folder they
 * created; `lstatSync` returns undefined for a missing path; `copyFile` takes node's copy flags.
 */
export interface FileSystem {
  lstat(p: string): Promise<Stat>;
  lstatSync(p: string): Stat | undefined;
  readFile(p: string): Promise<Buffer>;
  readFileSync(p: string): Buffer;
  readdir(p: string): Promise<DirEntry[]>;
  open(p: string, flags: number, mode?: number): Promise<FileHandle>;
  openSync(p: string, flags: number, mode?: number): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  rename(from: string, to: string): Promise<void>;
  renameSync(from: string, to: string): void;
  link(existing: string, created: string): Promise<void>;
  rm(p: string): Promise<void>;
  rmSync(p: string): void;
  mkdir(p: string): Promise<string | undefined>;
  mkdirSync(p: string): string | undefined;
  rmdir(p: string): Promise<void>;
  chmod(p: string, mode: number): Promise<void>;
  copyFile(from: string, to: string, flags: number): Promise<void>;
}

const fsp = nodeFs.promises;

/** The real file system (node:fs). */
export const nodeFileSystem: FileSystem = {
  lstat: (p) => fsp.lstat(p),
  lstatSync: (p) => nodeFs.lstatSync(p, { throwIfNoEntry: false }),
  readFile: (p) => fsp.readFile(p),
  readFileSync: (p) => nodeFs.readFileSync(p),
  readdir: (p) => fsp.readdir(p, { withFileTypes: true }),
  open: (p, flags, mode) => fsp.open(p, flags, mode),
  openSync: (p, flags, mode) => nodeFs.openSync(p, flags, mode),
  writeSync: (fd, buffer, offset, length) => nodeFs.writeSync(fd, buffer, offset, length),
  fsyncSync: (fd) => nodeFs.fsyncSync(fd),
  closeSync: (fd) => nodeFs.closeSync(fd),
  rename: (from, to) => fsp.rename(from, to),
  renameSync: (from, to) => nodeFs.renameSync(from, to),
  link: (existing, created) => fsp.link(existing, created),
  rm: (p) => fsp.rm(p, { force: true }),
  rmSync: (p) => nodeFs.rmSync(p, { force: true }),
  mkdir: (p) => fsp.mkdir(p, { recursive: true }),
  mkdirSync: (p) => nodeFs.mkdirSync(p, { recursive: true }),
  rmdir: (p) => fsp.rmdir(p),
  chmod: (p, mode) => fsp.chmod(p, mode),
  copyFile: (from, to, flags) => fsp.copyFile(from, to, flags),
};

const scope = new AsyncLocalStorage<FileSystem>();

/**
 * Runs `fn` with every fsx call inside it (and in the promises it starts) made on `fs`; calls
 * outside keep the real file system. Returns what `fn` returns.
 * @example await withFileSystem(faulty, () => applyPatch(ctx, session, { patchText }))
 */
export function withFileSystem<T>(fs: FileSystem, fn: () => T): T {
  return scope.run(fs, fn);
}

/** The file system of the current scope: the one given to {@link withFileSystem}, else node:fs. */
export function currentFileSystem(): FileSystem {
  return scope.getStore() ?? nodeFileSystem;
}

/**
 * Writes all of `bytes` to an open file, looping over short writes (write(2) may write less than
 * asked: a signal, a quota, a nearly full disk). @throws EIO for a write that makes no progress.
 */
export async function writeAll(handle: FileHandle, bytes: Uint8Array, p: string): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, off, bytes.length - off);
    off += progress(bytesWritten, p);
  }
}

/** {@link writeAll} on a descriptor of {@link FileSystem.openSync}. */
export function writeAllSync(fs: FileSystem, fd: number, bytes: Uint8Array, p: string): void {
  for (let off = 0; off < bytes.length;)
    off += progress(fs.writeSync(fd, bytes, off, bytes.length - off), p);
}

function progress(bytesWritten: number, p: string): number {
  if (bytesWritten > 0) return bytesWritten;
  throw Object.assign(new Error(`EIO: a write made no progress, write '${p}'`), {
    code: 'EIO',
    syscall: 'write',
    path: p,
  });
}
