/**
 * No work lost (docs/reliability.md "No work lost"): states users and agents make every day in
 * which hagent must lose nothing and write nothing where it may not, each through the real CLI in
 * a real repository.
 * 1. Outside edits made before an agent's shell command get their own outside commit first (hook
 *    path), so the command's commit, and its undo, hold only what the command changed.
 * 2. A repository the agent nests in the worktree is committed as its files, never as a gitlink,
 *    and a session end does not remove it without the human's word.
 * 4. A session branch the user deleted: doctor restores it, a forced end keeps its head.
 * 6. What the policy refuses (`.env`) never becomes a git object, whichever way the worktree is
 *    snapshot (exec, sync, the shell hook, a forced end), and is reported as left out.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, GIT_ENV, hagent, makeRepo, startSession, updatePatch } from '../helpers/index.js';
import { spawnSync } from 'node:child_process';

const test = suite('no work lost');

const hook = (cwd: string, args: string[], payload: unknown) =>
  hagent(cwd, ['hook', ...args], { input: JSON.stringify(payload) });

test('1. hook: a human edit before a Bash call is its own outside commit; the exec commit and its undo hold only the command', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'o1']);
  writeFileSync(path.join(wt, 'a.txt'), 'one\nhuman line\n');
  const bash = (event: string) => ({
    hook_event_name: event,
    session_id: 's',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_b',
    tool_input: { command: 'echo agent > b.txt' },
  });
  const pre = hook(wt, ['claude'], bash('PreToolUse'));
  assert.is(pre.status, 0, pre.stderr);
  writeFileSync(path.join(wt, 'b.txt'), 'agent\n');
  const post = hook(wt, ['claude'], bash('PostToolUse'));
  assert.is(post.status, 0, post.stderr);
  assert.equal(git(repo, 'log', '--format=%s', 'main..hagent/o1').split('\n'), [
    'hagent: exec echo agent > b.txt',
    'hagent: outside edits (M a.txt)',
  ]);
  assert.equal(git(repo, 'show', '--format=', '--name-only', 'hagent/o1').split('\n'), ['b.txt']);
  // The agent's undo takes back its own command only: the human's line stays, committed.
  const undo = hagent(wt, ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.is(git(repo, 'show', 'hagent/o1:a.txt'), 'one\nhuman line');
});

/** Every object of the repository, contents included (`cat-file --batch-all-objects`). */
function allObjects(repo: string): string {
  const r = spawnSync('git', ['cat-file', '--batch-all-objects', '--batch', '--unordered'], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'latin1',
    maxBuffer: 1 << 28,
  });
  return r.stdout;
}

/** The gitlink entries (mode 160000) of a commit's tree. */
const gitlinks = (repo: string, rev: string) =>
  git(repo, 'ls-tree', '-r', rev)
    .split('\n')
    .filter((l) => l.startsWith('160000'));

test('2. a repository nested by the agent is committed as files (no gitlink), lands as files, and end keeps it until told', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'n2']);
  const sub = path.join(wt, 'sub');
  mkdirSync(sub);
  git(sub, 'init', '-q', '--initial-branch=main');
  writeFileSync(path.join(sub, 'f.txt'), 'nested\n');
  writeFileSync(path.join(sub, '.gitignore'), 'build/\n');
  mkdirSync(path.join(sub, 'build'));
  writeFileSync(path.join(sub, 'build', 'out.o.txt'), 'ignored by the nested repo\n');
  git(sub, 'add', '.');
  git(sub, 'commit', '-q', '-m', 'nested commit');
  writeFileSync(path.join(sub, 'g.txt'), 'untracked in the nested repo\n');
  const sync = hagent(wt, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.equal(gitlinks(repo, 'hagent/n2'), [], 'no gitlink recorded');
  assert.is(git(repo, 'show', 'hagent/n2:sub/f.txt'), 'nested');
  assert.is(git(repo, 'show', 'hagent/n2:sub/g.txt'), 'untracked in the nested repo');
  assert.is(git(repo, 'ls-tree', '--name-only', 'hagent/n2', 'sub/build/'), '');
  const land = hagent(repo, ['land', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.equal(gitlinks(repo, 'main'), []);
  assert.is(git(repo, 'show', 'main:sub/f.txt'), 'nested');
  // Landed, but the nested repository's own history exists only in the worktree.
  const end = hagent(repo, ['session', 'end', 'n2', '--json']);
  assert.is(end.status, 1, end.stdout + end.stderr);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.equal(end.json.error.nested, ['sub']);
  assert.ok(existsSync(path.join(sub, '.git')), 'nothing removed');
  const forced = hagent(repo, ['session', 'end', 'n2', '--force', '--yes', '--json']);
  assert.is(forced.status, 0, forced.stdout + forced.stderr);
  assert.equal(forced.json.nested, ['sub']);
  assert.not.ok(existsSync(wt));
});

test('2. a forced end of a nested repository never synced keeps its files in the ended ref, no gitlink', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'n3']);
  const sub = path.join(wt, 'vendor-lib');
  mkdirSync(sub);
  git(sub, 'init', '-q', '--initial-branch=main');
  writeFileSync(path.join(sub, 'lib.txt'), 'vendored\n');
  git(sub, 'add', '.');
  git(sub, 'commit', '-q', '-m', 'v1');
  const end = hagent(repo, ['session', 'end', 'n3', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.keptAs, 'refs/hagent/n3/ended');
  assert.equal(gitlinks(repo, 'refs/hagent/n3/ended'), []);
  assert.is(git(repo, 'show', 'refs/hagent/n3/ended:vendor-lib/lib.txt'), 'vendored');
});

/** A repository whose session s3 landed `patch`, approved, on main (checked out). */
function landedSession(files: Record<string, string>, patch: string): string {
  const repo = makeRepo(files);
  const { worktree: wt } = startSession(repo, ['--name', 's3']);
  const a = hagent(wt, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(a.status, 0, a.stdout + a.stderr);
  const land = hagent(repo, ['land', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  return repo;
}

test('3. land --undo: a deleted file whose name the user reused as a folder keeps the folder', () => {
  const repo = landedSession(
    { 'a.txt': 'a\n', 'd.txt': 'd\n' },
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Delete File: d.txt\n*** End Patch\n',
  );
  mkdirSync(path.join(repo, 'd.txt'));
  writeFileSync(path.join(repo, 'd.txt', 'mine.txt'), 'the user\n');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['d.txt']);
  assert.is(readFileSync(path.join(repo, 'd.txt', 'mine.txt'), 'utf8'), 'the user\n');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n', 'the rest is put back');
});

test('3. land --undo: a deleted folder whose name the user reused as a file keeps the file', () => {
  const repo = landedSession(
    { 'a.txt': 'a\n', 'lib/x.txt': 'x\n', 'lib/y.txt': 'y\n' },
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Delete File: lib/x.txt\n*** Delete File: lib/y.txt\n*** End Patch\n',
  );
  writeFileSync(path.join(repo, 'lib'), 'the user file\n');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['lib/x.txt', 'lib/y.txt']);
  assert.is(readFileSync(path.join(repo, 'lib'), 'utf8'), 'the user file\n');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
});

test('3. land --undo: an added file the user replaced by a folder, and one under a symlink, are left alone', () => {
  const repo = landedSession(
    { 'a.txt': 'a\n', 'keep/k.txt': 'k\n' },
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: n.txt\n+new\n*** Update File: keep/k.txt\n-k\n+K\n*** End Patch\n',
  );
  rmSync(path.join(repo, 'n.txt'));
  mkdirSync(path.join(repo, 'n.txt'));
  writeFileSync(path.join(repo, 'n.txt', 'inner.txt'), 'the user\n');
  const elsewhere = path.join(repo, 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, 'k.txt'), 'K\n');
  rmSync(path.join(repo, 'keep'), { recursive: true });
  spawnSync('ln', ['-s', 'elsewhere', path.join(repo, 'keep')]);
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['keep/k.txt', 'n.txt']);
  assert.is(readFileSync(path.join(repo, 'n.txt', 'inner.txt'), 'utf8'), 'the user\n');
  assert.is(
    readFileSync(path.join(elsewhere, 'k.txt'), 'utf8'),
    'K\n',
    'nothing written through the link',
  );
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
});

test('4. a session branch deleted by the user: status says so and how, doctor restores it, a forced end keeps its head', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'b4']);
  assert.is(hagent(wt, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'two') }).status, 0);
  const head = git(repo, 'rev-parse', 'hagent/b4');
  git(repo, 'update-ref', '-d', 'refs/heads/hagent/b4');
  const status = hagent(repo, ['session', 'status', 'b4', '--json']);
  assert.is(status.status, 1);
  assert.match(status.json.error.message, /branch hagent\/b4 is gone/);
  assert.match(status.json.error.hint, /hagent doctor --session b4/);
  const doctor = hagent(repo, ['doctor', '--session', 'b4', '--json']);
  assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
  const found = doctor.json.findings.find((f: { kind: string }) => f.kind === 'missing-branch');
  assert.ok(found?.fixed, doctor.stdout);
  assert.is(git(repo, 'rev-parse', 'hagent/b4'), head, 'the branch is back at its head');
  assert.is(hagent(repo, ['session', 'status', 'b4', '--json']).status, 0);
  // Deleted again, then ended by force: the head is kept as promised.
  git(repo, 'update-ref', '-d', 'refs/heads/hagent/b4');
  const plain = hagent(repo, ['session', 'end', 'b4', '--json']);
  assert.is(plain.status, 1, 'its work has not landed');
  assert.is(plain.json.error.code, 'UNLANDED_WORK');
  const end = hagent(repo, ['session', 'end', 'b4', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.keptAs, 'refs/hagent/b4/ended');
  assert.is(git(repo, 'rev-parse', 'refs/hagent/b4/ended'), head);
  assert.is(git(repo, 'show', 'refs/hagent/b4/ended:a.txt'), 'two');
});

test('4. a deleted branch whose worktree is gone too comes back from the head hagent kept beside it', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'b6']);
  assert.is(hagent(wt, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'two') }).status, 0);
  const head = git(repo, 'rev-parse', 'hagent/b6');
  assert.is(git(repo, 'rev-parse', 'refs/hagent/b6/head'), head, 'kept in the same transaction');
  git(repo, 'update-ref', '-d', 'refs/heads/hagent/b6');
  git(repo, 'worktree', 'remove', '--force', wt);
  const end = hagent(repo, ['session', 'end', 'b6', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.recoveredFrom, 'kept-ref');
  assert.is(git(repo, 'rev-parse', 'refs/hagent/b6/ended'), head);
});

test('4. a deleted branch whose worktree reflog and kept head are gone comes back from the journal', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 'b5']);
  assert.is(hagent(wt, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'two') }).status, 0);
  const head = git(repo, 'rev-parse', 'hagent/b5');
  git(repo, 'update-ref', '-d', 'refs/heads/hagent/b5');
  git(repo, 'update-ref', '-d', 'refs/hagent/b5/head');
  const gitDir = git(wt, 'rev-parse', '--absolute-git-dir');
  spawnSync('rm', ['-f', path.join(gitDir, 'logs', 'HEAD')]);
  const end = hagent(repo, ['session', 'end', 'b5', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.recoveredFrom, 'journal');
  assert.is(git(repo, 'rev-parse', 'refs/hagent/b5/ended'), head);
});

test('6. a denied .env is never a git object: not through exec, sync, the shell hook, nor a forced end', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const { worktree: wt } = startSession(repo, ['--name', 's6']);
  const exec = hagent(wt, [
    'exec',
    '--json',
    '--',
    'echo SECRET_EXEC_$((40 + 2)) > .env && echo x > b.txt',
  ]);
  assert.is(exec.status, 0, exec.stdout + exec.stderr);
  assert.ok(exec.json.skipped.some((k: { path: string }) => k.path === '.env'));
  writeFileSync(path.join(wt, '.env.local'), 'SECRET_SYNC_42\n');
  assert.is(hagent(wt, ['sync', '--json']).status, 0);
  writeFileSync(path.join(wt, 'key.pem'), 'SECRET_HOOK_42\n');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_6',
    tool_input: { command: 'cat ../secret > key.pem' },
  });
  assert.is(post.status, 0, post.stderr);
  writeFileSync(path.join(wt, 'c.txt'), 'uncommitted\n');
  writeFileSync(path.join(wt, '.env'), 'SECRET_END_42\n');
  const end = hagent(repo, ['session', 'end', 's6', '--force', '--yes', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(end.json.keptAs, 'refs/hagent/s6/ended');
  assert.is(git(repo, 'show', 'refs/hagent/s6/ended:c.txt'), 'uncommitted');
  const left = end.json.leftOut.map((k: { path: string }) => k.path).sort();
  assert.equal(left, ['.env', '.env.local', 'key.pem']);
  const objects = allObjects(repo);
  for (const secret of ['SECRET_EXEC_42', 'SECRET_SYNC_42', 'SECRET_HOOK_42', 'SECRET_END_42'])
    assert.not.ok(objects.includes(secret), `${secret} is in a git object`);
});

test.run();
