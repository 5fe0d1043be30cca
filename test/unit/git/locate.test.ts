/**
 * Finding a linked worktree from git's files (locateLinkedWorktreeDirect) gives what
 * `git rev-parse` gives, and declines (null: ask git) wherever git could answer otherwise.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { locateLinkedWorktreeDirect, locateRepo } from '../../../src/git/plumbing.js';
import { git, makeRepo, tempDir } from '../../helpers/index.js';

const t = suite('locate a linked worktree directly');

function revParse(cwd: string): { gitDir: string; commonDir: string; topLevel: string } {
  const [gitDir = '', commonDir = '', topLevel = ''] = git(cwd, 'rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel').split('\n');
  return { gitDir, commonDir, topLevel };
}

t('in a linked worktree and in a folder inside it: the same paths as git rev-parse', () => {
  const repo = makeRepo({ 'src/a.txt': 'a\n' });
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
  for (const cwd of [wt, path.join(wt, 'src')]) {
    const direct = locateLinkedWorktreeDirect(cwd);
    assert.ok(direct, cwd);
    assert.equal({ gitDir: direct!.gitDir, commonDir: direct!.commonDir, topLevel: direct!.topLevel }, revParse(cwd));
    assert.is(direct!.bare, false);
  }
});

t('through a symlinked path: real paths, as git gives them', () => {
  const repo = makeRepo();
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
  const link = path.join(tempDir(), 'link');
  symlinkSync(wt, link);
  const direct = locateLinkedWorktreeDirect(link)!;
  assert.equal({ gitDir: direct.gitDir, commonDir: direct.commonDir, topLevel: direct.topLevel }, revParse(link));
});

t('declines in the main worktree, outside a repository, with a broken .git file, or with GIT_DIR set', async () => {
  const repo = makeRepo();
  assert.is(locateLinkedWorktreeDirect(repo), null, 'main worktree: git reads core.worktree/core.bare');
  assert.is(locateLinkedWorktreeDirect(tempDir()), null);
  const fake = tempDir();
  writeFileSync(path.join(fake, '.git'), 'gitdir: /nonexistent/place\n');
  assert.is(locateLinkedWorktreeDirect(fake), null);
  const noCommon = tempDir();
  mkdirSync(path.join(noCommon, 'gd'));
  writeFileSync(path.join(noCommon, 'gd', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(path.join(noCommon, '.git'), 'gitdir: gd\n');
  assert.is(locateLinkedWorktreeDirect(noCommon), null, 'a gitdir without commondir is not a linked worktree');
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
  process.env.GIT_DIR = path.join(repo, '.git');
  try {
    assert.is(locateLinkedWorktreeDirect(wt), null);
  } finally {
    delete process.env.GIT_DIR;
  }
  assert.ok(locateLinkedWorktreeDirect(wt));
  // locateRepo still answers for the main worktree (through git).
  assert.is((await locateRepo(repo)).topLevel, revParse(repo).topLevel);
});

t.run();
