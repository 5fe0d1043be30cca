/**
 * `hagent log [--failed] [--json] [-n N] [--session ID]`: the journal of writing attempts.
 * Human view: one "applied" or "blocked" note per attempt, oldest first, with a
 * blocked note's code, message and hint repeated so an agent can act on it. `--json`:
 * `{entries: [...], damaged: N}` (entries as in journal.jsonl, newest last).
 */
import { readJournal, type JournalEntry } from '../journal/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import {
  cappedList,
  palette,
  printJson,
  printLines,
  short,
  type Io,
  type Palette,
} from '../output/index.js';
import { HagentError } from '../errors.js';

function note(e: JournalEntry, p: Palette): string[] {
  const time = e.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const files = e.files?.length ? [`         files: ${cappedList(e.files)}`] : [];
  if (e.ok) {
    const head = e.head ? `  head ${short(e.head)}` : '';
    return [
      `${p.green('applied')}  ${p.dim(time)}  ${p.bold(e.session)}  ${e.command}${head}`,
      ...(e.message ? [`         ${e.message}`] : []),
      ...files,
    ];
  }
  // A warning, not a refusal: the command ran, and the user's checkout changed meanwhile.
  const label = e.code === 'OUTSIDE_CHANGED' ? p.red('outside') : p.red('blocked');
  return [
    `${label}  ${p.dim(time)}  ${p.bold(e.session)}  ${e.command}  ${p.red(e.code ?? 'UNKNOWN')}`,
    ...(e.message ? [`         ${e.message}`] : []),
    ...files,
    ...(e.hint ? [`         ${p.cyan('hint:')} ${e.hint}`] : []),
  ];
}

/**
 * Prints the journal of the repository around `io.cwd`.
 * @param argv `failed`: refused attempts only; `n`: the newest N (after filters); `session`: one
 *   session's entries; `json`: machine output.
 * @returns exit status 0.
 * @throws HagentError USAGE for a negative or fractional `-n`; NOT_A_GIT_REPO outside a repository.
 */
export async function runLog(
  argv: { json?: boolean; failed?: boolean; n?: number; session?: string },
  io: Io,
): Promise<number> {
  if (argv.n !== undefined && (!Number.isInteger(argv.n) || argv.n < 0)) {
    throw new HagentError(
      'USAGE',
      `-n must be a whole number ≥ 0, got ${argv.n}`,
      {},
      'e.g. hagent log -n 20',
    );
  }
  const ctx = await openRepo(io.cwd);
  const read = await readJournal(ctx.commonDir, {
    ...(argv.failed ? { failed: true } : {}),
    ...(argv.n !== undefined ? { limit: argv.n } : {}),
    ...(argv.session !== undefined ? { session: argv.session } : {}),
  });
  // No entry for a session that does not exist either: a mistyped id, refused as everywhere.
  if (argv.session !== undefined && read.entries.length === 0 && !argv.failed)
    await resolveSession(ctx, argv.session);
  if (argv.json) {
    printJson(io, { ok: true, entries: read.entries, damaged: read.damaged });
    return 0;
  }
  const p = palette(io.color);
  const outside = read.entries.filter((e) => e.code === 'OUTSIDE_CHANGED').length;
  const blocked = read.entries.filter((e) => !e.ok).length - outside;
  const lines = read.entries.length
    ? [
        ...read.entries.flatMap((e) => note(e, p)),
        p.dim(
          `${read.entries.length} shown: ${read.entries.length - blocked - outside} applied, ${blocked} blocked${outside ? `, ${outside} changed the user's checkout` : ''}`,
        ),
      ]
    : [
        argv.failed
          ? 'No blocked attempts in the journal.'
          : 'The journal is empty: no writing command has run here yet.',
      ];
  if (read.damaged)
    lines.push(
      p.yellow(`${read.damaged} damaged journal line${read.damaged === 1 ? '' : 's'} skipped`),
    );
  printLines(io, lines);
  return 0;
}
