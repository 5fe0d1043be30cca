/**
 * `hagent session start|list|status|end` through the real CLI on real repositories.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  makeRepo,
  startSession,
  tempDir,
  TEST_CACHE,
  writeFiles,
  writeIntentRecord,
} from '../helpers/index.js';

const t = suite('session');

const PATCH =
  '*** Begin Patch\n*** Update File: README.md\n-# demo\n+# demo, edited\n*** End Patch\n';

t('start creates a worktree in the user cache folder on branch hagent/<id> from HEAD', () => {
  const repo = makeRepo();
  const r = hagent(repo, ['session', 'start', '--json', '--name', 'one']);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.json.id, 'one');
  assert.is(r.json.branch, 'hagent/one');
  assert.is(r.json.base, git(repo, 'rev-parse', 'HEAD'));
  assert.is(r.json.target, 'refs/heads/main');
  assert.ok(
    r.json.worktree.startsWith(path.join(TEST_CACHE, 'hagent', 'worktrees') + path.sep),
    r.json.worktree,
  );
  assert.is(readFileSync(path.join(r.json.worktree, 'README.md'), 'utf8'), '# demo\n');
  assert.is(git(r.json.worktree, 'symbolic-ref', 'HEAD'), 'refs/heads/hagent/one');
  assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout sees nothing");
});

t('start honours --base and refuses an unknown one with UNKNOWN_REV', () => {
  const repo = makeRepo();
  const first = git(repo, 'rev-parse', 'HEAD');
  writeFiles(repo, { 'b.txt': 'b\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'second');
  const s = startSession(repo, ['--base', first]);
  assert.is(s.base, first);
  assert.not.ok(existsSync(path.join(s.worktree, 'b.txt')));
  const bad = hagent(repo, ['session', 'start', '--json', '--base', 'no-such-branch']);
  assert.is(bad.status, 1);
  assert.is(bad.json.error.code, 'UNKNOWN_REV');
  assert.ok(bad.json.error.hint);
});

t('start copies ignored files named by .worktreeinclude, never tracked ones', () => {
  const repo = makeRepo({
    '.gitignore': '.env\nlocal/\nbig.log\n',
    '.worktreeinclude': '.env\nlocal/\nconfig.json\n',
    'config.json': '{"tracked":true}\n',
  });
  writeFiles(repo, {
    '.env': 'SECRET=1\n',
    'local/settings.json': '{}\n',
    'big.log': 'not listed\n',
  });
  writeFileSync(path.join(repo, 'config.json'), '{"tracked":false}\n');
  const r = hagent(repo, ['session', 'start', '--json']);
  assert.is(r.status, 0, r.stderr);
  assert.equal([...r.json.included].sort(), ['.env', 'local/settings.json']);
  assert.is(readFileSync(path.join(r.json.worktree, '.env'), 'utf8'), 'SECRET=1\n');
  assert.not.ok(existsSync(path.join(r.json.worktree, 'big.log')));
  assert.is(
    readFileSync(path.join(r.json.worktree, 'config.json'), 'utf8'),
    '{"tracked":true}\n',
    'tracked files come from the commit',
  );
});

t('start refuses outside a git repository, in a bare repository, and on a duplicate name', () => {
  const plain = tempDir();
  const r1 = hagent(plain, ['session', 'start', '--json']);
  assert.is(r1.status, 1);
  assert.is(r1.json.error.code, 'NOT_A_GIT_REPO');
  const repo = makeRepo();
  const bare = tempDir();
  git(bare, 'clone', '-q', '--bare', repo, 'b.git');
  const r2 = hagent(path.join(bare, 'b.git'), ['session', 'start', '--json']);
  assert.is(r2.status, 1);
  assert.is(r2.json.error.code, 'BARE_REPO');
  startSession(repo, ['--name', 'x']);
  const r3 = hagent(repo, ['session', 'start', '--json', '--name', 'x']);
  assert.is(r3.json.error.code, 'SESSION_EXISTS');
  const r4 = hagent(repo, ['session', 'start', '--json', '--name', '../evil']);
  assert.is(r4.status, 2, 'a bad name is a usage error');
  assert.is(r4.json.error.code, 'USAGE');
});

t(
  'start refuses a git older than 2.38 with GIT_TOO_OLD and leaves no worktree, branch or session',
  () => {
    const repo = makeRepo();
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
    const bin = tempDir();
    // git as an older release would answer: its own version, and every other command as usual.
    writeFileSync(
      path.join(bin, 'git'),
      `#!/bin/sh\nfor a; do last=$a; done\nif [ "$last" = version ]; then echo 'git version 2.37.9'; exit 0; fi\nexec ${JSON.stringify(realGit)} "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
    const r = hagent(repo, ['session', 'start', '--json', '--name', 'old'], { env });
    assert.is(r.status, 1, r.stderr);
    assert.is(r.json.error.code, 'GIT_TOO_OLD');
    assert.match(r.json.error.message, /2\.38/);
    assert.is(git(repo, 'branch', '--list', 'hagent/*'), '', 'the branch it made is gone');
    assert.is(
      git(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
      'only the main worktree',
    );
    assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions.length, 0);
    const bad = hagent(repo, ['session', 'start', '--json', '--base', 'no-such-rev'], { env });
    assert.is(bad.json.error.code, 'GIT_TOO_OLD', 'the old git is named before any other refusal');
  },
);

t('start reads HEAD from packed refs, on a detached HEAD and in a linked worktree', () => {
  const repo = makeRepo();
  const head = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'pack-refs', '--all');
  assert.not.ok(
    existsSync(path.join(repo, '.git', 'refs', 'heads', 'main')),
    'main is only in packed-refs',
  );
  const packed = startSession(repo, ['--name', 'packed']);
  assert.is(packed.base, head);
  assert.is(packed.target, 'refs/heads/main');
  git(repo, 'branch', 'hagent/taken');
  const taken = hagent(repo, ['session', 'start', '--json', '--name', 'taken']);
  assert.is(taken.json.error.code, 'SESSION_EXISTS', 'a packed branch of that name is seen');
  const linked = path.join(tempDir(), 'linked');
  git(repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
  writeFiles(linked, { 'f.txt': 'f\n' });
  git(linked, 'add', '-A');
  git(linked, 'commit', '-q', '-m', 'feature');
  const fromLinked = startSession(linked, ['--name', 'linked']);
  assert.is(fromLinked.base, git(linked, 'rev-parse', 'HEAD'));
  assert.is(fromLinked.target, 'refs/heads/feature');
  git(repo, 'checkout', '-q', '--detach', head);
  const detached = startSession(repo, ['--name', 'detached']);
  assert.is(detached.base, head);
  assert.is(detached.target, null);
  // A HEAD naming a branch git refuses (its file made by hand) is git's to judge, as before.
  writeFileSync(path.join(repo, '.git', 'refs', 'heads', 'a..b'), `${head}\n`);
  writeFileSync(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/a..b\n');
  const invalid = hagent(repo, ['session', 'start', '--json', '--name', 'invalid']);
  assert.is(invalid.status, 1, invalid.stdout + invalid.stderr);
  assert.is(invalid.json.error.code, 'UNKNOWN_REV');
});

t('start in a repository without commits says to make one', () => {
  const dir = tempDir();
  git(dir, 'init', '-q');
  const r = hagent(dir, ['session', 'start', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'UNKNOWN_REV');
  assert.match(r.json.error.hint, /no commit/);
});

t('list and status report commits, changed files and pending outside edits', () => {
  const repo = makeRepo();
  const s = startSession(repo, ['--name', 'st']);
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: PATCH }).status, 0);
  writeFiles(s.worktree, { 'outside.txt': 'made by hand\n' });
  const list = hagent(repo, ['session', 'list', '--json']);
  assert.is(list.json.sessions.length, 1);
  assert.is(list.json.sessions[0].commits, 1);
  const st = hagent(repo, ['session', 'status', 'st', '--json']);
  assert.is(st.status, 0);
  assert.equal(st.json.changed, [{ path: 'README.md', status: 'M' }]);
  assert.equal(st.json.outsideEdits, [{ path: 'outside.txt', status: 'A' }]);
  const human = hagent(s.worktree, ['session', 'status']);
  assert.match(human.stdout, /outside edits pending \(1\)/);
});

t('status of an unknown session is SESSION_NOT_FOUND', () => {
  const repo = makeRepo();
  const r = hagent(repo, ['session', 'status', 'nope', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'SESSION_NOT_FOUND');
});

t('end refuses to drop work that has not landed, and --force keeps the head reachable', () => {
  const repo = makeRepo();
  const s = startSession(repo, ['--name', 'e']);
  assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: PATCH }).status, 0);
  const head = git(repo, 'rev-parse', 'hagent/e');
  const r = hagent(repo, ['session', 'end', 'e', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'UNLANDED_WORK');
  assert.equal(r.json.error.files, ['README.md']);
  assert.ok(existsSync(s.worktree));
  const unconfirmed = hagent(repo, ['session', 'end', 'e', '--force', '--json']);
  assert.is(
    unconfirmed.json.error.code,
    'CONFIRMATION_REQUIRED',
    'off a TTY, --force alone drops nothing',
  );
  assert.ok(existsSync(s.worktree));
  const f = hagent(repo, ['session', 'end', 'e', '--force', '--yes', '--json']);
  assert.is(f.status, 0, f.stdout);
  assert.is(f.json.keptAs, 'refs/hagent/e/ended');
  assert.not.ok(existsSync(s.worktree));
  assert.is(git(repo, 'rev-parse', 'refs/hagent/e/ended'), head);
  assert.is(git(repo, 'branch', '--list', 'hagent/e'), '');
});

t('end of a session without work removes worktree and branch', () => {
  const repo = makeRepo();
  const s = startSession(repo, ['--name', 'empty']);
  const r = hagent(repo, ['session', 'end', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.not.ok(existsSync(s.worktree));
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions.length, 0);
});

t('an option given without its value is a usage error, and nothing is created', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  for (const args of [
    ['session', 'start', '--name'],
    ['session', 'start', '--name', '--', '--json'],
    ['session', 'start', '--base'],
  ]) {
    const r = hagent(repo, args);
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, /needs a value/);
  }
  assert.equal(hagent(repo, ['session', 'list', '--json']).json.sessions, []);
});

t('session status shows an interrupted transaction until a writing command finishes it', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'it']);
  assert.is(hagent(s.worktree, ['session', 'status', '--json']).json.interrupted, null);
  const head = git(repo, 'rev-parse', s.branch);
  writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
  const next = git(s.worktree, 'hash-object', '-w', 'a.txt');
  writeIntentRecord(repo, 'it', {
    txid: 'k',
    targets: [{ rel: 'a.txt', prior: git(repo, 'rev-parse', `${head}:a.txt`), next }],
  });
  const st = hagent(s.worktree, ['session', 'status', '--json']);
  assert.equal(st.json.interrupted.files, ['a.txt']);
  assert.is(st.json.interrupted.command, 'apply');
  assert.match(hagent(s.worktree, ['session', 'status']).stdout, /interrupted: a apply/);
  assert.is(hagent(s.worktree, ['sync', '--json']).json.recovery.action, 'completed');
  assert.is(hagent(s.worktree, ['session', 'status', '--json']).json.interrupted, null);
});

t.run();
