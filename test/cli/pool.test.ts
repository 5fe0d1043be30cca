/**
 * Recycled worktrees through the real CLI: which ended sessions enter the pool, what a pooled
 * worktree keeps, how session start moves one to a new base, and how an entry with anything
 * unexpected is refused and removed without losing a byte (README "Recycled worktrees").
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, writeFiles } from '../helpers/index.js';

const t = suite('pool');

const ADD = (file: string, line: string): string =>
  `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch\n`;

/** The pool folder of the repository whose session worktree is `worktree`, and its entries (not its `.owner` record). */
function pool(worktree: string): { dir: string; entries: string[] } {
  const dir = path.join(path.dirname(worktree), '.pool');
  return {
    dir,
    entries: existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => !n.startsWith('.'))
          .sort()
      : [],
  };
}

/** A repository with dependency and build folders ignored, one session with an applied and landed patch. */
function landedSession(name = 's1', files: Record<string, string> = {}) {
  const repo = makeRepo({
    '.gitignore': 'node_modules/\ndist/\n.env\n',
    'a.txt': 'a\n',
    'b.txt': 'b\n',
    ...files,
  });
  const s = startSession(repo, ['--name', name]);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], { input: ADD('new.txt', 'new') });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  const landed = hagent(repo, ['land', '--yes', '--json']);
  assert.is(landed.status, 0, landed.stdout + landed.stderr);
  return { repo, s };
}

t(
  'end of a landed session keeps its worktree clean and detached in the pool; its branch goes',
  () => {
    const { repo, s } = landedSession();
    mkdirSync(path.join(s.worktree, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(
      path.join(s.worktree, 'node_modules', 'dep', 'index.js'),
      'module.exports = 1;\n',
    );
    mkdirSync(path.join(s.worktree, 'dist'));
    writeFileSync(path.join(s.worktree, 'dist', 'out.js'), 'built\n');
    const end = hagent(repo, ['session', 'end', 's1', '--json']);
    assert.is(end.status, 0, end.stdout + end.stderr);
    assert.is(end.json.pooled, true);
    assert.is(end.json.removedWorktree, false);
    assert.is(end.json.deletedBranch, true);
    assert.not.ok(existsSync(s.worktree), 'the session folder itself is gone');
    const { dir, entries } = pool(s.worktree);
    assert.is(entries.length, 1);
    const pooled = path.join(dir, entries[0]!);
    assert.ok(
      existsSync(path.join(pooled, 'node_modules', 'dep', 'index.js')),
      'an ignored dependency folder stays',
    );
    assert.not.ok(existsSync(path.join(pooled, 'dist')), 'other ignored files are removed');
    assert.is(git(pooled, 'status', '--porcelain'), '');
    assert.is(git(pooled, 'rev-parse', 'HEAD'), end.json.head);
    assert.is(git(pooled, 'rev-parse', '--symbolic-full-name', 'HEAD'), 'HEAD', 'detached');
    assert.is(git(repo, 'for-each-ref', 'refs/heads/hagent/'), '');
    assert.is(
      end.json.keptAs,
      null,
      'nothing to keep: the work has landed (refs/hagent/s1/landed/1 holds its head)',
    );
    assert.is(git(repo, 'rev-parse', 'refs/hagent/s1/landed/1'), end.json.head);
    const human = hagent(repo, ['session', 'list']);
    assert.match(human.stdout, /No sessions/, 'a pooled worktree is no session');
  },
);

t(
  'start takes the pooled worktree to the new base: only changed files written, dependencies kept, new branch',
  () => {
    const { repo, s } = landedSession();
    mkdirSync(path.join(s.worktree, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(
      path.join(s.worktree, 'node_modules', 'dep', 'index.js'),
      'module.exports = 1;\n',
    );
    assert.is(hagent(repo, ['session', 'end', 's1', '--json']).json.pooled, true);
    const pooled = path.join(pool(s.worktree).dir, pool(s.worktree).entries[0]!);
    const untouched = statSync(path.join(pooled, 'b.txt')).ino;
    writeFileSync(path.join(repo, 'a.txt'), 'a, changed on main\n');
    git(repo, 'rm', '-q', 'b.txt');
    writeFiles(repo, { 'c.txt': 'c\n', 'b.txt': 'b again\n' });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'main moves on');
    git(repo, 'rm', '-q', 'c.txt');
    git(repo, 'commit', '-q', '-m', 'and back');
    const keep = statSync(path.join(pooled, 'new.txt')).ino;
    const r = hagent(repo, ['session', 'start', '--name', 's2', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.recycled, true);
    assert.is(r.json.base, git(repo, 'rev-parse', 'HEAD'));
    assert.is(path.basename(r.json.worktree), 's2');
    assert.is(pool(s.worktree).entries.length, 0, 'taken out of the pool');
    assert.is(git(r.json.worktree, 'symbolic-ref', 'HEAD'), 'refs/heads/hagent/s2');
    assert.is(git(r.json.worktree, 'status', '--porcelain'), '');
    assert.is(readFileSync(path.join(r.json.worktree, 'a.txt'), 'utf8'), 'a, changed on main\n');
    assert.is(readFileSync(path.join(r.json.worktree, 'b.txt'), 'utf8'), 'b again\n');
    assert.not.ok(existsSync(path.join(r.json.worktree, 'c.txt')));
    assert.is(
      statSync(path.join(r.json.worktree, 'new.txt')).ino,
      keep,
      'a file unchanged since is not written again',
    );
    assert.ok(untouched > 0);
    assert.ok(
      existsSync(path.join(r.json.worktree, 'node_modules', 'dep', 'index.js')),
      'node_modules survives',
    );
    // The recycled session works like any other: apply, land, end.
    const applied = hagent(r.json.worktree, ['apply', '-', '--json'], { input: ADD('d.txt', 'd') });
    assert.is(applied.status, 0, applied.stdout + applied.stderr);
    assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
    assert.is(readFileSync(path.join(repo, 'd.txt'), 'utf8'), 'd\n');
    assert.is(hagent(repo, ['session', 'end', 's2', '--json']).json.pooled, true);
    assert.ok(git(repo, 'worktree', 'list').includes('.pool'));
  },
);

t(
  'an empty session enters the pool too; .worktreeinclude files are kept and refreshed from the checkout',
  () => {
    const repo = makeRepo({ '.gitignore': '.env\n', '.worktreeinclude': '.env\n', 'a.txt': 'a\n' });
    writeFileSync(path.join(repo, '.env'), 'TOKEN=1\n');
    const s = startSession(repo, ['--name', 'e1']);
    const end = hagent(repo, ['session', 'end', 'e1', '--json']);
    assert.is(end.json.pooled, true);
    assert.is(
      readFileSync(path.join(pool(s.worktree).dir, pool(s.worktree).entries[0]!, '.env'), 'utf8'),
      'TOKEN=1\n',
    );
    writeFileSync(path.join(repo, '.env'), 'TOKEN=2\n');
    const r = hagent(repo, ['session', 'start', '--name', 'e2', '--json']);
    assert.is(r.json.recycled, true);
    assert.equal(r.json.included, ['.env']);
    assert.is(
      readFileSync(path.join(r.json.worktree, '.env'), 'utf8'),
      'TOKEN=2\n',
      "the checkout's current copy",
    );
  },
);

t('a session with unlanded work never enters the pool, even with --force', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'u1']);
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: ADD('x.txt', 'x') }).status, 0);
  const end = hagent(repo, ['session', 'end', 'u1', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.pooled, false);
  assert.is(end.json.removedWorktree, true);
  assert.not.ok(existsSync(s.worktree));
  assert.is(pool(s.worktree).entries.length, 0);
  assert.is(git(repo, 'show', 'refs/hagent/u1/ended:x.txt'), 'x');
});

t(
  'a landed session with an uncommitted or untracked file is not pooled (--force drops it, as before)',
  () => {
    for (const [name, edit] of [
      ['m1', 'a.txt'],
      ['m2', 'untracked.txt'],
    ] as const) {
      const { repo, s } = landedSession(name);
      writeFileSync(path.join(s.worktree, edit), 'left in the worktree\n');
      const refused = hagent(repo, ['session', 'end', name, '--json']);
      assert.is(refused.json.error.code, 'UNLANDED_WORK');
      const end = hagent(repo, ['session', 'end', name, '--force', '--yes', '--json']);
      assert.is(end.json.pooled, false, edit);
      assert.is(pool(s.worktree).entries.length, 0);
    }
  },
);

t(
  'pool in the configuration: the oldest goes past the limit, 0 disables; HAGENT_POOL overrides',
  () => {
    const repo = makeRepo({ '.hagent/config.json': '{"pool": 1}\n', 'a.txt': 'a\n' });
    const a = startSession(repo, ['--name', 'p1']);
    const b = startSession(repo, ['--name', 'p2']);
    assert.is(hagent(repo, ['session', 'end', 'p1', '--json']).json.pooled, true);
    const first = pool(a.worktree).entries[0];
    assert.is(hagent(repo, ['session', 'end', 'p2', '--json']).json.pooled, true);
    const { entries } = pool(b.worktree);
    assert.is(entries.length, 1, 'pool: 1 keeps one');
    assert.is.not(entries[0], first, 'the newest stays');
    assert.is(
      git(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      2,
      'the oldest is removed from git too',
    );
    const c = startSession(repo, ['--name', 'p3']);
    const off = hagent(repo, ['session', 'end', 'p3', '--json'], { env: { HAGENT_POOL: '0' } });
    assert.is(off.json.pooled, false);
    assert.is(off.json.removedWorktree, true);
    assert.not.ok(existsSync(c.worktree));
    const shown = hagent(repo, ['config', 'show', '--json'], { env: { HAGENT_POOL: '0' } });
    assert.is(shown.json.values.pool, 0);
    assert.is(shown.json.sources.pool, 'env');
    const none = hagent(repo, ['session', 'start', '--name', 'p4', '--json'], {
      env: { HAGENT_POOL: '0' },
    });
    assert.is(none.json.recycled, false, 'pool 0: start never takes one');
  },
);

t('recycleIgnored names the ignored files a pooled worktree keeps (gitignore patterns)', () => {
  const repo = makeRepo({
    '.gitignore': 'node_modules/\ncache/\n*.log\n',
    '.hagent/config.json': '{"recycleIgnored": ["cache/"]}\n',
    'a.txt': 'a\n',
  });
  const s = startSession(repo, ['--name', 'r1']);
  writeFiles(s.worktree, {
    'cache/blob': 'kept\n',
    'node_modules/x/i.js': 'dropped\n',
    'x.log': 'dropped\n',
    'src/y.log': 'dropped\n',
  });
  assert.is(hagent(repo, ['session', 'end', 'r1', '--json']).json.pooled, true);
  const pooled = path.join(pool(s.worktree).dir, pool(s.worktree).entries[0]!);
  assert.ok(existsSync(path.join(pooled, 'cache', 'blob')));
  assert.not.ok(existsSync(path.join(pooled, 'node_modules')), 'the list replaces the default');
  assert.not.ok(existsSync(path.join(pooled, 'x.log')));
  assert.not.ok(existsSync(path.join(pooled, 'src', 'y.log')));
});

/** A repository with one pooled worktree; returns its path. */
function onePooled() {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'q1']);
  assert.is(hagent(repo, ['session', 'end', 'q1', '--json']).json.pooled, true);
  const { dir, entries } = pool(s.worktree);
  return { repo, pooled: path.join(dir, entries[0]!), name: entries[0]!, dir };
}

t(
  'a pooled worktree with a tracked change or an untracked file is not reused; its bytes are kept in a commit',
  () => {
    for (const [file, bytes] of [
      ['a.txt', 'someone wrote here\n'],
      ['notes.txt', 'a note left in the pool\n'],
    ] as const) {
      const { repo, pooled, name, dir } = onePooled();
      writeFileSync(path.join(pooled, file), bytes);
      const r = hagent(repo, ['session', 'start', '--name', 'q2', '--json']);
      assert.is(r.status, 0, r.stdout + r.stderr);
      assert.is(r.json.recycled, false, file);
      assert.is(
        readFileSync(path.join(r.json.worktree, 'a.txt'), 'utf8'),
        'a\n',
        'a fresh checkout',
      );
      assert.not.ok(existsSync(path.join(r.json.worktree, 'notes.txt')));
      assert.equal(
        readdirSync(dir).filter((n) => !n.startsWith('.')),
        [],
        'removed from the pool',
      );
      assert.is(
        git(repo, 'show', `refs/hagent/pool-kept/${name}:${file}`),
        bytes.trimEnd(),
        'never lose a byte',
      );
      assert.is(
        git(repo, 'worktree', 'list', '--porcelain')
          .split('\n')
          .filter((l) => l.startsWith('worktree ')).length,
        2,
      );
    }
  },
);

t(
  'a locked pooled worktree, one with an index.lock and one whose folder is missing are not reused, and are removed',
  () => {
    const locked = onePooled();
    git(locked.repo, 'worktree', 'lock', locked.pooled);
    const r1 = hagent(locked.repo, ['session', 'start', '--name', 'q2', '--json']);
    assert.is(r1.status, 0, r1.stdout + r1.stderr);
    assert.is(r1.json.recycled, false);
    assert.not.ok(existsSync(locked.pooled));
    assert.not.ok(git(locked.repo, 'worktree', 'list').includes('.pool'));

    const indexLocked = onePooled();
    const admin = readFileSync(path.join(indexLocked.pooled, '.git'), 'utf8')
      .trim()
      .replace(/^gitdir: /, '');
    writeFileSync(path.join(admin, 'index.lock'), '');
    const r3 = hagent(indexLocked.repo, ['session', 'start', '--name', 'q2', '--json']);
    assert.is(r3.status, 0, r3.stdout + r3.stderr);
    assert.is(r3.json.recycled, false, 'an index.lock: a git process may be at work there');
    assert.not.ok(existsSync(indexLocked.pooled));

    const missing = onePooled();
    rmSync(missing.pooled, { recursive: true, force: true });
    const r2 = hagent(missing.repo, ['session', 'start', '--name', 'q2', '--json']);
    assert.is(r2.json.recycled, false);
    assert.not.ok(
      git(missing.repo, 'worktree', 'list').includes('.pool'),
      "git's record of it is removed",
    );
  },
);

t(
  'doctor reports the pool, removes an entry start would not reuse (bytes kept) and trims past the limit',
  () => {
    const { repo, pooled, name } = onePooled();
    const ok = hagent(repo, ['doctor', '--json']);
    assert.is(ok.status, 0, ok.stdout + ok.stderr);
    assert.is(ok.json.pool.limit, 2);
    assert.equal(
      ok.json.pool.worktrees.map((w: { name: string }) => w.name),
      [name],
    );
    assert.equal(
      ok.json.findings.filter((f: { message: string }) => !/no longer exists/.test(f.message)),
      [],
    );
    assert.match(hagent(repo, ['doctor']).stdout, /Pool: 1 recycled worktree of at most 2/);
    writeFileSync(path.join(pooled, 'a.txt'), 'edited in the pool\n');
    const fixed = hagent(repo, ['doctor', '--json']);
    fixed.json.findings = fixed.json.findings.filter(
      (f: { message: string }) => !/no longer exists/.test(f.message),
    );
    assert.is(fixed.json.findings.length, 1);
    assert.is(fixed.json.findings[0].kind, 'pooled-worktree');
    assert.is(fixed.json.findings[0].fixed, true);
    assert.match(fixed.json.findings[0].message, /changes git does not ignore/);
    assert.equal(fixed.json.pool.worktrees, []);
    assert.is(git(repo, 'show', `refs/hagent/pool-kept/${name}:a.txt`), 'edited in the pool');
    // Two in the pool, then the limit lowered to 1: doctor removes the older.
    for (const id of ['t1', 't2']) startSession(repo, ['--name', id]);
    for (const id of ['t1', 't2'])
      assert.is(hagent(repo, ['session', 'end', id, '--json']).json.pooled, true);
    const trimmed = hagent(repo, ['doctor', '--json'], { env: { HAGENT_POOL: '1' } });
    assert.is(trimmed.json.pool.worktrees.length, 1);
    assert.ok(trimmed.json.findings.some((f: { message: string }) => /at most 1/.test(f.message)));
  },
);

t('doctor names the pool of a repository that was deleted, and leaves it alone', () => {
  const gone = onePooled();
  rmSync(gone.repo, { recursive: true, force: true });
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const r = hagent(repo, ['doctor', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const f = r.json.findings.find((x: { message: string }) => x.message.includes(gone.dir));
  assert.ok(f, JSON.stringify(r.json.findings));
  assert.is(f.fixed, false);
  assert.match(f.hint, /rm -rf/);
  assert.ok(existsSync(gone.pooled), 'never removed by doctor');
});

t('two session starts never take the same pooled worktree', async () => {
  const { repo } = onePooled();
  const { spawn } = await import('node:child_process');
  const { BIN, GIT_ENV } = await import('../helpers/index.js');
  const runOne = (id: string) =>
    new Promise<any>((resolve) => {
      const c = spawn(process.execPath, [BIN, 'session', 'start', '--name', id, '--json'], {
        cwd: repo,
        env: { ...process.env, ...GIT_ENV },
      });
      let out = '';
      c.stdout.on('data', (d) => {
        out += d;
      });
      c.on('close', (code) => resolve({ code, json: JSON.parse(out) }));
    });
  const [x, y] = await Promise.all([runOne('c1'), runOne('c2')]);
  assert.is(x.code, 0);
  assert.is(y.code, 0);
  assert.is([x.json.recycled, y.json.recycled].filter(Boolean).length, 1);
  for (const r of [x, y]) assert.is(git(r.json.worktree, 'status', '--porcelain'), '');
});

t.run();
