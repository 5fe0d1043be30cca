/**
 * Updating the index file in-process, in place of `git update-index -z --index-info`, for the hot
 * path of apply. git reads, checks and rewrites the whole index in memory (~180 ms at 100,000
 * entries, 12.7 MB); here the file is streamed twice through one 256 KiB buffer — once to check
 * it and find where the changed paths go, once to copy it into the lock file with the changes
 * spliced in — so the cost is two hash passes, two page-cache copies and one short loop of
 * JavaScript per entry, and the memory touched stays small (on the bench VM first-touched memory
 * costs ~10 µs per 4 KiB page: reading the whole file into one buffer cost more than git did).
 * The result is the index git writes for the same input, byte for byte when no kept entry is racy;
 * whenever the index uses something this file does not handle, the answer is "ask git" and
 * nothing is written. A split index (git's `core.splitIndex`) is updated by rewriting its own
 * small file only (split-index.ts), which keeps the cost flat in the number of entries.
 *
 * Cost (bench/index-file.ts, one call in a fresh process as apply makes it, 3 paths, median):
 * 8 / 22 / 45 ms at 1,000 / 20,000 / 100,000 entries, against 23 / 44 / 176 ms for
 * `git update-index`, when the old trailer was still checked (0.1 / 1.4 / 7 ms of it; it no
 * longer is, as git does not check it).
 *
 * The I/O is synchronous inside the async function: ~100 reads and writes of 256 KiB, each a
 * thread-pool round trip when asynchronous, made the call 1.6× slower at 100,000 entries
 * (measured: 124 against 78 ms). The function blocks the event loop for its duration.
 *
 * Sources of the rules: git's Documentation/gitformat-index.txt (formerly
 * technical/index-format.txt) for the layout, Documentation/technical/racy-git.txt for the
 * smudging of racily clean entries, and git's read-cache.c / cache-tree.c / lockfile.c (2.39) for
 * what `update-index --index-info` does that the documents leave out (named where used).
 */
import { createHash } from 'node:crypto';
import {
  close,
  closeSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { IndexEntryUpdate } from './objects.js';
import {
  AskGit,
  compareBytes as compareNames,
  findShared,
  freshenShared,
  readEntries,
  readEwah,
  readSharedIndex,
  writeEwah,
  entryOf,
  type RawEntry,
} from './split-index.js';
import { oidByteLength, type ObjectFormat } from './object-format.js';

const SIGNATURE = 0x44495243; // "DIRC"
const HEADER_SIZE = 12; // signature, version, entry count: 3 × 32 bits
const OFFSET_MTIME_SEC = 8;
const OFFSET_MODE = 24;
const OFFSET_SIZE = 36;
/** The object id follows the 10 × 32-bit stat and mode fields. */
const OFFSET_OID = 40;

/**
 * The sizes that follow from the object format (gitformat-index.txt: "object name" and the
 * trailing checksum are of the repository's hash): 20 bytes for SHA-1, 32 for SHA-256.
 */
interface Layout {
  format: ObjectFormat;
  /** Object ids, cache-tree ids and the trailer. */
  hashSize: number;
  /** Fixed part of a v2/v3 entry: stat and mode fields, the object id, 16-bit flags. */
  entryFixed: number;
  /** The smallest entry: fixed part, a 1-byte name, 1 NUL. */
  entryMin: number;
  offsetFlags: number;
}

function layoutOf(format: ObjectFormat): Layout {
  const hashSize = oidByteLength(format);
  return {
    format,
    hashSize,
    entryFixed: OFFSET_OID + hashSize + 2,
    entryMin: OFFSET_OID + hashSize + 4,
    offsetFlags: OFFSET_OID + hashSize,
  };
}
const FLAG_EXTENDED = 0x4000;
const FLAG_STAGE = 0x3000;
const NAME_MASK = 0x0fff;
/** Extended flags git knows (skip-worktree 0x4000, intent-to-add 0x2000); any other bit: ask git. */
const EXTENDED_KNOWN = 0x4000 | 0x2000;
const MODE_TYPE_MASK = 0o170000;
const MODE_GITLINK = 0o160000;
/** Bytes read or written per system call; the one buffer of both passes (grows for a long name). */
const CHUNK = 256 * 1024;

/** Entry modes `update-index --index-info` may write here (git's create_ce_mode of the input). */
const MODES: Record<string, number> = {
  '100644': 0o100644,
  '100755': 0o100755,
  '120000': 0o120000,
};

/** One update, ready: the path's bytes (UTF-8) and, for an addition, the mode and raw object id. */
interface Change {
  name: Buffer;
  /** `name` as latin1 text: one character per byte, a set key. */
  key: string;
  mode: number;
  oid: Buffer | null;
  /** File offset of the old entry of this path, or of the entry it goes before. */
  at: number;
  /** End of the old entry (`at` when the path has none). */
  end: number;
}

/** A piece of the new file: a byte range of the old file, or bytes of its own. */
type Segment = { from: number; to: number } | Buffer;

/**
 * Applies `updates` to the index file at `indexPath` as `git update-index -z --index-info` does
 * with the lines `<mode> SP <oid> TAB <path> NUL` (and `0 <zero id> TAB <path> NUL` for a removal,
 * see `updateIndex` in objects.ts), without spawning git.
 *
 * @param indexPath absolute path of the index file (`<git-dir>/index`, or a worktree's).
 * @param updates `{ path, mode, oid }`: `path` relative to the worktree root, '/'-separated,
 *   encoded as UTF-8; `oid` null removes every entry of the path; otherwise the path gets one
 *   stage-0 entry with `mode` ('100644' | '100755' | '120000') and the blob id `oid` (hex, of
 *   `format`'s length) and zeroed stat data (ctime, mtime, dev, ino, uid, gid, size
 *   all 0), like git's add_cacheinfo. One batch: a path given twice, a path git's verify_path
 *   might refuse (judged conservatively), another mode or the null object id asks git.
 * @param format the repository's object format (`extensions.objectFormat`): it sets the size of
 *   every object id in the file and the trailer's hash. An index of another format does not
 *   parse as expected, and so is left to git.
 * @returns true when the index holds the result: written, or left as it was when git would not
 *   write either (only removals of absent paths, and no cache-tree); false when the caller must
 *   run `git update-index` instead, having written nothing and left no lock behind: the index is
 *   missing or not a regular file, `index.lock` exists (or cannot be created), the version is not
 *   2 or 3, a split index whose shared index is missing or that git would re-share
 *   (split-index.ts: a split index is otherwise updated in its own file), a sparse index (`sdir`), an unknown required extension (first
 *   byte not A–Z), an entry with a conflict stage (1–3), a path that would be both a file and a
 *   leading directory after the updates (git would drop entries), or anything in the file that
 *   does not parse as expected. A wrong trailer checksum is not looked at, as git does not.
 * @throws the file system's error for a real I/O failure once the lock is held (reading the
 *   index, writing the lock, renaming it); the lock is removed first.
 *
 * Rules and their sources:
 * - Lock (git's lockfile.c): `<indexPath>.lock` created with O_CREAT|O_EXCL, the whole new file
 *   written to it, closed, renamed over `indexPath`; no fsync (git's core.fsync leaves the index
 *   out by default). It keeps the permission bits of the old index (core.sharedRepository).
 * - Layout (gitformat-index.txt): header "DIRC", version, entry count; entries sorted by name
 *   (bytes, memcmp, the shorter first on a tie) then stage; a v2/v3 entry is 62 bytes + name +
 *   1–8 NULs to a multiple of 8 bytes, +2 bytes of extended flags when its extended flag is set
 *   (v3); the 12-bit name length saturates at 0xFFF (the name then ends at its NUL). Entries not
 *   updated are copied byte for byte; new ones have no extended flags. A v3 index left with no
 *   extended entry is written as v2, as read-cache.c's do_write_index does.
 * - Extensions (gitformat-index.txt): `TREE` (cache-tree) is kept, invalidated along every
 *   updated path as cache-tree.c's do_invalidate_path does: the root and each existing ancestor
 *   directory of the path get entry count -1 and lose their object id, and a subtree at the path
 *   itself is removed; other subtrees are copied byte for byte. `REUC` is kept. `UNTR`, `FSMN`,
 *   `EOIE`, `IEOT` and unknown optional extensions (first byte A–Z) are dropped: they are caches,
 *   and the positional ones would be wrong after an insertion.
 * - Trailer: the format's hash (SHA-1 or SHA-256) of everything before it. The old one is not verified, as git verifies it
 *   only in fsck; an all-zero old trailer (index.skipHash) makes zeros be written.
 * - Racy git (racy-git.txt, read-cache.c's is_racy_timestamp): the new file gets a newer mtime,
 *   so an entry kept from the old file whose mtime second is at or after the old index file's
 *   mtime second gets its size field set to 0 ("smudged"), so that git compares its content
 *   instead of trusting its stat data. Seconds, not nanoseconds: git built without USE_NSEC (the
 *   default build, and the git this was tested with) compares seconds only, and an entry of the
 *   same second as the old file is racy for it. git smudges only those whose file differs from
 *   the index; without the worktree at hand every racy one is smudged, which costs git one
 *   re-hash of each on the next status. Gitlinks are never smudged.
 */
export async function updateIndexFile(
  indexPath: string,
  updates: readonly IndexEntryUpdate[],
  format: ObjectFormat = 'sha1',
): Promise<boolean> {
  const layout = layoutOf(format);
  const changes = prepareChanges(updates, layout);
  if (changes === null) return false;
  if (changes.length === 0) return true;
  const probes = directoryProbes(changes);
  if (probes === null) return false;
  try {
    if (!lstatSync(indexPath).isFile()) return false; // a symbolic link (git locks its target), or stranger
  } catch {
    return false; // missing: git creates it
  }
  const lockPath = `${indexPath}.lock`;
  let lock: number;
  try {
    lock = openSync(lockPath, 'wx', 0o666);
  } catch {
    return false; // EEXIST: someone holds it; anything else: git says what is wrong
  }
  let old = -1;
  let lockClosed = false;
  let renamed = false;
  try {
    try {
      old = openSync(indexPath, 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw e;
    }
    const st = fstatSync(old, { bigint: true });
    if (!st.isFile()) return false;
    const mtimeSec = Number(st.mtimeNs / 1_000_000_000n);
    // A split index has its shared index beside it: without one, the file is not read twice.
    if (
      st.size <= SPLIT_PROBE_MAX &&
      readdirSync(path.dirname(indexPath)).some((f) => f.startsWith('sharedindex.'))
    ) {
      const whole = Buffer.allocUnsafe(Number(st.size));
      for (let done = 0; done < whole.length;) {
        const n = readSync(old, whole, done, whole.length - done, done);
        if (n === 0) return false;
        done += n;
      }
      const link = splitLinkOf(whole, layout);
      if (link !== null) {
        let next: Buffer | 'unchanged';
        try {
          next = updateSplit(
            whole,
            link,
            mtimeSec,
            changes,
            probes,
            path.dirname(indexPath),
            layout,
          );
        } catch (e) {
          if (e instanceof AskGit || !(e as NodeJS.ErrnoException).syscall) return false;
          throw e;
        }
        if (next === 'unchanged') return true;
        for (let done = 0; done < next.length;)
          done += writeSync(lock, next, done, next.length - done);
        fchmodSync(lock, Number(st.mode) & 0o777);
        lockClosed = true;
        closeSync(lock);
        renameSync(lockPath, indexPath);
        renamed = true;
        freshenShared(path.dirname(indexPath), link.hex);
        return true;
      }
    }
    const buffer = Buffer.allocUnsafe(CHUNK);
    let plan: Plan | 'unchanged';
    try {
      plan = scanIndex(old, Number(st.size), mtimeSec, changes, probes, buffer, layout);
    } catch (e) {
      if (e instanceof AskGit || !(e as NodeJS.ErrnoException).syscall) return false; // content, not I/O
      throw e;
    }
    if (plan === 'unchanged') return true;
    writeIndex(old, lock, plan, buffer, layout);
    fchmodSync(lock, Number(st.mode) & 0o777);
    lockClosed = true;
    closeSync(lock);
    renameSync(lockPath, indexPath);
    renamed = true;
    return true;
  } finally {
    // After the rename this descriptor holds the last link to the old file: its close frees the
    // blocks (~7 ms for 12.7 MB here, with online discard), so it is left to the thread pool.
    if (old >= 0) {
      if (renamed) close(old, () => undefined);
      else closeQuietly(old);
    }
    if (!lockClosed) closeQuietly(lock);
    if (!renamed) {
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  }
}

/** Closes `fd`, ignoring errors (cleanup after a failure). */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing to do
  }
}

/** Checks and sorts the updates; null when git must handle them (see {@link updateIndexFile}). */
function prepareChanges(updates: readonly IndexEntryUpdate[], layout: Layout): Change[] | null {
  const hexId = new RegExp(`^[0-9a-fA-F]{${layout.hashSize * 2}}$`);
  const seen = new Set<string>();
  const out: Change[] = [];
  for (const u of updates) {
    let mode = 0;
    let oid: Buffer | null = null;
    if (u.oid !== null) {
      const m = MODES[u.mode];
      if (m === undefined || !hexId.test(u.oid) || /^0+$/.test(u.oid)) return null; // git refuses to write a null id
      mode = m;
      oid = Buffer.from(u.oid, 'hex');
    }
    if (!pathIsPlain(u.path, mode === 0o120000)) return null;
    const name = Buffer.from(u.path, 'utf8');
    const key = name.toString('latin1');
    if (seen.has(key)) return null;
    seen.add(key);
    out.push({ name, key, mode, oid, at: -1, end: -1 });
  }
  return out.sort((a, b) => Buffer.compare(a.name, b.name));
}

/** Code points HFS+ ignores in names (git's utf8.c is_hfs_dotgit). */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Whether git's verify_path surely accepts `path` (read-cache.c; path.c is_ntfs_dotgit; utf8.c
 * is_hfs_dotgit): no empty, `.` or `..` component, no backslash, nothing that may spell `.git` on
 * NTFS or HFS+ (`.git` then spaces, dots or a colon; `git~1`; ignorable code points); for a
 * symlink also nothing that may spell `.gitmodules` (no dot file, no `~`). Stricter than git: a
 * false only sends the update to git.
 */
function pathIsPlain(path: string, symlink: boolean): boolean {
  if (path.length === 0 || path.includes('\0') || path.includes('\\')) return false;
  for (const raw of path.split('/')) {
    if (raw === '' || raw === '.' || raw === '..') return false;
    const c = raw.replace(HFS_IGNORABLE, '').toLowerCase();
    if (/^\.git(?:$|[ .:])/.test(c) || c.startsWith('git~')) return false;
    if (symlink && (c.startsWith('.') || c.includes('~'))) return false;
  }
  return true;
}

/** What the scan must look for so that no path is both a file and a leading directory. */
interface DirectoryProbes {
  /** Leading directories of added paths that no update names: an entry named so clashes. */
  files: Buffer[];
  /** Added paths + '/': an entry kept below one clashes. */
  dirs: Buffer[];
}

/**
 * The probes of the directory/file check (git's check_file_directory_conflict would drop entries
 * then: ask git), sorted; null when the updates clash among themselves.
 */
function directoryProbes(changes: readonly Change[]): DirectoryProbes | null {
  const keys = new Map(changes.map((c) => [c.key, c]));
  const files = new Map<string, Buffer>();
  const dirs: Buffer[] = [];
  for (const c of changes) {
    if (c.oid === null) continue;
    for (let k = c.key.indexOf('/'); k >= 0; k = c.key.indexOf('/', k + 1)) {
      const dir = c.key.slice(0, k);
      const other = keys.get(dir);
      if (other?.oid) return null; // adds both `a` and `a/b`
      if (!other) files.set(dir, c.name.subarray(0, k));
    }
    dirs.push(Buffer.concat([c.name, Buffer.from('/')]));
  }
  const byBytes = (a: Buffer, b: Buffer) => Buffer.compare(a, b);
  return { files: [...files.values()].sort(byBytes), dirs: dirs.sort(byBytes) };
}

/**
 * {@link compareNames} for two names in one buffer, 4 bytes at a time: neighbouring entries share
 * long prefixes (45 bytes on average at 100,000 entries).
 */
function compareNamesIn(
  view: DataView,
  buf: Uint8Array,
  a: number,
  aLength: number,
  b: number,
  bLength: number,
): number {
  const n = aLength < bLength ? aLength : bLength;
  let k = 0;
  for (; k + 4 <= n; k += 4) {
    const x = view.getUint32(a + k);
    const y = view.getUint32(b + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; k < n; k++) {
    const d = buf[a + k]! - buf[b + k]!;
    if (d !== 0) return d;
  }
  return aLength - bLength;
}

/**
 * Sequential reader of the old index through one buffer: `buffer[i]` holds the file's byte
 * `base + i` for i < `fill`.
 */
class Reader {
  base = 0;
  fill = 0;
  view: DataView;
  constructor(
    private readonly fd: number,
    readonly size: number,
    public buffer: Buffer,
  ) {
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  /** File offset after the bytes in the buffer. */
  get end(): number {
    return this.base + this.fill;
  }

  /**
   * Reads until the file's bytes [pos, pos + n) are in the buffer; bytes before `keep` may be
   * dropped (keep <= pos). @throws AskGit past the end of the file.
   */
  need(pos: number, n: number, keep: number): void {
    if (pos + n > this.size) throw new AskGit('truncated');
    if (keep > this.base) {
      const drop = Math.min(keep - this.base, this.fill);
      this.buffer.copy(this.buffer, 0, drop, this.fill);
      this.base += drop;
      this.fill -= drop;
    }
    if (pos + n - this.base > this.buffer.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, pos + n - this.base));
      this.buffer.copy(bigger, 0, 0, this.fill);
      this.buffer = bigger;
      this.view = new DataView(bigger.buffer, bigger.byteOffset, bigger.byteLength);
    }
    while (this.end < pos + n) {
      const from = this.end;
      const want = Math.min(this.buffer.length - this.fill, this.size - from);
      const bytesRead = readSync(this.fd, this.buffer, this.fill, want, from);
      if (bytesRead === 0) throw new AskGit('the index shrank');
      this.fill += bytesRead;
    }
  }

  /** Reads (and hashes) through the file up to `pos`, keeping nothing. */
  skipTo(pos: number): void {
    while (this.end < pos)
      this.need(this.end, Math.min(this.buffer.length, pos - this.end), this.end);
  }
}

/** Everything the write needs, found by the scan. */
interface Plan {
  header: Buffer;
  /** The new file without its trailer, in order. */
  segments: Segment[];
  /** File offsets of the size fields to zero (racy entries), ascending. */
  smudges: Float64Array;
  smudgeCount: number;
  zeroTrailer: boolean;
}

/** Progress of the entry scan, carried from one buffer to the next. */
class EntryScan {
  /** Entries done. */
  done = 0;
  /** File offset of the next entry. */
  pos = HEADER_SIZE;
  /** File offset and length of the previous entry's name (-1: none yet). */
  prevName = -1;
  prevLength = 0;
  /** Next change to place, next file probe, next directory probe. */
  change = 0;
  file = 0;
  dir = 0;
  /** The next directory probe's range began in an earlier batch and runs on. */
  dirOpen = false;
  /** Entries with the extended flag, and those of them a change replaces or removes. */
  extended = 0;
  changedExtended = 0;
  /** File offsets of the old entries a change replaces or removes. */
  readonly changedAt = new Set<number>();
  smudges = new Float64Array(256);
  smudgeCount = 0;
  /** The current batch: buffer index of each entry and of its name, and the name's length. */
  entryAt = new Int32Array(0);
  nameAt = new Int32Array(0);
  nameLength = new Int32Array(0);
  constructor(
    readonly count: number,
    readonly version: number,
    readonly mtimeSec: number,
    readonly entriesLimit: number,
    readonly changes: readonly Change[],
    readonly probes: DirectoryProbes,
    readonly layout: Layout,
  ) {}
}

/**
 * Scans the entries that lie wholly in `buf` (the file's bytes `base`..`base + fill`) as one
 * batch: checks each (stage 0, known flags, a NUL after the name, sorted after the previous one)
 * and notes the racy ones, then places the changes and runs the directory/file probes on the
 * batch by binary search ({@link placeInBatch}), so that the loop over every entry stays short.
 * @returns 0 when every entry is done, else the bytes from `s.pos` the next entry needs at least.
 * @throws AskGit on anything this file does not handle.
 */
function scanEntries(
  s: EntryScan,
  buf: Buffer,
  view: DataView,
  base: number,
  fill: number,
): number {
  const { entryMin, entryFixed, offsetFlags } = s.layout;
  const room = Math.floor(buf.length / entryMin) + 1;
  if (s.entryAt.length < room) {
    s.entryAt = new Int32Array(room);
    s.nameAt = new Int32Array(room);
    s.nameLength = new Int32Array(room);
  }
  const { entryAt, nameAt, nameLength } = s;
  let batch = 0;
  let want = 0;
  let prevName = s.prevName - base;
  let prevLength = s.prevLength;
  let pos = s.pos;
  let done = s.done;
  while (done < s.count) {
    const o = pos - base;
    if (o + entryMin > fill) {
      want = entryMin;
      break;
    }
    const flags = view.getUint16(o + offsetFlags);
    if (flags & FLAG_STAGE) throw new AskGit('conflict stage');
    let n = o + entryFixed; // the name, in buf
    if (flags & FLAG_EXTENDED) {
      if (s.version < 3) throw new AskGit('extended flag in a v2 index');
      if ((view.getUint16(n) & ~EXTENDED_KNOWN) !== 0) throw new AskGit('unknown extended flag');
      n += 2;
      s.extended++;
    }
    let length = flags & NAME_MASK;
    if (length === NAME_MASK) {
      const nul = buf.indexOf(0, n);
      if (nul < 0 || nul >= fill) {
        want = fill - o + CHUNK;
        break;
      }
      length = nul - n;
      if (length < NAME_MASK) throw new AskGit('long name');
    }
    const size = (n - o + length + 8) & ~7;
    if (pos + size > s.entriesLimit) throw new AskGit('entry size');
    if (o + size > fill) {
      want = size;
      break;
    }
    if (buf[n + length] !== 0) throw new AskGit('no NUL after the name'); // the rest of the padding is not read, as git does not
    if (prevName >= 0 && compareNamesIn(view, buf, prevName, prevLength, n, length) >= 0)
      throw new AskGit('entry order');
    if (
      view.getUint32(o + OFFSET_MTIME_SEC) >= s.mtimeSec &&
      (view.getUint32(o + OFFSET_MODE) & MODE_TYPE_MASK) !== MODE_GITLINK
    ) {
      if (s.smudgeCount === s.smudges.length) {
        const more = new Float64Array(s.smudges.length * 2);
        more.set(s.smudges);
        s.smudges = more;
      }
      s.smudges[s.smudgeCount++] = pos + OFFSET_SIZE;
    }
    entryAt[batch] = o;
    nameAt[batch] = n;
    nameLength[batch] = length;
    batch++;
    prevName = n;
    prevLength = length;
    pos += size;
    done++;
  }
  s.prevName = prevName < 0 ? -1 : base + prevName;
  s.prevLength = prevLength;
  s.pos = pos;
  s.done = done;
  if (batch > 0) placeInBatch(s, buf, base, batch);
  return want;
}

/** First entry of the batch whose name is not below `name`: its index, or `batch`. */
function batchLowerBound(s: EntryScan, buf: Buffer, batch: number, name: Buffer): number {
  let lo = 0;
  let hi = batch;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareNames(buf, s.nameAt[mid]!, s.nameLength[mid]!, name, 0, name.length) < 0)
      lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Places the changes that fall in the batch (the file offset of the entry each replaces or goes
 * before) and runs the probes on it: an entry named like a leading directory of an added path, or
 * kept below an added path, is a directory/file clash. Everything before the batch is below the
 * pending changes and probes, so each is found by binary search in the batch alone.
 * @throws AskGit on a clash.
 */
function placeInBatch(s: EntryScan, buf: Buffer, base: number, batch: number): void {
  const { changes } = s;
  const { files, dirs } = s.probes;
  const last = batch - 1;
  const beyond = (name: Buffer) =>
    compareNames(name, 0, name.length, buf, s.nameAt[last]!, s.nameLength[last]!) > 0;
  const named = (j: number, name: Buffer) =>
    j < batch && compareNames(buf, s.nameAt[j]!, s.nameLength[j]!, name, 0, name.length) === 0;
  for (; s.change < changes.length && !beyond(changes[s.change]!.name); s.change++) {
    const c = changes[s.change]!;
    const j = batchLowerBound(s, buf, batch, c.name);
    c.at = c.end = base + s.entryAt[j]!;
    if (named(j, c.name)) {
      const nameOffset = s.nameAt[j]! - s.entryAt[j]!; // the fixed part (62 with SHA-1), +2 with extended flags
      c.end = c.at + ((nameOffset + s.nameLength[j]! + 8) & ~7);
      s.changedAt.add(c.at);
      if (nameOffset > s.layout.entryFixed) s.changedExtended++;
    }
  }
  for (; s.file < files.length && !beyond(files[s.file]!); s.file++) {
    if (named(batchLowerBound(s, buf, batch, files[s.file]!), files[s.file]!))
      throw new AskGit('directory/file clash'); // a kept file where a directory goes
  }
  while (s.dir < dirs.length) {
    const dir = dirs[s.dir]!;
    let j = s.dirOpen ? 0 : batchLowerBound(s, buf, batch, dir);
    for (; j < batch; j++) {
      const under =
        s.nameLength[j]! > dir.length &&
        compareNames(buf, s.nameAt[j]!, dir.length, dir, 0, dir.length) === 0;
      if (!under) break;
      if (!s.changedAt.has(base + s.entryAt[j]!)) throw new AskGit('directory/file clash'); // kept below a new file
    }
    if (j === batch) {
      s.dirOpen = s.dirOpen || batchLowerBound(s, buf, batch, dir) < batch;
      return; // the range may run on into the next batch
    }
    s.dirOpen = false;
    s.dir++;
  }
}

/**
 * Reads the old index once: checks the header, the entries and the extensions;
 * finds where each change goes, the racy entries and the new cache-tree.
 * @returns the plan of the new file, or 'unchanged' when git would not write.
 * @throws AskGit on anything this file does not handle.
 */
function scanIndex(
  fd: number,
  size: number,
  mtimeSec: number,
  changes: Change[],
  probes: DirectoryProbes,
  buffer: Buffer,
  layout: Layout,
): Plan | 'unchanged' {
  const { hashSize } = layout;
  if (size < HEADER_SIZE + hashSize) throw new AskGit('too small');
  const hashEnd = size - hashSize;
  const trailer = Buffer.alloc(hashSize);
  if (readSync(fd, trailer, 0, hashSize, hashEnd) !== hashSize) throw new AskGit('trailer');
  const zeroTrailer = trailer.every((b) => b === 0);
  // The old trailer is not checked, as git does not check it when it reads an index
  // (read-cache.c: verify_index_checksum is off unless asked for; turned off in git 2.13 for
  // speed): a pass of SHA-1 over the whole file, 8 ms at 100,000 entries, for nothing git would
  // refuse. The index written is hashed as always.
  const r = new Reader(fd, size, buffer);

  r.need(0, HEADER_SIZE, 0);
  if (r.buffer.readUInt32BE(0) !== SIGNATURE) throw new AskGit('not an index');
  const version = r.buffer.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new AskGit(`index version ${version}`);
  const s = new EntryScan(
    r.buffer.readUInt32BE(8),
    version,
    mtimeSec,
    hashEnd,
    changes,
    probes,
    layout,
  );
  for (;;) {
    const want = scanEntries(s, r.buffer, r.view, r.base, r.fill);
    if (want === 0) break;
    const n = Math.min(want, size - s.pos);
    if (s.pos + n <= r.end) throw new AskGit('truncated entry'); // the file has no more
    r.need(s.pos, n, s.prevName >= 0 ? s.prevName : s.pos);
  }
  const entriesEnd = s.pos;
  for (let ci = s.change; ci < changes.length; ci++)
    changes[ci]!.at = changes[ci]!.end = entriesEnd;

  const invalidate = new Set<string>(['']);
  const remove = new Set<string>();
  for (const c of changes) {
    remove.add(c.key);
    for (let k = c.key.indexOf('/'); k >= 0; k = c.key.indexOf('/', k + 1))
      invalidate.add(c.key.slice(0, k));
  }
  let tree = false;
  const kept: Segment[] = [];
  let pos = entriesEnd;
  while (pos < hashEnd) {
    if (pos + 8 > hashEnd) throw new AskGit('truncated extension');
    if (pos + 8 > r.end) r.need(pos, 8, pos);
    const signature = r.buffer.toString('latin1', pos - r.base, pos - r.base + 4);
    const end = pos + 8 + r.buffer.readUInt32BE(pos - r.base + 4);
    if (end > hashEnd) throw new AskGit('extension size');
    switch (signature) {
      case 'TREE': {
        if (tree) throw new AskGit('two TREE extensions');
        tree = true;
        r.need(pos + 8, end - pos - 8, pos + 8);
        const rewritten = rewriteCacheTree(
          r.buffer,
          r.base,
          pos + 8,
          end,
          invalidate,
          remove,
          hashSize,
        );
        const head = Buffer.alloc(8);
        head.write('TREE', 0, 'latin1');
        head.writeUInt32BE(rewritten.length, 4);
        kept.push(head);
        for (const segment of rewritten.segments) kept.push(segment);
        break;
      }
      case 'REUC':
        kept.push({ from: pos, to: end });
        break;
      case 'link': // split index
      case 'sdir': // sparse index
        throw new AskGit(signature);
      default: {
        const first = signature.charCodeAt(0);
        if (first < 0x41 || first > 0x5a) throw new AskGit(`required extension ${signature}`);
        // UNTR, FSMN, EOIE, IEOT and unknown optional ones: dropped
      }
    }
    r.skipTo(end);
    pos = end;
  }
  r.skipTo(hashEnd);

  let removed = 0;
  let added = 0;
  for (const c of changes) {
    if (c.end > c.at) removed++;
    if (c.oid) added++;
  }
  if (added === 0 && removed === 0 && !tree) return 'unchanged';

  const segments: Segment[] = [];
  let next = HEADER_SIZE;
  for (const c of changes) {
    if (c.at > next) segments.push({ from: next, to: c.at });
    if (c.oid) segments.push(newEntry(c, layout));
    next = c.end;
  }
  if (entriesEnd > next) segments.push({ from: next, to: entriesEnd });
  for (const segment of kept) segments.push(segment);

  const header = Buffer.alloc(HEADER_SIZE);
  header.writeUInt32BE(SIGNATURE, 0);
  header.writeUInt32BE(version === 3 && s.extended === s.changedExtended ? 2 : version, 4);
  header.writeUInt32BE(s.count - removed + added, 8);
  return { header, segments, smudges: s.smudges, smudgeCount: s.smudgeCount, zeroTrailer };
}

/** The stage-0 entry of `c`: zeroed stat data, its mode and object id, no extended flags. */
function newEntry(c: Change, layout: Layout): Buffer {
  const out = Buffer.alloc((layout.entryFixed + c.name.length + 8) & ~7);
  out.writeUInt32BE(c.mode, OFFSET_MODE);
  c.oid!.copy(out, OFFSET_OID);
  out.writeUInt16BE(Math.min(c.name.length, NAME_MASK), layout.offsetFlags);
  c.name.copy(out, layout.entryFixed);
  return out;
}

/**
 * Reads the node header at buffer index `k`, before `stop`: `<name> NUL <entry count> SP
 * <subtree count> LF`, then the object id when the entry count is not -1 (gitformat-index.txt
 * "Cache tree", as cache-tree.c write_one writes it). Stores the counts in `node` and returns the
 * index after the header (and object id), where the first subtree starts.
 * @throws AskGit when it does not parse so.
 */
function readTreeHeader(
  buf: Buffer,
  k: number,
  stop: number,
  node: { entryCount: number; subtrees: number },
  hashSize: number,
): number {
  k = buf.indexOf(0, k); // the name: memchr, as a byte loop it was most of a 10,000-folder walk
  if (k < 0 || k >= stop) throw new AskGit('cache-tree name');
  k++;
  let entryCount = 0;
  let digits = 0;
  if (buf[k] === 0x2d && buf[k + 1] === 0x31) {
    entryCount = -1;
    k += 2;
    digits = 1;
  } else {
    for (; k < stop && buf[k]! >= 0x30 && buf[k]! <= 0x39; k++, digits++)
      entryCount = entryCount * 10 + buf[k]! - 0x30;
  }
  if (digits === 0 || digits > 9 || buf[k] !== 0x20) throw new AskGit('cache-tree entry count');
  k++;
  let subtrees = 0;
  for (digits = 0; k < stop && buf[k]! >= 0x30 && buf[k]! <= 0x39; k++, digits++)
    subtrees = subtrees * 10 + buf[k]! - 0x30;
  if (digits === 0 || digits > 9 || k >= stop || buf[k] !== 0x0a)
    throw new AskGit('cache-tree subtree count');
  k += entryCount >= 0 ? 1 + hashSize : 1;
  if (k > stop) throw new AskGit('cache-tree object id');
  node.entryCount = entryCount;
  node.subtrees = subtrees;
  return k;
}

/** Buffer index after the node at `k` and all its descendants. */
function skipTreeNode(buf: Buffer, k: number, stop: number, hashSize: number): number {
  const node = { entryCount: 0, subtrees: 0 };
  for (let pending = 1; pending > 0; pending += node.subtrees - 1)
    k = readTreeHeader(buf, k, stop, node, hashSize);
  return k;
}

/**
 * The new `TREE` data for the old one at file offsets [start, end), held in `buf` from file
 * offset `base`, as segments: every node whose path is in `invalidate` is written anew with entry
 * count -1, no object id and its subtrees whose path is in `remove` left out (cache-tree.c
 * do_invalidate_path); every other subtree is a byte range of the old file.
 * @returns the segments and their total length in bytes. @throws AskGit when it does not parse.
 */
function rewriteCacheTree(
  buf: Buffer,
  base: number,
  start: number,
  end: number,
  invalidate: ReadonlySet<string>,
  remove: ReadonlySet<string>,
  hashSize: number,
): { segments: Segment[]; length: number } {
  const stop = end - base;
  const segments: Segment[] = [];
  let length = 0;
  const copy = (from: number, to: number) => {
    const last = segments[segments.length - 1];
    if (last && !Buffer.isBuffer(last) && last.to === base + from) last.to = base + to;
    else segments.push({ from: base + from, to: base + to });
    length += to - from;
  };
  const node = { entryCount: 0, subtrees: 0 };
  /** The component at buffer index `k` (latin1). */
  const nameAt = (k: number) => buf.toString('latin1', k, buf.indexOf(0, k));
  /** Writes the invalidated node at `k`, at `path`, and its subtrees; returns its end. */
  const rewrite = (k: number, path: string): number => {
    const name = nameAt(k);
    k = readTreeHeader(buf, k, stop, node, hashSize);
    if ((path === '') !== (name === '')) throw new AskGit('cache-tree name');
    const at = segments.length;
    segments.push(Buffer.alloc(0)); // the header, once the kept subtrees are counted
    let kept = 0;
    for (let i = 0, subtrees = node.subtrees; i < subtrees; i++) {
      const child = nameAt(k);
      if (child === '' || child.includes('/')) throw new AskGit('cache-tree subtree name');
      const childPath = path === '' ? child : `${path}/${child}`;
      if (remove.has(childPath)) {
        k = skipTreeNode(buf, k, stop, hashSize);
        continue;
      }
      kept++;
      if (invalidate.has(childPath)) {
        k = rewrite(k, childPath);
      } else {
        const childEnd = skipTreeNode(buf, k, stop, hashSize);
        copy(k, childEnd);
        k = childEnd;
      }
    }
    const header = Buffer.from(`${name}\0-1 ${kept}\n`, 'latin1');
    segments[at] = header;
    length += header.length;
    return k;
  };
  if (rewrite(start - base, '') !== stop) throw new AskGit('cache-tree size');
  return { segments, length };
}

/**
 * Writes the new index into `lock`: header, segments (ranges re-read from `old`, with the racy
 * size fields zeroed), trailer (the format's hash of all before it, or zeros), through `buffer`.
 */
function writeIndex(old: number, lock: number, plan: Plan, buffer: Buffer, layout: Layout): void {
  const hash = plan.zeroTrailer ? null : createHash(layout.format);
  let fill = 0;
  let smudge = 0;
  const flush = () => {
    if (fill === 0) return;
    hash?.update(buffer.subarray(0, fill));
    for (let done = 0; done < fill;) done += writeSync(lock, buffer, done, fill - done);
    fill = 0;
  };
  const put = (bytes: Buffer) => {
    for (let done = 0; done < bytes.length;) {
      if (fill === buffer.length) flush();
      const n = bytes.copy(buffer, fill, done);
      fill += n;
      done += n;
    }
  };
  put(plan.header);
  for (const s of plan.segments) {
    if (Buffer.isBuffer(s)) {
      put(s);
      continue;
    }
    for (let from = s.from; from < s.to;) {
      if (fill === buffer.length) flush();
      const bytesRead = readSync(
        old,
        buffer,
        fill,
        Math.min(buffer.length - fill, s.to - from),
        from,
      );
      if (bytesRead === 0) throw new Error('the index shrank while it was being rewritten');
      const to = from + bytesRead;
      while (smudge < plan.smudgeCount && plan.smudges[smudge]! + 4 <= from) smudge++;
      for (let k = smudge; k < plan.smudgeCount && plan.smudges[k]! < to; k++) {
        const field = plan.smudges[k]!;
        buffer.fill(0, fill + Math.max(field, from) - from, fill + Math.min(field + 4, to) - from);
      }
      fill += bytesRead;
      from = to;
    }
  }
  flush();
  const trailer = hash ? hash.digest() : Buffer.alloc(layout.hashSize);
  for (let done = 0; done < layout.hashSize;)
    done += writeSync(lock, trailer, done, layout.hashSize - done);
}

/** An index file up to this size is read whole first, to see whether it is a split index. */
const SPLIT_PROBE_MAX = 8 * 1024 * 1024;

/** The `link` extension of a split index: the shared index's id, where the extension lies, its bitmaps. */
interface SplitLink {
  hex: string;
  /** File offsets: end of the entries (where the extensions start). */
  entriesEnd: number;
  deleted: number[];
  replaced: number[];
}

/**
 * The `link` extension of the index in `buf` when it is a split index naming a shared index,
 * else null (also for an index git keeps unsplit, or one that does not parse: the streaming path
 * then judges it). Walks the entries' sizes only.
 */
function splitLinkOf(buf: Buffer, layout: Layout): SplitLink | null {
  const { hashSize, entryFixed, offsetFlags } = layout;
  if (buf.length < HEADER_SIZE + hashSize || buf.readUInt32BE(0) !== SIGNATURE) return null;
  const count = buf.readUInt32BE(8);
  const limit = buf.length - hashSize;
  let pos = HEADER_SIZE;
  for (let i = 0; i < count; i++) {
    if (pos + entryFixed + 2 > limit) return null;
    const flags = buf.readUInt16BE(pos + offsetFlags);
    const n = pos + entryFixed + (flags & FLAG_EXTENDED ? 2 : 0);
    let length = flags & NAME_MASK;
    if (length === NAME_MASK) {
      const nul = buf.indexOf(0, n);
      if (nul < 0) return null;
      length = nul - n;
    }
    pos += (n - pos + length + 8) & ~7;
  }
  const entriesEnd = pos;
  while (pos + 8 <= limit) {
    const signature = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    if (pos + 8 + size > limit) return null;
    if (signature === 'link') {
      if (size < hashSize) return null;
      const hex = buf.toString('hex', pos + 8, pos + 8 + hashSize);
      if (/^0+$/.test(hex)) return null; // requires no shared index: git's own business
      const at = pos + 8 + hashSize;
      const end = pos + 8 + size;
      if (at === end) return { hex, entriesEnd, deleted: [], replaced: [] };
      try {
        const d = readEwah(buf, at, end);
        const r = readEwah(buf, at + d.length, end);
        if (at + d.length + r.length !== end) return null;
        return { hex, entriesEnd, deleted: d.bits, replaced: r.bits };
      } catch {
        return null;
      }
    }
    pos += 8 + size;
  }
  return null;
}

/** git's default `splitIndex.maxPercentChange`: past it git writes a new shared index. */
const SPLIT_MAX_PERCENT = 20;

/**
 * The new split index for `changes` (split-index.ts has the rules): the old file `buf` with its
 * `link`, the old file's mtime second (racy entries), the git dir holding the shared index.
 * @returns the whole new file, or 'unchanged' when git would not write.
 * @throws AskGit on anything left to git.
 */
function updateSplit(
  buf: Buffer,
  link: SplitLink,
  mtimeSec: number,
  changes: readonly Change[],
  probes: DirectoryProbes,
  gitDir: string,
  layout: Layout,
): Buffer | 'unchanged' {
  const { hashSize } = layout;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new AskGit(`index version ${version}`);
  const shared = readSharedIndex(gitDir, link.hex, layout);
  const { entries: ownColumns, end } = readEntries(
    buf,
    HEADER_SIZE,
    buf.readUInt32BE(8),
    buf.length - hashSize,
    version,
    layout,
  );
  if (end !== link.entriesEnd) throw new AskGit('entries');
  const own = Array.from({ length: ownColumns.count }, (_, i) => entryOf(ownColumns, i));
  const deleted = new Set(link.deleted);
  const nShared = shared.entries.count;
  if (
    link.replaced.length > own.length ||
    link.deleted.concat(link.replaced).some((p) => p >= nShared)
  )
    throw new AskGit('link positions');
  // Shared position → the entry replacing it (bytes, racy smudge pending) and the added entries by name.
  type Written = { bytes: Buffer; mtimeSec: number; gitlink: boolean; extended: boolean };
  const ofOld = (e: RawEntry): Written => ({
    bytes: buf.subarray(e.at, e.at + e.size),
    mtimeSec: e.mtimeSec,
    gitlink: e.gitlink,
    extended: e.extended,
  });
  const replaced = new Map<number, Written>();
  link.replaced.forEach((p, k) => {
    if (own[k]!.nameLength !== 0 || deleted.has(p)) throw new AskGit('replacement');
    replaced.set(p, ofOld(own[k]!));
  });
  const added = new Map<string, { name: Buffer; entry: Written }>();
  for (let k = link.replaced.length; k < own.length; k++) {
    const e = own[k]!;
    if (e.nameLength === 0) throw new AskGit('added entry without a name');
    const name = buf.subarray(e.nameAt, e.nameAt + e.nameLength);
    const at = findShared(shared, name);
    if (at >= 0 && !deleted.has(at)) throw new AskGit('added entry over a live shared one');
    added.set(name.toString('latin1'), { name, entry: ofOld(e) });
  }
  const live = (p: number) => p >= 0 && !deleted.has(p);
  // A path both a file and a leading folder after the update: git would drop entries; left to git.
  for (const f of probes.files) {
    if (live(findShared(shared, f)) || added.has(f.toString('latin1')))
      throw new AskGit('directory/file clash');
  }
  for (const d of probes.dirs) {
    const from = findShared(shared, d);
    const next = from >= 0 ? from : -1 - from;
    if (
      next < nShared &&
      shared.entries.nameLength[next]! > d.length &&
      compareNames(shared.bytes, shared.entries.nameAt[next]!, d.length, d, 0, d.length) === 0
    )
      throw new AskGit('directory/file clash');
    const key = d.toString('latin1');
    for (const k of added.keys()) if (k.startsWith(key)) throw new AskGit('directory/file clash');
  }
  let effect = false;
  for (const c of changes) {
    const at = findShared(shared, c.name);
    if (added.delete(c.key)) effect = true;
    if (live(at)) {
      effect = true;
      if (c.oid)
        replaced.set(at, {
          bytes: newEntry({ ...c, name: Buffer.alloc(0) }, layout),
          mtimeSec: 0,
          gitlink: false,
          extended: false,
        });
      else {
        replaced.delete(at);
        deleted.add(at);
      }
    } else if (c.oid) {
      effect = true;
      added.set(c.key, {
        name: c.name,
        entry: { bytes: newEntry(c, layout), mtimeSec: 0, gitlink: false, extended: false },
      });
    }
  }
  // Racy entries found only in the shared index join the file as replacements, to be smudged.
  if (mtimeSec <= shared.newestMtimeSec) {
    for (let p = 0; p < nShared; p++) {
      if (
        shared.entries.mtimeSec[p]! < mtimeSec ||
        shared.entries.kind[p]! & 1 ||
        deleted.has(p) ||
        replaced.has(p)
      )
        continue;
      const e = entryOf(shared.entries, p);
      const bytes = Buffer.alloc((e.nameAt - e.at + 8) & ~7);
      shared.bytes.copy(bytes, 0, e.at, e.nameAt);
      bytes.writeUInt16BE(bytes.readUInt16BE(layout.offsetFlags) & ~NAME_MASK, layout.offsetFlags);
      replaced.set(p, { bytes, mtimeSec: e.mtimeSec, gitlink: false, extended: e.extended });
      effect = true;
    }
  }
  // Extensions of the old file: TREE rewritten, REUC kept, link written anew, the rest dropped.
  let tree: Buffer[] | null = null;
  let reuc: Buffer | null = null;
  for (let pos = link.entriesEnd; pos + 8 <= buf.length - hashSize;) {
    const signature = buf.toString('latin1', pos, pos + 4);
    const extEnd = pos + 8 + buf.readUInt32BE(pos + 4);
    if (signature === 'TREE') {
      if (tree) throw new AskGit('two TREE extensions');
      const invalidate = new Set<string>(['']);
      const remove = new Set<string>();
      for (const c of changes) {
        remove.add(c.key);
        for (let k = c.key.indexOf('/'); k >= 0; k = c.key.indexOf('/', k + 1))
          invalidate.add(c.key.slice(0, k));
      }
      const rewritten = rewriteCacheTree(buf, 0, pos + 8, extEnd, invalidate, remove, hashSize);
      const head = Buffer.alloc(8);
      head.write('TREE', 0, 'latin1');
      head.writeUInt32BE(rewritten.length, 4);
      tree = [
        head,
        ...rewritten.segments.map((s) => (Buffer.isBuffer(s) ? s : buf.subarray(s.from, s.to))),
      ];
    } else if (signature === 'REUC') reuc = buf.subarray(pos, extEnd);
    else if (signature === 'sdir') throw new AskGit('sdir');
    else if (signature !== 'link') {
      const first = signature.charCodeAt(0);
      if (first < 0x41 || first > 0x5a) throw new AskGit(`required extension ${signature}`);
    }
    pos = extEnd;
  }
  if (!effect && !tree) return 'unchanged';
  if (added.size * 100 > (nShared - deleted.size + added.size) * SPLIT_MAX_PERCENT)
    throw new AskGit('git would write a new shared index');

  const byPosition = [...replaced.keys()].sort((a, b) => a - b);
  const addedSorted = [...added.values()].sort((a, b) => Buffer.compare(a.name, b.name));
  const written = [...byPosition.map((p) => replaced.get(p)!), ...addedSorted.map((a) => a.entry)];
  const parts: Buffer[] = [];
  const header = Buffer.alloc(HEADER_SIZE);
  header.writeUInt32BE(SIGNATURE, 0);
  header.writeUInt32BE(written.some((w) => w.extended) ? 3 : 2, 4);
  header.writeUInt32BE(written.length, 8);
  parts.push(header);
  for (const w of written) {
    if (!w.gitlink && w.mtimeSec >= mtimeSec && w.bytes.readUInt32BE(OFFSET_SIZE) !== 0) {
      const copy = Buffer.from(w.bytes);
      copy.writeUInt32BE(0, OFFSET_SIZE);
      parts.push(copy);
    } else parts.push(w.bytes);
  }
  const bitmaps = Buffer.concat([
    writeEwah([...deleted].sort((a, b) => a - b)),
    writeEwah(byPosition),
  ]);
  const linkHead = Buffer.alloc(8 + hashSize);
  linkHead.write('link', 0, 'latin1');
  linkHead.writeUInt32BE(hashSize + bitmaps.length, 4);
  linkHead.write(link.hex, 8, 'hex');
  parts.push(linkHead, bitmaps);
  if (tree) parts.push(...tree);
  if (reuc) parts.push(reuc);
  const body = Buffer.concat(parts);
  const zeroTrailer = buf.subarray(buf.length - hashSize).every((b) => b === 0);
  return Buffer.concat([
    body,
    zeroTrailer ? Buffer.alloc(hashSize) : createHash(layout.format).update(body).digest(),
  ]);
}
