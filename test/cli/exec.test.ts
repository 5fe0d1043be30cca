/**
 * `hagent exec` through the real CLI: guarded, timed out with its process group killed, output
 * capped, and the files it changed committed as one `Hagent-Op: exec` commit that review shows
 * and undo drops.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commitCommandChanges } from '../../src/exec/index.js';
import { openRepo, resolveSession } from '../../src/session/index.js';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('exec');

/**
 * `hagent exec` where no sandbox can start (no bwrap): the guard alone, and what a command does
 * outside the session is only seen afterwards. test/cli/sandbox.test.ts tests the wall itself.
 */
const unwalled = (cwd: string, args: string[]) => hagent(cwd, args, { env: { HAGENT_BWRAP: '' } });

/** True while `pid` runs (a zombie left for a reaper that never comes counts as dead). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

t('a command that edits files becomes one exec commit, shown by review and dropped by undo', () => {
  const repo = makeRepo({ 'README.md': '# demo\n', 'old.txt': 'old\n' });
  const s = startSession(repo);
  const r = hagent(s.worktree, [
    'exec',
    '--json',
    '--',
    "echo x > a.txt && mkdir -p d && printf 'y\\n' > d/b.txt && rm old.txt && echo done",
  ]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(Object.keys(r.json), [
    'ok',
    'session',
    'command',
    'exitCode',
    'signal',
    'timedOut',
    'stdout',
    'stderr',
    'truncated',
    'durationMs',
    'changed',
    'commit',
    'adopted',
    'skipped',
    'outside',
    'sandbox',
  ]);
  assert.is(r.json.ok, true);
  assert.is(r.json.exitCode, 0);
  assert.is(r.json.stdout, 'done\n');
  assert.equal(r.json.changed, [
    { path: 'a.txt', status: 'A' },
    { path: 'd/b.txt', status: 'A' },
    { path: 'old.txt', status: 'D' },
  ]);
  assert.is(git(s.worktree, 'rev-parse', 'HEAD'), r.json.commit);
  const body = git(s.worktree, 'log', '-1', '--format=%B');
  assert.match(body, /^hagent: exec echo x > a\.txt/);
  assert.match(body, /Hagent-Op: exec/);
  assert.ok(
    body.includes(
      "    echo x > a.txt && mkdir -p d && printf 'y\\n' > d/b.txt && rm old.txt && echo done",
    ),
    body,
  );
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'nothing left uncommitted');
  const review = hagent(s.worktree, ['review', '--json']);
  assert.is(review.json.patches.length, 1);
  assert.is(review.json.patches[0].commit, r.json.commit);
  assert.match(review.json.patches[0].subject, /^hagent: exec /);
  const undo = hagent(s.worktree, ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.ok(!existsSync(path.join(s.worktree, 'a.txt')));
  assert.is(readFileSync(path.join(s.worktree, 'old.txt'), 'utf8'), 'old\n');
  assert.is(hagent(s.worktree, ['review', '--json']).json.patches.length, 0);
});

t(
  'a command past its timeout is reported as timedOut with no exit code, and its whole process group is killed',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    const r = unwalled(s.worktree, [
      'exec',
      '--json',
      '--timeout',
      '1',
      '--',
      'sleep 300 & echo $! > bg.pid; echo started; wait',
    ]);
    assert.is(r.status, 1);
    assert.is(r.json.ok, false);
    assert.is(r.json.timedOut, true);
    assert.is(r.json.exitCode, null);
    assert.ok(r.json.signal === 'SIGTERM' || r.json.signal === 'SIGKILL', String(r.json.signal));
    assert.is(r.json.stdout, 'started\n');
    const pid = Number(readFileSync(path.join(s.worktree, 'bg.pid'), 'utf8'));
    assert.ok(pid > 0);
    assert.ok(!alive(pid), 'the background job of the timed-out command is killed too');
    // What it changed before it was killed is committed all the same.
    assert.equal(r.json.changed, [{ path: 'bg.pid', status: 'A' }]);
    assert.match(
      git(s.worktree, 'log', '-1', '--format=%B'),
      /Command \(timed out after 1 s, killed\)/,
    );
    const human = unwalled(s.worktree, ['exec', '--timeout', '1', '--', 'sleep 300']);
    assert.is(human.status, 1);
    assert.match(human.stderr, /timed out after 1 s/);
    // The journal says how each command ended, not only that hagent's part went.
    const log = hagent(s.worktree, ['log', '--json']).json.entries;
    const execs = log.filter((e: { command: string }) => e.command === 'exec');
    assert.equal(
      execs.map((e: { message?: string }) => e.message),
      ['the command: timed out after 1 s, killed', 'the command: timed out after 1 s, killed'],
    );
  },
);

t(
  'one word after -- is shell code; several are a program and its arguments, each quoted (redirects, blanks and parentheses mean what they say)',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo);
    const inner = hagent(s.worktree, [
      'exec',
      '--json',
      '--',
      'sh',
      '-c',
      'echo generated > gen.txt && echo hi',
    ]);
    assert.is(inner.status, 0, inner.stdout + inner.stderr);
    assert.is(inner.json.command, "sh -c 'echo generated > gen.txt && echo hi'");
    assert.is(readFileSync(path.join(s.worktree, 'gen.txt'), 'utf8'), 'generated\n');
    assert.is(inner.json.stdout, 'hi\n');
    const spaced = hagent(s.worktree, ['exec', '--json', '--', 'touch', 'file with space.txt']);
    assert.is(spaced.status, 0, spaced.stdout + spaced.stderr);
    assert.equal(spaced.json.changed, [{ path: 'file with space.txt', status: 'A' }]);
    const py = hagent(s.worktree, ['exec', '--json', '--', 'printf', '%s|', '(hi)', 'a b']);
    assert.is(py.status, 0, py.stdout + py.stderr);
    assert.is(py.json.stdout, '(hi)|a b|');
    const shell = hagent(s.worktree, ['exec', '--json', '--', 'echo one > one.txt']);
    assert.is(shell.status, 0, shell.stdout + shell.stderr);
    assert.is(readFileSync(path.join(s.worktree, 'one.txt'), 'utf8'), 'one\n');
    const judged = hagent(s.worktree, ['guard', '--json', '--', 'python3', '-c', 'print(1)']);
    assert.is(judged.status, 0, judged.stdout + judged.stderr);
  },
);

t('a refused command does not run: GUARD_BLOCKED with its rule, journaled as blocked', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, [
    'exec',
    '--json',
    '--',
    'touch ran.txt && git push --force origin main',
  ]);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'GUARD_BLOCKED');
  assert.is(r.json.error.rule, 'git-push-force');
  assert.ok(!existsSync(path.join(s.worktree, 'ran.txt')), 'nothing of the command ran');
  const log = hagent(s.worktree, ['log', '--json', '--failed']);
  assert.is(log.json.entries.at(-1).command, 'exec');
  assert.is(log.json.entries.at(-1).code, 'GUARD_BLOCKED');
});

t('output beyond --max-output keeps its head and tail and reports the sizes', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, [
    'exec',
    '--json',
    '--max-output',
    '1000',
    '--',
    "echo START; head -c 200000 /dev/zero | tr '\\0' a; echo; echo END; echo small >&2",
  ]);
  assert.is(r.status, 0, r.stdout.slice(0, 500));
  assert.is(r.json.truncated.stdout.bytes, 6 + 200000 + 1 + 4);
  assert.is(r.json.truncated.stdout.omittedBytes, 200011 - 1000);
  assert.is(r.json.truncated.stderr, null);
  assert.ok(r.json.stdout.startsWith('START\naaa'));
  assert.ok(r.json.stdout.endsWith('aaa\nEND\n'));
  assert.match(
    r.json.stdout,
    /\[hagent: 199011 bytes of stdout left out here; 200011 bytes in all\]/,
  );
  assert.ok(r.json.stdout.length < 1200);
  assert.is(r.json.stderr, 'small\n');
  const whole = hagent(s.worktree, ['exec', '--json', '--', 'echo hi']);
  assert.is(whole.json.truncated, false);
});

t(
  'stdout and stderr stay apart; a failing command is ok:false with its exit code; stdin is closed',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    const r = hagent(s.worktree, ['exec', '--json', '--', 'echo out; echo err >&2; exit 3']);
    assert.is(r.status, 1);
    assert.equal(
      [r.json.ok, r.json.exitCode, r.json.signal, r.json.timedOut, r.json.stdout, r.json.stderr],
      [false, 3, null, false, 'out\n', 'err\n'],
    );
    const prompt = hagent(
      s.worktree,
      [
        'exec',
        '--json',
        '--',
        'if read -r line; then echo "read: $line"; else echo "stdin closed"; fi',
      ],
      { input: 'typed\n' },
    );
    assert.is(prompt.json.stdout, 'stdin closed\n');
    const human = hagent(s.worktree, ['exec', '--', 'echo out; echo err >&2']);
    assert.is(human.status, 0);
    assert.is(human.stdout, 'out\n');
    assert.match(human.stderr, /^err\nhagent: exit 0 in [\d.]+ s; no files changed\n$/);
  },
);

t('a file the path policy denies stays out of the exec commit and is listed as skipped', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, ['exec', '--json', '--', 'echo SECRET=1 > .env && echo ok > a.txt']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.changed, [{ path: 'a.txt', status: 'A' }]);
  assert.equal(
    r.json.skipped.map((k: { path: string }) => k.path),
    ['.env'],
  );
  assert.is(git(s.worktree, 'show', '--name-only', '--format=', 'HEAD'), 'a.txt');
});

t(
  'outside edits pending before the command get their own commit; the exec commit holds only its changes',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    writeFileSync(path.join(s.worktree, 'by-hand.txt'), 'mine\n');
    const r = hagent(s.worktree, ['exec', '--json', '--', 'echo gen > gen.txt']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.ok(r.json.adopted);
    assert.equal(r.json.changed, [{ path: 'gen.txt', status: 'A' }]);
    assert.match(git(s.worktree, 'log', '-1', '--format=%B', r.json.adopted), /Hagent-Op: sync/);
    assert.is(git(s.worktree, 'rev-parse', `${r.json.commit}~1`), r.json.adopted);
  },
);

t(
  'outside a session exec is refused; run from the user checkout it works in the session worktree',
  () => {
    const bare = makeRepo();
    const none = hagent(bare, ['exec', '--json', '--', 'ls']);
    assert.is(none.status, 1);
    assert.is(none.json.error.code, 'NOT_IN_SESSION');
    const nogit = hagent(tempDir(), ['exec', '--json', '--', 'ls']);
    assert.is(nogit.status, 1);
    assert.is(nogit.json.error.code, 'NOT_A_GIT_REPO');
    const s = startSession(bare);
    const r = hagent(bare, ['exec', '--json', '--session', s.id, '--', 'pwd']);
    assert.is(r.status, 0);
    assert.is(r.json.stdout.trim(), s.worktree);
    // A GIT_DIR in the caller's environment (a git hook calling hagent) does not send the command's git elsewhere.
    const g = hagent(
      bare,
      ['exec', '--json', '--session', s.id, '--', 'git rev-parse --show-toplevel'],
      { env: { GIT_DIR: path.join(bare, '.git'), GIT_WORK_TREE: bare } },
    );
    assert.is(g.json.stdout.trim(), s.worktree);
  },
);

t(
  'guard.allow of the repository config relaxes the guard for exec (a push to a local remote)',
  () => {
    const repo = makeRepo();
    const remote = tempDir();
    git(remote, 'init', '-q', '--bare');
    git(repo, 'remote', 'add', 'origin', remote);
    const s = startSession(repo);
    const before = unwalled(s.worktree, [
      'exec',
      '--json',
      '--',
      'git push -q origin HEAD:refs/heads/agent',
    ]);
    assert.is(before.json.error.rule, 'git-push');
    mkdirSync(path.join(repo, '.hagent'), { recursive: true });
    writeFileSync(
      path.join(repo, '.hagent', 'config.json'),
      JSON.stringify({ guard: { allow: ['git-push'] } }),
    );
    const after = unwalled(s.worktree, [
      'exec',
      '--json',
      '--',
      'git push -q origin HEAD:refs/heads/agent',
    ]);
    assert.is(after.status, 0, after.stdout + after.stderr);
    assert.is(git(remote, 'rev-parse', 'refs/heads/agent'), git(s.worktree, 'rev-parse', 'HEAD'));
  },
);

t(
  'a command that moves the worktree off the session branch ran: the error says so and keeps its output',
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    const r = unwalled(s.worktree, [
      'exec',
      '--json',
      '--',
      'git checkout -q -b elsewhere && echo out',
    ]);
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'WORKTREE_BROKEN');
    assert.match(
      r.json.error.message,
      /^the command ran \(exit 0\) but what it changed was not committed/,
    );
    assert.is(r.json.error.exec.stdout, 'out\n');
    assert.is(r.json.error.exec.exitCode, 0);
    assert.match(r.json.error.hint, /git switch hagent\//);
  },
);

t(
  'commitCommandChanges records what a command run elsewhere changed as one exec commit',
  async () => {
    const repo = makeRepo();
    const s = startSession(repo);
    writeFileSync(path.join(s.worktree, 'fmt.txt'), 'formatted\n');
    const ctx = await openRepo(s.worktree);
    const r = await commitCommandChanges(ctx, await resolveSession(ctx, s.id), 'npm run fmt', {
      end: 'exit 0',
    });
    assert.equal(r.files, [{ path: 'fmt.txt', status: 'A' }]);
    const body = git(s.worktree, 'log', '-1', '--format=%B');
    assert.match(body, /^hagent: exec npm run fmt \(A fmt\.txt\)/);
    assert.match(body, /Command \(exit 0\):\n {4}npm run fmt/);
    assert.match(body, /Hagent-Op: exec/);
    const none = await commitCommandChanges(ctx, await resolveSession(ctx, s.id), 'ls');
    assert.is(none.commit, null);
  },
);

t('a bad --timeout is a usage error', () => {
  const repo = makeRepo();
  const s = startSession(repo);
  const r = hagent(s.worktree, ['exec', '--json', '--timeout', '-1', '--', 'ls']);
  assert.is(r.status, 2);
  assert.is(r.json.error.code, 'USAGE');
});

t(
  "a script that writes the user's checkout and commits on its branch is reported loudly (JSON outside, stderr, journal), not undone",
  () => {
    const repo = makeRepo({ 'README.md': '# demo\n', 'b.txt': 'b\n' });
    const s = startSession(repo);
    writeFileSync(path.join(repo, 'b.txt'), 'user edit\n'); // the user's own uncommitted edit, before
    writeFileSync(
      path.join(s.worktree, 's.sh'),
      `git -C '${repo}' commit -qam sneaky\necho x > '${path.join(repo, 'README.md')}'\n`,
    );
    const before = git(repo, 'rev-parse', 'main');
    const r = unwalled(s.worktree, ['exec', '--json', '--', 'sh s.sh']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    const o = r.json.outside;
    assert.ok(o, 'outside reported');
    assert.is(o.checkout, repo);
    const main = o.refs.find((x: { ref: string }) => x.ref === 'refs/heads/main');
    assert.is(main.before, before);
    assert.is(main.after, git(repo, 'rev-parse', 'main'));
    assert.equal(
      o.paths,
      ['README.md', 'b.txt'],
      'the file written after the commit, and the user edit it committed',
    );
    assert.match(o.hint, /git -C .* status/);
    assert.match(o.hint, /reflog main/);
    assert.is(
      readFileSync(path.join(repo, 'README.md'), 'utf8'),
      'x\n',
      'the user files are not undone',
    );
    const log = hagent(repo, ['log', '--json', '--session', s.id]);
    const entry = log.json.entries.find((e: { code?: string }) => e.code === 'OUTSIDE_CHANGED');
    assert.ok(entry, log.stdout);
    assert.equal(entry.files, ['README.md', 'b.txt']);
    assert.match(
      hagent(repo, ['log', '--session', s.id]).stdout,
      /outside .* exec {2}OUTSIDE_CHANGED/,
    );
    const status = hagent(repo, ['session', 'status', s.id, '--json']).json;
    assert.is(status.outsideChanged.length, 1);
    assert.match(
      hagent(repo, ['session', 'status', s.id]).stdout,
      /your checkout changed during exec/,
    );
    // The human form says it on stderr.
    writeFileSync(path.join(s.worktree, 't.sh'), `echo y >> '${path.join(repo, 'README.md')}'\n`);
    const h = unwalled(s.worktree, ['exec', '--', 'sh t.sh']);
    assert.match(
      h.stderr,
      /warning: the user's main checkout .* changed while the command ran.*README\.md/,
    );
    assert.match(h.stderr, /hint: nothing was undone/);
    // A command that stays inside reports nothing.
    const quiet = unwalled(s.worktree, ['exec', '--json', '--', 'echo in > in.txt']);
    assert.is(quiet.json.outside, null);
  },
);

t(
  "a script that switches the user's checkout to another branch is reported as HEAD moving to that branch",
  () => {
    const repo = makeRepo();
    const s = startSession(repo);
    writeFileSync(path.join(s.worktree, 'sw.sh'), `git -C '${repo}' switch -q -c feature-x\n`);
    const r = unwalled(s.worktree, ['exec', '--json', '--', 'sh sw.sh']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    const headMove = r.json.outside.refs.find((x: { ref: string }) => x.ref === 'HEAD');
    assert.is(headMove.before, git(repo, 'rev-parse', 'main'));
    assert.is(headMove.after, 'refs/heads/feature-x');
    assert.match(r.json.outside.message, /HEAD moved [0-9a-f]{12} -> refs\/heads\/feature-x/);
  },
);

t.run();
