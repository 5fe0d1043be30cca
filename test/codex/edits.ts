/**
 * Random edits of real files, written as Codex patches: shared by the differential test against
 * Codex (test/codex/differential.ts) and the property tests (test/property/*.test.ts).
 *
 * An edit list is applied to a file's lines to give the intended result; the same list is turned
 * into Codex chunks with N lines of context (merged like `diff -U N` when contexts touch), so the
 * patch, applied where it was meant, yields exactly the intended file. No I/O here except
 * {@link loadPool}, which reads real files for the callers.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { splitText, type TextFile } from '../../src/patch/text-file.js';

export { prng } from '../helpers/random.js';

/** Small helpers over a `() => [0,1)` source. */
export class Rand {
  constructor(readonly next: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** One edit of a file's lines: at 0-based line `at`, remove `del` lines and insert `ins`. */
export interface Edit {
  at: number;
  del: number;
  ins: string[];
}

/** A real text file of the pool: its label (used as a path) and raw bytes. */
export interface PoolFile {
  path: string;
  bytes: Uint8Array;
}

const dec = new TextDecoder('utf-8', { fatal: true });

/** Decodes a pool file (UTF-8, no NUL, no lone CR) or returns undefined. */
export function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.indexOf(0) !== -1) return undefined;
  try {
    const t = dec.decode(bytes);
    return /\r(?!\n)/.test(t) ? undefined : t;
  } catch {
    return undefined;
  }
}

function walk(dir: string, out: string[], depth = 0): void {
  if (depth > 8) return;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name === '.git' || name === 'node_modules') continue;
    const full = path.join(dir, name);
    let st;
    try {
      st = statSync(full);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(full, out, depth + 1);
    else if (st.isFile()) out.push(full);
  }
}

/**
 * Real files to edit: this repo's `src/**\/*.ts`, and the text files of the npm packages the
 * replay test caches in `$TMPDIR/hagent-e2e-cache` (unpacked into `$TMPDIR/hagent-codex-pool`);
 * without that cache, `node_modules/*\/{README.md,package.json,*.js}` of this repo.
 * Only UTF-8 text files of 1 to `maxBytes` bytes, in a stable order.
 */
export function loadPool(
  repoRoot: string,
  options: { maxBytes?: number; packages?: boolean } = {},
): PoolFile[] {
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const out: PoolFile[] = [];
  const add = (full: string, label: string): void => {
    const st = statSync(full);
    if (st.size === 0 || st.size > maxBytes) return;
    const bytes = new Uint8Array(readFileSync(full));
    if (textOf(bytes) !== undefined) out.push({ path: label, bytes });
  };
  const src: string[] = [];
  walk(path.join(repoRoot, 'src'), src);
  for (const f of src)
    if (f.endsWith('.ts')) add(f, path.relative(repoRoot, f).split(path.sep).join('/'));
  if (options.packages === false) return out;

  const cache = path.join(os.tmpdir(), 'hagent-e2e-cache');
  const tgzs = existsSync(cache)
    ? readdirSync(cache)
        .filter((n) => n.endsWith('.tgz'))
        .sort()
    : [];
  if (tgzs.length > 0) {
    const pool = path.join(os.tmpdir(), 'hagent-codex-pool');
    for (const tgz of tgzs) {
      const dest = path.join(pool, tgz.replace(/\.tgz$/, ''));
      if (!existsSync(dest)) {
        mkdirSync(dest, { recursive: true });
        try {
          execFileSync('tar', ['-xzf', path.join(cache, tgz), '-C', dest], { stdio: 'ignore' });
        } catch {
          continue;
        }
      }
      const files: string[] = [];
      walk(dest, files);
      for (const f of files)
        if (/\.(js|cjs|mjs|ts|md|json|txt)$/.test(f) || !path.basename(f).includes('.'))
          add(f, `pkg/${path.relative(pool, f).split(path.sep).join('/')}`);
    }
  } else {
    const nm = path.join(repoRoot, 'node_modules');
    for (const name of readdirSync(nm).sort()) {
      for (const f of ['README.md', 'package.json', 'index.js']) {
        const full = path.join(nm, name, f);
        if (existsSync(full)) add(full, `nm/${name}/${f}`);
      }
    }
  }
  return out;
}

/** The file's lines as the patch sees them (no terminators, no BOM). */
export function linesOf(bytes: Uint8Array): TextFile {
  return splitText(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes));
}

/** Applies sorted, non-overlapping edits to lines. */
export function applyEdits(lines: readonly string[], edits: readonly Edit[]): string[] {
  const out: string[] = [];
  let pos = 0;
  for (const e of edits) {
    out.push(...lines.slice(pos, e.at), ...e.ins);
    pos = e.at + e.del;
  }
  out.push(...lines.slice(pos));
  return out;
}

/**
 * Re-encodes edited lines with the original file's terminators, BOM and final-newline state. A new
 * line takes the ending of the line it replaces (the i-th inserted line of an edit the i-th deleted
 * line's, extra ones the last deleted line's); an inserted line that replaces none takes the ending
 * of the line before it (at the top of the file, the line after it). Rule: patch-language.md §4.
 */
export function encodeLike(
  file: TextFile,
  edits: readonly Edit[],
  options: { addFinalNewline?: boolean } = {},
): Uint8Array {
  const texts: string[] = [];
  const eols: string[] = [];
  let pos = 0;
  const keep = (to: number): void => {
    for (; pos < to; pos++) {
      texts.push(file.texts[pos] as string);
      eols.push(file.eols[pos] as string);
    }
  };
  for (const e of edits) {
    keep(e.at);
    const removed = file.eols.slice(e.at, e.at + e.del);
    const before = e.at > 0 ? file.eols[e.at - 1] : file.eols[e.at];
    e.ins.forEach((l, i) => {
      texts.push(l);
      eols.push(
        removed.length > 0
          ? (removed[Math.min(i, removed.length - 1)] as string)
          : (before ?? file.dominant),
      );
    });
    pos = e.at + e.del;
  }
  keep(file.texts.length);
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === '') eols[i] = file.dominant;
  const finalNewline = file.finalNewline || options.addFinalNewline === true;
  if (eols.length > 0)
    eols[eols.length - 1] =
      finalNewline || texts[texts.length - 1] === '' ? eols[eols.length - 1] || file.dominant : '';
  let s = file.bom ? '\uFEFF' : '';
  for (let i = 0; i < texts.length; i++) s += (texts[i] as string) + (eols[i] as string);
  return new TextEncoder().encode(s);
}

/**
 * Whether the patch {@link chunksFor} renders for `edits` spells "add the missing final newline"
 * (patch-language.md §4): the file lacks one, the last chunk is marked `*** End of File`, has no
 * trailing context, and ends in `-X` / `+X` where X is the file's last line as the patch writes it
 * (the last edit removes the last line and adds exactly one line, the same). Random edits hit this
 * spelling by chance (a donor `}` replacing a last `}`); the intended result then has the final
 * newline, as the rule says.
 */
export function putsBackFinalNewline(
  file: TextFile,
  edits: readonly Edit[],
  options: ChunkOptions,
): boolean {
  const n = file.texts.length;
  const last = edits[edits.length - 1];
  if (
    file.finalNewline ||
    !options.eofMarker ||
    !last ||
    last.at + last.del !== n ||
    last.del === 0 ||
    last.ins.length !== 1
  )
    return false;
  const degrade = options.degrade ?? ((l: string) => l);
  return last.ins[0] === degrade(file.texts[n - 1] as string);
}

/**
 * Random sorted, non-overlapping edits of `lines`: `count` edits, each an insertion, a deletion or a
 * replacement of up to `maxSpan` lines; inserted lines are drawn from `donor` lines (real code).
 * Edits are separated by at least `gap` unchanged lines.
 */
export function randomEdits(
  r: Rand,
  lines: readonly string[],
  donor: readonly string[],
  count: number,
  maxSpan = 4,
  gap = 1,
): Edit[] {
  const n = lines.length;
  const edits: Edit[] = [];
  const starts = new Set<number>();
  for (let k = 0; k < count * 3 && starts.size < count; k++) starts.add(r.int(0, n));
  let last = -1;
  for (const at of [...starts].sort((a, b) => a - b)) {
    if (at <= last) continue;
    const kind = r.pick(['insert', 'delete', 'replace', 'replace'] as const);
    const del = kind === 'insert' ? 0 : Math.min(r.int(1, maxSpan), n - at);
    const insCount = kind === 'delete' ? 0 : r.int(1, maxSpan);
    if (del === 0 && insCount === 0) continue;
    const ins: string[] = [];
    for (let q = 0; q < insCount; q++)
      ins.push(donor.length > 0 ? r.pick(donor) : `line ${r.int(0, 9999)}`);
    edits.push({ at, del, ins });
    last = at + del + gap - 1;
    if (del === 0) last = at + gap; // an insertion claims no line, but keep the next edit apart
  }
  return edits;
}

/** Options for turning edits into Codex chunks. */
export interface ChunkOptions {
  /** Context lines above and below each edit (hunks whose contexts touch are merged). */
  context: number;
  /** Put the nearest enclosing (less indented) line above a hunk in an `@@ TEXT` anchor when it is unique. */
  anchors?: boolean;
  /** Omit the bare `@@` of the first chunk (allowed by the grammar). */
  bareFirst?: boolean;
  /** Mark a hunk that reaches the end of the file with `*** End of File`. */
  eofMarker?: boolean;
  /** Rewrites each context and removed line as written in the patch (to degrade it). */
  degrade?: (line: string) => string;
}

function indentOf(line: string): number {
  return (/^[ \t]*/.exec(line) as RegExpExecArray)[0].length;
}

/** The chunk lines (after the `*** Update File:` header) that turn `lines` into `applyEdits(lines, edits)`. */
export function chunksFor(
  lines: readonly string[],
  edits: readonly Edit[],
  options: ChunkOptions,
): string[] {
  const n = lines.length;
  const c = options.context;
  const degrade = options.degrade ?? ((l: string) => l);
  // Group edits into hunks [from, to) of original lines.
  const hunks: { from: number; to: number; edits: Edit[] }[] = [];
  for (const e of edits) {
    const from = Math.max(0, e.at - c);
    const to = Math.min(n, e.at + e.del + c);
    const prev = hunks[hunks.length - 1];
    if (prev && from <= prev.to) {
      prev.to = Math.max(prev.to, to);
      prev.edits.push(e);
    } else hunks.push({ from, to, edits: [e] });
  }
  const out: string[] = [];
  let cursor = 0;
  hunks.forEach((h, i) => {
    let header = '@@';
    if (options.anchors && h.from > cursor) {
      const first = lines.slice(h.from, h.to).find((l) => l.trim() !== '');
      if (first !== undefined && indentOf(first) > 0) {
        for (let a = h.from - 1; a >= cursor; a--) {
          const l = lines[a] as string;
          if (l.trim() !== '' && indentOf(l) < indentOf(first)) {
            if (
              l.trim() !== '' &&
              lines.filter((x) => x.trim() === l.trim()).length === 1 &&
              !l.startsWith('*** ')
            )
              header = `@@ ${l}`;
            break;
          }
        }
      }
    }
    if (!(i === 0 && options.bareFirst && header === '@@')) out.push(header);
    let pos = h.from;
    for (const e of h.edits) {
      for (; pos < e.at; pos++) out.push(` ${degrade(lines[pos] as string)}`);
      for (let q = 0; q < e.del; q++) out.push(`-${degrade(lines[e.at + q] as string)}`);
      for (const l of e.ins) out.push(`+${l}`);
      pos = e.at + e.del;
    }
    for (; pos < h.to; pos++) out.push(` ${degrade(lines[pos] as string)}`);
    if (options.eofMarker && h.to === n) out.push('*** End of File');
    cursor = h.to;
  });
  return out;
}

/** Degradations a model's copy of context suffers (property tests). */
export const degradations = {
  trailingWhitespace: (l: string) => l.trimEnd(),
  tabsToSpaces: (l: string) => l.replace(/\t/g, '    '),
  straightQuotes: (l: string) =>
    l.replace(/[\u2018-\u201B]/g, "'").replace(/[\u201C-\u201F]/g, '"'),
  curlyQuotes: (l: string) => l.replace(/'/g, '\u2019').replace(/"/g, '\u201D'),
};
