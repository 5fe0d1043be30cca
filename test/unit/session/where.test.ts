/**
 * Where session worktrees go (session/where.ts): the rules of the default folder and of
 * worktreeRoot, on real repositories.
 */
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { repoKey, userCacheDir, worktreeRootFor } from '../../../src/session/where.js';
import { git, makeRepo, tempDir } from '../../helpers/index.js';

const t = suite('where');

t('XDG_CACHE_HOME counts only when absolute (XDG base directory rules); else ~/.cache', () => {
  assert.is(userCacheDir({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' }), '/x/cache');
  assert.is(userCacheDir({ XDG_CACHE_HOME: 'relative/cache', HOME: '/home/u' }), '/home/u/.cache');
  assert.is(userCacheDir({ HOME: '/home/u' }), '/home/u/.cache');
  assert.is(userCacheDir({}), path.join(os.homedir(), '.cache'));
});

t(
  'the repository key is the same from every worktree of a repository, and differs between repositories of one name',
  () => {
    const repo = makeRepo();
    const common = path.join(repo, '.git');
    const linked = path.join(tempDir(), 'linked');
    git(repo, 'worktree', 'add', '-q', '-b', 'other', linked);
    const fromLinked = git(linked, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    assert.is(repoKey(fromLinked), repoKey(common));
    assert.match(
      repoKey(common),
      new RegExp(`^${path.basename(repo).replace(/[^A-Za-z0-9._-]/g, '_')}-[0-9a-f]{12}$`),
    );
    const twin = path.join(tempDir(), path.basename(repo));
    git(tempDir(), 'init', '-q', twin);
    assert.is.not(repoKey(path.join(twin, '.git')), repoKey(common));
    assert.match(
      repoKey('/srv/My Repo!.git'),
      /^My_Repo_-[0-9a-f]{12}$/,
      'a bare name is made safe for a folder',
    );
  },
);

t(
  'worktreeRoot: default, git-dir, ~/, relative to the main checkout; inside the checkout refused unless in its git folder',
  () => {
    const repo = makeRepo();
    const common = path.join(repo, '.git');
    const key = repoKey(common);
    const env = { HOME: '/home/u', XDG_CACHE_HOME: '/c' };
    assert.is(
      worktreeRootFor(common, repo, null, env),
      path.join('/c', 'hagent', 'worktrees', key),
    );
    assert.is(
      worktreeRootFor(common, repo, 'git-dir', env),
      path.join(common, 'hagent', 'worktrees'),
    );
    assert.is(worktreeRootFor(common, repo, '~/wt', env), path.join('/home/u', 'wt', key));
    assert.is(
      worktreeRootFor(common, repo, '../trees', env),
      path.join(path.dirname(repo), 'trees', key),
    );
    assert.is(worktreeRootFor(common, repo, '.git/trees', env), path.join(common, 'trees', key));
    try {
      worktreeRootFor(common, repo, 'build', env);
      assert.unreachable('a root inside the checkout');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'CONFIG_INVALID');
    }
  },
);

t.run();
