/**
 * A `git config` answer kept between calls (git/config-memo.ts): kept while no configuration
 * file changed, asked again after any change git would see, never kept with an include or a
 * file written within the last second. "Kept" is shown by hiding git (PATH emptied): a kept
 * answer survives, an asked one comes back empty.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { configRegexpMemo, splitOrigins } from '../../../src/git/config-memo.js';
import { locateWorktreeDirect } from '../../../src/git/plumbing.js';
import { git, makeRepo, tempDir } from '../../helpers/index.js';

const t = suite('git config memo');
const PATTERN = '^core\\.autocrlf$';
const saved = { PATH: process.env.PATH, GLOBAL: process.env.GIT_CONFIG_GLOBAL };

/** A repository whose configuration files are all older than the racy second. */
function oldRepo(): { repo: string; global: string; where: { gitDir: string; commonDir: string } } {
  const repo = makeRepo();
  const global = path.join(tempDir('hagent-global-'), 'gitconfig');
  process.env.GIT_CONFIG_GLOBAL = global;
  const here = locateWorktreeDirect(repo)!;
  age(path.join(here.commonDir, 'config'));
  return { repo, global, where: { gitDir: here.gitDir, commonDir: here.commonDir } };
}

function age(file: string): void {
  const then = new Date(Date.now() - 10_000);
  if (existsSync(file)) utimesSync(file, then, then);
}

/** The answer with git hidden: what was kept, or empty when git had to be asked. */
async function withoutGit(repo: string, where: { gitDir: string; commonDir: string }) {
  process.env.PATH = '';
  try {
    return (await configRegexpMemo(repo, PATTERN, where)).toString('utf8');
  } finally {
    process.env.PATH = saved.PATH;
  }
}

t.after.each(() => {
  process.env.PATH = saved.PATH;
  if (saved.GLOBAL === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = saved.GLOBAL;
});

t('show-origin output splits into records, origins and includes', () => {
  const out = Buffer.from(
    'file:.git/config\0core.autocrlf\ntrue\0command line:\0core.x\ny\0blob:abc\0include.path\nz\0',
  );
  const s = splitOrigins(out);
  assert.is(s.value.toString('utf8'), 'core.autocrlf\ntrue\0core.x\ny\0');
  assert.equal(s.origins, ['.git/config', '', null]);
  assert.ok(s.includes);
});

t('an unchanged configuration is answered without git; a change is seen at once', async () => {
  const { repo, where } = oldRepo();
  git(repo, 'config', 'core.autocrlf', 'input');
  age(path.join(where.commonDir, 'config'));
  const first = (await configRegexpMemo(repo, PATTERN, where)).toString('utf8');
  assert.is(first, 'core.autocrlf\ninput\0');
  assert.is(await withoutGit(repo, where), first, 'kept while nothing changed');
  git(repo, 'config', 'core.autocrlf', 'true');
  assert.is(
    (await configRegexpMemo(repo, PATTERN, where)).toString('utf8'),
    'core.autocrlf\ntrue\0',
  );
});

t('a global file created later is seen', async () => {
  const { repo, global, where } = oldRepo();
  assert.is((await configRegexpMemo(repo, PATTERN, where)).toString('utf8'), '');
  writeFileSync(global, '[core]\n\tautocrlf = true\n');
  age(global);
  assert.is(
    (await configRegexpMemo(repo, PATTERN, where)).toString('utf8'),
    'core.autocrlf\ntrue\0',
  );
});

t('nothing is kept with an include, or just after a write', async () => {
  const { repo, where } = oldRepo();
  const included = path.join(tempDir('hagent-inc-'), 'inc');
  writeFileSync(included, '[core]\n\tautocrlf = input\n');
  git(repo, 'config', 'include.path', included);
  age(path.join(where.commonDir, 'config'));
  age(included);
  assert.is(
    (await configRegexpMemo(repo, PATTERN, where)).toString('utf8'),
    'core.autocrlf\ninput\0',
  );
  assert.is(await withoutGit(repo, where), '', 'asked again: an include is never kept');
  git(repo, 'config', '--unset', 'include.path');
  git(repo, 'config', 'core.autocrlf', 'false'); // written now: racy
  assert.is(
    (await configRegexpMemo(repo, PATTERN, where)).toString('utf8'),
    'core.autocrlf\nfalse\0',
  );
  assert.is(await withoutGit(repo, where), '', 'asked again: written within the second');
});

t('without a known git dir git is asked every time', async () => {
  const { repo } = oldRepo();
  git(repo, 'config', 'core.autocrlf', 'input');
  assert.is(
    (await configRegexpMemo(repo, PATTERN, null)).toString('utf8'),
    'core.autocrlf\ninput\0',
  );
  process.env.PATH = '';
  assert.is((await configRegexpMemo(repo, PATTERN, null)).toString('utf8'), '');
});

t.run();
