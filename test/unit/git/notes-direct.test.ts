/**
 * Notes written in-process (git/notes-direct.ts) are read by git as the notes `git notes add`
 * makes, byte for byte, mixed with notes git wrote; both paths keep a patch's trailing spaces
 * and blank lines, which `git notes add -F` strips.
 */
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addNoteDirect, NOTES_REF } from '../../../src/git/notes-direct.js';
import { addNote } from '../../../src/git/objects.js';
import { looseObjectStore } from '../../../src/git/loose.js';
import { GIT_ENV, git, makeRepo } from '../../helpers/index.js';

Object.assign(process.env, GIT_ENV);

const t = suite('in-process notes');
const IDENT = 'Test User <test@example.com> 1767225600 +0000';
const TEXT =
  '\n*** Begin Patch\n*** Update File: a.txt\n@@\n context \n \n-a\n+b\n*** End Patch\n\n';

function commits(repo: string, n: number): string[] {
  const head = git(repo, 'rev-parse', 'HEAD');
  return Array.from({ length: n }, (_, i) =>
    git(repo, 'commit-tree', '-p', head, '-m', `c${i}`, `${head}^{tree}`),
  );
}

t(
  'a note written in-process reads back byte for byte through git, beside notes git wrote',
  async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const common = path.join(repo, '.git');
    const [c1, c2, c3] = commits(repo, 3) as [string, string, string];
    await addNote(repo, c1, `git ${TEXT}`); // first note by git: a flat notes tree
    const store = (await looseObjectStore(common, c1))!;
    const base = {
      store,
      commonDir: common,
      gitDir: common,
      text: TEXT,
      author: IDENT,
      committer: IDENT,
    };
    assert.ok(await addNoteDirect({ ...base, commit: c2 }));
    assert.ok(await addNoteDirect({ ...base, commit: c3, text: 'three\n' }));
    assert.ok(await addNoteDirect({ ...base, commit: c3, text: 'three, replaced\n' }));
    const show = (c: string) => git(repo, 'notes', '--ref=hagent', 'show', c);
    // git() drops the output's last newline; compare with the text cut the same way.
    const cut = (text: string) => text.replace(/\n$/, '');
    assert.is(show(c1), cut(`git ${TEXT}`));
    assert.is(show(c2), cut(TEXT));
    assert.ok(
      show(c2).includes('\n context \n \n'),
      'trailing spaces and the blank context line kept',
    );
    assert.is(show(c3), 'three, replaced');
    assert.is(
      git(repo, 'notes', '--ref=hagent', 'list').split('\n').length,
      3,
      'one note per commit',
    );
    assert.is(
      git(repo, 'log', '-1', '--format=%s%n%an', NOTES_REF),
      "Notes added by 'git notes add'\nTest User",
    );
    assert.is(
      git(repo, 'reflog', '-1', '--format=%gs', NOTES_REF),
      "notes: Notes added by 'git notes add'",
    );
    // git adding on top of the mixed tree keeps every note.
    const [c4] = commits(repo, 1) as [string];
    await addNote(repo, c4, 'four\n');
    assert.is(show(c2), cut(TEXT));
    assert.is(show(c4), 'four');
    git(repo, 'fsck', '--strict', '--no-dangling');
  },
);

t('the git path keeps the exact bytes too', async () => {
  const repo = makeRepo();
  const [c] = commits(repo, 1) as [string];
  await addNote(repo, c, TEXT);
  const blob = git(repo, 'notes', '--ref=hagent', 'list', c);
  const raw = (await import('node:child_process'))
    .spawnSync('git', ['cat-file', 'blob', blob], { cwd: repo })
    .stdout.toString('utf8');
  assert.is(raw, TEXT);
});

t('a notes commit that is not a loose object: git does it, nothing written', async () => {
  const repo = makeRepo();
  const common = path.join(repo, '.git');
  const [c1, c2] = commits(repo, 2) as [string, string];
  await addNote(repo, c1, 'one\n');
  git(repo, 'gc', '-q', '--prune=now');
  const before = git(repo, 'rev-parse', NOTES_REF);
  const store = (await looseObjectStore(common, c1))!;
  assert.is(
    await addNoteDirect({
      store,
      commonDir: common,
      gitDir: common,
      commit: c2,
      text: 'two\n',
      author: IDENT,
      committer: IDENT,
    }),
    false,
  );
  assert.is(git(repo, 'rev-parse', NOTES_REF), before);
});

t.run();
