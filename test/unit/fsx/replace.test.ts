/**
 * replaceIfHolds on real files: the replacement used by publish and rollback never overwrites a
 * file it was not told about (fsx/stage.ts). Each outcome is forced by the state on disk.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { replaceIfHolds } from '../../../src/fsx/stage.js';
import { tempDir } from '../../helpers/index.js';

const t = suite('replaceIfHolds');
const b = (s: string) => Buffer.from(s);

function setup(files: Record<string, string>): { dir: string; p: (n: string) => string } {
  const dir = tempDir();
  for (const [n, c] of Object.entries(files)) writeFileSync(path.join(dir, n), c);
  return { dir, p: (n) => path.join(dir, n) };
}

t('replaces a file that holds what it must, and leaves no aside or temp behind', async () => {
  const { dir, p } = setup({ 'a.txt': 'old\n', 'new.tmp': 'new\n' });
  assert.is(await replaceIfHolds(p('a.txt'), p('aside'), b('old\n'), p('new.tmp')), 'done');
  assert.is(readFileSync(p('a.txt'), 'utf8'), 'new\n');
  assert.equal(
    readdirSync(dir).sort(),
    ['a.txt', 'new.tmp'],
    'the caller removes its temp; no aside',
  );
});

t(
  'a file that holds other bytes (written after the check) is put back, nothing replaced',
  async () => {
    const { dir, p } = setup({ 'a.txt': 'outside\n', 'new.tmp': 'new\n' });
    assert.is(await replaceIfHolds(p('a.txt'), p('aside'), b('old\n'), p('new.tmp')), 'changed');
    assert.is(readFileSync(p('a.txt'), 'utf8'), 'outside\n');
    assert.not.ok(existsSync(p('aside')));
    assert.equal(readdirSync(dir).sort(), ['a.txt', 'new.tmp']);
  },
);

t('a file deleted after the check stays deleted: changed, nothing created', async () => {
  const { p } = setup({ 'new.tmp': 'new\n' });
  assert.is(await replaceIfHolds(p('a.txt'), p('aside'), b('old\n'), p('new.tmp')), 'changed');
  assert.not.ok(existsSync(p('a.txt')));
});

t('a new file never replaces one created meanwhile: taken, theirs kept', async () => {
  const { p } = setup({ 'a.txt': 'theirs\n', 'new.tmp': 'new\n' });
  assert.is(await replaceIfHolds(p('a.txt'), p('aside'), null, p('new.tmp')), 'taken');
  assert.is(readFileSync(p('a.txt'), 'utf8'), 'theirs\n');
});

t('a delete removes the file only when it holds what it must', async () => {
  const { p } = setup({ 'a.txt': 'old\n', 'b.txt': 'outside\n' });
  assert.is(await replaceIfHolds(p('a.txt'), p('aside-a'), b('old\n'), null), 'done');
  assert.not.ok(existsSync(p('a.txt')));
  assert.not.ok(existsSync(p('aside-a')));
  assert.is(await replaceIfHolds(p('b.txt'), p('aside-b'), b('old\n'), null), 'changed');
  assert.is(readFileSync(p('b.txt'), 'utf8'), 'outside\n');
  assert.not.ok(existsSync(p('aside-b')));
});

t.run();
