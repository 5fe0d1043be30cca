/**
 * The in-process update of a split index (git's `core.splitIndex`, `update-index --split-index`),
 * for index-file.ts: the index file then holds only the entries that differ from a shared index
 * file (`<git-dir>/sharedindex.<id>`, immutable, named by its own trailer), so an update rewrites
 * a few entries, the cache-tree and the `link` extension instead of every entry: at 100,000
 * entries, a 12.7 MB rewrite and hash become one of ~0.4 MB. The result is the index git writes
 * for the same `update-index --index-info` input, byte for byte when no entry is racy.
 *
 * Rules and their sources: git's Documentation/gitformat-index.txt ("Split index"), split-index.c
 * (merge_base_index on read, prepare_to_write_split_index on write), read-cache.c
 * (write_locked_index, do_write_index: the `link` extension first, then `TREE`, `REUC`), ewah/
 * (ewah_bitmap.c ewah_set, ewah_io.c serialisation) for the bitmaps, as of git 2.39.
 *
 * - An entry of the shared index is replaced when its position's bit is set in the replace
 *   bitmap (the k-th set bit takes the k-th entry of the file, stored with an empty name), and
 *   dropped when set in the delete bitmap; the file's other entries are added after those.
 * - Updating a path that is a live entry of the shared index replaces it there (git's
 *   replace_index_entry keeps the entry's shared position); any other path is an added entry
 *   (a path whose shared entry was deleted too: git adds it anew, and the delete bit stays).
 *   Removing a shared entry sets its delete bit and drops its replacement.
 * - Racy git: an entry written from the old file whose mtime second is at or after the old index
 *   file's is smudged (size 0), as index-file.ts does; a racy entry found only in the shared
 *   index is copied into the file as a replacement and smudged, as git's
 *   prepare_to_write_split_index does for entries not refreshed.
 * - When the added entries would pass git's default `splitIndex.maxPercentChange` (20 % of all
 *   entries), git would write a new shared index: left to git, as is anything this file does not
 *   handle (a shared index with extensions or conflict stages, a path both a file and a folder).
 * - The shared index's mtime is refreshed, as git's freshen_shared_index does, so git's expiry
 *   (`splitIndex.sharedIndexExpire`) never removes one in use.
 */
import { closeSync, fstatSync, openSync, readSync, utimesSync } from 'node:fs';
import path from 'node:path';

/** Why the in-process update gave up: the caller runs `git update-index` instead. */
export class AskGit extends Error {}

/** One entry of an index file, as found in its bytes. */
export interface RawEntry {
  /** Offset of the entry in its file, and its size with padding. */
  at: number;
  size: number;
  /** Offset and length of its name. */
  nameAt: number;
  nameLength: number;
  mtimeSec: number;
  gitlink: boolean;
  extended: boolean;
}

/**
 * The entries of an index file as columns of typed arrays: a shared index of 100,000 entries
 * stays a few flat arrays (no object per entry for the garbage collector to mark).
 */
export interface Entries {
  count: number;
  at: Int32Array;
  size: Int32Array;
  nameAt: Int32Array;
  nameLength: Int32Array;
  mtimeSec: Uint32Array;
  /** 1: a gitlink; 2: extended flags. */
  kind: Uint8Array;
}

/** Entry `i` of `es` as an object. */
export function entryOf(es: Entries, i: number): RawEntry {
  return {
    at: es.at[i]!,
    size: es.size[i]!,
    nameAt: es.nameAt[i]!,
    nameLength: es.nameLength[i]!,
    mtimeSec: es.mtimeSec[i]!,
    gitlink: (es.kind[i]! & 1) !== 0,
    extended: (es.kind[i]! & 2) !== 0,
  };
}

/** Sizes that follow from the object format (see index-file.ts Layout). */
export interface SplitLayout {
  hashSize: number;
  entryFixed: number;
  offsetFlags: number;
}

const FLAG_EXTENDED = 0x4000;
const FLAG_STAGE = 0x3000;
const NAME_MASK = 0x0fff;
const EXTENDED_KNOWN = 0x4000 | 0x2000;
const OFFSET_MTIME_SEC = 8;
const OFFSET_MODE = 24;
const MODE_GITLINK = 0o160000;

/**
 * The `count` entries of `buf` from offset `pos`, checked as git reads them (stage 0, known
 * extended flags, a NUL after the name); names may be empty (replacements).
 * @returns the entries and the offset after them. @throws AskGit when they do not parse so.
 */
export function readEntries(
  buf: Buffer,
  pos: number,
  count: number,
  limit: number,
  version: number,
  layout: SplitLayout,
): { entries: Entries; end: number } {
  const es: Entries = {
    count,
    at: new Int32Array(count),
    size: new Int32Array(count),
    nameAt: new Int32Array(count),
    nameLength: new Int32Array(count),
    mtimeSec: new Uint32Array(count),
    kind: new Uint8Array(count),
  };
  for (let i = 0; i < count; i++) {
    if (pos + layout.entryFixed + 2 > limit) throw new AskGit('truncated entry');
    const flags = buf.readUInt16BE(pos + layout.offsetFlags);
    if (flags & FLAG_STAGE) throw new AskGit('conflict stage');
    let n = pos + layout.entryFixed;
    const extended = (flags & FLAG_EXTENDED) !== 0;
    if (extended) {
      if (version < 3 || (buf.readUInt16BE(n) & ~EXTENDED_KNOWN) !== 0)
        throw new AskGit('extended flags');
      n += 2;
    }
    let length = flags & NAME_MASK;
    if (length === NAME_MASK) {
      const nul = buf.indexOf(0, n);
      if (nul < 0 || nul >= limit) throw new AskGit('long name');
      length = nul - n;
    }
    const size = (n - pos + length + 8) & ~7;
    if (pos + size > limit || buf[n + length] !== 0) throw new AskGit('entry');
    es.at[i] = pos;
    es.size[i] = size;
    es.nameAt[i] = n;
    es.nameLength[i] = length;
    es.mtimeSec[i] = buf.readUInt32BE(pos + OFFSET_MTIME_SEC);
    es.kind[i] =
      ((buf.readUInt32BE(pos + OFFSET_MODE) & 0o170000) === MODE_GITLINK ? 1 : 0) |
      (extended ? 2 : 0);
    pos += size;
  }
  return { entries: es, end: pos };
}

/** Byte order of two names (memcmp, the shorter first on a tie). */
export function compareBytes(
  a: Uint8Array,
  aStart: number,
  aLength: number,
  b: Uint8Array,
  bStart: number,
  bLength: number,
): number {
  const n = aLength < bLength ? aLength : bLength;
  for (let k = 0; k < n; k++) {
    const d = a[aStart + k]! - b[bStart + k]!;
    if (d !== 0) return d;
  }
  return aLength - bLength;
}

// ---------------------------------------------------------------------------------------------
// EWAH bitmaps (git's ewah/): 64-bit words; a run-length word holds the run bit (bit 0), the
// run length in words (bits 1–32) and the number of literal words that follow it (bits 33–63).

const RUN_MAX = 0xffffffff;
const LITERAL_MAX = 0x7fffffff;

/** The set positions of the EWAH bitmap at `buf[pos..]`, ascending, and the bytes it took. @throws AskGit. */
export function readEwah(
  buf: Buffer,
  pos: number,
  limit: number,
): { bits: number[]; length: number } {
  if (pos + 8 > limit) throw new AskGit('ewah header');
  const bitSize = buf.readUInt32BE(pos);
  const words = buf.readUInt32BE(pos + 4);
  const length = 8 + words * 8 + 4;
  if (pos + length > limit) throw new AskGit('ewah size');
  const bits: number[] = [];
  let k = 0;
  let at = 0; // the bit position of the next word
  const word = (i: number) => buf.readBigUInt64BE(pos + 8 + i * 8);
  while (k < words) {
    const rlw = word(k++);
    const runBit = Number(rlw & 1n);
    const run = Number((rlw >> 1n) & 0xffffffffn);
    const literals = Number(rlw >> 33n);
    if (runBit) for (let b = 0; b < run * 64; b++) bits.push(at + b);
    at += run * 64;
    if (k + literals > words) throw new AskGit('ewah literals');
    for (let l = 0; l < literals; l++) {
      const w = word(k++);
      if (w !== 0n) for (let b = 0; b < 64; b++) if ((w >> BigInt(b)) & 1n) bits.push(at + b);
      at += 64;
    }
  }
  if (bits.length && bits[bits.length - 1]! >= bitSize) throw new AskGit('ewah bit past its size');
  return { bits, length };
}

/** Builds an EWAH bitmap as git's ewah_set does for ascending positions; serialised as ewah_io.c does. */
export function writeEwah(bits: readonly number[]): Buffer {
  // Each run-length word as [runBit, run, literals]; literal words as bigint.
  type Rlw = { runBit: number; run: number; literals: number };
  const buffer: (Rlw | bigint)[] = [{ runBit: 0, run: 0, literals: 0 }];
  let rlwAt = 0;
  let bitSize = 0;
  const rlw = () => buffer[rlwAt] as Rlw;
  const pushRlw = () => {
    buffer.push({ runBit: 0, run: 0, literals: 0 });
    rlwAt = buffer.length - 1;
  };
  const addLiteral = (w: bigint) => {
    if (rlw().literals >= LITERAL_MAX) {
      pushRlw();
      rlw().literals = 1;
      buffer.push(w);
      return;
    }
    rlw().literals++;
    buffer.push(w);
  };
  const addEmptyWords = (number: number) => {
    // v is always 0 here (ewah_set only adds empty words of zeros)
    const r = rlw();
    if (r.runBit !== 0 && r.run + r.literals === 0) r.runBit = 0;
    else if (r.literals !== 0 || r.runBit !== 0) pushRlw();
    const can = Math.min(number, RUN_MAX - rlw().run);
    rlw().run += can;
    number -= can;
    while (number >= RUN_MAX) {
      pushRlw();
      rlw().run = RUN_MAX;
      number -= RUN_MAX;
    }
    if (number > 0) {
      pushRlw();
      rlw().run = number;
    }
  };
  const addEmptyWordOfOnes = () => {
    const r = rlw();
    const noLiteral = r.literals === 0;
    if (noLiteral && r.run === 0) r.runBit = 1;
    if (noLiteral && r.runBit === 1 && r.run < RUN_MAX) r.run++;
    else {
      pushRlw();
      rlw().runBit = 1;
      rlw().run = 1;
    }
  };
  for (const i of bits) {
    if (i < bitSize) throw new Error('ewah positions must ascend');
    const dist = Math.ceil((i + 1) / 64) - Math.ceil(bitSize / 64);
    bitSize = i + 1;
    const bit = 1n << BigInt(i % 64);
    if (dist > 0) {
      if (dist > 1) addEmptyWords(dist - 1);
      addLiteral(bit);
      continue;
    }
    if (rlw().literals === 0) {
      rlw().run--;
      addLiteral(bit);
      continue;
    }
    const last = buffer.length - 1;
    buffer[last] = (buffer[last] as bigint) | bit;
    if (buffer[last] === 0xffffffffffffffffn) {
      buffer.pop();
      rlw().literals--;
      addEmptyWordOfOnes();
    }
  }
  const out = Buffer.alloc(8 + buffer.length * 8 + 4);
  out.writeUInt32BE(bitSize, 0);
  out.writeUInt32BE(buffer.length, 4);
  buffer.forEach((w, k) => {
    const v =
      typeof w === 'bigint'
        ? w
        : BigInt(w.runBit) | (BigInt(w.run) << 1n) | (BigInt(w.literals) << 33n);
    out.writeBigUInt64BE(v, 8 + k * 8);
  });
  out.writeUInt32BE(rlwAt, 8 + buffer.length * 8);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The shared index, parsed once per file: it never changes under its name.

/** A parsed shared index: its bytes and entries (sorted by name, as git writes them). */
export interface SharedIndex {
  bytes: Buffer;
  entries: Entries;
  /** The newest mtime second of a non-gitlink entry: none is racy against an index file newer than it. */
  newestMtimeSec: number;
}

let cached: { file: string; ino: bigint; size: bigint; shared: SharedIndex } | null = null;

/**
 * The shared index `<gitDir>/sharedindex.<hex>`, read and checked (header, v2/v3, entries in
 * order, no extension), kept for the next call while the file's inode and size stay the same (a
 * long-lived process, `hagent mcp`, then reads it once).
 * @throws AskGit when it is missing or does not parse as expected.
 */
export function readSharedIndex(gitDir: string, hex: string, layout: SplitLayout): SharedIndex {
  const file = path.join(gitDir, `sharedindex.${hex}`);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    throw new AskGit('no shared index');
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    if (cached && cached.file === file && cached.ino === st.ino && cached.size === st.size)
      return cached.shared;
    const bytes = Buffer.allocUnsafe(Number(st.size));
    for (let done = 0; done < bytes.length;) {
      const n = readSync(fd, bytes, done, bytes.length - done, done);
      if (n === 0) throw new AskGit('shared index shrank');
      done += n;
    }
    if (bytes.length < 12 + layout.hashSize || bytes.toString('latin1', 0, 4) !== 'DIRC')
      throw new AskGit('shared index header');
    // Its name is its trailer: a file that does not end so is not the one the index names.
    if (bytes.toString('hex', bytes.length - layout.hashSize) !== hex)
      throw new AskGit('shared index trailer');
    const version = bytes.readUInt32BE(4);
    if (version !== 2 && version !== 3) throw new AskGit('shared index version');
    const { entries, end } = readEntries(
      bytes,
      12,
      bytes.readUInt32BE(8),
      bytes.length - layout.hashSize,
      version,
      layout,
    );
    if (end !== bytes.length - layout.hashSize) throw new AskGit('shared index extensions');
    let newestMtimeSec = 0;
    const { nameAt, nameLength, mtimeSec, kind } = entries;
    for (let i = 0; i < entries.count; i++) {
      if (
        i > 0 &&
        compareBytes(
          bytes,
          nameAt[i - 1]!,
          nameLength[i - 1]!,
          bytes,
          nameAt[i]!,
          nameLength[i]!,
        ) >= 0
      )
        throw new AskGit('shared index order');
      if (!(kind[i]! & 1) && mtimeSec[i]! > newestMtimeSec) newestMtimeSec = mtimeSec[i]!;
    }
    const shared = { bytes, entries, newestMtimeSec };
    cached = { file, ino: st.ino, size: st.size, shared };
    return shared;
  } finally {
    closeSync(fd);
  }
}

/** Position of the shared entry named `name`, or -1 - (where it would go). */
export function findShared(shared: SharedIndex, name: Buffer): number {
  let lo = 0;
  let hi = shared.entries.count;
  const { nameAt, nameLength } = shared.entries;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const d = compareBytes(shared.bytes, nameAt[mid]!, nameLength[mid]!, name, 0, name.length);
    if (d === 0) return mid;
    if (d < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1 - lo;
}

/** Refreshes the shared index's mtime, as git does after writing a split index (freshen_shared_index). */
export function freshenShared(gitDir: string, hex: string): void {
  const now = new Date();
  try {
    utimesSync(path.join(gitDir, `sharedindex.${hex}`), now, now);
  } catch {
    // git ignores a failure too
  }
}
