/**
 * Loose objects written in-process, the way git writes them (gitformat-loose(5); git's
 * object-file.c): a zlib stream of `<type> <size>\0<content>`, named by the SHA-1 of that header
 * and content, at `objects/<2 hex>/<38 hex>`. The file is written under a temporary name in the
 * same folder and hard-linked into place (a link never replaces: an object already there wins,
 * which is correct since equal names mean equal content), then the temporary name is removed.
 * Like git by default (`core.fsync` leaves loose objects out), nothing is fsynced.
 *
 * It saves the ~12 ms spawn of `git hash-object -w` / `git mktree` per apply. Objects are named
 * by the repository's hash (SHA-1 or SHA-256: the store carries the format). It declines — the
 * caller then asks git — whenever git might write the object differently: a shared repository
 * (group-writable objects folder: git would set the group bits). (An
 * object folder moved by GIT_OBJECT_DIRECTORY is ignored, as run.ts drops it for git too.)
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  promises as fs,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { hashObject, isOid, objectFormat, type ObjectFormat } from './object-format.js';

/** An object database hagent may write loose objects into directly. */
export interface LooseObjectStore {
  /** Absolute `objects` folder. */
  objectsDir: string;
  /**
   * Whether loose objects may also be read directly: not when the repository has replace refs
   * (`git replace`), which git's readers honour and a raw read would not.
   */
  readable: boolean;
  /** The repository's object format: the hash that names its objects. */
  format: ObjectFormat;
}

/**
 * The object store of `commonDir` when hagent may write into it directly, else null (write
 * through git). `sampleOid`: any object id of the repository, which must be of its format
 * (`extensions.objectFormat`).
 * Never throws.
 */
export async function looseObjectStore(
  commonDir: string,
  sampleOid: string,
): Promise<LooseObjectStore | null> {
  const format = objectFormat(commonDir);
  if (!isOid(sampleOid, format)) return null;
  const objectsDir = path.join(commonDir, 'objects');
  try {
    const st = await fs.stat(objectsDir);
    // core.sharedRepository makes git create group-writable (setgid) folders and files.
    if (!st.isDirectory() || (st.mode & 0o2020) !== 0) return null;
    const replaced =
      statSync(path.join(commonDir, 'refs', 'replace'), { throwIfNoEntry: false }) !== undefined ||
      (await fs.readFile(path.join(commonDir, 'packed-refs'), 'latin1').catch(() => '')).includes(
        ' refs/replace/',
      );
    return { objectsDir, readable: !replaced, format };
  } catch {
    return null;
  }
}

/** The id git gives an object of `type` with `content` in `format` (hex). Pure. */
export function objectId(
  type: 'blob' | 'tree' | 'commit',
  content: Uint8Array,
  format: ObjectFormat = 'sha1',
): string {
  return hashObject(type, content, format);
}

/**
 * Writes one object into `store` unless it is already there.
 * @param type object type; `content` the exact bytes (a blob's file bytes, a tree's raw entries).
 * @returns its id (hex). @throws the file system's error (ENOSPC, EACCES…); a temporary file is never left behind.
 */
export async function writeLooseObject(
  store: LooseObjectStore,
  type: 'blob' | 'tree' | 'commit',
  content: Uint8Array,
): Promise<string> {
  // Synchronous calls: five small file operations cost less than five thread-pool round trips,
  // and an apply writes a handful of objects (measured: the note's four objects 9 → 3 ms).
  const oid = objectId(type, content, store.format);
  const dir = path.join(store.objectsDir, oid.slice(0, 2));
  const final = path.join(dir, oid.slice(2));
  if (existsSync(final)) return oid;
  const header = Buffer.from(`${type} ${content.length}\0`);
  const body = deflateSync(Buffer.concat([header, content]), { level: 1 }); // git's core.looseCompression default: best speed
  const tmp = path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
  for (let attempt = 1; ; attempt++) {
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(tmp, body, { mode: 0o444, flag: 'wx' });
      break;
    } catch (e) {
      // A write that failed half-way (disk full) must not keep its blocks: the rollback of an
      // apply may need them to put the old files back.
      rmSync(tmp, { force: true });
      // `git prune` (gc) removes empty fan-out folders: make it again and retry, as git does.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw e;
    }
  }
  try {
    linkSync(tmp, final);
  } catch (e) {
    // No hard links on this file system: git renames instead (same content under the same name).
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') renameSync(tmp, final);
  } finally {
    rmSync(tmp, { force: true });
  }
  return oid;
}

/**
 * Reads a loose object (gitformat-loose(5)) without spawning git: the hot path of apply, whose
 * head trees on the touched paths were written loose by the previous apply.
 * @returns its type and content, or null when it is not a loose object here (packed, absent) or
 *   the store may not be read directly: the caller asks git. @throws the file system's error
 *   other than ENOENT, or zlib's for a damaged file.
 */
export function readLooseObject(
  store: LooseObjectStore,
  oid: string,
): { type: string; content: Buffer } | null {
  if (!store.readable || !isOid(oid, store.format)) return null;
  let raw: Buffer;
  try {
    raw = readFileSync(path.join(store.objectsDir, oid.slice(0, 2), oid.slice(2)));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const all = inflateSync(raw);
  const nul = all.indexOf(0);
  const [type = '', size = ''] = all.toString('latin1', 0, nul < 0 ? 0 : nul).split(' ');
  const content = all.subarray(nul + 1);
  if (nul < 0 || String(content.length) !== size) return null; // not what a loose object looks like: git says
  return { type, content };
}
