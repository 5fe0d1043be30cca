/**
 * check: parse and locate a patch against a directory without writing anything — per file and
 * chunk, where it would land and at which comparison level.
 */
import {
  absoluteRoots,
  checkOpPaths,
  fileResult,
  readSnapshot,
  type FileResult,
} from '../apply/index.js';
import { parsePatch, pathsToRead, planPatch } from '../patch/index.js';
import type { ChunkPlacement, Leniency } from '../patch/types.js';
import { DEFAULT_POLICY, type Policy } from '../policy/index.js';

/** One file of a check result: the §7 file fields plus where each chunk landed (1-based lines). */
export interface CheckedFile extends FileResult {
  chunks: ChunkPlacement[];
  noop: boolean;
}

/** JSON of `hagent check`. `dir` is the absolute directory checked against. */
export interface CheckResult {
  ok: true;
  dir: string;
  format: 'codex' | 'unified';
  files: CheckedFile[];
  leniencies: Leniency[];
  warnings: string[];
}

/**
 * Parses `patchText`, checks its paths against `policy`, reads the targets from `dir` (lstat of
 * every component) and plans the patch in memory. Writes nothing; no staleness check (there is
 * no session head to compare with).
 * @throws HagentError with the codes of patch-language.md §6 that planning can raise
 *   (PATCH_SYNTAX, MULTIPLE_PATCHES, CONTEXT_NOT_FOUND, AMBIGUOUS_MATCH, OVERLAPPING_CHUNKS,
 *   FILE_EXISTS, FILE_NOT_FOUND, DUPLICATE_PATH, UNSUPPORTED_FILE, NO_CHANGES, PATH_DENIED).
 */
export async function checkPatch(
  dir: string,
  patchText: string,
  policy: Policy = DEFAULT_POLICY,
): Promise<CheckResult> {
  const parsed = checkOpPaths(parsePatch(patchText), policy, await absoluteRoots(dir, null));
  const snapshot = await readSnapshot(dir, pathsToRead(parsed));
  const plan = planPatch(parsed, snapshot);
  return {
    ok: true,
    dir,
    format: parsed.format,
    files: plan.files.map((f) => ({ ...fileResult(f), chunks: f.chunks, noop: f.noop })),
    leniencies: plan.leniencies,
    warnings: plan.warnings,
  };
}
