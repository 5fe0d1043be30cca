/**
 * Where session worktrees live, through the real CLI: the default folder in the user's cache,
 * a configured `worktreeRoot`, sessions started where earlier versions put them, and two
 * repositories side by side (README "Where session worktrees live").
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, TEST_CACHE, tempDir } from '../helpers/index.js';

const t = suite('worktree-root');

const ADD = (file: string): string =>
  `*** Begin Patch\n*** Add File: ${file}\n+${file}\n*** End Patch\n`;
const NO_POOL = { env: { HAGENT_POOL: '0' } };

t(
  'by default a worktree goes to $XDG_CACHE_HOME/hagent/worktrees/<repo>-<hash>/<id>: no .git folder on its path, outside the checkout',
  () => {
    const repo = makeRepo();
    const r = hagent(repo, ['session', 'start', '--name', 'one', '--json']);
    assert.is(r.status, 0, r.stderr);
    const folder = path.dirname(r.json.worktree);
    assert.is(path.dirname(folder), path.join(TEST_CACHE, 'hagent', 'worktrees'));
    assert.match(
      path.basename(folder),
      new RegExp(`^${path.basename(repo).replace(/[^A-Za-z0-9._-]/g, '_')}-[0-9a-f]{12}$`),
    );
    assert.is(path.basename(r.json.worktree), 'one');
    assert.not.ok(
      r.json.worktree.split(path.sep).includes('.git'),
      'Claude Code prompts on every edit under a .git folder',
    );
    assert.is(
      path.relative(repo, r.json.worktree).split(path.sep)[0],
      '..',
      "not inside the user's checkout",
    );
    assert.is(
      git(repo, 'status', '--porcelain', '--ignored'),
      '',
      "the user's checkout sees nothing, ignored files included",
    );
    assert.is(readFileSync(path.join(r.json.worktree, 'README.md'), 'utf8'), '# demo\n');
    // The whole cycle works there.
    assert.is(hagent(r.json.worktree, ['apply', '-', '--json'], { input: ADD('x.txt') }).status, 0);
    assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
    const end = hagent(repo, ['session', 'end', 'one', '--json'], NO_POOL);
    assert.is(end.status, 0, end.stdout + end.stderr);
    assert.is(end.json.removedWorktree, true);
    assert.not.ok(existsSync(r.json.worktree), 'session end removes the folder');
    const shown = hagent(repo, ['config', 'show', '--json']);
    assert.is(shown.json.values.worktreeRoot, folder);
    assert.is(shown.json.sources.worktreeRoot, 'default');
  },
);

t(
  'worktreeRoot in .hagent/config.json: relative to the checkout, ~/, "git-dir"; config show reports it',
  () => {
    const parent = tempDir('hagent-root-');
    const repo = path.join(parent, 'proj');
    mkdirSync(repo);
    git(repo, 'init', '-q', '--initial-branch=main');
    writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    const home = tempDir('hagent-home-');
    const cases: [string, (w: string) => void][] = [
      ['../trees', (w) => assert.is(path.dirname(path.dirname(w)), path.join(parent, 'trees'))],
      ['~/wt', (w) => assert.is(path.dirname(path.dirname(w)), path.join(home, 'wt'))],
      [
        'git-dir',
        (w) => assert.is(path.dirname(w), path.join(repo, '.git', 'hagent', 'worktrees')),
      ],
    ];
    for (const [value, check] of cases) {
      mkdirSync(path.join(repo, '.hagent'), { recursive: true });
      writeFileSync(
        path.join(repo, '.hagent', 'config.json'),
        JSON.stringify({ worktreeRoot: value }),
      );
      const r = hagent(repo, ['session', 'start', '--name', 'c1', '--json'], {
        env: { HOME: home },
      });
      assert.is(r.status, 0, r.stdout + r.stderr);
      check(r.json.worktree);
      assert.is(path.basename(r.json.worktree), 'c1');
      const shown = hagent(repo, ['config', 'show', '--json'], { env: { HOME: home } });
      assert.is(shown.json.values.worktreeRoot, path.dirname(r.json.worktree), value);
      assert.is(shown.json.sources.worktreeRoot, 'config');
      assert.is(
        hagent(r.json.worktree, ['apply', '-', '--json'], {
          input: ADD(`${value.replace(/\W/g, '')}.txt`),
        }).status,
        0,
      );
      const end = hagent(repo, ['session', 'end', 'c1', '--force', '--yes', '--json'], {
        env: { HOME: home },
      });
      assert.is(end.status, 0, end.stdout + end.stderr);
      assert.not.ok(existsSync(r.json.worktree), value);
    }
    const env = hagent(repo, ['config', 'show', '--json'], {
      env: { HAGENT_WORKTREE_ROOT: path.join(parent, 'elsewhere') },
    });
    assert.is(env.json.sources.worktreeRoot, 'env');
    assert.ok(env.json.values.worktreeRoot.startsWith(path.join(parent, 'elsewhere') + path.sep));
  },
);

t('a worktreeRoot inside the checkout is refused with CONFIG_INVALID and nothing is made', () => {
  const repo = makeRepo({
    '.hagent/config.json': '{"worktreeRoot": "build/trees"}\n',
    'a.txt': 'a\n',
  });
  const r = hagent(repo, ['session', 'start', '--name', 'bad', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'CONFIG_INVALID');
  assert.ok(r.json.error.hint);
  assert.not.ok(existsSync(path.join(repo, 'build')));
  assert.is(git(repo, 'for-each-ref', 'refs/heads/hagent/'), '');
  const schema = hagent(repo, ['config', 'schema']);
  assert.ok(
    schema.json.properties.worktreeRoot &&
      schema.json.properties.pool &&
      schema.json.properties.recycleIgnored,
  );
});

t(
  'a session started where earlier versions put worktrees keeps working there, and its end removes it',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const old = hagent(repo, ['session', 'start', '--name', 'old', '--json'], {
      env: { HAGENT_WORKTREE_ROOT: 'git-dir' },
    });
    assert.is(old.status, 0, old.stderr);
    assert.is(path.dirname(old.json.worktree), path.join(repo, '.git', 'hagent', 'worktrees'));
    // From here on, the default folder: the old session is found by its record.
    const fresh = hagent(repo, ['session', 'start', '--name', 'new', '--json']);
    assert.ok(fresh.json.worktree.startsWith(TEST_CACHE));
    assert.is(
      hagent(old.json.worktree, ['apply', '-', '--json'], { input: ADD('old.txt') }).status,
      0,
    );
    const status = hagent(old.json.worktree, ['session', 'status', '--json']);
    assert.is(status.json.id, 'old', 'resolved from inside its worktree');
    assert.is(status.json.commits, 1);
    assert.is(hagent(repo, ['land', '--session', 'old', '--yes', '--json']).status, 0);
    assert.is(readFileSync(path.join(repo, 'old.txt'), 'utf8'), 'old.txt\n');
    const doctor = hagent(repo, ['doctor', '--json']);
    // (Pools of repositories other tests of this process deleted are named too: not this one's.)
    const own = doctor.json.findings.filter(
      (f: { message: string }) => !/no longer exists/.test(f.message),
    );
    assert.equal(own, [], JSON.stringify(own));
    const end = hagent(repo, ['session', 'end', 'old', '--json']);
    assert.is(end.status, 0, end.stdout + end.stderr);
    assert.is(end.json.pooled, false, 'only worktrees of the current folder are recycled');
    assert.is(end.json.removedWorktree, true);
    assert.not.ok(existsSync(old.json.worktree));
  },
);

t('two repositories of the same name never share a folder', () => {
  const made = ['x', 'y'].map((side) => {
    const parent = tempDir(`hagent-${side}-`);
    const repo = path.join(parent, 'app');
    mkdirSync(repo);
    git(repo, 'init', '-q', '--initial-branch=main');
    writeFileSync(path.join(repo, 'side.txt'), `${side}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', side);
    const r = hagent(repo, ['session', 'start', '--name', 'same', '--json']);
    assert.is(r.status, 0, r.stderr);
    return { side, repo, worktree: r.json.worktree as string };
  });
  const [x, y] = made as [(typeof made)[0], (typeof made)[0]];
  assert.is.not(x.worktree, y.worktree);
  assert.is.not(path.dirname(x.worktree), path.dirname(y.worktree));
  assert.is(readFileSync(path.join(x.worktree, 'side.txt'), 'utf8'), 'x\n');
  assert.is(readFileSync(path.join(y.worktree, 'side.txt'), 'utf8'), 'y\n');
  assert.is(hagent(x.repo, ['session', 'end', 'same', '--json']).json.pooled, true);
  // y's start takes nothing from x's pool; y's session is untouched by x's end.
  assert.ok(existsSync(path.join(y.worktree, 'side.txt')));
  const y2 = hagent(y.repo, ['session', 'start', '--name', 'other', '--json']);
  assert.is(y2.json.recycled, false);
  assert.is(readFileSync(path.join(y2.json.worktree, 'side.txt'), 'utf8'), 'y\n');
  assert.is(
    readdirSync(path.join(path.dirname(x.worktree), '.pool')).filter((n) => !n.startsWith('.'))
      .length,
    1,
  );
});

t.run();
