/**
 * `git config --list --show-origin -z` as the identity cache reads it (git/commit-direct.ts):
 * each setting with the file it came from, resolved against the folder git ran in; settings
 * from the command line have no file. Checked against the real git's output.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseConfigList } from '../../../src/git/commit-direct.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('git config --list --show-origin -z');

t('settings with their files, multi-line values, no-value keys and command-line settings', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'config', 'user.name', 'Grace Hopper');
  git(repo, 'config', 'x.multi', 'one\ntwo');
  spawnSync('sh', ['-c', 'printf "[x]\\n\\tbare\\n" >> .git/config'], { cwd: repo });
  const r = spawnSync('git', ['-c', 'x.cli=1', 'config', '--list', '--show-origin', '-z'], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  assert.is(r.status, 0, r.stderr);
  const settings = parseConfigList(r.stdout, repo);
  const find = (key: string) => settings.filter((s) => s.key === key).pop();
  assert.equal(find('user.name'), {
    file: path.join(repo, '.git', 'config'),
    key: 'user.name',
    value: 'Grace Hopper',
  });
  assert.is(find('x.multi')?.value, 'one\ntwo');
  assert.equal(find('x.bare'), {
    file: path.join(repo, '.git', 'config'),
    key: 'x.bare',
    value: '',
  });
  assert.equal(find('x.cli'), { file: null, key: 'x.cli', value: '1' });
});

t.run();
