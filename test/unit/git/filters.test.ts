/**
 * Which paths git converts (git/filters.ts), judged from real attributes and config, and the
 * ids and bytes git's clean and smudge steps give.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  conversionsOf,
  parseCheckAttr,
  parseConfigZ,
  storeConverted,
  storedBlobIds,
} from '../../../src/git/filters.js';
import { git, makeRepo, writeFiles } from '../../helpers/index.js';

const t = suite('content filters');

t('check-attr and config output parse into maps', () => {
  const attrs = parseCheckAttr(Buffer.from('a b\0text\0set\0a b\0eol\0crlf\0'));
  assert.is(attrs.get('a b')!.get('eol'), 'crlf');
  const config = parseConfigZ(
    Buffer.from('core.autocrlf\ntrue\0filter.LFS.process\ngit-lfs filter-process\0'),
  );
  assert.is(config.get('filter.lfs.process'), 'git-lfs filter-process');
});

t('attributes and core.autocrlf decide which paths git converts', async () => {
  const repo = makeRepo({
    '.gitattributes':
      '*.bat text eol=crlf\n*.bin -text\n*.id ident\n*.dat filter=absent\n*.enc filter=mine\n*.le working-tree-encoding=UTF-16LE\n*.old crlf\n',
    'a.txt': 'a\n',
  });
  git(repo, 'config', 'filter.mine.clean', 'cat');
  const paths = ['a.txt', 'x.bat', 'x.bin', 'x.id', 'x.dat', 'x.enc', 'x.le', 'x.old', 'dir/y.bat'];
  let c = await conversionsOf(repo, paths);
  assert.equal([...c.converted].sort(), ['dir/y.bat', 'x.bat', 'x.enc', 'x.id', 'x.le', 'x.old']);
  assert.equal([...c.missingDriver], [['x.dat', 'absent']]);
  git(repo, 'config', 'core.autocrlf', 'true');
  c = await conversionsOf(repo, paths);
  assert.ok(c.converted.has('a.txt'), 'autocrlf converts a path with text unspecified');
  assert.not.ok(c.converted.has('x.bin'), '-text turns it off');
});

t(
  "stored ids are git's: in-process for plain paths, clean conversion for converted ones",
  async () => {
    const repo = makeRepo({ '.gitattributes': '*.bat text eol=crlf\n', 'a.txt': 'a\n' });
    writeFiles(repo, { 'run.bat': 'x\r\ny\r\n', 'p.txt': 'p\r\n' });
    const files = [
      { path: 'run.bat', bytes: Buffer.from('x\r\ny\r\n') },
      { path: 'p.txt', bytes: Buffer.from('p\r\n') },
    ];
    const ids = await storedBlobIds(repo, files, new Set(['run.bat']), 'sha1');
    assert.is(ids.get('run.bat'), git(repo, 'hash-object', 'run.bat'));
    assert.is(ids.get('p.txt'), git(repo, 'hash-object', '--no-filters', 'p.txt'));
    const stored = await storeConverted(repo, 'new.bat', Buffer.from('one\ntwo\n'));
    assert.is(git(repo, 'cat-file', 'blob', stored.oid), 'one\ntwo');
    assert.is(stored.checkedOut.toString(), 'one\r\ntwo\r\n');
  },
);

t.run();
