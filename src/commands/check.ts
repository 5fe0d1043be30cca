/**
 * `hagent check [PATCH_FILE | -]`: where a patch would land, without writing.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { checkPatch } from '../check/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import { loadConfig } from '../config/index.js';
import { effectiveConfig } from '../policy/index.js';
import { cappedLines, opLetter, palette, printJson, printLines, type Io } from '../output/index.js';
import { readPatchInput, type CommonArgs } from './shared.js';

/** The directory to check against: --dir, else --session's worktree, else the enclosing worktree (or cwd). */
async function targetDir(argv: CommonArgs & { dir?: string }, io: Io): Promise<string> {
  if (argv.dir !== undefined) {
    const dir = path.resolve(io.cwd, argv.dir);
    const st = statSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory())
      throw new HagentError(
        'USAGE',
        `--dir ${argv.dir}: ${st ? 'not a folder' : 'no such folder'}`,
        { path: dir },
        'name the folder the patch applies in (the worktree root), e.g. --dir .',
      );
    return dir;
  }
  if (argv.session !== undefined)
    return (await resolveSession(await openRepo(io.cwd), argv.session)).worktree;
  try {
    return (await openRepo(io.cwd)).location.topLevel ?? io.cwd;
  } catch {
    return io.cwd;
  }
}

/** The repository's policy when `dir` is in one, else the defaults with environment overrides. */
async function policyFor(dir: string, io: Io) {
  try {
    return (await loadConfig(await openRepo(dir), io.env)).policy;
  } catch (e) {
    if ((e as { code?: string }).code === 'NOT_A_GIT_REPO')
      return effectiveConfig(null, null, io.env).policy;
    throw e;
  }
}

export async function runCheck(
  argv: CommonArgs & { patch?: string; dir?: string },
  io: Io,
): Promise<number> {
  const patchText = await readPatchInput(io, argv.patch === '' ? '-' : argv.patch);
  const dir = await targetDir(argv, io);
  const r = await checkPatch(dir, patchText, await policyFor(dir, io));
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  const lines = [
    `The patch applies (${r.format === 'codex' ? 'Codex patch' : 'unified diff'}) against ${dir}:`,
  ];
  // One entry per file (its chunks below it), so a long patch is cut at whole files.
  lines.push(
    ...cappedLines(
      r.files,
      (f) =>
        [
          `${opLetter(f.op)} ${f.from ? `${f.from} -> ` : ''}${f.path}  ${p.green(`+${f.added}`)} ${p.red(`-${f.removed}`)}${f.noop ? p.yellow('  (no change)') : ''}`,
          ...f.chunks.map((c) =>
            p.dim(
              `    chunk ${c.chunk}: lines ${c.startLine}-${c.startLine + Math.max(c.oldCount, 1) - 1} (${c.level})`,
            ),
          ),
        ].join('\n'),
      '',
    ),
  );
  if (r.leniencies.length)
    lines.push(p.dim(`(accepted with leniencies: ${r.leniencies.join(', ')})`));
  for (const w of r.warnings) lines.push(p.yellow(`warning: ${w}`));
  printLines(io, lines);
  return 0;
}
