/**
 * The pure parts of approval of what was reviewed and of the land's hooks: git's rename records,
 * a rename's other side joined to an approval, the terminal key, the user's core.hooksPath left
 * after hagent's own override, and a trailer added to a land message.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRenames } from '../../../src/git/renames.js';
import { parseHooksPath } from '../../../src/git/hooks-path.js';
import { withRenamePartners } from '../../../src/review/index.js';
import { terminalKey } from '../../../src/review/seen.js';
import { withTrailer } from '../../../src/land/hooks.js';

const t = suite('approval parts');
const Z = '0'.repeat(40);

t('parseRenames reads R records and steps over others', () => {
  const out = Buffer.from(
    `:100644 100644 ${Z} ${Z} R087\0old.txt\0new.txt\0:100644 000000 ${Z} ${Z} D\0gone.txt\0` +
      `:100644 100644 ${Z} ${Z} R100\0a b\0c\td\0`,
  );
  assert.equal(parseRenames(out), [
    { from: 'old.txt', to: 'new.txt', similarity: 87 },
    { from: 'a b', to: 'c\td', similarity: 100 },
  ]);
});

t('withRenamePartners adds the other side of a move named by one side only', () => {
  const renames = [{ from: 'o.txt', to: 'n.txt', similarity: 100 }];
  assert.equal(withRenamePartners(['o.txt'], renames), {
    paths: ['n.txt', 'o.txt'],
    movedWith: renames,
  });
  assert.equal(withRenamePartners(['n.txt', 'x'], renames).paths, ['n.txt', 'o.txt', 'x']);
  assert.equal(withRenamePartners(['o.txt', 'n.txt'], renames).movedWith, []);
  assert.equal(withRenamePartners(['x'], renames), { paths: ['x'], movedWith: [] });
});

t('terminalKey is stable within a process and names its process session', () => {
  const key = terminalKey();
  assert.is(terminalKey(), key);
  assert.match(key, /^(tty\d+-)?s\d+-\d+$|^p\d+$/);
});

t('parseHooksPath: the user value wins, hagent’s own null-device override is left out', () => {
  const out = (pairs: [string, string][]) =>
    Buffer.from(pairs.map(([o, v]) => `${o}\0${v}\0`).join(''));
  assert.is(
    parseHooksPath(
      out([
        ['file:.git/config', '.githooks'],
        ['command line:', '/dev/null'],
      ]),
      '/dev/null',
    ),
    '.githooks',
  );
  assert.is(parseHooksPath(out([['command line:', '/dev/null']]), '/dev/null'), null);
  assert.is(
    parseHooksPath(
      out([
        ['file:/home/u/.gitconfig', '/a'],
        ['file:.git/config', '/b'],
      ]),
      '/dev/null',
    ),
    '/b',
  );
});

t('withTrailer joins a trailer block, or starts one', () => {
  assert.is(
    withTrailer('subject\n\nbody\n\nA-B: c\n', 'X-Y: z'),
    'subject\n\nbody\n\nA-B: c\nX-Y: z\n',
  );
  assert.is(withTrailer('fix: login', 'X-Y: z'), 'fix: login\n\nX-Y: z\n');
  assert.is(
    withTrailer('fix\n\nsome words here\n', 'X-Y: z'),
    'fix\n\nsome words here\n\nX-Y: z\n',
  );
});

t.run();
