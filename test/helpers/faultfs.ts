/**
 * A file system that fails on purpose, for fsx's injection scope (src/fsx/filesystem.ts): it
 * passes every call to the real node:fs, records it, and makes the calls its rules name fail
 * with an errno error shaped as node's (`code`, `errno`, `syscall`, `path`), before doing
 * anything: a failed rename renames nothing, a failed fsync syncs nothing, a failed close still
 * releases the descriptor (as close(2) does). `shortWrites` makes every write write at most that
 * many bytes and say so, as write(2) may. `skipSyncs` records fsyncs without making them: a test
 * cannot observe durability, and on a busy disk the fsyncs are most of a run's time. No root, no special mount: the faults of a full disk,
 * a read-only or immutable file, a broken device, a rename across file systems, on demand.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import { nodeFileSystem, type FileHandle, type FileSystem } from '../../src/fsx/index.js';
import { git } from './index.js';

/** One call made through the file system: its 1-based position, the method and the path. */
export interface FsCall {
  n: number;
  op: string;
  path: string;
}

/**
 * Which calls fail, and how. A call fails when it matches `op` (method name; handle methods are
 * `handle.write`, `handle.sync`, `handle.chmod`, `handle.stat`, `handle.close`) and `path`, and
 * its position matches: `at` (the Nth call of all), `from` (every call from the Nth on: a file
 * system that stays broken), `nth` (the Nth matching call), or, with none of them, every match.
 */
export interface FaultRule {
  errno: string;
  op?: RegExp;
  path?: RegExp;
  at?: number;
  from?: number;
  nth?: number;
}

/** Methods that change something on disk (for rules of a file system gone read-only). */
export const MUTATING =
  /^(open|openSync|handle\.(write|chmod|sync)|writeSync|fsyncSync|rename|renameSync|link|rm|rmSync|mkdir|mkdirSync|rmdir|chmod|copyFile)$/;

const DESCRIPTIONS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EIO: 'i/o error',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EXDEV: 'cross-device link not permitted',
};

/** An error as node:fs throws it. */
export function errnoError(code: string, syscall: string, p: string): NodeJS.ErrnoException {
  const errno = (osConstants.errno as Record<string, number>)[code];
  return Object.assign(
    new Error(`${code}: ${DESCRIPTIONS[code] ?? 'injected fault'}, ${syscall} '${p}'`),
    { code, errno: errno === undefined ? undefined : -errno, syscall, path: p },
  );
}

/** The injecting file system. `calls` lists every call, `failed` the ones made to fail. */
export class FaultyFileSystem implements FileSystem {
  readonly calls: FsCall[] = [];
  readonly failed: FsCall[] = [];
  private readonly matches = new Map<FaultRule, number>();
  private readonly fds = new Map<number, string>();

  constructor(
    private readonly rules: readonly FaultRule[] = [],
    private readonly options: { shortWrites?: number; skipSyncs?: boolean } = {},
  ) {}

  /** Records a call; throws the rule's error when one says it fails. */
  private call(op: string, p: string): void {
    const c = { n: this.calls.length + 1, op, path: p };
    this.calls.push(c);
    for (const r of this.rules) {
      if ((r.op && !r.op.test(op)) || (r.path && !r.path.test(p))) continue;
      const k = (this.matches.get(r) ?? 0) + 1;
      this.matches.set(r, k);
      const hit =
        r.at !== undefined
          ? c.n === r.at
          : r.from !== undefined
            ? c.n >= r.from
            : r.nth !== undefined
              ? k === r.nth
              : true;
      if (!hit) continue;
      this.failed.push(c);
      throw errnoError(r.errno, op.replace(/^handle\./, 'f').replace(/Sync$/, ''), p);
    }
  }

  private short(length: number): number {
    return Math.min(length, this.options.shortWrites ?? length);
  }

  private wrap(handle: FileHandle, p: string): FileHandle {
    return {
      write: async (buffer, offset, length) => {
        this.call('handle.write', p);
        return handle.write(buffer, offset, this.short(length));
      },
      chmod: async (mode) => {
        this.call('handle.chmod', p);
        await handle.chmod(mode);
      },
      sync: async () => {
        this.call('handle.sync', p);
        if (!this.options.skipSyncs) await handle.sync();
      },
      stat: async () => {
        this.call('handle.stat', p);
        return handle.stat();
      },
      close: async () => {
        try {
          this.call('handle.close', p);
        } finally {
          await handle.close();
        }
      },
    };
  }

  lstat = async (p: string) => (this.call('lstat', p), nodeFileSystem.lstat(p));
  lstatSync = (p: string) => (this.call('lstatSync', p), nodeFileSystem.lstatSync(p));
  readFile = async (p: string) => (this.call('readFile', p), nodeFileSystem.readFile(p));
  readFileSync = (p: string) => (this.call('readFileSync', p), nodeFileSystem.readFileSync(p));
  readdir = async (p: string) => (this.call('readdir', p), nodeFileSystem.readdir(p));
  open = async (p: string, flags: number, mode?: number) => {
    this.call('open', p);
    return this.wrap(await nodeFileSystem.open(p, flags, mode), p);
  };
  openSync = (p: string, flags: number, mode?: number) => {
    this.call('openSync', p);
    const fd = nodeFileSystem.openSync(p, flags, mode);
    this.fds.set(fd, p);
    return fd;
  };
  writeSync = (fd: number, buffer: Uint8Array, offset: number, length: number) => {
    this.call('writeSync', this.fds.get(fd) ?? `fd ${fd}`);
    return nodeFileSystem.writeSync(fd, buffer, offset, this.short(length));
  };
  fsyncSync = (fd: number) => {
    this.call('fsyncSync', this.fds.get(fd) ?? `fd ${fd}`);
    if (!this.options.skipSyncs) nodeFileSystem.fsyncSync(fd);
  };
  closeSync = (fd: number) => {
    const p = this.fds.get(fd) ?? `fd ${fd}`;
    this.fds.delete(fd);
    try {
      this.call('closeSync', p);
    } finally {
      nodeFileSystem.closeSync(fd);
    }
  };
  rename = async (from: string, to: string) => (
    this.call('rename', from),
    nodeFileSystem.rename(from, to)
  );
  renameSync = (from: string, to: string) => (
    this.call('renameSync', from),
    nodeFileSystem.renameSync(from, to)
  );
  link = async (existing: string, created: string) => (
    this.call('link', created),
    nodeFileSystem.link(existing, created)
  );
  rm = async (p: string) => (this.call('rm', p), nodeFileSystem.rm(p));
  rmSync = (p: string) => (this.call('rmSync', p), nodeFileSystem.rmSync(p));
  mkdir = async (p: string) => (this.call('mkdir', p), nodeFileSystem.mkdir(p));
  mkdirSync = (p: string) => (this.call('mkdirSync', p), nodeFileSystem.mkdirSync(p));
  rmdir = async (p: string) => (this.call('rmdir', p), nodeFileSystem.rmdir(p));
  chmod = async (p: string, mode: number) => (this.call('chmod', p), nodeFileSystem.chmod(p, mode));
  copyFile = async (from: string, to: string, flags: number) => (
    this.call('copyFile', to),
    nodeFileSystem.copyFile(from, to, flags)
  );
}

// ---------------------------------------------------------------- what a refusal must keep

/** What a refused command must leave exactly as it was, each part printable for a diff. */
export interface RepoState {
  /** Every entry of the session worktree and of the main checkout: folders, bytes, modes. */
  files: Map<string, string>;
  /** Stage entries of both indexes (`git ls-files -s`: mode, blob, stage, path). */
  index: string;
  /** Every ref with its commit, and each checkout's HEAD. */
  refs: string;
  /** hagent's records below `<git-common-dir>/hagent` (sessions, intent and land records). */
  records: Map<string, string>;
}

const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');

function walk(
  dir: string,
  prefix: string,
  skip: (rel: string) => boolean,
  out: Map<string, string>,
) {
  const visit = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip(r)) continue;
      const p = path.join(abs, name);
      const st = lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.set(`${prefix}${r}`, `link ${readlinkSync(p)}`);
      else if (st.isDirectory()) {
        out.set(`${prefix}${r}/`, `folder ${mode}`);
        visit(p, r);
      } else out.set(`${prefix}${r}`, `file ${mode} ${sha1(readFileSync(p))}`);
    }
  };
  visit(dir, '');
}

/** Reads the state of a repository (`repo`, its main checkout) and one session worktree. */
export function captureState(repo: string, worktree: string): RepoState {
  const files = new Map<string, string>();
  walk(worktree, 'session:', (r) => r === '.git', files);
  walk(repo, 'main:', (r) => r === '.git', files);
  const records = new Map<string, string>();
  const hagentDir = path.join(repo, '.git', 'hagent');
  // The journal, the worktree pool and the kept answer of git's identity (a cache: any command
  // may write it, a refused one too) are not state a command must put back.
  const notState = new Set(['journal.jsonl', 'worktrees', 'identity-cache.json']);
  walk(hagentDir, '', (r) => notState.has(r), records);
  // hagent's own folders (locks/, tx/, land/) are made on first use; only the records count.
  for (const k of [...records.keys()]) if (k.endsWith('/')) records.delete(k);
  const index = [repo, worktree].map((d) => git(d, 'ls-files', '-s')).join('\n--\n');
  // Every ref with its commit, and what each HEAD holds (read from git's files: one spawn less).
  const worktreeGitDir = path.resolve(
    worktree,
    readFileSync(path.join(worktree, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim(),
  );
  const refs = [
    git(repo, 'for-each-ref', '--format=%(refname) %(objectname)'),
    readFileSync(path.join(repo, '.git', 'HEAD'), 'utf8'),
    readFileSync(path.join(worktreeGitDir, 'HEAD'), 'utf8'),
  ].join('\n');
  return { files, index, refs, records };
}

function mapDiff(what: string, a: Map<string, string>, b: Map<string, string>): string | null {
  for (const [k, v] of b) if (a.get(k) !== v) return `${what} ${k}: ${a.get(k) ?? 'absent'} ≠ ${v}`;
  for (const k of a.keys()) if (!b.has(k)) return `${what} ${k}: unexpected (${a.get(k)})`;
  return null;
}

/** The first difference of `now` from `before`, or null when they are the same. */
export function stateDiff(now: RepoState, before: RepoState): string | null {
  return (
    mapDiff('file', now.files, before.files) ??
    mapDiff('record', now.records, before.records) ??
    (now.index !== before.index ? `index:\n${now.index}\n≠ before:\n${before.index}` : null) ??
    (now.refs !== before.refs ? `refs:\n${now.refs}\n≠ before:\n${before.refs}` : null)
  );
}

/**
 * Temp and lock files left anywhere a command writes: the worktree, the main checkout and the
 * git folder (objects aside): hagent's `.tmp` files, git's and hagent's `.lock` files.
 */
export function leftovers(repo: string, worktree: string): string[] {
  const all = new Map<string, string>();
  walk(worktree, 'session:', (r) => r === '.git', all);
  walk(repo, 'main:', (r) => r === '.git/objects', all);
  return [...all.keys()].filter((k) => /\.(tmp|lock)\/?$/.test(k));
}
