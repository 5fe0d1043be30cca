/**
 * The in-process ref update (git/ref-update-direct.ts) leaves exactly what `git update-ref
 * --create-reflog -m <msg> <ref> <new> <old>` leaves when run in the worktree: the ref file, the
 * ref's reflog line and the worktree's HEAD reflog line; it refuses a lost compare-and-swap and
 * a held lock as git does, and hands every case it does not cover back to git untouched.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commitIdent, reflogMessage, updateRefDirect } from '../../../src/git/ref-update-direct.js';
import { isHagentError } from '../../../src/errors.js';
import { GIT_ENV, git, makeRepo, tempDir } from '../../helpers/index.js';

// The identity, the dates and the configuration files of the git processes these tests compare with.
Object.assign(process.env, GIT_ENV);

const t = suite('in-process ref update');

const REF = 'refs/heads/hagent/x';

/** A repository with a linked worktree on `hagent/x` and a commit on top of its head, not yet published. */
function fixture(): {
  repo: string;
  wt: string;
  common: string;
  gitDir: string;
  head: string;
  next: string;
} {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const wt = path.join(tempDir(), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'hagent/x', wt);
  const head = git(repo, 'rev-parse', 'HEAD');
  const next = git(repo, 'commit-tree', '-p', head, '-m', 'next', `${head}^{tree}`);
  return {
    repo,
    wt,
    common: path.join(repo, '.git'),
    gitDir: git(wt, 'rev-parse', '--path-format=absolute', '--git-dir'),
    head,
    next,
  };
}

function committerOf(repo: string, commit: string): string {
  return commitIdent(Buffer.from(git(repo, 'cat-file', 'commit', commit)), 'committer')!;
}

const lastLine = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').pop();

t(
  'the ref file, its reflog and the worktree HEAD reflog are the ones git update-ref writes',
  async () => {
    const a = fixture();
    const b = fixture();
    assert.is(a.next, b.next, 'the fixtures are identical (fixed dates)');
    const message = 'hagent apply: a.txt,\n  b.txt';
    const moved = await updateRefDirect({
      commonDir: a.common,
      gitDir: a.gitDir,
      ref: REF,
      newOid: a.next,
      oldOid: a.head,
      committer: committerOf(a.repo, a.next),
      message,
    });
    assert.ok(moved, 'a plain repository is updated in-process');
    git(b.wt, 'update-ref', '--create-reflog', '-m', message, REF, b.next, b.head);
    assert.is(
      readFileSync(path.join(a.common, 'refs/heads/hagent/x'), 'utf8'),
      readFileSync(path.join(b.common, 'refs/heads/hagent/x'), 'utf8'),
    );
    assert.is(
      lastLine(path.join(a.common, 'logs/refs/heads/hagent/x')),
      lastLine(path.join(b.common, 'logs/refs/heads/hagent/x')),
    );
    assert.is(
      lastLine(path.join(a.gitDir, 'logs/HEAD')),
      lastLine(path.join(b.gitDir, 'logs/HEAD')),
    );
    assert.is(git(a.wt, 'rev-parse', 'HEAD'), a.next);
    assert.is(git(a.wt, 'reflog', '-1', '--format=%gs', 'HEAD'), 'hagent apply: a.txt, b.txt');
    assert.not.ok(existsSync(path.join(a.common, 'refs/heads/hagent/x.lock')));
    assert.not.ok(existsSync(path.join(a.gitDir, 'HEAD.lock')));
    git(a.repo, 'fsck', '--no-dangling');
  },
);

t('a ref that is only in packed-refs is moved to a loose file, as git does', async () => {
  const a = fixture();
  git(a.repo, 'pack-refs', '--all');
  assert.not.ok(existsSync(path.join(a.common, 'refs/heads/hagent/x')));
  assert.ok(
    await updateRefDirect({
      commonDir: a.common,
      gitDir: a.gitDir,
      ref: REF,
      newOid: a.next,
      oldOid: a.head,
      committer: committerOf(a.repo, a.next),
      message: 'm',
    }),
  );
  assert.is(git(a.repo, 'rev-parse', REF), a.next);
});

t('a lost compare-and-swap is TARGET_MOVED and changes nothing', async () => {
  const a = fixture();
  const other = git(a.repo, 'commit-tree', '-p', a.head, '-m', 'other', `${a.head}^{tree}`);
  git(a.repo, 'update-ref', REF, other, a.head);
  const reflog = readFileSync(path.join(a.gitDir, 'logs/HEAD'), 'utf8');
  const error = await updateRefDirect({
    commonDir: a.common,
    gitDir: a.gitDir,
    ref: REF,
    newOid: a.next,
    oldOid: a.head,
    committer: committerOf(a.repo, a.next),
    message: 'm',
  }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(isHagentError(error) && error.code === 'TARGET_MOVED', String(error));
  assert.is(git(a.repo, 'rev-parse', REF), other);
  assert.is(readFileSync(path.join(a.gitDir, 'logs/HEAD'), 'utf8'), reflog, 'no reflog line');
  assert.not.ok(existsSync(path.join(a.common, 'refs/heads/hagent/x.lock')));
});

t(
  "a lock held by another process is TARGET_MOVED after git's 100 ms, and the lock is left to its owner",
  async () => {
    const a = fixture();
    const lock = path.join(a.common, 'refs/heads/hagent/x.lock');
    writeFileSync(lock, '');
    const started = Date.now();
    const error = await updateRefDirect({
      commonDir: a.common,
      gitDir: a.gitDir,
      ref: REF,
      newOid: a.next,
      oldOid: a.head,
      committer: committerOf(a.repo, a.next),
      message: 'm',
    }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isHagentError(error) && error.code === 'TARGET_MOVED', String(error));
    assert.ok(Date.now() - started >= 100, 'waited as git does');
    assert.ok(existsSync(lock), 'the other lock stays');
    assert.is(git(a.repo, 'rev-parse', REF), a.head);
    // HEAD's lock held: the same, and the ref's own lock is released.
    const b = fixture();
    writeFileSync(path.join(b.gitDir, 'HEAD.lock'), '');
    const e2 = await updateRefDirect({
      commonDir: b.common,
      gitDir: b.gitDir,
      ref: REF,
      newOid: b.next,
      oldOid: b.head,
      committer: committerOf(b.repo, b.next),
      message: 'm',
    }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isHagentError(e2) && e2.code === 'TARGET_MOVED', String(e2));
    assert.not.ok(existsSync(path.join(b.common, 'refs/heads/hagent/x.lock')));
    assert.is(git(b.repo, 'rev-parse', REF), b.head);
  },
);

t(
  'a reference-transaction hook, a setting that changes the steps, or -c in the environment: git does it',
  async () => {
    const cases: [string, (f: ReturnType<typeof fixture>) => void][] = [
      [
        'reference-transaction hook',
        (f) => {
          mkdirSync(path.join(f.common, 'hooks'), { recursive: true });
          writeFileSync(path.join(f.common, 'hooks', 'reference-transaction'), '#!/bin/sh\n', {
            mode: 0o755,
          });
        },
      ],
      ['core.logAllRefUpdates', (f) => git(f.repo, 'config', 'core.logAllRefUpdates', 'false')],
      ['core.hooksPath', (f) => git(f.repo, 'config', 'core.hooksPath', '.githooks')],
      ['an include', (f) => git(f.repo, 'config', 'include.path', 'extra')],
      [
        "core.logAllRefUpdates in the worktree's config.worktree",
        (f) => {
          git(f.repo, 'config', 'extensions.worktreeConfig', 'true');
          git(f.wt, 'config', '--worktree', 'core.logAllRefUpdates', 'false');
        },
      ],
    ];
    for (const [name, arrange] of cases) {
      const f = fixture();
      arrange(f);
      const moved = await updateRefDirect({
        commonDir: f.common,
        gitDir: f.gitDir,
        ref: REF,
        newOid: f.next,
        oldOid: f.head,
        committer: committerOf(f.repo, f.next),
        message: 'm',
      });
      assert.is(moved, false, name);
      assert.is(git(f.repo, 'rev-parse', REF), f.head, `${name}: nothing moved`);
      assert.not.ok(
        existsSync(path.join(f.common, 'refs/heads/hagent/x.lock')),
        `${name}: no lock left`,
      );
    }
    const f = fixture();
    process.env.GIT_CONFIG_PARAMETERS = "'core.logallrefupdates'='false'";
    try {
      assert.is(
        await updateRefDirect({
          commonDir: f.common,
          gitDir: f.gitDir,
          ref: REF,
          newOid: f.next,
          oldOid: f.head,
          committer: committerOf(f.repo, f.next),
          message: 'm',
        }),
        false,
      );
    } finally {
      delete process.env.GIT_CONFIG_PARAMETERS;
    }
  },
);

t(
  'reflog messages are collapsed as git does; the committer keeps a fixed GIT_COMMITTER_DATE, else takes now',
  () => {
    assert.is(reflogMessage('  a\t\tb\n\nc  '), 'a b c');
    const content = Buffer.from(
      'tree x\nauthor A <a@x> 1 +0000\ncommitter C D <c@x> 1767225600 +0100\n\nmsg\ncommitter fake <f> 2 +0000\n',
    );
    assert.is(commitIdent(content, 'committer'), 'C D <c@x> 1767225600 +0100');
    const saved = process.env.GIT_COMMITTER_DATE;
    delete process.env.GIT_COMMITTER_DATE;
    try {
      const now = Math.floor(Date.now() / 1000);
      const m = /^C D <c@x> (\d+) \+0100$/.exec(commitIdent(content, 'committer')!);
      assert.ok(m && Math.abs(Number(m[1]) - now) <= 1, "the time is now, the zone the commit's");
    } finally {
      process.env.GIT_COMMITTER_DATE = saved;
    }
    assert.is(commitIdent(Buffer.from('tree x\n\nno committer\n'), 'committer'), null);
  },
);

t.run();
