/**
 * `hagent demo`: the whole cycle on an embedded sample project.
 */
import { runDemoCycle } from '../demo/index.js';
import type { Io } from '../output/index.js';

export async function runDemo(argv: { keep?: boolean; json?: boolean }, io: Io): Promise<number> {
  return runDemoCycle({
    io,
    cli: [process.execPath, process.argv[1]!],
    keep: !!argv.keep,
    json: !!argv.json,
  });
}
