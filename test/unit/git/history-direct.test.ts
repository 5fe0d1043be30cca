/**
 * Worktrees and commit subjects read from git's files (git/plumbing.ts listWorktreesDirect,
 * git/commits-direct.ts) equal what `git worktree list` and `git log --first-parent --format=%s`
 * print, and hand anything else back to git.
 */
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listWorktreesDirect, parseWorktreeList } from '../../../src/git/plumbing.js';
import { firstParentSubjectsDirect } from '../../../src/git/commits-direct.js';
import { GIT_ENV, git, makeRepo, tempDir } from '../../helpers/index.js';

Object.assign(process.env, GIT_ENV);

const t = suite('history and worktrees from files');

t('worktrees: main, linked on a branch, linked detached: as git worktree list says', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const place = tempDir();
  git(repo, 'worktree', 'add', '-q', '-b', 'side', path.join(place, 'one'));
  git(repo, 'worktree', 'add', '-q', '--detach', path.join(place, 'two'));
  const common = git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
  const direct = listWorktreesDirect(common);
  const fromGit = parseWorktreeList(
    Buffer.from(git(repo, 'worktree', 'list', '--porcelain', '-z')),
  );
  const byPath = (l: { path: string }[]) => [...l].sort((a, b) => a.path.localeCompare(b.path));
  assert.ok(direct);
  assert.equal(byPath(direct!), byPath(fromGit));
  // A bare-configured repository: git answers.
  git(repo, 'config', 'core.bare', 'true');
  assert.is(listWorktreesDirect(common), null);
});

t(
  'subjects of the first-parent chain, oldest first, as git log prints them; packed history: git',
  async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    let head = base;
    const messages = [
      'hagent: 1 file (M a.txt)\n\nbody\n',
      '\n\ntwo lines  \nof subject\n\nbody',
      'trailing space   \n',
      '  indented\n',
    ];
    for (const m of messages)
      head = git(repo, 'commit-tree', '-p', head, '-m', m, `${base}^{tree}`);
    const common = path.join(repo, '.git');
    const direct = await firstParentSubjectsDirect(common, base, head);
    const fromGit = git(repo, 'log', '--first-parent', '--format=%s', `${base}..${head}`)
      .split('\n')
      .filter(Boolean)
      .reverse();
    assert.equal(direct, fromGit);
    assert.is(direct!.length, 4);
    // A base that is not on the chain, or a packed commit: git answers.
    assert.is(await firstParentSubjectsDirect(common, 'f'.repeat(40), head), null);
    git(repo, 'update-ref', 'refs/heads/keep', head);
    git(repo, 'gc', '-q', '--prune=now');
    assert.is(await firstParentSubjectsDirect(common, base, head), null);
  },
);

t.run();
