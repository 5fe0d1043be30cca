/**
 * The overview's batched git reads (git/ref-listing.ts, git/first-parents.ts): their pure parsers
 * on canned output, and each batched answer equal to git's own answer asked one at a time.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  changedPathsOfPairs,
  firstParentChains,
  listRefs,
  parseCommitParents,
  parseDiffTreeStdin,
  parseRefListing,
  splitBatchCommits,
} from '../../../src/git/index.js';
import { GIT_ENV, git, makeRepo, writeFiles } from '../../helpers/index.js';

Object.assign(process.env, GIT_ENV);

const t = suite('batched reads for the overview');

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

t('parseRefListing splits records on 0x01 0x00 and keeps multi-line messages', () => {
  const text = `refs/heads/x\0${A}\0${B} ${C}\0subject\n\nbody {"a":1}\n\u0001\0\nrefs/tags/t\0${B}\0\0\u0001\0\n`;
  assert.equal(parseRefListing(text), [
    { ref: 'refs/heads/x', oid: A, parents: [B, C], message: 'subject\n\nbody {"a":1}\n' },
    { ref: 'refs/tags/t', oid: B, parents: [], message: '' },
  ]);
  assert.equal(parseRefListing(''), []);
});

t('parseDiffTreeStdin gives each pair its paths, an empty diff an empty list', () => {
  assert.equal(parseDiffTreeStdin(`${A}\0x.txt\0d/y.txt\0${B}\0${A}\0z\0`, [A, B, A]), [
    ['x.txt', 'd/y.txt'],
    [],
    ['z'],
  ]);
});

t('parseCommitParents reads the header only; splitBatchCommits one entry per object', () => {
  const commit = `tree ${C}\nparent ${A}\nparent ${B}\nauthor x\n\nparent ${C}\n`;
  assert.equal(parseCommitParents(commit), [A, B]);
  const out = Buffer.from(`${A} commit ${commit.length}\n${commit}\n${B} missing\n${C} tree 0\n\n`);
  assert.equal(splitBatchCommits(out, 3), [commit, null, null]);
});

t(
  'listRefs, changedPathsOfPairs and firstParentChains answer as git does one at a time',
  async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'switch', '-q', '-c', 'side');
    writeFiles(repo, { 'b.txt': 'b\n', 'd/c.txt': 'c\n' });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'side 1');
    git(repo, 'switch', '-q', 'main');
    writeFiles(repo, { 'a.txt': 'A\n' });
    git(repo, 'commit', '-qam', 'main 1');
    git(repo, 'switch', '-q', 'side');
    git(repo, 'merge', '-q', '--no-edit', 'main');
    writeFiles(repo, { 'e.txt': 'e\n' });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'side 2');
    const side = git(repo, 'rev-parse', 'side');
    const main = git(repo, 'rev-parse', 'main');
    git(repo, 'tag', '-a', '-m', 'annotated', 'v1', main);

    const refs = await listRefs(repo, ['refs/heads/', 'refs/tags/']);
    assert.equal(
      refs.map((r) => [r.ref, r.oid]),
      git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/', 'refs/tags/')
        .split('\n')
        .map((l) => l.split(' ')),
    );
    const s = refs.find((r) => r.ref === 'refs/heads/side')!;
    assert.equal(s.parents, git(repo, 'rev-parse', 'side^@').split('\n'));
    assert.is(s.message, 'side 2\n');

    const pairs = [
      { from: base, to: side },
      { from: side, to: side },
      { from: base, to: main },
    ];
    const lists = await changedPathsOfPairs(repo, pairs);
    assert.equal(
      lists,
      pairs.map((p) => {
        const out = git(repo, 'diff', '--name-only', '--no-renames', p.from, p.to);
        return out ? out.split('\n') : [];
      }),
    );

    const chains = await firstParentChains(repo, [
      { head: side, base },
      { head: main, base },
      { head: base, base },
      { head: base, base: side }, // the base is not on the chain: rev-list's answer (nothing)
    ]);
    const count = (range: string) =>
      Number(git(repo, 'rev-list', '--first-parent', '--count', range));
    assert.equal(chains, [
      { commits: count(`${base}..${side}`), merges: true },
      { commits: count(`${base}..${main}`), merges: false },
      { commits: 0, merges: false },
      { commits: count(`${side}..${base}`), merges: false },
    ]);
    assert.is(chains[0]!.commits, 3);
  },
);

t.run();
