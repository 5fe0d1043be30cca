/**
 * watchTargets on a real folder: what it reports (writes, renames over a target, creates, deletes,
 * a folder created on the way to a target-to-be) and what it ignores (hagent's temp files,
 * siblings that are not targets). Real fs.watch, real writes; events are awaited, not timed.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { watchTargets } from '../../../src/transaction/index.js';
import { tempDir } from '../../helpers/index.js';

const t = suite('watch');

/** Resolves once `events` holds `want` (or rejects after 5 s: a missed event). */
async function until(events: string[], want: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!events.includes(want)) {
    if (Date.now() > deadline)
      throw new Error(`no event for ${want}; saw ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t(
  'reports a write, a rename over the file, a create and a delete of targets; ignores temp files and siblings',
  async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'd'));
    writeFileSync(path.join(root, 'd/a.txt'), 'a\n');
    writeFileSync(path.join(root, 'd/sibling.txt'), 's\n');
    const w = await watchTargets(root, ['d/a.txt', 'd/new.txt', 'top.txt']);
    try {
      writeFileSync(path.join(root, 'd/sibling.txt'), 'changed\n');
      writeFileSync(path.join(root, 'd/.a.txt.hagent-1a-0.tmp'), 'temp\n');
      writeFileSync(path.join(root, 'd/a.txt'), 'outside\n');
      await until(w.events, 'd/a.txt');
      w.events.length = 0;
      writeFileSync(path.join(root, 'd/x.tmp'), 'x\n');
      renameSync(path.join(root, 'd/x.tmp'), path.join(root, 'd/a.txt'));
      await until(w.events, 'd/a.txt');
      writeFileSync(path.join(root, 'd/new.txt'), 'n\n');
      await until(w.events, 'd/new.txt');
      writeFileSync(path.join(root, 'top.txt'), 't\n');
      await until(w.events, 'top.txt');
      w.events.length = 0;
      rmSync(path.join(root, 'd/new.txt'));
      await until(w.events, 'd/new.txt');
      w.assertHealthy();
      assert.ok(
        w.events.every((e) => ['d/a.txt', 'd/new.txt', 'top.txt'].includes(e)),
        JSON.stringify(w.events),
      );
    } finally {
      await w.close();
    }
  },
);

t(
  'a target in a folder that does not exist yet: the folder appearing counts against it',
  async () => {
    const root = tempDir();
    const w = await watchTargets(root, ['new/deep/f.txt']);
    try {
      mkdirSync(path.join(root, 'new'));
      await until(w.events, 'new/deep/f.txt');
    } finally {
      await w.close();
    }
  },
);

t('no targets: nothing to watch, and close is harmless', async () => {
  const w = await watchTargets(tempDir(), []);
  assert.equal(w.events, []);
  w.assertHealthy();
  await w.close();
});

t.run();
