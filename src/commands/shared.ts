/**
 * Helpers every command shares: reading the patch input, asking a human.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { HagentError } from '../errors.js';
import { cappedList, type Io, type palette } from '../output/index.js';
import type { Drift } from '../session/index.js';
import { formatRanges, type SessionRadar } from '../radar/index.js';

/** Options every command accepts. */
export interface CommonArgs {
  json?: boolean;
  session?: string;
}

/**
 * Reads a patch from a file, or from stdin when `file` is `-` or absent and stdin is not a TTY.
 * The bytes must be UTF-8: a lossy decode would write replacement characters (patch-language.md §4).
 * @throws HagentError PATCH_NOT_FOUND (no such file), EMPTY_PATCH (nothing read), USAGE (no input),
 *   UNSUPPORTED_FILE (not UTF-8).
 */
export async function readPatchInput(io: Io, file: string | undefined): Promise<string> {
  let bytes: Buffer;
  if (file === undefined || file === '-') {
    if (file === undefined && io.stdin.isTTY) {
      throw new HagentError(
        'USAGE',
        'no patch given',
        {},
        'pass a patch file, or pipe the patch on stdin: hagent apply - < patch.txt',
      );
    }
    const chunks: Buffer[] = [];
    for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    bytes = Buffer.concat(chunks);
  } else {
    try {
      bytes = await fs.readFile(path.resolve(io.cwd, file));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new HagentError(
        'PATCH_NOT_FOUND',
        code === 'EISDIR'
          ? `${file} is a directory, not a patch file`
          : `cannot read patch file ${file}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
        { path: file },
        'check the path, or pipe the patch on stdin with -',
      );
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `the patch ${file === undefined || file === '-' ? 'on stdin' : file} is not valid UTF-8`,
      file && file !== '-' ? { path: file } : {},
      'hagent only writes UTF-8 text; send the patch as UTF-8 (binary or Latin-1 content is refused, never mangled)',
    );
  }
  if (text.trim() === '')
    throw new HagentError(
      'EMPTY_PATCH',
      file === undefined || file === '-'
        ? 'stdin held no patch (it was empty)'
        : `${file} is empty`,
      {},
      'send the patch text: *** Begin Patch … *** End Patch, or a unified diff',
    );
  return text;
}

/** Asks a yes/no question on the terminal (default no). Resolves false when no one can answer. */
export async function askYesNo(io: Io, question: string): Promise<boolean> {
  if (!io.interactive) return false;
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** One line saying what hagent finished or undid of an interrupted transaction. */
export function recoveryLine(r: {
  command: string;
  action: string;
  commit: string | null;
  files: string[];
  outside: string[];
}): string {
  const what =
    r.action === 'completed'
      ? `completed its commit${r.commit ? ` ${r.commit.slice(0, 12)}` : ''}`
      : r.action === 'restored'
        ? 'restored the files as they were before it'
        : 'discarded its damaged record';
  const outside = r.outside.length
    ? `; left alone (changed by someone else): ${cappedList(r.outside)}`
    : '';
  return `note: an interrupted ${r.command} was found and hagent ${what} (${cappedList(r.files) || 'no files'})${outside}`;
}

/** Human lines for a session's drift (session/drift.ts). */
export function driftLines(d: Drift, p: ReturnType<typeof palette>): string[] {
  const what =
    d.kind === 'detached'
      ? 'its worktree HEAD is detached'
      : d.kind === 'other-branch'
        ? `its worktree has ${d.branch.replace('refs/heads/', '')} checked out`
        : d.kind === 'outside-commits'
          ? `${d.commits.length} commit${d.commits.length === 1 ? ' on the branch was' : 's on the branch were'} made outside hagent`
          : `its branch was moved outside hagent, dropping ${d.dropped} commit${d.dropped === 1 ? '' : 's'}${d.pastBase ? ', past the session base' : ''}`;
  return [p.yellow(`  moved outside hagent: ${what}`), p.dim(`    ${d.hint}`)];
}

/**
 * The overlap radar of one session as text (src/radar/): one short line per overlap with another
 * session and per file the target changed under it, then the predicted land outcome (`always`:
 * also when clean, else only a conflict). Coloured only through `p` (a TTY's palette).
 */
export function radarLines(
  r: SessionRadar | undefined,
  p: ReturnType<typeof palette>,
  indent: string,
  always: boolean,
): string[] {
  if (!r || !r.unlanded) return [];
  const lines: string[] = [];
  for (const o of r.overlaps)
    lines.push(
      o.linesOverlap
        ? p.yellow(
            `${indent}overlap: session ${o.session} also changes ${o.path} (${formatRanges(o.lines)} here, ${formatRanges(o.otherLines)} there): landing both will conflict`,
          )
        : p.dim(
            `${indent}overlap: session ${o.session} also changes ${o.path}, other lines (${formatRanges(o.lines)} here, ${formatRanges(o.otherLines)} there)`,
          ),
    );
  for (const t of r.targetOverlaps)
    lines.push(
      (t.linesOverlap ? p.yellow : p.dim)(
        `${indent}target: ${t.path} changed on the target since the land base (${formatRanges(t.targetLines)}; ${t.commits.length} commit${t.commits.length === 1 ? '' : 's'})${t.linesOverlap ? ', on lines this session changes' : ''}`,
      ),
    );
  if (r.prediction?.outcome === 'conflict')
    lines.push(p.red(`${indent}landing now: conflict in ${cappedList(r.prediction.paths)}`));
  else if (r.prediction && always) lines.push(p.green(`${indent}landing now: clean`));
  return lines;
}

/** A session's radar fields for its `--json` (added beside the existing fields, which stay as they were). */
export function radarJson(r: SessionRadar | undefined): {
  overlaps: SessionRadar['overlaps'];
  targetOverlaps: SessionRadar['targetOverlaps'];
  prediction: SessionRadar['prediction'];
} {
  return {
    overlaps: r?.overlaps ?? [],
    targetOverlaps: r?.targetOverlaps ?? [],
    prediction: r?.prediction ?? null,
  };
}
