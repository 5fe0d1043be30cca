/**
 * The pure parts of leaving a merge as git leaves it: merge-tree's conflicted file info parsed
 * into index stages, conflict marker labels rewritten from hagent's scaffolding ids to git's
 * names (only on marker lines, CRLF kept), and a conflict block told from a lone line of `=`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMergeTreeStages, relabelMarkers } from '../../../src/git/merge.js';
import { conflictBlockLine } from '../../../src/update/conflicts.js';

const t = suite('merge labels and stages');
const ids = { ours: 'a'.repeat(40), theirs: 'b'.repeat(40), base: 'c'.repeat(40) };
const labels = { ours: 'HEAD', theirs: 'main', base: '1234567' };

t('parseMergeTreeStages reads tree and stages', () => {
  const out = Buffer.from(
    [
      `${'d'.repeat(40)}`,
      `100644 ${'1'.repeat(40)} 1\tb.txt`,
      `100644 ${'2'.repeat(40)} 2\tb.txt`,
      `100755 ${'3'.repeat(40)} 3\tdir/x y.txt`,
      '',
    ].join('\0'),
  );
  const r = parseMergeTreeStages(out);
  assert.is(r.tree, 'd'.repeat(40));
  assert.equal(
    r.stages.map((s) => `${s.mode} ${s.stage} ${s.path}`),
    ['100644 1 b.txt', '100644 2 b.txt', '100755 3 dir/x y.txt'],
  );
});

t('relabelMarkers rewrites marker lines only, keeps :path and CRLF', () => {
  const text = `x\r\n<<<<<<< ${ids.ours}:a.txt\r\nS\r\n||||||| ${ids.base.slice(0, 7)}:a.txt\r\nB\r\n=======\r\nU\r\n>>>>>>> ${ids.theirs}:b.txt\r\nsee ${ids.ours}\r\n`;
  const out = relabelMarkers(Buffer.from(text), ids, labels).toString();
  assert.is(
    out,
    `x\r\n<<<<<<< HEAD:a.txt\r\nS\r\n||||||| 1234567:a.txt\r\nB\r\n=======\r\nU\r\n>>>>>>> main:b.txt\r\nsee ${ids.ours}\r\n`,
  );
});

t('relabelMarkers leaves other ids and files without markers untouched', () => {
  const text = Buffer.from(`<<<<<<< ${ids.theirs}\n=======\n>>>>>>> ${ids.ours}\n`);
  assert.is(
    relabelMarkers(text, ids, labels),
    text,
    'the same buffer: a side id on the wrong marker is content',
  );
  const plain = Buffer.from('no markers\n');
  assert.is(relabelMarkers(plain, ids, labels), plain);
});

t('conflictBlockLine finds a whole block, not a heading of =', () => {
  assert.is(conflictBlockLine(Buffer.from('a\n<<<<<<< HEAD\nS\n=======\nU\n>>>>>>> main\n')), 2);
  assert.is(conflictBlockLine(Buffer.from('Title\n=======\n\ntext\n')), null);
  assert.is(conflictBlockLine(Buffer.from('<<<<<<< HEAD\nS\n=======\nU\n')), null, 'no end marker');
  assert.is(
    conflictBlockLine(Buffer.from('a\r\n<<<<<<<<<< HEAD\r\n==========\r\n>>>>>>>>>> main\r\n')),
    2,
    'CRLF, longer markers',
  );
});

t.run();
