/**
 * `hagent gc`: thin glue over gc/ — plan, confirm (a terminal's yes, or `--yes`), drop, print.
 */
import { HagentError } from '../errors.js';
import { dropGc, planGc, type GcItem } from '../gc/index.js';
import { humanBytes, openRepo } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';
import { askYesNo } from './shared.js';
import type { ArgsOf } from './options.js';

/** One line of an item: what it is, its size, and why it goes or stays. */
function itemLine(i: GcItem): string {
  return `${i.name}${i.bytes !== undefined ? ` (${humanBytes(i.bytes)})` : ''}: ${i.reason}`;
}

export async function runGc(argv: ArgsOf<'gc'>, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const olderThan = argv.olderThan;
  if (olderThan !== undefined && !(Number.isFinite(olderThan) && olderThan >= 0))
    throw new HagentError(
      'USAGE',
      `--older-than needs a number of days, not ${String(olderThan)}`,
      { option: 'older-than' },
      'e.g. --older-than 30',
    );
  const plan = await planGc(ctx, {
    names: argv.names ?? [],
    ...(olderThan !== undefined ? { olderThanDays: olderThan } : {}),
    env: io.env,
  });
  const drop = plan.items.filter((i) => i.action === 'drop');
  const keep = plan.items.filter((i) => i.action === 'keep');
  const bytes = drop.reduce((n, i) => n + (i.bytes ?? 0), 0);
  const summary = `${drop.length} item${drop.length === 1 ? '' : 's'} (${humanBytes(bytes)})`;
  let dropped: GcItem[] = [];
  if (!argv.dryRun && drop.length) {
    if (!argv.yes) {
      if (!io.interactive)
        throw new HagentError(
          'CONFIRMATION_REQUIRED',
          `hagent gc would drop ${summary}; nothing was dropped`,
          { files: drop.map((i) => i.name) },
          'see them with hagent gc --dry-run, then drop them with hagent gc --yes',
        );
      if (!argv.json)
        printLines(
          io,
          drop.map((i) => `  drop ${itemLine(i)}`),
        );
      if (!(await askYesNo(io, `Drop these ${summary}?`))) {
        printLines(io, ['Nothing was dropped.']);
        return 0;
      }
    }
    dropped = await dropGc(ctx, plan);
  }
  if (argv.json) {
    printJson(io, {
      ok: true,
      dryRun: argv.dryRun === true,
      shared: plan.shared,
      items: plan.items,
      dropped: dropped.map((i) => i.name),
      bytesFreed: dropped.reduce((n, i) => n + (i.bytes ?? 0), 0),
    });
    return 0;
  }
  const p = palette(io.color);
  const lines: string[] = [];
  if (argv.dryRun || !drop.length) {
    lines.push(
      drop.length ? `Would drop ${summary}:` : 'Nothing to drop.',
      ...drop.map((i) => `  ${itemLine(i)}`),
    );
    if (drop.length) lines.push(p.dim('Drop them with: hagent gc --yes'));
  } else
    lines.push(
      `${p.green('Dropped')} ${dropped.length} item${dropped.length === 1 ? '' : 's'} (${humanBytes(dropped.reduce((n, i) => n + (i.bytes ?? 0), 0))}).`,
    );
  if (keep.length)
    lines.push(
      `Kept ${keep.length}:`,
      ...keep.slice(0, 20).map((i) => p.dim(`  ${itemLine(i)}`)),
      ...(keep.length > 20 ? [p.dim(`  … and ${keep.length - 20} more (--json lists them)`)] : []),
    );
  printLines(io, lines);
  return 0;
}
