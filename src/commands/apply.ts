/**
 * `hagent apply [PATCH_FILE | -]`: parse args, call apply/, print the Codex-shaped result.
 */
import { applyPatch, mergeLine } from '../apply/index.js';
import { trace } from '../trace/index.js';
import { HagentError } from '../errors.js';
import { openRepo, resolveSession } from '../session/index.js';
import {
  cappedLines,
  opLetter,
  palette,
  printJson,
  printLines,
  short,
  type Io,
} from '../output/index.js';
import { askYesNo, readPatchInput, recoveryLine, type CommonArgs } from './shared.js';

export async function runApply(
  argv: CommonArgs & {
    patch?: string;
    yes?: boolean;
    dryRun?: boolean;
    base?: string;
    watch?: boolean;
    lockTimeout?: number;
  },
  io: Io,
): Promise<number> {
  // yargs turns a lone `-` positional into ''; both mean stdin.
  const patchArg = argv.patch === '' ? '-' : argv.patch;
  if (argv.lockTimeout !== undefined && !(argv.lockTimeout >= 0)) {
    throw new HagentError(
      'USAGE',
      '--lock-timeout takes a number of seconds ≥ 0',
      { lockTimeout: String(argv.lockTimeout) },
      'e.g. --lock-timeout 30',
    );
  }
  const patchText = await readPatchInput(io, patchArg);
  trace('apply: patch read');
  const ctx = await openRepo(io.cwd);
  trace('apply: repository opened');
  const session = await resolveSession(ctx, argv.session);
  trace('apply: session resolved');
  const p = palette(io.color);
  const confirm =
    io.interactive && patchArg !== '-' && patchArg !== undefined
      ? async (req: { reasons: string[]; preview: string }) => {
          io.stderr.write(
            `${p.yellow('This patch needs your yes:')} it ${req.reasons.join(', ')}\n${req.preview}\n`,
          );
          return askYesNo(io, 'Apply it?');
        }
      : undefined;
  const r = await applyPatch(ctx, session, {
    patchText,
    env: io.env,
    yes: !!argv.yes,
    dryRun: !!argv.dryRun,
    noWatch: argv.watch === false,
    ...(argv.base !== undefined ? { base: argv.base } : {}),
    ...(argv.lockTimeout !== undefined ? { lockTimeoutMs: argv.lockTimeout * 1000 } : {}),
    ...(confirm ? { confirm } : {}),
  });
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  if (r.recovery) io.stderr.write(`${recoveryLine(r.recovery)}\n`);
  const lines = [
    r.dryRun
      ? 'Dry run: the patch applies. It would update the following files:'
      : 'Success. Updated the following files:',
  ];
  lines.push(...cappedLines(r.files, (f) => `${opLetter(f.op)} ${f.path}`, ''));
  if (r.leniencies.length)
    lines.push(p.dim(`(accepted with leniencies: ${r.leniencies.join(', ')})`));
  for (const w of r.warnings) lines.push(p.yellow(`warning: ${w}`));
  const merge = mergeLine(r);
  if (merge) lines.push(merge);
  if (r.commit) lines.push(p.dim(`commit ${short(r.commit)} on hagent/${r.session}`));
  printLines(io, lines);
  return 0;
}
