/**
 * Finding a worktree from git's files (locateWorktreeDirect) gives what
 * `git rev-parse` gives, and declines (null: ask git) wherever git could answer otherwise.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { locateWorktreeDirect, locateRepo } from '../../../src/git/plumbing.js';
import { git, makeRepo, tempDir } from '../../helpers/index.js';

const t = suite('locate a worktree directly');

function revParse(cwd: string): { gitDir: string; commonDir: string; topLevel: string } {
  const [gitDir = '', commonDir = '', topLevel = ''] = git(
    cwd,
    'rev-parse',
    '--path-format=absolute',
    '--git-dir',
    '--git-common-dir',
    '--show-toplevel',
  ).split('\n');
  return { gitDir, commonDir, topLevel };
}

t('in a linked worktree and in a folder inside it: the same paths as git rev-parse', () => {
  const repo = makeRepo({ 'src/a.txt': 'a\n' });
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
  for (const cwd of [wt, path.join(wt, 'src')]) {
    const direct = locateWorktreeDirect(cwd);
    assert.ok(direct, cwd);
    assert.equal(
      { gitDir: direct!.gitDir, commonDir: direct!.commonDir, topLevel: direct!.topLevel },
      revParse(cwd),
    );
    assert.is(direct!.bare, false);
  }
});

t('through a symlinked path: real paths, as git gives them', () => {
  const repo = makeRepo();
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
  const link = path.join(tempDir(), 'link');
  symlinkSync(wt, link);
  const direct = locateWorktreeDirect(link)!;
  assert.equal(
    { gitDir: direct.gitDir, commonDir: direct.commonDir, topLevel: direct.topLevel },
    revParse(link),
  );
});

t('in a main worktree and a folder inside it: the same paths as git rev-parse', () => {
  const repo = makeRepo({ 'src/a.txt': 'a\n' });
  for (const cwd of [repo, path.join(repo, 'src')]) {
    const direct = locateWorktreeDirect(cwd);
    assert.ok(direct, cwd);
    assert.equal(
      { gitDir: direct!.gitDir, commonDir: direct!.commonDir, topLevel: direct!.topLevel },
      revParse(cwd),
    );
  }
});

t(
  'declines where git could answer otherwise: core.worktree, core.bare, an include, inside .git',
  () => {
    for (const [key, value] of [
      ['core.worktree', '..'],
      ['core.bare', 'true'],
      ['include.path', 'other.conf'],
    ] as const) {
      const repo = makeRepo();
      git(repo, 'config', key, value);
      assert.is(locateWorktreeDirect(repo), null, key);
    }
    for (const line of [
      '[core] bare = true',
      '[core] worktree = /elsewhere',
      '[core]\n\tbare',
      '[extensions]\n\tpartialClone = origin',
      '[extensions "x"]\n\tobjectFormat = sha256',
      '[core]\n\trepositoryformatversion = 2',
    ]) {
      const repo = makeRepo();
      writeFileSync(
        path.join(repo, '.git', 'config'),
        `${readFileSync(path.join(repo, '.git', 'config'), 'utf8')}${line}\n`,
      );
      assert.is(locateWorktreeDirect(repo), null, line);
    }
    const sha256 = makeRepo();
    writeFileSync(
      path.join(sha256, '.git', 'config'),
      `${readFileSync(path.join(sha256, '.git', 'config'), 'utf8')}[extensions]\n\tobjectFormat = sha1\n`,
    );
    assert.ok(
      locateWorktreeDirect(sha256),
      'the object format is the one extension the direct readers follow',
    );
    const garbage = makeRepo();
    writeFileSync(path.join(garbage, '.git', 'HEAD'), 'not a ref\n');
    assert.is(locateWorktreeDirect(garbage), null, 'a HEAD git would not accept');
    const linked = makeRepo();
    const wt = path.join(tempDir(), 'wt');
    git(linked, 'worktree', 'add', '-q', '-b', 'side', wt);
    assert.ok(locateWorktreeDirect(wt));
    git(linked, 'config', 'extensions.worktreeConfig', 'true');
    git(wt, 'config', '--worktree', 'core.worktree', tempDir());
    assert.is(locateWorktreeDirect(wt), null, "a worktree's config.worktree may move it");
    const repo = makeRepo();
    git(repo, 'config', 'core.bare', 'false');
    assert.ok(locateWorktreeDirect(repo), 'core.bare = false is the usual line');
    assert.is(locateWorktreeDirect(path.join(repo, '.git')), null);
    assert.is(locateWorktreeDirect(path.join(repo, '.git', 'refs')), null);
  },
);

t(
  'declines outside a repository, with a broken .git file, or with GIT_CEILING_DIRECTORIES set',
  async () => {
    const repo = makeRepo();
    assert.is(locateWorktreeDirect(tempDir()), null);
    const fake = tempDir();
    writeFileSync(path.join(fake, '.git'), 'gitdir: /nonexistent/place\n');
    assert.is(locateWorktreeDirect(fake), null);
    const noCommon = tempDir();
    mkdirSync(path.join(noCommon, 'gd'));
    writeFileSync(path.join(noCommon, 'gd', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(path.join(noCommon, '.git'), 'gitdir: gd\n');
    assert.is(
      locateWorktreeDirect(noCommon),
      null,
      'a gitdir without commondir is not a linked worktree',
    );
    const wt = path.join(tempDir(), 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
    process.env.GIT_CEILING_DIRECTORIES = path.dirname(wt);
    try {
      assert.is(locateWorktreeDirect(wt), null);
    } finally {
      delete process.env.GIT_CEILING_DIRECTORIES;
    }
    assert.ok(locateWorktreeDirect(wt));
    // locateRepo still answers for the main worktree (through git).
    assert.is((await locateRepo(repo)).topLevel, revParse(repo).topLevel);
  },
);

t.run();
