/**
 * The Repo handle (git/repo.ts) gives the same answer on its in-process path and on git's:
 * refs read from ref files or, for a symbolic ref, by git; first-parent subjects from loose
 * commits or, once they are packed, by git.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Repo } from '../../../src/git/repo.js';
import { git, makeRepo } from '../../helpers/index.js';
import path from 'node:path';

const t = suite('repo handle');

t('refs: from the ref files, and from git when a symbolic ref is among them', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  const r = Repo.at(repo, path.join(repo, '.git'));
  assert.is(r, Repo.at(repo, path.join(repo, '.git')), 'one handle per repository and folder');
  const plain = await r.readRefs(['refs/heads/main', 'refs/heads/none']);
  assert.equal(
    [...plain],
    [
      ['refs/heads/main', head],
      ['refs/heads/none', null],
    ],
  );
  git(repo, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
  const viaGit = await r.readRefs(['refs/heads/alias', 'refs/heads/main', 'refs/heads/none']);
  assert.equal(
    [...viaGit],
    [
      ['refs/heads/alias', head],
      ['refs/heads/main', head],
      ['refs/heads/none', null],
    ],
  );
  assert.is(await r.readRef('refs/heads/alias'), head);
  assert.is(await r.readRef('refs/heads/none'), null);
});

t('first-parent subjects: loose commits, then the same once git packed them', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const base = git(repo, 'rev-parse', 'HEAD');
  for (const [i, msg] of ['one', 'two\nwrapped line', 'three: ünïcode'].entries()) {
    git(repo, 'commit', '-q', '--allow-empty', '-m', msg, '-m', `body ${i}`);
  }
  const head = git(repo, 'rev-parse', 'HEAD');
  const r = Repo.at(repo, path.join(repo, '.git'));
  const expected = ['one', 'two wrapped line', 'three: ünïcode'];
  assert.equal(await r.firstParentSubjects(base, head), expected);
  git(repo, 'gc', '-q', '--prune=now');
  assert.equal(await r.firstParentSubjects(base, head), expected);
  assert.equal(await r.firstParentSubjects(head, head), []);
});

t("the object format is the repository's, and the loose store follows it", async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const r = Repo.at(repo, path.join(repo, '.git'));
  assert.is(r.objectFormat(), 'sha1');
  assert.is((await r.looseStore())?.format, 'sha1');
});

t.run();
