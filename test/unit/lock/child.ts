/**
 * A separate process for the lock tests (bundled by lock.test.ts with esbuild, or run with `node --import tsx`):
 *   child.ts race <commonDir> <session> <rounds> <log>  take the lock `rounds` times; inside, append
 *                                                      `enter <pid>` and `exit <pid>` lines to <log>
 *   child.ts hold <commonDir> <session> <command>      take the lock, print `locked`, hold it until killed
 *   child.ts hold-target <commonDir> <ref> <command>   the same with the land target lock of <ref>
 */
import { appendFileSync } from 'node:fs';
import { withSessionLock, withTargetLock } from '../../../src/lock/index.js';

const [mode, commonDir, session, a, b] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (mode === 'race') {
  const rounds = Number(a);
  for (let i = 0; i < rounds; i++) {
    await withSessionLock(
      commonDir,
      session,
      { command: 'race' },
      { timeoutMs: 60_000 },
      async () => {
        appendFileSync(b, `enter ${process.pid}\n`);
        await sleep(Math.random() * 3);
        appendFileSync(b, `exit ${process.pid}\n`);
      },
    );
  }
} else if (mode === 'hold-target') {
  // <session> is the target ref here.
  await withTargetLock(commonDir, session, { command: a }, { timeoutMs: 30_000 }, async () => {
    process.stdout.write('locked\n');
    await new Promise(() => setInterval(() => {}, 1000));
  });
} else if (mode === 'hold') {
  await withSessionLock(commonDir, session, { command: a }, { timeoutMs: 30_000 }, async () => {
    process.stdout.write('locked\n');
    await new Promise(() => setInterval(() => {}, 1000));
  });
}
