/**
 * A separate journal writer for the concurrency test (bundled by journal.test.ts with esbuild):
 *   child.ts <commonDir> <writer> <count>  appends <count> entries, each with a large patch text
 */
import { appendJournal } from '../../../src/journal/index.js';

const [commonDir, writer, count] = process.argv.slice(2) as [string, string, string];
for (let i = 0; i < Number(count); i++) {
  // A line of ~40 KiB: far above PIPE_BUF, so only O_APPEND + one write keeps it whole.
  const patch = `*** Begin Patch\n*** Update File: w${writer}.txt\n${`+line ${writer}-${i} ${'x'.repeat(80)}\n`.repeat(400)}*** End Patch\n`;
  await appendJournal(commonDir, {
    session: `s${writer}`,
    command: 'apply',
    ok: i % 3 !== 0,
    files: [`w${writer}.txt`],
    patch,
    ...(i % 3 === 0
      ? { code: 'STALE_FILE', message: 'changed outside', hint: 'run hagent sync' }
      : {}),
  });
}
