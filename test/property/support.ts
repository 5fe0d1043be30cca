/**
 * Shared ground for the property tests: real files to edit, a fast-check arbitrary of edits, and
 * independent oracles (naive scans written from patch-language.md, not from src/patch).
 */
import fc from 'fast-check';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHagentError } from '../../src/errors.js';
import {
  parsePatch,
  pathsToRead,
  planPatch,
  type Plan,
  type Snapshot,
} from '../../src/patch/index.js';
import {
  chunksFor,
  degradations,
  encodeLike,
  linesOf,
  loadPool,
  prng,
  Rand,
  randomEdits,
  type Edit,
  type PoolFile,
} from '../codex/edits.js';
import type { TextFile } from '../../src/patch/text-file.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Real files (≤ 16 KiB, so 10,000 cases stay well under a minute) and donor lines for insertions. */
export const pool: PoolFile[] = loadPool(root, { maxBytes: 16 * 1024 }).filter(
  (f) => linesOf(f.bytes).texts.length >= 3,
);
export const donor: string[] = pool
  .flatMap((f) => linesOf(f.bytes).texts.slice(0, 80))
  .filter((l) => !l.startsWith('*** '));

/** fast-check settings: a fixed seed (override with FC_SEED) so CI runs are reproducible. */
export function runs(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : 0x4a67;
  return { numRuns, seed, endOnFailure: true };
}

/** One generated case: a real file, the edit, its Codex patch and the intended bytes. */
export interface EditCase {
  path: string;
  original: Uint8Array;
  file: TextFile;
  edits: Edit[];
  patch: string;
  expected: Uint8Array;
}

export type DegradeName = keyof typeof degradations;

/** Edit parameters; the edit itself comes from a seeded PRNG so every case is reproducible. */
export const editArb = fc.record({
  file: fc.nat(),
  seed: fc.integer(),
  count: fc.integer({ min: 1, max: 5 }),
  span: fc.integer({ min: 1, max: 6 }),
  context: fc.integer({ min: 1, max: 3 }),
  anchors: fc.boolean(),
  bareFirst: fc.boolean(),
  eof: fc.boolean(),
});

export type EditParams = typeof editArb extends fc.Arbitrary<infer T> ? T : never;

/** Builds the case for `p`, with the patch's context degraded by `degrade` when given. */
export function makeCase(p: EditParams, degrade?: DegradeName): EditCase {
  const f = pool[p.file % pool.length] as PoolFile;
  const file = linesOf(f.bytes);
  const r = new Rand(prng(p.seed));
  let edits = randomEdits(r, file.texts, donor, p.count, p.span, 1);
  if (edits.length === 0) edits = [{ at: 0, del: 0, ins: ['// inserted'] }];
  const lines = chunksFor(file.texts, edits, {
    context: p.context,
    anchors: p.anchors,
    bareFirst: p.bareFirst,
    eofMarker: p.eof,
    ...(degrade ? { degrade: degradations[degrade] } : {}),
  });
  const patch = [
    '*** Begin Patch',
    `*** Update File: ${f.path}`,
    ...lines,
    '*** End Patch',
    '',
  ].join('\n');
  return { path: f.path, original: f.bytes, file, edits, patch, expected: encodeLike(file, edits) };
}

/** Parses and plans `patch` against one file. Throws what the engine throws. */
export function planOne(patch: string, filePath: string, bytes: Uint8Array): Plan {
  const parsed = parsePatch(patch);
  const snapshot = new Map(
    pathsToRead(parsed).map((p) => [
      p,
      p === filePath
        ? { kind: 'file' as const, bytes, mode: '100644' as const }
        : { kind: 'missing' as const },
    ]),
  );
  return planPatch(parsed, snapshot as Snapshot);
}

/** The bytes `plan` writes to `filePath` (the original when the plan leaves it alone). */
export function bytesOf(plan: Plan, filePath: string): Uint8Array | undefined {
  return plan.files.find((f) => f.path === filePath)?.bytes;
}

export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (!a || !b) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The loosest comparison of patch-language.md §3.2, written here independently of src/patch/seek.ts. */
export function fold(line: string): string {
  return line
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018-\u201B]/g, "'")
    .replace(/[\u201C-\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, ' ')
    .trim();
}

/** How many times `pattern` occurs in `lines` (a naive scan) under `eq`. */
export function occurrences(
  lines: readonly string[],
  pattern: readonly string[],
  eq: (a: string, b: string) => boolean,
): number {
  let count = 0;
  for (let s = 0; s + pattern.length <= lines.length; s++) {
    let ok = true;
    for (let k = 0; k < pattern.length && ok; k++)
      ok = eq(lines[s + k] as string, pattern[k] as string);
    if (ok) count++;
  }
  return count;
}

/** The old side of every chunk of the (single) update in `patch`. */
export function oldSides(patch: string): string[][] {
  const op = parsePatch(patch).ops[0];
  return op && op.kind === 'update' ? op.chunks.map((c) => c.oldLines) : [];
}

/** The chunk's new lines (1-based chunk number) of the single update in `patch`. */
export function newSide(patch: string, chunk: number): string[] {
  const op = parsePatch(patch).ops[0];
  return op && op.kind === 'update' ? (op.chunks[chunk - 1]?.newLines ?? []) : [];
}

/**
 * An "already applied" refusal (NO_CHANGES naming a chunk) is right only when the file really holds
 * that chunk's new lines at the line it names: checked here by a naive comparison.
 */
export function refusalIsAlreadyApplied(e: unknown, c: { patch: string; file: TextFile }): boolean {
  if (
    !isHagentError(e) ||
    e.code !== 'NO_CHANGES' ||
    typeof e.details.chunk !== 'number' ||
    typeof e.details.line !== 'number'
  )
    return false;
  const lines = newSide(c.patch, e.details.chunk);
  const at = e.details.line - 1;
  return (
    lines.length > 0 && lines.every((l, k) => fold(c.file.texts[at + k] ?? '\u0000') === fold(l))
  );
}
