/**
 * `hagent status [--json] [--watch]`: the repository's overview, thin over overview/.
 */
import { readOverview, renderOverview, watchOverview, type Overview } from '../overview/index.js';
import { openRepo } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';
import type { CommonArgs } from './shared.js';

/** ANSI: cursor home, clear the screen (a terminal only). */
const CLEAR = '\u001b[H\u001b[2J';

export async function runStatus(
  argv: Pick<CommonArgs, 'json'> & { watch?: boolean },
  io: Io,
): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const p = palette(io.color);
  const json = (o: Overview) => ({ ok: true, ...o });
  if (!argv.watch) {
    const o = await readOverview(ctx);
    if (argv.json) printJson(io, json(o));
    else printLines(io, renderOverview(o, p));
    return 0;
  }
  const tty = !!(io.stdout as { isTTY?: boolean }).isTTY;
  const stop = new AbortController();
  const end = () => stop.abort();
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  io.stdout.on('error', end); // the reader went away (a closed pipe)
  try {
    await watchOverview(ctx, {
      signal: stop.signal,
      // In a pipe: one frame per change, a blank line after each; with --json one line each.
      render: (o) => (argv.json ? JSON.stringify(json(o)) : renderOverview(o, p).join('\n')),
      show: (frame) =>
        io.stdout.write(
          argv.json
            ? `${frame}\n`
            : tty
              ? `${CLEAR}${frame}\n${p.dim(`watching (${new Date().toLocaleTimeString()}); Ctrl-C to stop`)}\n`
              : `${frame}\n\n`,
        ),
    });
  } finally {
    process.off('SIGINT', end);
    process.off('SIGTERM', end);
  }
  return 0;
}
