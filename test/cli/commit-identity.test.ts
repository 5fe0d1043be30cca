/**
 * apply's commit written in-process (git/commit-direct.ts), through the real CLI: after git made
 * the first commit of a repository for hagent, the next ones are made in-process with the same
 * identity; a changed identity goes back through git; sessions applying side by side all commit.
 * The helpers fix GIT_*_DATE for determinism, which sends every commit to git: these tests
 * leave the dates (and the identity variables) out, so the repository's config decides.
 */
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, GIT_ENV, git, hagent, makeRepo } from '../helpers/index.js';

const t = suite('commit identity');
const UNSET = [
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_DATE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
];

function repoWithIdentity(files: Record<string, string>): string {
  const repo = makeRepo(files);
  git(repo, 'config', 'user.name', 'Grace Hopper');
  git(repo, 'config', 'user.email', 'grace@example.com');
  return repo;
}

function start(repo: string, name: string): { worktree: string; branch: string } {
  const r = hagent(repo, ['session', 'start', '--json', '--name', name], { unsetEnv: UNSET });
  assert.is(r.status, 0, r.stderr);
  return r.json;
}

function appendLine(file: string, last: string, line: string): string {
  return `*** Begin Patch\n*** Update File: ${file}\n@@\n ${last}\n+${line}\n*** End Patch\n`;
}

/** Applies with tracing on; @returns the commit and whether it was written in-process. */
function apply(worktree: string, patch: string): { commit: string; inProcess: boolean } {
  const r = hagent(worktree, ['apply', '-', '--json', '--yes'], {
    input: patch,
    unsetEnv: UNSET,
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.commit);
  return { commit: r.json.commit, inProcess: /apply: committed in-process/.test(r.stderr) };
}

t(
  'the first commit goes through git, the next ones are made in-process with the same identity',
  () => {
    const repo = repoWithIdentity({ 'a.txt': 'a\n' });
    const s = start(repo, 'one');
    const made = [
      apply(s.worktree, appendLine('a.txt', 'a', 'b')),
      apply(s.worktree, appendLine('a.txt', 'b', 'c')),
      apply(s.worktree, appendLine('a.txt', 'c', 'd')),
    ];
    assert.equal(
      made.map((m) => m.inProcess),
      [false, true, true],
    );
    const now = Math.floor(Date.now() / 1000);
    for (const m of made) {
      const [who, time] = git(
        repo,
        'log',
        '-1',
        '--format=%an <%ae>|%cn <%ce>%n%ct',
        m.commit,
      ).split('\n');
      assert.is(who, 'Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>');
      assert.ok(Math.abs(Number(time) - now) < 120, 'the commit carries the current time');
      assert.match(
        git(repo, 'notes', '--ref=hagent-sessions/one', 'show', m.commit),
        /\*\*\* Begin Patch/,
      );
    }
    assert.is(git(repo, 'rev-parse', s.branch), made[2]!.commit);
    assert.is(git(repo, 'rev-list', '--count', `${made[0]!.commit}~1..${s.branch}`), '3');
    assert.is(
      git(repo, 'reflog', '--format=%gs', s.branch)
        .split('\n')
        .filter((l) => l.startsWith('hagent apply')).length,
      3,
    );
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'index and files agree with the head');
    git(repo, 'fsck', '--strict', '--no-dangling');
  },
);

t('a changed user.name is picked up at once: that commit goes through git', () => {
  const repo = repoWithIdentity({ 'a.txt': 'a\n' });
  const s = start(repo, 'two');
  apply(s.worktree, appendLine('a.txt', 'a', 'b'));
  assert.ok(apply(s.worktree, appendLine('a.txt', 'b', 'c')).inProcess);
  git(repo, 'config', 'user.name', 'Rear Admiral Hopper');
  const renamed = apply(s.worktree, appendLine('a.txt', 'c', 'd'));
  assert.not.ok(renamed.inProcess);
  assert.is(
    git(repo, 'log', '-1', '--format=%an|%cn', renamed.commit),
    'Rear Admiral Hopper|Rear Admiral Hopper',
  );
  const next = apply(s.worktree, appendLine('a.txt', 'd', 'e'));
  assert.ok(next.inProcess);
  assert.is(git(repo, 'log', '-1', '--format=%an', next.commit), 'Rear Admiral Hopper');
  // A fixed date in the environment: git writes the commit, with that date.
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input: appendLine('a.txt', 'e', 'f'),
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stderr, /committed in-process/);
  assert.is(
    git(repo, 'log', '-1', '--format=%an|%cI', r.json.commit),
    `${GIT_ENV.GIT_AUTHOR_NAME}|2026-01-01T00:00:00+00:00`,
  );
});

t(
  'land after an apply: the land commit is made in-process too, refs and checkout as git would leave them',
  () => {
    const repo = repoWithIdentity({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const s = start(repo, 'lander');
    apply(s.worktree, appendLine('a.txt', 'a', 'a2'));
    apply(s.worktree, appendLine('b.txt', 'b', 'b2'));
    assert.is(
      hagent(repo, ['review', '--session', 'lander', '--approve', '--json'], { unsetEnv: UNSET })
        .status,
      0,
    );
    const before = git(repo, 'rev-parse', 'main');
    const r = hagent(repo, ['land', '--session', 'lander', '--yes', '--json'], {
      unsetEnv: UNSET,
      env: { HAGENT_TRACE: '1' },
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /land: committed in-process/);
    assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
    assert.is(git(repo, 'rev-parse', `${r.json.commit}^`), before, 'a squash onto the old tip');
    assert.is(
      git(repo, 'rev-parse', `${r.json.commit}^{tree}`),
      git(repo, 'rev-parse', `${s.branch}^{tree}`),
    );
    assert.is(
      git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main'),
      'Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>',
    );
    assert.match(git(repo, 'reflog', '-1', '--format=%gs', 'main'), /^hagent land lander/);
    assert.is(git(repo, 'show', 'main:a.txt'), 'a\na2');
    assert.is(git(repo, 'status', '--porcelain'), '', 'the checkout holds the landed files');
    git(repo, 'fsck', '--strict', '--no-dangling');
  },
);

t('four sessions applying side by side: every commit made, noted and reachable', async () => {
  const repo = repoWithIdentity({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
  const sessions = ['a', 'b', 'c', 'd'].map((n) => ({ n, s: start(repo, `side-${n}`) }));
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV };
  for (const k of UNSET) delete env[k];
  const run = (cwd: string, patch: string) =>
    new Promise<{ status: number; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'apply', '-', '--json', '--yes'], { cwd, env });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      child.on('close', (code) => resolve({ status: code ?? -1, out }));
      child.stdin.end(patch);
    });
  const results = await Promise.all(
    sessions.map(async ({ n, s }) => {
      const commits: string[] = [];
      let last = n;
      for (let i = 0; i < 5; i++) {
        const r = await run(s.worktree, appendLine(`${n}.txt`, last, `${n}${i}`));
        assert.is(r.status, 0, r.out);
        commits.push(JSON.parse(r.out).commit);
        last = `${n}${i}`;
      }
      return { s, commits };
    }),
  );
  for (const { s, commits } of results) {
    assert.is(git(repo, 'rev-parse', s.branch), commits[4]);
    for (const c of commits) assert.is(git(repo, 'log', '-1', '--format=%an', c), 'Grace Hopper');
    for (const c of commits)
      assert.match(
        git(repo, 'notes', `--ref=hagent-sessions/${s.branch.replace('hagent/', '')}`, 'show', c),
        /Begin Patch/,
      );
  }
  git(repo, 'fsck', '--strict', '--no-dangling');
});

t.run();
