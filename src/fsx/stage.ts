/**
 * The write half of a transaction over worktree files (docs/architecture.md):
 * stage every new file as a temp file beside its target (written, fsynced), then publish with
 * renames (each preceded by a compare-and-swap check of the target's bytes), then fsync the
 * folders. Temp names are `.<name>.hagent-<txid>.tmp`, so they can be told apart from the user's
 * files and from writes of other processes by name alone.
 */
import { constants as fsConstants } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { CREATE_NOFOLLOW, withAnchors, type FolderAnchors } from './anchor.js';
import { currentFileSystem, writeAll } from './filesystem.js';
import { assertNoSymlink } from './index.js';

/** The file system of the current scope (filesystem.ts): node:fs unless a caller gave another. */
const fsys = currentFileSystem;

/** One target of a transaction. `bytes` null deletes it; `mode` is 0o644 or 0o755. */
export interface TargetWrite {
  rel: string;
  bytes: Uint8Array | null;
  mode: number;
  /** The bytes the target must still hold when it is replaced (null: it must be absent). */
  expected: Uint8Array | null;
  /** Mode of `expected` (restored with it). */
  expectedMode: number;
}

/** A staged target: its temp file (absolute) when it has new bytes. */
export interface Staged extends TargetWrite {
  tmp: string | null;
}

/** The temp file name hagent uses for `rel` in transaction `txid`, in folder `dir` (default: rel's own). Pure. */
export function tempNameFor(
  rel: string,
  txid: string,
  dir: string = path.posix.dirname(rel),
): string {
  const name = `.${path.posix.basename(rel)}.hagent-${txid}.tmp`;
  return dir === '.' ? name : `${dir}/${name}`;
}

/** Where publish keeps target `index`'s old file until it is verified (recovery removes it by this name). Pure. */
export function backupNameFor(rel: string, txid: string, index: number): string {
  return tempNameFor(rel, `${txid}-bak-${index}`);
}

/** True when `name` (a file name, not a path) is a hagent temp file. Pure. */
export function isTempName(name: string): boolean {
  return /^\..+\.hagent-[0-9a-z-]+\.tmp$/.test(name);
}

/**
 * fsyncs each path (files or folders), all at once: one journal commit of the file system
 * usually serves them all. A folder the file system refuses to fsync is passed over (its renames
 * are still atomic). @throws the error of a file that cannot be opened or synced.
 */
export async function fsyncPaths(paths: readonly string[]): Promise<void> {
  await Promise.all(
    paths.map(async (p) => {
      const handle = await fsys().open(p, fsConstants.O_RDONLY);
      try {
        await handle.sync();
      } catch (e) {
        if (!(await handle.stat()).isDirectory()) throw e;
      } finally {
        await handle.close();
      }
    }),
  );
}

/** fsyncs a folder after renames in it; never throws (some file systems refuse). */
async function fsyncFolder(p: string): Promise<void> {
  await fsyncPaths([p]).catch(() => undefined);
}

async function sameBytes(abs: string, expected: Uint8Array | null): Promise<boolean> {
  try {
    const fs = fsys();
    const st = await fs.lstat(abs);
    if (!st.isFile()) return false;
    if (expected === null) return false;
    if (st.size !== expected.length) return false;
    return Buffer.from(expected).equals(await fs.readFile(abs));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return expected === null;
    throw e;
  }
}

/**
 * The folder a target's temp file goes in: its own folder when it exists, else the nearest
 * existing ancestor (a patch may turn a file into a folder; that folder exists only after the
 * deletes are published). Renames stay within one filesystem: the worktree. Synchronous lstats,
 * as in assertNoSymlink.
 */
function stagingDir(root: string, rel: string): string {
  let dir = path.posix.dirname(rel);
  while (dir !== '.' && dir !== '') {
    let st;
    try {
      st = fsys().lstatSync(path.join(root, dir));
    } catch {
      st = undefined; // ENOTDIR: a file on the way; go up
    }
    if (st?.isDirectory()) return dir;
    dir = path.posix.dirname(dir);
  }
  return '.';
}

/**
 * Writes each new file's bytes to its temp file (exclusive create, given mode, fsync unless
 * `options.fsync` is false: the caller then fsyncs the temp files itself, {@link fsyncPaths},
 * before publishing) in the target's folder or its nearest existing ancestor. Nothing the user
 * sees changes yet.
 * `beforeFirstWrite` receives the temp names (relative; null for deletes) before any file is
 * created, so the caller can record them durably (the intent record).
 * @returns the staged entries (and an empty list of created folders, filled by publish).
 * @throws the I/O error after removing what it staged; HagentError PATH_DENIED for a symlink.
 */
export async function stageWrites(
  root: string,
  writes: readonly TargetWrite[],
  txid: string,
  beforeFirstWrite?: (tmps: (string | null)[]) => Promise<void>,
  options: { fsync?: boolean } = {},
): Promise<{ staged: Staged[]; createdDirs: string[] }> {
  const staged: Staged[] = [];
  const createdDirs: string[] = [];
  const tmps: (string | null)[] = [];
  for (const w of writes) {
    await assertNoSymlink(root, w.rel);
    // The index keeps two new files with one name (a/x.ts, b/x.ts) apart when both stage in a
    // shared ancestor folder.
    tmps.push(
      w.bytes === null
        ? null
        : tempNameFor(w.rel, `${txid}-${tmps.length}`, stagingDir(root, w.rel)),
    );
  }
  await beforeFirstWrite?.(tmps);
  // Each temp file is created inside its folder as opened by descriptor (anchor.ts): a folder
  // swapped for a symlink meanwhile is never followed, so no byte lands outside the worktree.
  return withAnchors(root, async (anchors) => {
    // The temp files are written at once: creating a file is the slow part (an inode, ~1.4 ms
    // each on the bench machine), and the file system overlaps creations in different folders.
    const slots: (Staged | undefined)[] = new Array(writes.length);
    const results = await Promise.allSettled(
      writes.map(async (w, i) => {
        if (w.bytes === null) {
          slots[i] = { ...w, tmp: null };
          return;
        }
        const tmp = path.join(root, tmps[i]!);
        const handle = await fsys().open(anchors.at(tmps[i]!), CREATE_NOFOLLOW, w.mode);
        slots[i] = { ...w, tmp };
        try {
          await writeAll(handle, w.bytes, tmp);
          await handle.chmod(w.mode);
          if (options.fsync ?? true) await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
    for (const s of slots) if (s) staged.push(s);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      // A folder moved out of the worktree (not swapped: moved, descriptor and all) meanwhile.
      anchors.verify();
    } catch (error) {
      await removeTemps(root, anchors, staged);
      await discardStaged(staged, createdDirs);
      throw error;
    }
    return { staged, createdDirs };
  });
}

/** Removes staged temp files through their opened folders (wherever those are now). Never throws. */
async function removeTemps(
  root: string,
  anchors: FolderAnchors,
  staged: readonly Staged[],
): Promise<void> {
  for (const s of staged)
    if (s.tmp)
      await Promise.resolve()
        .then(() => fsys().rm(anchors.at(relOf(root, s.tmp!))))
        .catch(() => undefined);
}

/** `abs` relative to `root`, `/`-separated. Pure. */
function relOf(root: string, abs: string): string {
  return path.relative(root, abs).split(path.sep).join('/');
}

/** Removes staged temp files and the folders staging created (when empty). Never throws. */
export async function discardStaged(
  staged: readonly Staged[],
  createdDirs: readonly string[],
): Promise<void> {
  const fs = fsys();
  for (const s of staged) if (s.tmp) await fs.rm(s.tmp).catch(() => undefined);
  for (const d of [...createdDirs].reverse()) await removeEmptyTree(d);
}

async function removeEmptyTree(dir: string): Promise<void> {
  const fs = fsys();
  const entries = await fs.readdir(dir).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await removeEmptyTree(path.join(dir, e.name));
  await fs.rmdir(dir).catch(() => undefined);
}

async function removeEmptyParents(anchors: FolderAnchors, rel: string): Promise<void> {
  let dir = path.posix.dirname(rel);
  while (dir && dir !== '.') {
    try {
      await anchors.rmdir(dir);
    } catch {
      break;
    }
    dir = path.posix.dirname(dir);
  }
}

/** EXTERNAL_EDIT for a target another process wrote at the moment hagent replaced it. */
function writtenMeanwhile(rel: string, extra: Record<string, unknown> = {}): HagentError {
  return new HagentError(
    'EXTERNAL_EDIT',
    `${rel} was written by another process at the moment hagent replaced it`,
    { path: rel, ...extra },
    'its bytes were kept and nothing of the patch remains; apply again when the other writer is done',
  );
}

async function sameInode(a: string, b: string): Promise<boolean> {
  const fs = fsys();
  const [x, y] = await Promise.all([fs.lstat(a).catch(() => null), fs.lstat(b).catch(() => null)]);
  return x !== null && y !== null && x.ino === y.ino && x.dev === y.dev;
}

const codeOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;

/**
 * Moves `aside` back to `abs` without replacing anything there (link, then unlink).
 * @returns false when `abs` was taken meanwhile (both files are then kept).
 */
async function putBack(aside: string, abs: string): Promise<boolean> {
  const fs = fsys();
  try {
    await fs.link(aside, abs);
  } catch (e) {
    if (codeOf(e) === 'EEXIST') return false;
    throw e;
  }
  await fs.rm(aside);
  return true;
}

/**
 * Replaces the file at `abs` (which must hold `want`; null: must be absent) by the file `tmp`
 * (null: removes it), leaving no instant in which another process's write can be overwritten:
 * the current file is renamed aside (whatever is at `abs` in that instant moves), the new one is
 * hard-linked in (a link never replaces a file), and only then is the file aside checked for
 * `want`. A write through a descriptor opened earlier lands in the file aside: it is put back
 * when it lands before that check; one landing after it is lost with the old file, as with any
 * rename-based save. `abs` is absent for the instant between the rename and the link.
 * @returns 'done'; 'changed' when `abs` did not hold `want` (it is put back as it was, nothing of
 *   `tmp` stays); 'taken' when another process created `abs` in between (its file is kept).
 * @throws the I/O error of a call that failed for another reason, once the old file is back at
 *   `abs` (or, if that fails too, still at `aside`, where recovery looks for it).
 */
export async function replaceIfHolds(
  abs: string,
  aside: string,
  want: Uint8Array | null,
  tmp: string | null,
): Promise<'done' | 'changed' | 'taken'> {
  const fs = fsys();
  if (want !== null) {
    try {
      await fs.rename(abs, aside);
    } catch (e) {
      if (codeOf(e) === 'ENOENT') return 'changed'; // it vanished: someone deleted it
      throw e;
    }
  }
  let linked = false;
  try {
    if (tmp !== null) {
      try {
        await fs.link(tmp, abs);
        linked = true;
      } catch (e) {
        if (codeOf(e) !== 'EEXIST') throw e;
        // Another process created the path after the old file moved aside: theirs stays. The
        // file aside holds `want` unless it was written too; only then is it kept.
        if (want !== null && (await sameBytes(aside, want))) await fs.rm(aside);
        return 'taken';
      }
    }
    if (want !== null && !(await sameBytes(aside, want))) {
      // Written between the caller's check and the move aside (or through an open descriptor):
      // the new file goes (if it is still the one linked in) and theirs comes back.
      if (tmp !== null) {
        if (!(await sameInode(abs, tmp))) return 'taken'; // replaced again meanwhile: both kept
        await fs.rm(abs);
        linked = false;
      }
      if (!(await putBack(aside, abs))) return 'taken';
      return 'changed';
    }
    if (want !== null) await fs.rm(aside);
    return 'done';
  } catch (e) {
    // A call failed half way (an I/O error): the old file goes back in place of the new one,
    // so the caller finds the target as it was and nothing of `tmp` at `abs`.
    if (want !== null)
      await (linked ? fs.rename(aside, abs) : putBack(aside, abs)).catch(() => undefined);
    throw e;
  }
}

/**
 * Publishes staged entries: deletes first, one by one (so a file may take a deleted folder's
 * name), then the new files, all at once, then fsyncs the folders. Before touching a target it
 * checks that the target still holds `expected` (compare-and-swap on file bytes), then replaces
 * it with
 * {@link replaceIfHolds}, so no outside write is ever overwritten, even one landing in the
 * instant of the replacement.
 * On any failure, every target already published is put back to `expected` — but only if it
 * still holds what hagent wrote — and the remaining temp files are removed.
 * @returns the folders fsynced — or, with `options.fsyncFolders` false, the folders the caller
 *   must fsync ({@link fsyncPaths}) before it reports the publish as done.
 * @throws HagentError EXTERNAL_EDIT naming the path that changed; or the I/O error.
 */
export async function publishStaged(
  root: string,
  staged: readonly Staged[],
  createdDirs: string[],
  txid: string,
  options: { fsyncFolders?: boolean } = {},
): Promise<string[]> {
  const ordered = [
    ...staged.filter((s) => s.bytes === null),
    ...staged.filter((s) => s.bytes !== null),
  ];
  const done: Staged[] = [];
  const fs = fsys();
  // Every call names its file inside the folder as opened by descriptor (anchor.ts), so a
  // folder swapped for a symlink meanwhile is never followed.
  return withAnchors(root, async (anchors) => {
    const publishOne = async (s: Staged): Promise<void> => {
      await assertNoSymlink(root, s.rel);
      // A new file's folders first (a delete's folder exists, else the check below refuses):
      // the check must read the target inside them.
      if (s.tmp !== null) {
        await anchors.mkdirs(path.posix.dirname(s.rel), createdDirs);
      }
      const abs = anchors.at(s.rel);
      if (!(await sameBytes(abs, s.expected))) {
        throw new HagentError(
          'EXTERNAL_EDIT',
          `${s.rel} changed on disk while hagent was applying the patch`,
          { path: s.rel },
          'another process wrote this file; its bytes were kept and nothing of the patch remains; run hagent session status and apply again',
        );
      }
      if (s.tmp !== null) {
        const st = await fs.lstat(abs).catch(() => null);
        if (st?.isDirectory()) await anchors.rmdir(s.rel); // an emptied folder left by a delete above
      }
      // The old file waits under this name until it is checked (recovery knows the name too).
      const aside = anchors.at(backupNameFor(s.rel, txid, staged.indexOf(s)));
      const tmp = s.tmp === null ? null : anchors.at(relOf(root, s.tmp));
      const outcome = await replaceIfHolds(abs, aside, s.expected, tmp);
      if (outcome !== 'done') throw writtenMeanwhile(s.rel);
      // Published from here on: a failure below puts it back too.
      done.push(s);
      if (tmp !== null) await fs.rm(tmp);
      else await removeEmptyParents(anchors, s.rel);
    };
    try {
      // Deletes one by one, then every new file at once: each has a path of its own, and their
      // ~10 calls each overlap in the file system instead of queuing (3 files: ~2 ms less here).
      for (const s of ordered.filter((x) => x.bytes === null)) await publishOne(s);
      const results = await Promise.allSettled(
        ordered.filter((x) => x.bytes !== null).map(publishOne),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      // A folder moved out of the worktree meanwhile: what was published there is taken back.
      anchors.verify();
    } catch (error) {
      await restoreVia(root, anchors, done);
      await removeTemps(root, anchors, staged);
      await discardStaged(staged, createdDirs);
      throw error;
    }
    const dirs = [...new Set(ordered.map((s) => path.dirname(path.join(root, s.rel))))];
    if (options.fsyncFolders ?? true) await Promise.all(dirs.map(fsyncFolder));
    return dirs;
  });
}

/**
 * Puts published targets back to their `expected` bytes, but only where the file still holds
 * what hagent wrote (an outside write is never overwritten; design.md invariant 3), with the
 * same rename-aside and link-in as {@link replaceIfHolds}.
 * @returns the paths left alone because someone else changed them.
 */
export async function restoreIfOurs(
  root: string,
  published: readonly TargetWrite[],
): Promise<string[]> {
  return withAnchors(root, (anchors) => restoreVia(root, anchors, published));
}

/** {@link restoreIfOurs} through folders opened by descriptor (anchor.ts). */
async function restoreVia(
  root: string,
  anchors: FolderAnchors,
  published: readonly TargetWrite[],
): Promise<string[]> {
  const leftAlone: string[] = [];
  const fs = fsys();
  for (const s of [...published].reverse()) {
    const tag = `restore-${process.pid}`;
    let tmp: string | null = null;
    try {
      // The folder of a file to put back may have gone with the file (an emptied folder).
      if (s.expected !== null) await anchors.mkdirs(path.posix.dirname(s.rel));
      const abs = anchors.at(s.rel);
      if (!(await sameBytes(abs, s.bytes))) {
        leftAlone.push(s.rel);
        continue;
      }
      if (s.expected !== null) {
        const tmpRel = tempNameFor(s.rel, tag);
        const handle = await fs.open(anchors.at(tmpRel), CREATE_NOFOLLOW, s.expectedMode);
        tmp = anchors.at(tmpRel);
        try {
          await writeAll(handle, s.expected, path.join(root, tmpRel));
          await handle.chmod(s.expectedMode);
        } finally {
          await handle.close();
        }
      }
      const outcome = await replaceIfHolds(
        abs,
        anchors.at(tempNameFor(s.rel, `${tag}-aside`)),
        s.bytes,
        tmp,
      );
      if (outcome !== 'done') leftAlone.push(s.rel);
      else if (s.expected === null) await removeEmptyParents(anchors, s.rel);
    } catch {
      leftAlone.push(s.rel);
    } finally {
      if (tmp) await fs.rm(tmp).catch(() => undefined);
    }
  }
  return leftAlone;
}
