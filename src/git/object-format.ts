/**
 * The repository's object format (gitrepository-layout(5), `extensions.objectFormat`): SHA-1
 * (20-byte ids, 40 hex digits) or SHA-256 (32-byte ids, 64 hex digits). Every id hagent computes
 * in-process, every raw tree it parses or writes and every id it checks by shape goes through
 * here, so no code assumes 20-byte ids.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** git's two object formats. */
export type ObjectFormat = 'sha1' | 'sha256';

/** Length of an object id in bytes. Pure. */
export function oidByteLength(format: ObjectFormat): number {
  return format === 'sha256' ? 32 : 20;
}

/** Length of an object id in hex digits. Pure. */
export function oidHexLength(format: ObjectFormat): number {
  return oidByteLength(format) * 2;
}

/** The format an object id belongs to, by its length (64 hex digits: SHA-256). Pure. */
export function formatOfOid(oid: string): ObjectFormat {
  return oid.length === 64 ? 'sha256' : 'sha1';
}

/** True when `oid` is a full lower-case hex id of `format`. Pure. */
export function isOid(oid: string, format: ObjectFormat): boolean {
  return oid.length === oidHexLength(format) && /^[0-9a-f]+$/.test(oid);
}

/** The all-zero id git uses for "no object" in `format`. Pure. */
export function zeroOid(format: ObjectFormat): string {
  return '0'.repeat(oidHexLength(format));
}

/**
 * The id git gives an object of `type` with `content`: the format's hash of
 * `"<type> <length>\0" + content`, hex. Pure.
 */
export function hashObject(
  type: 'blob' | 'tree' | 'commit',
  content: Uint8Array,
  format: ObjectFormat,
): string {
  return createHash(format).update(`${type} ${content.length}\0`).update(content).digest('hex');
}

const cache = new Map<string, ObjectFormat>();

/** Forgets the formats read so far (a long-lived process's fresh start, like {@link forgetIdentities}). */
export function forgetObjectFormats(): void {
  cache.clear();
}

/**
 * The object format of the repository whose git common dir is `commonDir`, from
 * `extensions.objectFormat` in its `config` (git reads extensions from that file only, and a
 * repository's format never changes: the answer is cached per folder). SHA-1 when the key is
 * absent or the file cannot be read. Never throws.
 */
export function objectFormat(commonDir: string): ObjectFormat {
  const known = cache.get(commonDir);
  if (known) return known;
  let format: ObjectFormat = 'sha1';
  try {
    const text = readFileSync(path.join(commonDir, 'config'), 'utf8');
    let section = '';
    for (const raw of text.split('\n')) {
      const line = raw.replace(/[#;].*$/, '').trim();
      const header = /^\[\s*([A-Za-z0-9.-]+)[^\]]*\](.*)$/.exec(line);
      const body = header ? header[2]!.trim() : line;
      if (header) section = header[1]!.toLowerCase();
      const m = /^objectformat\s*=\s*"?([A-Za-z0-9-]+)"?$/i.exec(body);
      if (section === 'extensions' && m && m[1]!.toLowerCase() === 'sha256') format = 'sha256';
    }
  } catch {
    // no config: git's default
  }
  cache.set(commonDir, format);
  return format;
}
