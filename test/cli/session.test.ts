/**
 * `hagent session start|list|status|end|update` through the real CLI on real repositories.
 * Also: long file lists in human output, and a session update stopped at conflicts.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  makeRepo,
  repoWithSession,
  startSession,
  tempDir,
  TEST_CACHE,
  updatePatch,
  writeFiles,
  writeIntentRecord,
  look,
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
  assert.match(hagent(s.worktree, ['session', 'status']).stdout, /interrupted: an apply/);
  assert.is(hagent(s.worktree, ['sync', '--json']).json.recovery.action, 'completed');
  assert.is(hagent(s.worktree, ['session', 'status', '--json']).json.interrupted, null);
});

t(
  'session start on a folder that exists refuses before making the branch, and the retry works once it is gone',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    // Where a session named f1 goes: beside the worktree of a session started and ended first.
    const probe = startSession(repo, ['--name', 'probe']);
    assert.is(hagent(repo, ['session', 'end', 'probe', '--json']).status, 0);
    const folder = path.join(path.dirname(probe.worktree), 'f1');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'left.txt'), 'left\n');
    const r = hagent(repo, ['session', 'start', '--name', 'f1', '--json']);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'SESSION_EXISTS');
    assert.is(r.json.error.path, folder);
    assert.is(git(repo, 'branch', '--list', 'hagent/f1'), '', 'no branch is left behind');
    assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions.length, 0);
    rmSync(folder, { recursive: true });
    const again = hagent(repo, ['session', 'start', '--name', 'f1', '--json']);
    assert.is(again.status, 0, again.stdout);
  },
);

t(
  'session end of a session holding a protected path hints --allow-denied or taking it out, and the hint works',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'd']);
    writeFileSync(path.join(s.worktree, '.env'), 'SECRET=1\n');
    git(s.worktree, 'add', '.env');
    git(s.worktree, 'commit', '-qm', 'env');
    const end = hagent(repo, ['session', 'end', 'd', '--json']);
    assert.is(end.json.error.code, 'UNLANDED_WORK');
    assert.match(end.json.error.hint, '--allow-denied');
    assert.match(end.json.error.hint, 'hagent undo --session d');
    assert.is(
      hagent(repo, ['land', '--session', 'd', '--yes', '--json']).json.error.code,
      'LAND_DENIED',
      'a plain land refuses, as the hint says',
    );
    const land = hagent(repo, ['land', '--session', 'd', '--yes', '--allow-denied', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
  },
);

t('git missing from PATH: GIT_FAILED saying so; with git back on PATH the command works', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const noGit = tempDir('hagent-no-git-');
  const r = hagent(repo, ['session', 'start', '--json'], { env: { PATH: noGit } });
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'GIT_FAILED');
  assert.match(r.json.error.message, /^cannot run git: spawn git ENOENT/);
  assert.match(r.json.error.hint, /install git 2\.38 or newer and make sure it is on PATH/);
  assert.is(git(repo, 'branch', '--list', 'hagent/*'), '', 'no session branch');
  const again = hagent(repo, ['session', 'start', '--json']);
  assert.is(again.status, 0, again.stdout + again.stderr);
});

t('a checkout of another branch in the worktree is reported', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'b']);
  git(s.worktree, 'checkout', '-q', '-b', 'agent-branch');
  const status = hagent(repo, ['session', 'status', 'b', '--json']).json;
  assert.is(status.drift.kind, 'other-branch');
  assert.is(status.drift.branch, 'refs/heads/agent-branch');
  assert.match(status.drift.hint, /git -C .* switch hagent\/b/);
  const human = hagent(repo, ['session', 'status', 'b']);
  assert.match(human.stdout, /moved outside hagent: its worktree has agent-branch checked out/);
  git(s.worktree, 'switch', '-q', '--detach');
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].drift.kind, 'detached');
});

// A damaged session record (not JSON, or not a session) through the real CLI: every command names
// the file and the fault (SESSION_CORRUPT), `session list` shows it as broken, and `hagent doctor`
// rebuilds it from the branch and worktree or says what to do.

function recordOf(repo: string, id: string): string {
  return path.join(repo, '.git', 'hagent', 'sessions', `${id}.json`);
}

t(
  'status and land of a record that is not JSON refuse SESSION_CORRUPT naming the file (exit 1)',
  () => {
    const repo = makeRepo();
    startSession(repo, ['--name', 'det']);
    const file = recordOf(repo, 'det');
    writeFileSync(file, '{"id":"det"\n');
    for (const args of [
      ['session', 'status', 'det'],
      ['land', '--session', 'det'],
    ]) {
      const r = hagent(repo, [...args, '--json']);
      assert.is(r.status, 1, `${args.join(' ')}: ${r.stderr}${r.stdout}`);
      assert.is(r.json.error.code, 'SESSION_CORRUPT');
      assert.is(r.json.error.file, file);
      assert.match(r.json.error.message, 'not valid JSON');
      assert.match(r.json.error.hint, 'hagent doctor');
    }
    assert.is(readFileSync(file, 'utf8'), '{"id":"det"\n', 'the record is left as it was');
  },
);

t(
  'a schema-invalid record is SESSION_CORRUPT naming the field; session list shows it as broken',
  () => {
    const repo = makeRepo();
    startSession(repo, ['--name', 'ok']);
    startSession(repo, ['--name', 'sch']);
    const file = recordOf(repo, 'sch');
    writeFileSync(file, '{"version":1,"id":"sch"}\n');
    const r = hagent(repo, ['session', 'status', 'sch', '--json']);
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'SESSION_CORRUPT');
    assert.match(r.json.error.message, 'field worktree');
    const list = hagent(repo, ['session', 'list', '--json']);
    assert.is(list.status, 0, list.stderr);
    assert.equal(
      list.json.sessions.map((s: { id: string }) => s.id),
      ['ok'],
    );
    assert.is(list.json.broken.length, 1);
    assert.is(list.json.broken[0].id, 'sch');
    assert.is(list.json.broken[0].file, file);
    assert.match(list.json.broken[0].hint, 'hagent doctor');
    const human = hagent(repo, ['session', 'list']);
    assert.match(human.stdout, /sch\s+broken: /);
  },
);

t(
  'doctor rebuilds a damaged record from branch hagent/<id> and its worktree, keeping the damaged file',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'det']);
    assert.is(hagent(s.worktree, ['apply'], { input: PATCH }).status, 0);
    const file = recordOf(repo, 'det');
    writeFileSync(file, '{"id":"det"');
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stderr);
    const f = d.json.findings.find((x: { kind: string }) => x.kind === 'session-corrupt');
    assert.ok(f, JSON.stringify(d.json.findings));
    assert.is(f.fixed, true);
    assert.is(readFileSync(`${file}.damaged`, 'utf8'), '{"id":"det"', 'the damaged file is kept');
    const st = hagent(repo, ['session', 'status', 'det', '--json']);
    assert.is(st.status, 0, st.stderr);
    assert.is(st.json.base, s.base);
    assert.is(st.json.worktree, s.worktree);
    assert.is(st.json.commits, 1);
    assert.is(st.json.target, 'refs/heads/main');
  },
);

t(
  'doctor reports a damaged record it cannot rebuild (no branch) with the hint, and leaves it',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'gone']);
    git(repo, 'worktree', 'remove', '--force', s.worktree);
    git(repo, 'branch', '-D', 'hagent/gone');
    const file = recordOf(repo, 'gone');
    writeFileSync(file, '[');
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stderr);
    const f = d.json.findings.find((x: { kind: string }) => x.kind === 'session-corrupt');
    assert.ok(f, JSON.stringify(d.json.findings));
    assert.is(f.fixed, false);
    assert.match(f.message, 'branch hagent/gone does not exist');
    assert.match(f.hint, 'mv ');
    assert.ok(existsSync(file), 'not deleted');
    const human = hagent(repo, ['doctor']);
    assert.not.match(human.stdout, /all well/i);
  },
);

// Where session worktrees live, through the real CLI: the default folder in the user's cache, a
// configured `worktreeRoot`, sessions started where earlier versions put them, and two repositories
// side by side (docs/worktrees.md).

/** A patch adding `file` with its own name as its one line. */
const ADD_NAMED = (file: string): string =>
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
    assert.is(
      hagent(r.json.worktree, ['apply', '-', '--json'], { input: ADD_NAMED('x.txt') }).status,
      0,
    );
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
          input: ADD_NAMED(`${value.replace(/\W/g, '')}.txt`),
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
      hagent(old.json.worktree, ['apply', '-', '--json'], { input: ADD_NAMED('old.txt') }).status,
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

// Recycled worktrees through the real CLI: which ended sessions enter the pool, what a pooled
// worktree keeps, how session start moves one to a new base, and how an entry with anything
// unexpected is refused and removed without losing a byte (docs/worktrees.md).

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
  'a landed session with an uncommitted or untracked file is not pooled; --force keeps the file as ended',
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
      assert.is(end.json.keptAs, `refs/hagent/${name}/ended`, edit);
      assert.equal(end.json.uncommitted, [edit]);
      assert.is(git(repo, 'show', `refs/hagent/${name}/ended:${edit}`), 'left in the worktree');
      assert.is(git(repo, 'rev-parse', `refs/hagent/${name}/ended^`), end.json.head, 'on the head');
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

// `hagent session update` through the real CLI, as an agent would use it: a land conflict, the
// update that leaves conflict markers and a merge in progress, sync refusing while markers remain
// and concluding the merge once they are gone, then the land; and a clean update.

t('a land conflict, then update, resolve, sync and land: the loop closes', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  const s = startSession(repo, ['--name', 'u']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'SESSION') })
      .status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  git(repo, 'commit', '-qam', 'user');
  const conflict = hagent(repo, ['land', '--session', 'u', '--yes', '--json']);
  assert.is(conflict.json.error.code, 'LAND_CONFLICT');
  assert.match(conflict.json.error.hint, /hagent session update --session u/);
  const update = hagent(repo, ['session', 'update', 'u', '--json']);
  assert.is(update.status, 1, update.stdout + update.stderr);
  assert.is(update.json.error.code, 'MERGE_UNRESOLVED');
  assert.equal(update.json.conflicts, ['c.txt']);
  assert.is(update.json.commit, null);
  assert.match(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), /^<<<<<<< /m);
  const again = hagent(repo, ['session', 'update', 'u', '--json']);
  assert.is(again.json.error.code, 'MERGE_IN_PROGRESS');
  assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m, 'git sees the conflict');
  const early = hagent(s.worktree, ['sync', '--json']);
  assert.is(early.json.error.code, 'MERGE_UNRESOLVED');
  assert.equal(early.json.error.files, ['c.txt']);
  writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nRESOLVED\nl3\n');
  assert.is(
    hagent(s.worktree, ['sync', '--json']).json.error.code,
    'MERGE_UNRESOLVED',
    'resolved when git add says so',
  );
  assert.match(early.json.error.hint, /git add FILE/);
  git(s.worktree, 'add', 'c.txt');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.is(
    git(repo, 'rev-list', '--parents', '-n1', 'hagent/u').split(' ').length,
    3,
    'a merge commit',
  );
  assert.not.ok(existsSync(path.join(git(s.worktree, 'rev-parse', '--git-dir'), 'MERGE_HEAD')));
  const review = hagent(repo, ['review', '--session', 'u', '--json']).json;
  assert.is(review.since, 'target');
  assert.equal(
    review.files.map((f: any) => f.path),
    ['c.txt'],
  );
  assert.is(review.drift, null, 'hagent made every move');
  const land = hagent(repo, ['land', '--session', 'u', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nRESOLVED\nl3\n');
  assert.is(hagent(repo, ['session', 'end', 'u', '--json']).status, 0);
});

t(
  'a clean update merges the target in one hagent commit, and the land brings only the session change',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'u\n' });
    const s = startSession(repo, ['--name', 'c']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') })
        .status,
      0,
    );
    writeFileSync(path.join(repo, 'u.txt'), 'user\n');
    git(repo, 'commit', '-qam', 'user');
    const update = hagent(repo, ['session', 'update', 'c', '--json']);
    assert.is(update.status, 0, update.stdout);
    assert.equal(update.json.files, [{ path: 'u.txt', status: 'M' }]);
    assert.equal(update.json.conflicts, []);
    assert.is(readFileSync(path.join(s.worktree, 'u.txt'), 'utf8'), 'user\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.match(git(repo, 'log', '-1', '--format=%B', 'hagent/c'), /Hagent-Op: update/);
    const up = hagent(repo, ['session', 'update', 'c', '--json']);
    assert.is(up.json.upToDate, true);
    const land = hagent(repo, ['land', '--session', 'c', '--yes', '--json']);
    assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
    const undo = hagent(s.worktree, ['undo', '--json']);
    assert.is(undo.status, 0, 'the update is undoable like any commit');
  },
);

t('update refuses while outside edits are pending', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'p']);
  writeFileSync(path.join(repo, 'a.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user');
  writeFileSync(path.join(s.worktree, 'new.txt'), 'x\n');
  const r = hagent(repo, ['session', 'update', 'p', '--json']);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.match(r.json.error.hint, /hagent sync --session p/);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n', 'nothing touched');
});

t('--rebase replays the patches on the target; a conflict refuses with nothing written', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'u.txt': 'u\n' });
  const s = startSession(repo, ['--name', 'r']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') }).status,
    0,
  );
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('b.txt', 'b', 'B') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user');
  const old = git(repo, 'rev-parse', 'hagent/r');
  const r = hagent(repo, ['session', 'update', 'r', '--rebase', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(
    git(repo, 'rev-parse', 'hagent/r~2'),
    git(repo, 'rev-parse', 'main'),
    'two patches on top of main',
  );
  assert.is(
    git(repo, 'rev-parse', `refs/hagent/r/rebased/${old}`),
    old,
    'the old head stays reachable',
  );
  assert.match(
    git(repo, 'notes', '--ref=hagent-sessions/r', 'show', 'hagent/r'),
    /\+B/,
    'the patch text follows the commit',
  );
  const review = hagent(repo, ['review', '--session', 'r', '--json']).json;
  assert.is(review.patches.length, 2);
  assert.is(review.drift, null);
  assert.equal(
    review.files.map((f: any) => f.path),
    ['a.txt', 'b.txt'],
  );
  writeFileSync(path.join(repo, 'a.txt'), 'user A\n');
  git(repo, 'commit', '-qam', 'user conflicts');
  const head = git(repo, 'rev-parse', 'hagent/r');
  const refused = hagent(repo, ['session', 'update', 'r', '--rebase', '--json']);
  assert.is(refused.json.error.code, 'LAND_CONFLICT');
  assert.match(refused.json.error.hint, /hagent session update --session r/);
  assert.is(git(repo, 'rev-parse', 'hagent/r'), head, 'nothing moved');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t(
  "update merges over what has landed: a landed line the user changed since is the user's, not a conflict",
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n', 'o.txt': 'o\n' });
    const s = startSession(repo, ['--name', 'lb']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'A2') })
        .status,
      0,
    );
    assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nU2\nl3\nl4\nl5\n');
    git(repo, 'commit', '-qam', 'user changes the landed line');
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('o.txt', 'o', 'AO') })
        .status,
      0,
    );
    const update = hagent(repo, ['session', 'update', 'lb', '--json']);
    assert.is(update.status, 0, update.stdout);
    assert.equal(update.json.conflicts, []);
    assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'l1\nU2\nl3\nl4\nl5\n');
    const review = hagent(repo, ['review', '--session', 'lb', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['o.txt'],
      "only the session's own change is left to land",
    );
    assert.is(hagent(repo, ['land', '--session', 'lb', '--yes', '--json']).status, 0);
    assert.is(
      readFileSync(path.join(repo, 'c.txt'), 'utf8'),
      'l1\nU2\nl3\nl4\nl5\n',
      'the user line stays',
    );
  },
);

t('a conflicted binary file or a line of seven = : git add decides, not the content', () => {
  const repo = makeRepo({
    'b.dat': Buffer.from('base\0bin'),
    'R.rst': 'Install\n=======\n\nstep 1\n',
  });
  const s = startSession(repo, ['--name', 'bin']);
  writeFileSync(path.join(s.worktree, 'b.dat'), Buffer.from('agent\0bin'));
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('R.rst', 'step 1', 'step AGENT'),
    }).status,
    0,
  );
  assert.is(hagent(s.worktree, ['sync', '--json']).status, 0);
  writeFileSync(path.join(repo, 'b.dat'), Buffer.from('user\0bin'));
  writeFileSync(path.join(repo, 'R.rst'), 'Install\n=======\n\nstep USER\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', 'bin', '--json']);
  assert.equal(update.json.conflicts.sort(), ['R.rst', 'b.dat']);
  assert.is(
    hagent(s.worktree, ['sync', '--json']).json.error.code,
    'MERGE_UNRESOLVED',
    'the binary conflict is not resolved by leaving it',
  );
  writeFileSync(path.join(s.worktree, 'R.rst'), 'Install\n=======\n\nstep BOTH\n');
  git(s.worktree, 'add', 'R.rst');
  git(s.worktree, 'checkout', '--theirs', 'b.dat');
  git(s.worktree, 'add', 'b.dat');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout);
  assert.is(hagent(repo, ['land', '--session', 'bin', '--yes', '--json']).status, 0);
  assert.is(
    readFileSync(path.join(repo, 'b.dat'), 'latin1'),
    'user\0bin',
    "the user's version, as resolved",
  );
  assert.is(readFileSync(path.join(repo, 'R.rst'), 'utf8'), 'Install\n=======\n\nstep BOTH\n');
});

t('--rebase after a land is refused (the merge knows what landed), and nothing moves', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const s = startSession(repo, ['--name', 'pr']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input:
        '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
    }).status,
    0,
  );
  look(repo, 'pr');
  assert.is(hagent(repo, ['review', '--session', 'pr', '--approve', 'a.txt', '--json']).status, 0);
  assert.is(hagent(repo, ['land', '--session', 'pr', '--json']).status, 0);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'c', 'C') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'U\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'u');
  const head = git(repo, 'rev-parse', 'hagent/pr');
  const r = hagent(repo, ['session', 'update', 'pr', '--rebase', '--json']);
  assert.is(r.json.error.code, 'LAND_CONFLICT');
  assert.match(r.json.error.hint, /hagent session update --session pr/);
  assert.is(git(repo, 'rev-parse', 'hagent/pr'), head);
  const merge = hagent(repo, ['session', 'update', 'pr', '--json']);
  assert.is(merge.status, 0, merge.stdout);
  assert.is(
    readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'),
    'B\n',
    'the unlanded change is still there',
  );
  const review = hagent(repo, ['review', '--session', 'pr', '--json']).json;
  assert.equal(review.files.map((f: any) => f.path).sort(), ['b.txt', 'c.txt']);
});

t("update of a session started on another branch keeps that branch's files", () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'checkout', '-q', '-b', 'feat');
  writeFileSync(path.join(repo, 'f.txt'), 'feature\n');
  git(repo, 'add', 'f.txt');
  git(repo, 'commit', '-qm', 'feat');
  git(repo, 'checkout', '-q', 'main');
  const s = startSession(repo, ['--name', 'fb', '--base', 'feat']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'u.txt'), 'u\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'user');
  const r = hagent(repo, ['session', 'update', 'fb', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [{ path: 'u.txt', status: 'A' }]);
  assert.is(readFileSync(path.join(s.worktree, 'f.txt'), 'utf8'), 'feature\n');
});

t('a file where the target has a folder is refused by update with nothing written', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'df']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Add File: dir/x.txt\n+x\n*** End Patch\n',
    }).status,
    0,
  );
  writeFileSync(path.join(repo, 'dir'), 'a file\n');
  git(repo, 'add', 'dir');
  git(repo, 'commit', '-qm', 'user file dir');
  const head = git(repo, 'rev-parse', 'hagent/df');
  const r = hagent(repo, ['session', 'update', 'df', '--json']);
  assert.is(r.json.error.code, 'LAND_CONFLICT', r.stdout);
  assert.is(git(repo, 'rev-parse', 'hagent/df'), head);
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'nothing written');
});

// `hagent session update` and the merge it leaves, held to what `git merge` does in the same state,
// through the real CLI on real repositories: an ignored file of the worktree that the target now
// tracks is never overwritten; a conflict leaves the index stages and the marker labels git would;
// sync does not conclude a merge whose conflicted files still hold markers; a policy-denied path
// the target brings is the user's, not the agent's.

const lines8 = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n';

/** `git ls-files -u` as `stage path` pairs (object ids left out: they are compared apart). */
const unmerged = (cwd: string) =>
  git(cwd, 'ls-files', '-u')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [info, p] = l.split('\t');
      const [mode, oid, stage] = info!.split(' ');
      return { mode, oid, stage, path: p };
    });

t(
  'an ignored file of the worktree that the target now tracks is not overwritten: refused, naming it, nothing written',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.gitignore': '*.local\n' });
    const s = startSession(repo, ['--name', 'ig']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') })
        .status,
      0,
    );
    writeFileSync(path.join(s.worktree, 'conf.local'), "the agent's own settings\n");
    writeFileSync(path.join(repo, 'conf.local'), "the user's tracked settings\n");
    git(repo, 'add', '-f', 'conf.local');
    writeFileSync(path.join(repo, 'u.txt'), 'u\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user tracks conf.local');
    const head = git(repo, 'rev-parse', 'hagent/ig');
    const r = hagent(repo, ['session', 'update', 'ig', '--json']);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'DIRTY_TARGET');
    assert.equal(r.json.error.files, ['conf.local']);
    assert.match(r.json.error.message, /conf\.local/);
    assert.is(
      readFileSync(path.join(s.worktree, 'conf.local'), 'utf8'),
      "the agent's own settings\n",
      'not overwritten',
    );
    assert.is(git(repo, 'rev-parse', 'hagent/ig'), head, 'the branch did not move');
    assert.not.ok(existsSync(path.join(s.worktree, 'u.txt')), 'nothing of the merge written');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    // The hint works: move the file away, update again.
    assert.match(r.json.error.hint, /move|delete/);
    assert.match(r.json.error.hint, /hagent session update --session ig/);
    const kept = path.join(tempDir(), 'conf.local');
    renameSync(path.join(s.worktree, 'conf.local'), kept);
    const again = hagent(repo, ['session', 'update', 'ig', '--json']);
    assert.is(again.status, 0, again.stdout + again.stderr);
    assert.is(
      readFileSync(path.join(s.worktree, 'conf.local'), 'utf8'),
      "the user's tracked settings\n",
    );
    assert.is(readFileSync(kept, 'utf8'), "the agent's own settings\n");
  },
);

t('the same with conflicts: the ignored file stays, nothing is left half-merged', () => {
  const repo = makeRepo({ 'c.txt': 'c\n', '.gitignore': 'build/\n' });
  const s = startSession(repo, ['--name', 'igc']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'c', 'SESSION') })
      .status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'USER\n');
  const build = path.join(s.worktree, 'build');
  mkdirSync(build);
  writeFileSync(path.join(build, 'out.txt'), 'built by the agent\n');
  mkdirSync(path.join(repo, 'build'), { recursive: true });
  writeFileSync(path.join(repo, 'build', 'out.txt'), 'tracked by the user\n');
  git(repo, 'add', '-f', 'build/out.txt', 'c.txt');
  git(repo, 'commit', '-qm', 'user');
  const r = hagent(repo, ['session', 'update', 'igc', '--json']);
  assert.is(r.json?.error?.code, 'DIRTY_TARGET', r.stdout + r.stderr);
  assert.equal(r.json.error.files, ['build/out.txt']);
  assert.is(readFileSync(path.join(build, 'out.txt'), 'utf8'), 'built by the agent\n');
  assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'SESSION\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'no merge left in progress');
});

/**
 * The history of a rename/modify conflict made twice: once as a session (hagent), once as plain
 * branches in a scratch repository where real `git merge` runs. Returns both worktrees.
 */
function renameModify(): { wt: string; scratch: string; id: string } {
  const repo = makeRepo({ 'a.txt': lines8 });
  const s = startSession(repo, ['--name', 'rm']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'l2', 'SESSION') })
      .status,
    0,
  );
  git(repo, 'mv', 'a.txt', 'b.txt');
  writeFileSync(path.join(repo, 'b.txt'), lines8.replace('l2', 'USER'));
  git(repo, 'add', 'b.txt');
  git(repo, 'commit', '-qm', 'user renames and edits');
  const scratch = makeRepo({ 'a.txt': lines8 });
  git(scratch, 'checkout', '-qb', 'hagent/rm');
  writeFileSync(path.join(scratch, 'a.txt'), lines8.replace('l2', 'SESSION'));
  git(scratch, 'commit', '-qam', 'session');
  git(scratch, 'checkout', '-q', 'main');
  git(scratch, 'mv', 'a.txt', 'b.txt');
  writeFileSync(path.join(scratch, 'b.txt'), lines8.replace('l2', 'USER'));
  git(scratch, 'add', 'b.txt');
  git(scratch, 'commit', '-qm', 'user renames and edits');
  git(scratch, 'checkout', '-q', 'hagent/rm');
  const r = spawnGitMerge(scratch, 'main');
  assert.is(r, 1, 'git merge conflicts too');
  const u = hagent(repo, ['session', 'update', 'rm', '--json']);
  assert.is(u.status, 1, u.stdout + u.stderr);
  assert.equal(u.json.conflicts, ['b.txt']);
  return { wt: s.worktree, scratch, id: 'rm' };
}

function spawnGitMerge(cwd: string, branch: string): number {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'merge', '-q', branch], {
    cwd,
    encoding: 'utf8',
  });
  return r.status ?? -1;
}

t('a rename/modify conflict leaves the index stages and markers real git merge leaves', () => {
  const { wt, scratch } = renameModify();
  const ours = unmerged(wt);
  const theirs = unmerged(scratch);
  assert.equal(ours, theirs, 'the same git ls-files -u, object ids included');
  assert.equal(
    ours.map((e) => `${e.stage} ${e.path}`),
    ['1 b.txt', '2 b.txt', '3 b.txt'],
  );
  assert.is(
    readFileSync(path.join(wt, 'b.txt'), 'utf8'),
    readFileSync(path.join(scratch, 'b.txt'), 'utf8'),
    'the same file, labels included',
  );
  assert.equal(git(wt, 'status', '--porcelain'), git(scratch, 'status', '--porcelain'));
});

t(
  'after a rename/modify conflict, git checkout --theirs / --ours, git add and hagent sync conclude it',
  () => {
    for (const side of ['--theirs', '--ours']) {
      const { wt, id } = renameModify();
      git(wt, 'checkout', side, 'b.txt');
      git(wt, 'add', 'b.txt');
      const sync = hagent(wt, ['sync', '--json']);
      assert.is(sync.status, 0, sync.stdout + sync.stderr);
      assert.is(sync.json.merged?.length, 40);
      assert.is(git(wt, 'status', '--porcelain'), '');
      assert.is(
        readFileSync(path.join(wt, 'b.txt'), 'utf8'),
        lines8.replace('l2', side === '--theirs' ? 'USER' : 'SESSION'),
      );
      assert.is(git(wt, 'ls-tree', '--name-only', `hagent/${id}`), 'b.txt');
    }
  },
);

t('conflict markers are labelled HEAD and the target branch, as git merge labels them', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  git(repo, 'branch', '-m', 'main', 'trunk');
  const s = startSession(repo, ['--name', 'lab']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'SESSION') })
      .status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(hagent(repo, ['session', 'update', 'lab', '--json']).status, 1);
  assert.is(
    readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
    'l1\n<<<<<<< HEAD\nSESSION\n=======\nUSER\n>>>>>>> trunk\nl3\n',
  );
  // diff3 style names the merge base by its short id, as git merge does.
  git(s.worktree, 'merge', '--abort');
  git(s.worktree, 'config', 'merge.conflictStyle', 'diff3');
  assert.is(hagent(repo, ['session', 'update', 'lab', '--json']).status, 1);
  const base = git(repo, 'rev-parse', '--short', `${'hagent/lab'}~1`);
  assert.is(
    readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
    `l1\n<<<<<<< HEAD\nSESSION\n||||||| ${base}\nl2\n=======\nUSER\n>>>>>>> trunk\nl3\n`,
  );
});

t(
  'git reset -- FILE clears the unmerged entry; sync still refuses while the markers are in it, naming the lines',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'o.txt': 'o\n' });
    const s = startSession(repo, ['--name', 'mk']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'SESSION') })
        .status,
      0,
    );
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
    git(repo, 'commit', '-qam', 'user');
    const head = git(repo, 'rev-parse', 'hagent/mk');
    assert.equal(hagent(repo, ['session', 'update', 'mk', '--json']).json.conflicts, ['c.txt']);
    git(s.worktree, 'reset', '-q', '--', 'c.txt');
    assert.equal(unmerged(s.worktree), [], 'git no longer lists it');
    // A file that was not conflicted may hold marker-like lines: it is not blocked.
    writeFileSync(path.join(s.worktree, 'o.txt'), '<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n');
    const r = hagent(s.worktree, ['sync', '--json']);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'CONFLICT_MARKERS');
    assert.equal(r.json.error.files, ['c.txt']);
    assert.is(r.json.error.path, 'c.txt');
    assert.is(r.json.error.line, 2);
    assert.match(r.json.error.message, /c\.txt:2/);
    assert.match(r.json.error.hint, /git add/);
    assert.match(r.json.error.hint, /hagent sync/);
    assert.is(git(repo, 'rev-parse', 'hagent/mk'), head, 'nothing committed');
    // Following the hint concludes it.
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.is(
      git(repo, 'rev-list', '--parents', '-n1', 'hagent/mk').split(' ').length,
      3,
      'the merge commit',
    );
    assert.is(git(repo, 'show', 'hagent/mk:o.txt'), '<<<<<<< a\nx\n=======\ny\n>>>>>>> b');
  },
);

/** A session whose update conflicts on c.txt while the target also adds a `.env` (a denied path) of the user's. */
function userEnvConflict(name: string): { repo: string; s: { worktree: string } } {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  const s = startSession(repo, ['--name', name]);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'SESSION') })
      .status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  writeFileSync(path.join(repo, '.env'), 'USER_SECRET=1\n');
  git(repo, 'add', '-f', '.env', 'c.txt');
  git(repo, 'commit', '-qm', 'user adds .env');
  assert.equal(hagent(repo, ['session', 'update', name, '--json']).json.conflicts, ['c.txt']);
  return { repo, s };
}

t(
  "a denied path the target brings in a conflicted update is the user's: kept in the merge, and the land does not refuse it",
  () => {
    const { repo, s } = userEnvConflict('den');
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.equal(sync.json.skipped, [], "the target's .env is not skipped");
    assert.is(git(repo, 'show', 'hagent/den:.env'), 'USER_SECRET=1');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    const review = hagent(repo, ['review', '--session', 'den', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['c.txt'],
    );
    const land = hagent(repo, ['land', '--session', 'den', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.equal(land.json.files, [{ path: 'c.txt', status: 'M' }]);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'USER_SECRET=1\n');
  },
);

t(
  "the agent's own edit of a denied path during the merge stays out: the merge carries the target's version",
  () => {
    const { repo, s } = userEnvConflict('den2');
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    writeFileSync(path.join(s.worktree, '.env'), 'AGENT_SECRET=2\n');
    git(s.worktree, 'add', '-f', 'c.txt', '.env');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.equal(
      sync.json.skipped.map((k: any) => k.path),
      ['.env'],
    );
    assert.is(
      git(repo, 'show', 'hagent/den2:.env'),
      'USER_SECRET=1',
      "the merge carries the target's version, not the agent's",
    );
    const land = hagent(repo, ['land', '--session', 'den2', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'USER_SECRET=1\n');
  },
);

t("a land does not refuse a denied path whose content is the target's already", () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'same']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') }).status,
    0,
  );
  // The agent's own git commit of the same .env the user then commits on the target.
  writeFileSync(path.join(s.worktree, '.env'), 'K=1\n');
  git(s.worktree, 'add', '-f', '.env');
  git(s.worktree, 'commit', '-qm', 'agent .env');
  writeFileSync(path.join(repo, '.env'), 'K=1\n');
  git(repo, 'add', '-f', '.env');
  git(repo, 'commit', '-qm', 'user .env');
  const land = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
  // A different .env is still refused.
  writeFileSync(path.join(s.worktree, '.env'), 'K=2\n');
  git(s.worktree, 'commit', '-qam', 'agent changes .env');
  const refused = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(refused.json?.error?.code, 'LAND_DENIED', refused.stdout);
  assert.equal(refused.json.error.files, ['.env']);
});

t(
  '--rebase refused on a conflict: its hint (update without --rebase, resolve, sync) is the way out',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
    const s = startSession(repo, ['--name', 'rb']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('c.txt', 'l2', 'SESSION') })
        .status,
      0,
    );
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
    git(repo, 'commit', '-qam', 'user');
    const refused = hagent(repo, ['session', 'update', 'rb', '--rebase', '--json']);
    assert.is(refused.json?.error?.code, 'LAND_CONFLICT', refused.stdout);
    assert.match(refused.json.error.hint, /hagent session update --session rb \(without --rebase/);
    assert.match(refused.json.error.hint, /hagent sync --session rb/);
    const u = hagent(repo, ['session', 'update', '--session', 'rb', '--json']);
    assert.equal(u.json.conflicts, ['c.txt']);
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    assert.is(hagent(repo, ['sync', '--session', 'rb', '--json']).status, 0);
    const land = hagent(repo, ['land', '--session', 'rb', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\n');
  },
);

// An apply concluding the merge `hagent session update` left in progress, through the real CLI on
// real repositories, as an agent that edits only through hagent would: the patch that removes the
// conflict markers is the merge commit; a patch resolving only part of the conflicts is refused
// with nothing written; an apply of other files leaves the merge in progress; undo after the
// concluding apply loses nothing.

/** A patch replacing the conflict block of AGENT (session) against USER (main) in `file` by `to`. */
const resolve = (file: string, to: string, agent = 'AGENT', user = 'USER') =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-<<<<<<< HEAD\n-${agent}\n-=======\n-${user}\n->>>>>>> main\n+${to}\n*** End Patch\n`;

const gitDir = (worktree: string) => git(worktree, 'rev-parse', '--absolute-git-dir');

const parents = (repo: string, rev: string) =>
  git(repo, 'rev-list', '--parents', '-n1', rev).split(' ').slice(1);

const MERGE_FILES = ['MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'HAGENT_MERGE_CONFLICTS'];

/**
 * A session whose agent changed line 2 of each of `files` to AGENT, and a user who changed it to
 * USER on main (and the last line, and other.txt, without conflict), then the update: every file
 * of `files` is left conflicted.
 */
function conflicted(files: string[] = ['c.txt'], name = 's1') {
  const text = 'l1\nl2\nl3\nl4\nl5\nl6\n';
  const repo = makeRepo({
    ...Object.fromEntries(files.map((f) => [f, text])),
    'other.txt': 'x\n',
    'n.txt': 'n\n',
  });
  const s = startSession(repo, ['--name', name]);
  for (const f of files)
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch(f, 'l2', 'AGENT') }).status,
      0,
    );
  const agentHead = git(repo, 'rev-parse', `hagent/${name}`);
  for (const f of files) writeFileSync(path.join(repo, f), 'l1\nUSER\nl3\nl4\nl5\nL6USER\n');
  writeFileSync(path.join(repo, 'other.txt'), 'x\ny\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', '--session', name, '--json']);
  assert.is(update.status, 1, update.stdout + update.stderr);
  assert.equal(update.json.conflicts, files);
  return { repo, s, agentHead, target: git(repo, 'rev-parse', 'main') };
}

t(
  "the patch that resolves the conflict concludes the merge: a two-parent commit, nothing left of the merge, and the land brings the resolution with the user's lines",
  () => {
    const { repo, s, agentHead, target } = conflicted();
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    const dry = hagent(s.worktree, ['apply', '--dry-run', '-'], {
      input: resolve('c.txt', 'BOTH'),
    });
    assert.is(dry.status, 0, dry.stdout + dry.stderr);
    assert.match(dry.stdout, /would conclude the merge of main/);
    assert.ok(existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')), 'a dry run writes nothing');
    const r = hagent(s.worktree, ['apply', '-'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^M c\.txt$/m);
    assert.match(r.stdout, /concluded the merge of main/);
    const head = git(repo, 'rev-parse', 'hagent/s1');
    assert.equal(
      parents(repo, head),
      [agentHead, target],
      'the merge commit: the session head, then the target',
    );
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'git status is clean');
    for (const f of MERGE_FILES)
      assert.not.ok(existsSync(path.join(gitDir(s.worktree), f)), `${f} is gone`);
    assert.is(
      readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER\n',
    );
    assert.is(
      git(repo, 'show', `${head}:other.txt`),
      'x\ny',
      "the target's clean change is in the merge",
    );
    const message = git(repo, 'log', '-1', '--format=%B', head);
    assert.match(message, /^hagent: merge [0-9a-f]{12} into session s1, conflicts resolved$/m);
    assert.match(message, /^Concluded by hagent apply:$/m);
    assert.match(message, /^Hagent-Op: update$/m);
    assert.match(message, /^Hagent-Patch-Sha256: [0-9a-f]{64}$/m);
    const retry = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(retry.json.error.code, 'NO_CHANGES', 'a retried patch is known as applied');
    assert.is(retry.json.error.alreadyApplied, true);
    const review = hagent(repo, ['review', '--session', 's1', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['c.txt'],
    );
    assert.is(review.drift, null, 'hagent made every move');
    const land = hagent(repo, ['land', '--session', 's1', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\nl4\nl5\nL6USER\n');
    assert.is(readFileSync(path.join(repo, 'other.txt'), 'utf8'), 'x\ny\n');
    assert.is(git(repo, 'status', '--porcelain'), '');
  },
);

t('--json says the apply concluded the merge, and names the target and the commit merged', () => {
  const { s, target } = conflicted();
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.merge, { concluded: true, target: 'refs/heads/main', merged: target });
  assert.equal(
    r.json.files.map((f: any) => f.path),
    ['c.txt'],
  );
  const plain = conflicted(['c.txt'], 's2');
  const other = hagent(plain.s.worktree, ['apply', '-', '--json'], {
    input: updatePatch('n.txt', 'n', 'N'),
  });
  assert.is(other.json.merge, undefined, 'an apply that concludes nothing says nothing of a merge');
});

t(
  'a patch resolving one of two conflicted files, or leaving markers, is refused MERGE_UNRESOLVED with nothing written; one resolving both concludes',
  () => {
    const { repo, s, agentHead } = conflicted(['a.txt', 'c.txt']);
    const before = {
      a: readFileSync(path.join(s.worktree, 'a.txt')),
      c: readFileSync(path.join(s.worktree, 'c.txt')),
      status: git(s.worktree, 'status', '--porcelain'),
      index: readFileSync(path.join(gitDir(s.worktree), 'index')),
    };
    const unchanged = (why: string) => {
      assert.ok(
        readFileSync(path.join(s.worktree, 'a.txt')).equals(before.a),
        `${why}: a.txt untouched`,
      );
      assert.ok(
        readFileSync(path.join(s.worktree, 'c.txt')).equals(before.c),
        `${why}: c.txt untouched`,
      );
      assert.is(
        git(s.worktree, 'status', '--porcelain'),
        before.status,
        `${why}: git status as the update left it`,
      );
      assert.ok(
        readFileSync(path.join(gitDir(s.worktree), 'index')).equals(before.index),
        `${why}: the index untouched`,
      );
      assert.is(git(repo, 'rev-parse', 'hagent/s1'), agentHead, `${why}: no commit`);
      for (const f of MERGE_FILES)
        assert.ok(existsSync(path.join(gitDir(s.worktree), f)), `${why}: ${f} kept`);
    };
    const one = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(one.status, 1);
    assert.is(one.json.error.code, 'MERGE_UNRESOLVED');
    assert.equal(one.json.error.files, ['a.txt']);
    assert.match(one.json.error.message, /a\.txt/);
    assert.match(one.json.error.hint, /one patch must resolve every conflicted file listed/);
    assert.match(one.json.error.hint, /git add/);
    assert.match(one.json.error.hint, /hagent sync --session s1/);
    unchanged('one of two');
    const half = `*** Begin Patch\n*** Update File: a.txt\n-l1\n+L1\n*** Update File: c.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+BOTH\n*** End Patch\n`;
    const markers = hagent(s.worktree, ['apply', '-', '--json'], { input: half });
    assert.is(
      markers.json.error.code,
      'MERGE_UNRESOLVED',
      'a file the patch writes with its conflict block still in it stays conflicted',
    );
    assert.equal(markers.json.error.files, ['a.txt']);
    assert.equal(markers.json.error.unresolved, [{ path: 'a.txt', reason: 'markers', line: 2 }]);
    unchanged('markers left');
    const dry = hagent(s.worktree, ['apply', '--dry-run', '-', '--json'], {
      input: resolve('c.txt', 'BOTH'),
    });
    assert.is(dry.json.error.code, 'MERGE_UNRESOLVED', 'a dry run says the same');
    const both = `*** Begin Patch\n*** Update File: a.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+A-BOTH\n*** Update File: c.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+C-BOTH\n*** End Patch\n`;
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: both });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(parents(repo, 'hagent/s1').length, 2);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'a conflict resolved with git add and the other one by a patch: the patch concludes the merge with both',
  () => {
    const { repo, s } = conflicted(['a.txt', 'c.txt']);
    writeFileSync(path.join(s.worktree, 'a.txt'), 'l1\nBY HAND\nl3\nl4\nl5\nL6USER\n');
    git(s.worktree, 'add', 'a.txt');
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(git(repo, 'show', 'hagent/s1:a.txt'), 'l1\nBY HAND\nl3\nl4\nl5\nL6USER');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'an apply of files the merge left alone keeps the merge in progress over its commit; then the resolving patch concludes it with both',
  () => {
    const { repo, s, agentHead, target } = conflicted();
    const stale = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('other.txt', 'x', 'X'),
    });
    assert.is(
      stale.json.error.code,
      'STALE_FILE',
      "a file the merge changed cleanly is not the head's (as before)",
    );
    assert.is(readFileSync(path.join(s.worktree, 'other.txt'), 'utf8'), 'x\ny\n');
    const n = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('n.txt', 'n', 'N'),
    });
    assert.is(n.status, 0, n.stdout + n.stderr);
    const nHead = n.json.commit;
    assert.equal(parents(repo, nHead), [agentHead], 'an ordinary one-parent commit');
    assert.ok(
      existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')),
      'the merge stays in progress',
    );
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    assert.match(
      git(s.worktree, 'status', '--porcelain'),
      /^M {2}other\.txt$/m,
      'the merged file is still staged',
    );
    // The record followed the new head: markers added by hand are still refused by sync.
    git(s.worktree, 'add', 'c.txt');
    assert.is(hagent(s.worktree, ['sync', '--json']).json.error.code, 'CONFLICT_MARKERS');
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.equal(parents(repo, r.json.commit), [nHead, target]);
    assert.is(git(repo, 'show', 'hagent/s1:n.txt'), 'N');
    assert.is(git(repo, 'show', 'hagent/s1:other.txt'), 'x\ny');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'undo after the concluding apply goes back to the session before the update, and redo brings the merge back',
  () => {
    const { repo, s, agentHead, target } = conflicted();
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    const undo = hagent(s.worktree, ['undo', '--json']);
    assert.is(undo.status, 0, undo.stdout + undo.stderr);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), agentHead, 'the pre-merge head');
    assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'l1\nAGENT\nl3\nl4\nl5\nl6\n');
    assert.is(readFileSync(path.join(s.worktree, 'other.txt'), 'utf8'), 'x\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.not.ok(
      existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')),
      'no merge in progress either',
    );
    const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
    assert.is(redo.status, 0, redo.stdout + redo.stderr);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
    assert.equal(parents(repo, r.json.commit), [agentHead, target]);
    assert.is(
      readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER\n',
    );
  },
);

t(
  'a MERGE_HEAD the session head holds already (what a recovered concluding apply leaves) is ended, not concluded twice',
  () => {
    const { repo, s, target } = conflicted();
    const dir = gitDir(s.worktree);
    const left = Object.fromEntries(MERGE_FILES.map((f) => [f, readFileSync(path.join(dir, f))]));
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    // The recovery finishes the commit and the ref move (transaction/recover.ts), not the merge state.
    for (const [f, bytes] of Object.entries(left)) writeFileSync(path.join(dir, f), bytes);
    assert.is(readFileSync(path.join(dir, 'MERGE_HEAD'), 'utf8').trim(), target);
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.is(sync.json.commit, null, 'no second merge commit');
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
    for (const f of MERGE_FILES) assert.not.ok(existsSync(path.join(dir, f)), `${f} is gone`);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    for (const [f, bytes] of Object.entries(left)) writeFileSync(path.join(dir, f), bytes);
    const next = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('n.txt', 'n', 'N'),
    });
    assert.is(next.status, 0, next.stdout + next.stderr);
    assert.is(next.json.merge, undefined);
    assert.not.ok(existsSync(path.join(dir, 'MERGE_HEAD')), 'the apply ends it too');
  },
);

t(
  'native edit tools through hooks (Claude Code Edit): an edit leaving conflicts is kept out, markers never committed; the edit after which nothing is conflicted concludes the merge',
  () => {
    const { repo, s, agentHead, target } = conflicted(['a.txt', 'c.txt']);
    const hook = (event: string, file: string, id: string) =>
      hagent(s.worktree, ['hook', 'claude'], {
        input: JSON.stringify({
          hook_event_name: event,
          session_id: 'x',
          cwd: s.worktree,
          tool_name: 'Edit',
          tool_use_id: id,
          tool_input: {
            file_path: path.join(s.worktree, file),
            old_string: '<<<<<<< HEAD',
            new_string: 'BOTH',
          },
        }),
      });
    const edit = (file: string, id: string) => {
      const pre = hook('PreToolUse', file, id);
      assert.is(pre.status, 0, pre.stdout + pre.stderr);
      assert.is(
        git(repo, 'rev-parse', 'hagent/s1'),
        agentHead,
        `PreToolUse on ${file} adopts no conflicted file as an outside edit`,
      );
      writeFileSync(path.join(s.worktree, file), 'l1\nBOTH\nl3\nl4\nl5\nL6USER\n');
      const post = hook('PostToolUse', file, id);
      assert.is(post.status, 0, post.stdout + post.stderr);
    };
    edit('a.txt', 't1');
    assert.is(
      git(repo, 'rev-parse', 'hagent/s1'),
      agentHead,
      'c.txt is still conflicted: nothing committed',
    );
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    assert.ok(existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')));
    edit('c.txt', 't2');
    const head = git(repo, 'rev-parse', 'hagent/s1');
    assert.equal(parents(repo, head), [agentHead, target], 'the merge commit');
    assert.is(
      git(repo, 'show', `${head}:a.txt`),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER',
      'the earlier edit is in it',
    );
    assert.is(git(repo, 'show', `${head}:other.txt`), 'x\ny');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    for (const f of MERGE_FILES)
      assert.not.ok(existsSync(path.join(gitDir(s.worktree), f)), `${f} is gone`);
    assert.not.match(
      git(repo, 'log', '-p', `${agentHead}..${head}`, '--first-parent'),
      /^\+<<<<<<< /m,
      'no commit holds the markers',
    );
  },
);

t(
  'CRLF lines: the markers the update writes are matched and removed, the lines keep their CRLF, and a block left in is refused',
  () => {
    const repo = makeRepo({ 'w.txt': 'l1\r\nl2\r\nl3\r\nl4\r\nl5\r\n' });
    const s = startSession(repo, ['--name', 'w']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('w.txt', 'l2', 'AGENT') })
        .status,
      0,
    );
    writeFileSync(path.join(repo, 'w.txt'), 'l1\r\nUSER\r\nl3\r\nl4\r\nl5\r\n');
    git(repo, 'commit', '-qam', 'user');
    assert.equal(hagent(repo, ['session', 'update', '--session', 'w', '--json']).json.conflicts, [
      'w.txt',
    ]);
    assert.match(readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'), /^<<<<<<< HEAD\r$/m);
    const still = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('w.txt', 'l1', 'L1'),
    });
    assert.is(
      still.json.error.code,
      'MERGE_UNRESOLVED',
      'an edit beside the block leaves it conflicted',
    );
    assert.equal(still.json.error.unresolved, [{ path: 'w.txt', reason: 'markers', line: 2 }]);
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('w.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(
      readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'),
      'l1\r\nBOTH\r\nl3\r\nl4\r\nl5\r\n',
    );
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'a modify/delete conflict is resolved by a patch deleting the file: the merge commit has it deleted',
  () => {
    const repo = makeRepo({ 'd.txt': 'd1\nd2\n', 'keep.txt': 'k\n' });
    const s = startSession(repo, ['--name', 'd']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('d.txt', 'd2', 'AGENT') })
        .status,
      0,
    );
    git(repo, 'rm', '-q', 'd.txt');
    git(repo, 'commit', '-qm', 'user deletes d.txt');
    const update = hagent(repo, ['session', 'update', '--session', 'd', '--json']);
    assert.equal(update.json.conflicts, ['d.txt'], update.stdout);
    const r = hagent(s.worktree, ['apply', '-', '--yes', '--json'], {
      input: '*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n',
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(parents(repo, 'hagent/d').length, 2);
    assert.not.ok(existsSync(path.join(s.worktree, 'd.txt')));
    assert.is(git(repo, 'ls-tree', '--name-only', 'hagent/d'), 'keep.txt');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

// --- Long file lists ---
// Long file lists in human output: a change over many files shows the first 20 and one
// "… and N more (use --json for all)" line; `--json` keeps every file.

const MORE = /^ {2}… and 5 more \(use --json for all\)$/m;

/** 25 new files written in the session worktree outside hagent. */
function withOutsideEdits() {
  const { repo, s } = repoWithSession();
  const files: Record<string, string> = {};
  for (let i = 0; i < 25; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = `${i}\n`;
  writeFiles(s.worktree, files);
  return { repo, s };
}

t('session status lists 20 outside edits and says how many more; --json has all 25', () => {
  const { repo } = withOutsideEdits();
  const human = hagent(repo, ['session', 'status', 's1']);
  assert.is(human.status, 0, human.stderr);
  assert.match(human.stdout, /outside edits pending \(25\)/);
  assert.is(human.stdout.match(/^ {4}A many\//gm)?.length, 20);
  assert.match(human.stdout, /^ {4}… and 5 more \(use --json for all\)$/m);
  const json = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(json.json.outsideEdits.length, 25);
});

t('sync, status, undo and land print the first 20 files, then "… and 5 more"', () => {
  const { repo, s } = withOutsideEdits();
  const sync = hagent(s.worktree, ['sync']);
  assert.is(sync.status, 0, sync.stderr);
  assert.is(sync.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(sync.stdout, MORE);
  const status = hagent(repo, ['session', 'status', 's1']);
  assert.is(status.stdout.match(/^ {4}A many\//gm)?.length, 20);
  assert.match(status.stdout, /^ {4}… and 5 more \(use --json for all\)$/m);
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.changed.length, 25);
  const review = hagent(repo, ['review', '--stat']);
  assert.is(review.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(review.stdout, MORE);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const land = hagent(repo, ['land'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(land.status, 0, land.stderr);
  assert.is(land.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(land.stdout, MORE);
  const undo = hagent(path.join(s.worktree), ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout);
  assert.is(undo.json.files.length, 25, '--json keeps the whole list');
});

t('exactly 20 files: all listed, no "more" line', () => {
  const { repo, s } = repoWithSession();
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`few/f${i}.txt`] = `${i}\n`;
  writeFiles(s.worktree, files);
  const status = hagent(repo, ['session', 'status', 's1']);
  assert.is(status.stdout.match(/^ {4}A few\//gm)?.length, 20);
  assert.not.match(status.stdout, /more \(use --json for all\)/);
});

t('session end refused over 25 unlanded files: the message names 20, files has all 25', () => {
  const { repo, s } = withOutsideEdits();
  assert.is(hagent(s.worktree, ['sync']).status, 0);
  const r = hagent(repo, ['session', 'end', 's1', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'UNLANDED_WORK');
  assert.is(r.json.error.files.length, 25);
  assert.match(r.json.error.message, /many\/f19\.txt … and 5 more \(use --json for all\)$/);
  assert.not.match(r.json.error.message, /f20/);
});

// --- session update at conflicts ---
// `hagent session update` that stops at conflicts: refused (exit 1, MERGE_UNRESOLVED) with the
// files and the ways on (sync, or git merge --abort) in the hint; the merge stays in progress.

/** A session whose a.txt line two and main's line two both changed. */
function conflicting() {
  const { repo, s } = repoWithSession();
  assert.is(
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'a.txt'), 'one\nMAIN\nthree\n');
  git(repo, 'commit', '-qam', 'user');
  return { repo, s };
}

const mergeHead = (worktree: string) =>
  existsSync(path.join(git(worktree, 'rev-parse', '--absolute-git-dir'), 'MERGE_HEAD'));

t(
  '--json: exit 1, ok false, the result fields kept, error MERGE_UNRESOLVED naming the files',
  () => {
    const { repo, s } = conflicting();
    const r = hagent(repo, ['session', 'update', 's1', '--json']);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.ok, false);
    assert.equal(r.json.conflicts, ['a.txt']);
    assert.is(r.json.commit, null);
    assert.is(r.json.session, 's1');
    assert.is(r.json.error.code, 'MERGE_UNRESOLVED');
    assert.equal(r.json.error.files, ['a.txt']);
    assert.match(r.json.error.message, /stopped at 1 conflicted file: a\.txt/);
    assert.match(r.json.error.hint, /git add it, then run hagent sync --session s1/);
    assert.match(r.json.error.hint, /merge --abort/);
    assert.ok(mergeHead(s.worktree), 'the merge stays in progress');
    assert.match(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), /<<<<<<< HEAD/);
  },
);

t('human: the conflicted files on stdout, error and hint on stderr; both ways on work', () => {
  const { repo, s } = conflicting();
  const r = hagent(repo, ['session', 'update', 's1']);
  assert.is(r.status, 1);
  assert.match(r.stdout, /1 file with conflicts\n {2}C a\.txt/);
  assert.match(r.stderr, /^error\[MERGE_UNRESOLVED\]: merging main into session s1/m);
  assert.match(r.stderr, /hint: .*hagent sync --session s1/);
  // Following the hint's second way: git merge --abort, and the session is as before.
  const abort = r.stderr.match(/git -C (\S+) merge --abort/);
  assert.ok(abort, r.stderr);
  git(abort![1]!, 'merge', '--abort');
  assert.not.ok(mergeHead(s.worktree));
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.outsideEdits.length, 0);
  // Again, and the first way: resolve, git add, hagent sync.
  assert.is(hagent(repo, ['session', 'update', 's1', '--json']).status, 1);
  writeFileSync(path.join(s.worktree, 'a.txt'), 'one\nBOTH\nthree\n');
  git(s.worktree, 'add', 'a.txt');
  const sync = hagent(repo, ['sync', '--session', 's1', '--json']);
  assert.is(sync.status, 0, sync.stdout);
  assert.not.ok(mergeHead(s.worktree));
  assert.is(hagent(repo, ['session', 'update', 's1', '--json']).json.upToDate, true);
});

t('a second update while the merge waits: MERGE_IN_PROGRESS, hint naming merge --abort', () => {
  const { repo } = conflicting();
  hagent(repo, ['session', 'update', 's1']);
  const again = hagent(repo, ['session', 'update', 's1', '--json']);
  assert.is(again.status, 1);
  assert.is(again.json.error.code, 'MERGE_IN_PROGRESS');
  assert.match(again.json.error.hint, /merge --abort/);
});

t.run();
