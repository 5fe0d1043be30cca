/**
 * The kinds of repository users have, through the real CLI: SHA-256 object ids, line-ending and
 * content filters (core.autocrlf, eol=crlf, git-lfs), submodules, sparse checkouts, a bare
 * repository with worktrees and a repository folder that moved. Each runs the whole session
 * cycle, or the refusal that keeps the repository whole.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  GIT_ENV,
  git,
  hagent,
  makeRepo,
  startSession,
  tempDir,
  writeFiles,
  writeIntentRecord,
} from '../helpers/index.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('repository kinds');

/** Every CLI call of this file: no apply may spin (a parser bug once did, forever). */
const run = (cwd: string, args: string[], input?: string) =>
  hagent(cwd, args, { timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

function ok(cwd: string, args: string[], input?: string) {
  const r = run(cwd, [...args, '--json'], input);
  assert.is(r.status, 0, `hagent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.json;
}

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;
const add = (file: string, ...lines: string[]) =>
  `*** Begin Patch\n*** Add File: ${file}\n${lines.map((l) => `+${l}\n`).join('')}*** End Patch\n`;

/**
 * The whole cycle in `repo` (which holds `a.txt` = one/two/three): apply an update and an add,
 * undo and redo, an outside edit kept by sync, review, approve, land, end. Returns the session's
 * worktree for checks of its files before the end.
 */
function fullCycle(
  repo: string,
  newFile = 'n.txt',
  checks: (worktree: string) => void = () => undefined,
): void {
  const s = startSession(repo, ['--name', 'k1']);
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
  ok(s.worktree, ['apply', '-'], add(newFile, 'new'));
  ok(s.worktree, ['undo']);
  ok(s.worktree, ['undo', '--redo']);
  const a = path.join(s.worktree, 'a.txt');
  writeFileSync(a, readFileSync(a, 'latin1').replace('three', 'THREE'), 'latin1');
  const synced = ok(s.worktree, ['sync']);
  assert.equal(
    synced.files.map((f: any) => f.path ?? f),
    ['a.txt'],
    JSON.stringify(synced),
  );
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'one', 'ONE'));
  assert.is(
    git(s.worktree, 'status', '--porcelain'),
    '',
    'the session worktree is clean as git sees it',
  );
  checks(s.worktree);
  const review = ok(repo, ['review']);
  assert.equal(review.files.map((f: any) => f.path).sort(), ['a.txt', newFile].sort());
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean after the land");
  assert.equal(git(repo, 'show', 'main:a.txt').split('\n'), ['ONE', 'TWO', 'THREE']);
  ok(repo, ['session', 'end']);
  git(repo, 'fsck', '--no-progress');
}

t('SHA-256: the whole cycle works and no apply spins', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n', 'd/e.txt': 'deep\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  fullCycle(repo, 'd/sub/n.txt');
  assert.is(git(repo, 'rev-parse', 'HEAD').length, 64);
  assert.is(git(repo, 'show', 'main:d/sub/n.txt'), 'new');
});

t('SHA-256: undo refuses a real outside edit and takes back its own patch otherwise', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  const s = startSession(repo, ['--name', 'k2']);
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
  writeFileSync(path.join(s.worktree, 'a.txt'), 'outside\n');
  const stale = run(s.worktree, ['undo', '--json']);
  assert.is(stale.status, 1, stale.stdout);
  assert.is(stale.json.error.code, 'STALE_FILE');
  git(s.worktree, 'checkout', '--', 'a.txt');
  ok(s.worktree, ['undo']);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

/** The bytes `git checkout` writes for `rev:file` in `repo` (smudge and end-of-line conversion). */
function checkedOut(repo: string, rev: string, file: string): Buffer {
  const r = spawnSync('git', ['cat-file', '--filters', `${rev}:${file}`], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV },
  });
  assert.is(r.status, 0, r.stderr.toString());
  return r.stdout;
}

/** A repository whose files are committed, then checked out again under its attributes and config. */
function convertingRepo(
  files: Record<string, string>,
  config: Record<string, string> = {},
): string {
  const repo = makeRepo(files);
  for (const [k, v] of Object.entries(config)) git(repo, 'config', k, v);
  for (const f of Object.keys(files)) rmSync(path.join(repo, f));
  git(repo, 'checkout', '--', '.');
  return repo;
}

const CRLF = 'one\r\ntwo\r\nthree\r\n';

t('core.autocrlf=true: CRLF files apply, commit LF blobs, and land as git checks them out', () => {
  const repo = convertingRepo({ 'a.txt': 'one\ntwo\nthree\n' }, { 'core.autocrlf': 'true' });
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), CRLF);
  fullCycle(repo, 'n.txt', (wt) => {
    assert.is(
      readFileSync(path.join(wt, 'a.txt'), 'utf8'),
      'ONE\r\nTWO\r\nTHREE\r\n',
      'the worktree keeps the checked-out form',
    );
    assert.is(
      readFileSync(path.join(wt, 'n.txt'), 'utf8'),
      'new\r\n',
      'a new file gets the form git would check out',
    );
    assert.is(
      git(wt, 'cat-file', 'blob', 'HEAD:a.txt'),
      'ONE\nTWO\nTHREE',
      'the blob is what git stores',
    );
  });
  assert.ok(readFileSync(path.join(repo, 'a.txt')).equals(checkedOut(repo, 'main', 'a.txt')));
  assert.is(readFileSync(path.join(repo, 'n.txt'), 'utf8'), 'new\r\n');
});

t('* text=auto eol=crlf: the whole cycle keeps CRLF in the worktrees and LF in the blobs', () => {
  const repo = convertingRepo({
    '.gitattributes': '* text=auto eol=crlf\n',
    'a.txt': 'one\ntwo\nthree\n',
  });
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), CRLF);
  fullCycle(repo, 'n.txt', (wt) => {
    assert.is(readFileSync(path.join(wt, 'n.txt'), 'utf8'), 'new\r\n');
  });
  assert.ok(readFileSync(path.join(repo, 'a.txt')).equals(checkedOut(repo, 'main', 'a.txt')));
  assert.is(git(repo, 'cat-file', 'blob', 'main:n.txt'), 'new');
});

t('*.bat text eol=crlf: only the .bat files are converted; a delete of one is not stale', () => {
  const repo = convertingRepo({
    '.gitattributes': '*.bat text eol=crlf\n',
    'run.bat': '@echo off\necho hi\n',
    'gone.bat': 'x\n',
    'a.txt': 'lf\n',
  });
  assert.is(readFileSync(path.join(repo, 'run.bat'), 'utf8'), '@echo off\r\necho hi\r\n');
  const s = startSession(repo, ['--name', 'k3']);
  ok(s.worktree, ['apply', '-'], `${upd('run.bat', 'echo hi', 'echo HI')}`);
  ok(
    s.worktree,
    ['apply', '-', '--yes'],
    '*** Begin Patch\n*** Add File: new.bat\n+echo new\n*** Delete File: gone.bat\n*** Update File: a.txt\n-lf\n+LF\n*** End Patch\n',
  );
  assert.is(readFileSync(path.join(s.worktree, 'new.bat'), 'utf8'), 'echo new\r\n');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'LF\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(readFileSync(path.join(repo, 'run.bat'), 'utf8'), '@echo off\r\necho HI\r\n');
  assert.is(git(repo, 'cat-file', 'blob', 'main:run.bat'), '@echo off\necho HI');
  assert.is(readFileSync(path.join(repo, 'new.bat'), 'utf8'), 'echo new\r\n');
  assert.not.ok(existsSync(path.join(repo, 'gone.bat')));
});

t(
  'core.autocrlf=true: the recovery of an interrupted apply judges and puts back the checked-out form',
  () => {
    const repo = convertingRepo(
      { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' },
      { 'core.autocrlf': 'true' },
    );
    const s = startSession(repo, ['--name', 'k10']);
    const prior = {
      a: git(repo, 'rev-parse', 'HEAD:a.txt'),
      b: git(repo, 'rev-parse', 'HEAD:b.txt'),
    };
    const next = spawnSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: repo,
      input: 'one\nTWO\nthree\n',
    })
      .stdout.toString()
      .trim();
    const nextB = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: 'BEE\n' })
      .stdout.toString()
      .trim();
    // Killed after a.txt was published (its CRLF form is on disk) and before b.txt was.
    writeFileSync(path.join(s.worktree, 'a.txt'), 'one\r\nTWO\r\nthree\r\n');
    writeIntentRecord(repo, 'k10', {
      txid: 't1',
      pid: 999999,
      targets: [
        { rel: 'a.txt', prior: prior.a, next },
        { rel: 'b.txt', prior: prior.b, next: nextB },
      ],
    });
    const r = ok(repo, ['doctor']);
    assert.is(r.recoveries.length, 1, JSON.stringify(r));
    assert.is(r.recoveries[0].action, 'restored');
    assert.equal(r.recoveries[0].outside, [], "the CRLF files are hagent's, not outside edits");
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      'one\r\ntwo\r\nthree\r\n',
      'put back in the form git checks out',
    );
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'bee\r\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'the cached conversion config and the attribute-file check see a change made after the first apply',
  () => {
    // Without pinned dates the configuration key can be made, so the cache is used.
    const live = (cwd: string, args: string[], input: string) =>
      hagent(cwd, [...args, '--json'], {
        input,
        timeoutMs: 30_000,
        unsetEnv: ['GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'],
      });
    const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n', 'c.bat': 'x\n' });
    const s = startSession(repo, ['--name', 'k11']);
    assert.is(live(s.worktree, ['apply', '-'], upd('a.txt', 'one', 'ONE')).status, 0);
    assert.ok(
      existsSync(path.join(repo, '.git', 'hagent', 'conversion-config.json')),
      'the config was cached',
    );
    // core.autocrlf turned on afterwards: the next apply must see it (CRLF on disk, LF blob).
    git(repo, 'config', 'core.autocrlf', 'true');
    writeFileSync(path.join(s.worktree, 'b.txt'), 'bee\r\n');
    git(s.worktree, 'add', 'b.txt');
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'git calls the CRLF file clean');
    const r = live(s.worktree, ['apply', '-'], upd('b.txt', 'bee', 'BEE'));
    assert.is(r.status, 0, r.stdout);
    assert.is(git(s.worktree, 'cat-file', 'blob', 'HEAD:b.txt'), 'BEE');
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'BEE\r\n');
    git(repo, 'config', '--unset', 'core.autocrlf');
    // A .gitattributes that appears later in the worktree is read.
    writeFileSync(path.join(s.worktree, '.gitattributes'), '*.bat text eol=crlf\n');
    const bat = live(s.worktree, ['apply', '-'], upd('c.bat', 'x', 'y'));
    assert.is(bat.status, 0, bat.stdout);
    assert.is(readFileSync(path.join(s.worktree, 'c.bat'), 'utf8'), 'y\r\n');
    assert.is(git(s.worktree, 'cat-file', 'blob', 'HEAD:c.bat'), 'y');
  },
);

const lfs = spawnSync('git', ['lfs', 'version']).status === 0;

function lfsRepo(): string {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, 'lfs', 'install', '--local');
  writeFiles(repo, {
    '.gitattributes': '*.dat filter=lfs diff=lfs merge=lfs -text\n',
    'big.dat': 'alpha\nbeta\n',
  });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'lfs');
  return repo;
}

const isPointer = (text: string) => text.startsWith('version https://git-lfs.github.com/spec/v1\n');

const lfsTest = testOrSkip(
  t,
  'repository kinds',
  lfs ? undefined : 'git-lfs is not installed (Debian: git-lfs)',
);
lfsTest(
  'git-lfs: an LFS file is edited, a new *.dat is committed as a pointer, and the checkout is clean after land',
  () => {
    const repo = lfsRepo();
    const s = startSession(repo, ['--name', 'k4']);
    assert.is(readFileSync(path.join(s.worktree, 'big.dat'), 'utf8'), 'alpha\nbeta\n');
    ok(s.worktree, ['apply', '-'], upd('big.dat', 'beta', 'BETA'));
    ok(s.worktree, ['apply', '-'], add('new.dat', 'fresh'));
    ok(s.worktree, ['undo']);
    ok(s.worktree, ['undo', '--redo']);
    writeFileSync(path.join(s.worktree, 'big.dat'), 'alpha\nBETA\ngamma\n');
    writeFileSync(path.join(s.worktree, 'synced.dat'), 'made outside\n');
    assert.equal(
      ok(s.worktree, ['sync']).files.map((f: any) => f.path),
      ['big.dat', 'synced.dat'],
    );
    assert.ok(
      isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:synced.dat')),
      'a *.dat adopted by sync is a pointer too',
    );
    ok(s.worktree, ['apply', '-'], upd('big.dat', 'gamma', 'GAMMA'));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.ok(
      isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:new.dat')),
      'a new *.dat is a pointer',
    );
    assert.ok(isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:big.dat')));
    assert.is(
      readFileSync(path.join(s.worktree, 'new.dat'), 'utf8'),
      'fresh\n',
      'the worktree holds the content',
    );
    ok(repo, ['review', '--approve']);
    ok(repo, ['land']);
    assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean after land");
    assert.is(readFileSync(path.join(repo, 'new.dat'), 'utf8'), 'fresh\n');
    assert.is(readFileSync(path.join(repo, 'big.dat'), 'utf8'), 'alpha\nBETA\nGAMMA\n');
    ok(repo, ['session', 'end']);
    git(repo, 'fsck', '--no-progress');
  },
);

t(
  'a filter attribute naming a driver git has no command for is refused before anything is written',
  () => {
    const repo = makeRepo({ '.gitattributes': '*.dat filter=lfs -text\n', 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'k5']);
    const r = run(s.worktree, ['apply', '-', '--json'], add('new.dat', 'raw'));
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'FILTER_UNAVAILABLE');
    assert.is(r.json.error.path, 'new.dat');
    assert.match(r.json.error.hint, /git lfs install/);
    assert.not.ok(existsSync(path.join(s.worktree, 'new.dat')));
    assert.is(git(repo, 'rev-list', '--count', 'main..hagent/k5'), '0');
  },
);

t('a filter program that fails is refused with FILTER_FAILED and nothing is written', () => {
  const repo = makeRepo({ '.gitattributes': '*.enc filter=broken\n', 'a.txt': 'a\n' });
  git(repo, 'config', 'filter.broken.clean', 'false');
  git(repo, 'config', 'filter.broken.smudge', 'cat');
  git(repo, 'config', 'filter.broken.required', 'true');
  const s = startSession(repo, ['--name', 'k6']);
  const r = run(s.worktree, ['apply', '-', '--json'], add('x.enc', 'secret'));
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'FILTER_FAILED');
  assert.not.ok(existsSync(path.join(s.worktree, 'x.enc')));
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/k6'), '0');
});

function submoduleRepo(): { repo: string; gitlink: string } {
  const sub = makeRepo({ 's.txt': 's\n' });
  const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
  git(repo, 'commit', '-q', '-m', 'submodule');
  return { repo, gitlink: git(repo, 'rev-parse', 'HEAD:sub') };
}

t('submodules: a path inside one is refused, and the rest of the cycle keeps the gitlink', () => {
  const { repo, gitlink } = submoduleRepo();
  const s = startSession(repo, ['--name', 'k7']);
  for (const patch of [
    add('sub/new.txt', 'x'),
    upd('sub', 'a', 'b'),
    '*** Begin Patch\n*** Delete File: sub\n*** End Patch\n',
  ]) {
    const r = run(s.worktree, ['apply', '-', '--json', '--yes'], patch);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'SUBMODULE_PATH', r.stdout);
    assert.is(r.json.error.submodule, 'sub');
  }
  assert.not.ok(existsSync(path.join(s.worktree, 'sub', 'new.txt')));
  fullCycleFrom(repo, s.worktree);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink, 'the gitlink is still on the branch');
  assert.is(git(repo, 'ls-tree', 'main', 'sub').split(/\s/)[0], '160000');
});

t("submodules: a land never turns a gitlink into a folder, and the hint's way out lands", () => {
  const { repo, gitlink } = submoduleRepo();
  const s = startSession(repo, ['--name', 'k8']);
  // The agent's own git commands replace the gitlink with a folder of files.
  git(s.worktree, 'rm', '-q', '--cached', 'sub');
  writeFiles(s.worktree, { 'sub/y.txt': 'y\n', 'a.txt': 'one\nTWO\nthree\n' });
  git(s.worktree, 'add', 'sub/y.txt', 'a.txt');
  git(s.worktree, 'commit', '-q', '-m', 'agent commit');
  ok(repo, ['review', '--approve']);
  const r = run(repo, ['land', '--json']);
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'SUBMODULE_PATH');
  assert.equal(r.json.error.files, ['sub']);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink, 'nothing landed');
  // The hint: restore the gitlink in the session worktree, sync, land.
  git(s.worktree, 'rm', '-r', '-q', '--cached', 'sub');
  git(s.worktree, 'checkout', s.base, '--', 'sub');
  rmSync(path.join(s.worktree, 'sub', 'y.txt'));
  ok(s.worktree, ['sync']);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink);
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
});

/** The middle of {@link fullCycle} for a session already started: apply, undo, redo, land, end. */
function fullCycleFrom(repo: string, worktree: string): void {
  ok(worktree, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
  ok(worktree, ['apply', '-'], add('n.txt', 'new'));
  ok(worktree, ['undo']);
  ok(worktree, ['undo', '--redo']);
  writeFileSync(path.join(worktree, 'outside.txt'), 'made outside hagent\n');
  assert.equal(
    ok(worktree, ['sync']).files.map((f: any) => f.path),
    ['outside.txt'],
  );
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
  assert.is(git(repo, 'show', 'main:outside.txt'), 'made outside hagent');
  ok(repo, ['session', 'end']);
  git(repo, 'fsck', '--no-progress');
}

t('sparse checkouts: a file outside the cone is refused as such, with a hint that works', () => {
  const repo = makeRepo({ 'in/a.txt': 'a\n', 'out/b.txt': 'b\n', 'top.txt': 't\n' });
  git(repo, 'sparse-checkout', 'set', 'in');
  const s = startSession(repo, ['--name', 'k9']);
  assert.not.ok(
    existsSync(path.join(s.worktree, 'out', 'b.txt')),
    'the session worktree is sparse too',
  );
  for (const patch of [
    upd('out/b.txt', 'b', 'B'),
    '*** Begin Patch\n*** Delete File: out/b.txt\n*** End Patch\n',
  ]) {
    const r = run(s.worktree, ['apply', '-', '--json', '--yes'], patch);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'OUTSIDE_SPARSE');
    assert.match(r.json.error.message, /outside the sparse checkout/);
    assert.match(r.json.error.hint, /sparse-checkout add "out"/);
  }
  ok(s.worktree, ['apply', '-'], upd('in/a.txt', 'a', 'A'));
  ok(s.worktree, ['undo']);
  ok(s.worktree, ['undo', '--redo']);
  writeFileSync(path.join(s.worktree, 'in', 'c.txt'), 'c\n');
  assert.equal(
    ok(s.worktree, ['sync']).files.map((f: any) => f.path),
    ['in/c.txt'],
  );
  git(s.worktree, 'sparse-checkout', 'add', 'out');
  ok(s.worktree, ['apply', '-'], upd('out/b.txt', 'b', 'B'));
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'show', 'main:out/b.txt'), 'B');
  assert.is(readFileSync(path.join(repo, 'in', 'a.txt'), 'utf8'), 'A\n');
  assert.not.ok(existsSync(path.join(repo, 'out')), "the user's sparse checkout stays sparse");
  ok(repo, ['session', 'end']);
});

t(
  'bare repository with worktrees: config and hooks come from the worktree holding the target branch',
  () => {
    const seed = makeRepo({
      'a.txt': 'one\ntwo\nthree\n',
      '.hagent/config.json': '{"deniedPaths":["secret/**"]}\n',
    });
    const top = tempDir('hagent-bare-');
    const bare = path.join(top, 'repo.git');
    git(top, 'clone', '-q', '--bare', seed, bare);
    git(bare, 'worktree', 'add', '-q', path.join(top, 'main'), 'main');
    const main = path.join(top, 'main');
    writeFiles(main, {
      '.hagent/hooks/pre-apply':
        '#!/bin/sh\ncat > /dev/null\necho "vetoed by the main worktree\'s hook" >&2\nexit 1\n',
    });
    chmodSync(path.join(main, '.hagent/hooks/pre-apply'), 0o755);
    const shown = ok(main, ['config', 'show']);
    assert.is(shown.file, path.join(main, '.hagent', 'config.json'));
    const s = startSession(main, ['--name', 'b1']);
    const denied = run(s.worktree, ['apply', '-', '--json'], add('secret/x.txt', 'x'));
    assert.is(denied.json?.error?.code, 'PATH_DENIED', denied.stdout);
    const vetoed = run(s.worktree, ['apply', '-', '--json'], upd('a.txt', 'two', 'TWO'));
    assert.is(vetoed.json?.error?.code, 'HOOK_REJECTED', vetoed.stdout);
    rmSync(path.join(main, '.hagent/hooks/pre-apply'));
    fullCycleFrom(main, s.worktree);
  },
);

/** Runs `body` with session worktrees inside the git folder (`worktreeRoot: "git-dir"`), the layout that moves with the repository. */
function inGitDir(body: () => void): () => void {
  return () => {
    process.env.HAGENT_WORKTREE_ROOT = 'git-dir';
    try {
      body();
    } finally {
      delete process.env.HAGENT_WORKTREE_ROOT;
    }
  };
}

t(
  'a moved repository folder: sessions are found and repaired, and every command keeps working',
  inGitDir(() => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
    startSession(repo, ['--name', 'm1']);
    startSession(repo, ['--name', 'm2']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const wt1 = path.join(moved, '.git', 'hagent', 'worktrees', 'm1');
    // From inside a moved session worktree (git itself no longer finds its repository there).
    ok(wt1, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
    const list = ok(moved, ['session', 'list']);
    assert.equal(list.sessions.map((x: any) => x.worktree).sort(), [
      wt1,
      path.join(moved, '.git', 'hagent', 'worktrees', 'm2'),
    ]);
    const doctor = ok(moved, ['doctor']);
    assert.equal(
      doctor.findings.filter((f: any) => !f.fixed),
      [],
      JSON.stringify(doctor.findings),
    );
    assert.is(git(wt1, 'status', '--porcelain'), '');
    assert.is(git(moved, 'worktree', 'list', '--porcelain').includes(`worktree ${wt1}\n`), true);
    ok(moved, ['session', 'end', 'm2']);
    ok(wt1, ['apply', '-'], add('n.txt', 'new'));
    ok(wt1, ['undo']);
    ok(wt1, ['undo', '--redo']);
    ok(moved, ['review', '--approve']);
    ok(moved, ['land']);
    assert.is(git(moved, 'status', '--porcelain'), '');
    assert.is(readFileSync(path.join(moved, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.is(readFileSync(path.join(moved, 'n.txt'), 'utf8'), 'new\n');
    ok(moved, ['session', 'end']);
    git(moved, 'fsck', '--no-progress');
  }),
);

t(
  'doctor right after a move reports the repair it made',
  inGitDir(() => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startSession(repo, ['--name', 'm3']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const doctor = ok(moved, ['doctor']);
    const f = doctor.findings.find((x: any) => x.kind === 'moved-worktree');
    assert.ok(f && f.fixed && f.session === 'm3', JSON.stringify(doctor.findings));
    ok(
      path.join(moved, '.git', 'hagent', 'worktrees', 'm3'),
      ['apply', '-'],
      upd('a.txt', 'a', 'A'),
    );
  }),
);

t(
  'a moved repository with its worktrees outside it: the first command in the repository mends the links',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'm4']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const doctor = ok(moved, ['doctor']);
    const f = doctor.findings.find((x: any) => x.kind === 'moved-worktree');
    assert.ok(f && f.fixed && f.session === 'm4', JSON.stringify(doctor.findings));
    ok(s.worktree, ['apply', '-'], upd('a.txt', 'a', 'A'));
    ok(moved, ['land', '--yes']);
    assert.is(readFileSync(path.join(moved, 'a.txt'), 'utf8'), 'A\n');
    ok(moved, ['session', 'end']);
  },
);

t.run();
