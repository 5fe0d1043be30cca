/**
 * land through the real CLI in the states real users create: a second land of a session, partial
 * approval then the rest, several sessions on one target, a target whose commits were discarded
 * or amended, a session whose work is on the target by content. Nothing already on the target is
 * ever taken back, and "landed" is always true.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('land');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;
const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

function apply(worktree: string, patch: string): void {
  const r = hagent(worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
}

function approveAndLand(repo: string, session: string, paths: string[] = []): any {
  const a = hagent(repo, ['review', '--session', session, '--approve', ...paths, '--json']);
  assert.is(a.status, 0, a.stdout + a.stderr);
  const l = hagent(repo, ['land', '--session', session, '--json']);
  assert.is(l.status, 0, l.stdout + l.stderr);
  return l.json;
}

function state(repo: string, id: string): string {
  return hagent(repo, ['session', 'list', '--json']).json.sessions.find((s: any) => s.id === id)
    .state;
}

t(
  'a second land keeps the user commit that the first land merged (no revert of committed work)',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
    const s = startSession(repo, ['--name', 's1']);
    apply(s.worktree, upd('c.txt', 'l5', 'AGENT-l5'));
    writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nl5\n');
    git(repo, 'commit', '-qam', 'user edits line 1');
    approveAndLand(repo, 's1');
    assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nAGENT-l5\n');
    apply(s.worktree, upd('c.txt', 'l3', 'AGENT-l3'));
    const second = approveAndLand(repo, 's1');
    assert.equal(second.files, [{ path: 'c.txt', status: 'M' }]);
    assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n', 'the user line stays');
    assert.is(git(repo, 'show', 'main:c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5');
    assert.is(git(repo, 'status', '--porcelain'), '');
    assert.is(state(repo, 's1'), 'landed');
    assert.is(hagent(repo, ['session', 'end', 's1', '--json']).status, 0);
  },
);

t('a second land keeps a user commit made after the first land', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
  const s = startSession(repo, ['--name', 's1']);
  apply(s.worktree, upd('c.txt', 'l5', 'AGENT-l5'));
  approveAndLand(repo, 's1');
  writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nAGENT-l5\n');
  git(repo, 'commit', '-qam', 'user after the land');
  apply(s.worktree, upd('c.txt', 'l3', 'AGENT-l3'));
  approveAndLand(repo, 's1');
  assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n');
});

t('--merge lands keep every change already on the target too', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' });
  const s = startSession(repo, ['--name', 'm']);
  apply(s.worktree, upd('c.txt', 'l5', 'AGENT-l5'));
  writeFileSync(path.join(repo, 'c.txt'), 'USER-l1\nl2\nl3\nl4\nl5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(hagent(repo, ['land', '--merge', '--yes', '--json']).status, 0);
  apply(s.worktree, upd('c.txt', 'l3', 'AGENT-l3'));
  const r = hagent(repo, ['land', '--merge', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(read(repo, 'c.txt'), 'USER-l1\nl2\nAGENT-l3\nl4\nAGENT-l5\n');
  assert.is(
    git(repo, 'rev-list', '--parents', '-n1', 'main').split(' ').length,
    3,
    'a merge commit',
  );
});

t('partial approval, then the rest: the rest lands, then the session is landed', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo, ['--name', 'p']);
  apply(
    s.worktree,
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
  );
  approveAndLand(repo, 'p', ['a.txt']);
  assert.is(read(repo, 'a.txt'), 'A\n');
  assert.is(read(repo, 'b.txt'), 'b\n');
  assert.is(state(repo, 'p'), 'open');
  const end = hagent(repo, ['session', 'end', 'p', '--json']);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.equal(end.json.error.files, ['b.txt']);
  const review = hagent(repo, ['review', '--session', 'p', '--json']).json;
  assert.equal(
    review.files.map((f: any) => f.path),
    ['b.txt'],
    'review shows what is left to land',
  );
  assert.is(review.since, 'landed');
  const again = hagent(repo, ['review', '--session', 'p', '--approve', 'a.txt', '--json']);
  assert.is(again.status, 2);
  assert.match(again.json.error.message, /a\.txt \(landed already\)/);
  const rest = approveAndLand(repo, 'p', ['b.txt']);
  assert.equal(rest.files, [{ path: 'b.txt', status: 'M' }]);
  assert.is(read(repo, 'b.txt'), 'B\n');
  assert.is(state(repo, 'p'), 'landed');
  assert.is(hagent(repo, ['session', 'end', 'p', '--json']).status, 0);
});

t(
  'a land that merged an overlapping user edit counts as landed; the next land starts from it',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\nl6\n' });
    const s = startSession(repo, ['--name', 'o']);
    apply(s.worktree, upd('c.txt', 'l2', 'NEW'));
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nNEW\nl3\nl4\nl5\nuser6\n');
    git(repo, 'commit', '-qam', 'user made the same change and more');
    const first = hagent(repo, ['land', '--session', 'o', '--yes', '--json']);
    assert.is(first.json.error.code, 'NOTHING_TO_LAND', 'the target holds the change already');
    assert.match(first.json.error.message, /recorded as landed/);
    assert.is(read(repo, 'c.txt'), 'l1\nNEW\nl3\nl4\nl5\nuser6\n');
    assert.is(state(repo, 'o'), 'landed');
    apply(s.worktree, upd('c.txt', 'l4', 'L4'));
    const next = hagent(repo, ['land', '--session', 'o', '--yes', '--json']);
    assert.is(next.status, 0, next.stdout);
    assert.is(read(repo, 'c.txt'), 'l1\nNEW\nl3\nL4\nl5\nuser6\n');
    assert.is(
      hagent(repo, ['session', 'end', 'o', '--json']).status,
      0,
      'no UNLANDED_WORK for files the target holds',
    );
  },
);

t('work the target already holds by content is recorded as landed', () => {
  const repo = makeRepo({ 'c.txt': 'x\n' });
  const s = startSession(repo, ['--name', 'same']);
  apply(s.worktree, upd('c.txt', 'x', 'y'));
  writeFileSync(path.join(repo, 'c.txt'), 'y\n');
  git(repo, 'commit', '-qam', 'user did the same');
  assert.is(state(repo, 'same'), 'landed');
  const r = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(r.json.error.code, 'NOTHING_TO_LAND');
  assert.is(git(repo, 'rev-list', '--count', 'main'), '2', 'no commit made');
});

t("several sessions landing on one target in turn keep each other's lines", () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n' });
  const a = startSession(repo, ['--name', 'a']);
  const b = startSession(repo, ['--name', 'b']);
  apply(a.worktree, upd('c.txt', 'l1', 'A1'));
  apply(b.worktree, upd('c.txt', 'l10', 'B10'));
  approveAndLand(repo, 'a');
  approveAndLand(repo, 'b');
  apply(a.worktree, upd('c.txt', 'l4', 'A4'));
  approveAndLand(repo, 'a');
  apply(b.worktree, upd('c.txt', 'l7', 'B7'));
  approveAndLand(repo, 'b');
  assert.is(read(repo, 'c.txt'), 'A1\nl2\nl3\nA4\nl5\nl6\nB7\nl8\nl9\nB10\n');
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
});

t('a target commit discarded after session start is not brought back by the land', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  writeFileSync(path.join(repo, 'u.txt'), 'user file\n');
  git(repo, 'add', 'u.txt');
  git(repo, 'commit', '-qm', 'user commit');
  const s = startSession(repo, ['--name', 'd']);
  git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  apply(s.worktree, upd('a.txt', 'a', 'A'));
  const review = hagent(repo, ['review', '--session', 'd', '--json']);
  assert.equal(
    review.json.files.map((f: any) => f.path),
    ['a.txt'],
  );
  const l = approveAndLand(repo, 'd');
  assert.equal(l.files, [{ path: 'a.txt', status: 'M' }], 'exactly what review showed');
  assert.is(git(repo, 'ls-tree', '--name-only', 'main'), 'a.txt');
});

t(
  'an amended target commit does not make the land conflict on a file the session never touched',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'u.txt': 'one\n' });
    writeFileSync(path.join(repo, 'u.txt'), 'two\n');
    git(repo, 'commit', '-qam', 'user');
    const s = startSession(repo, ['--name', 'am']);
    writeFileSync(path.join(repo, 'u.txt'), 'three\n');
    git(repo, 'commit', '-q', '--amend', '-am', 'user, amended');
    apply(s.worktree, upd('a.txt', 'a', 'A'));
    const l = approveAndLand(repo, 'am');
    assert.equal(l.files, [{ path: 'a.txt', status: 'M' }]);
    assert.is(read(repo, 'u.txt'), 'three\n');
  },
);

t('a brand-new session is empty, not landed', () => {
  const repo = makeRepo();
  startSession(repo, ['--name', 'new']);
  const list = hagent(repo, ['session', 'list', '--json']).json.sessions[0];
  assert.is(list.state, 'empty');
  assert.is(list.landed, false);
  assert.is(hagent(repo, ['session', 'status', 'new', '--json']).json.state, 'empty');
});

t(
  'session end --force off a TTY needs --yes, and keeps the ended ref only when work is dropped',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'f']);
    apply(s.worktree, upd('a.txt', 'a', 'A'));
    const refused = hagent(repo, ['session', 'end', 'f', '--force']);
    assert.is(refused.status, 1);
    assert.match(refused.stderr, /CONFIRMATION_REQUIRED/);
    assert.is(git(repo, 'rev-parse', '--verify', '-q', 'hagent/f').length, 40, 'nothing removed');
    const ended = hagent(repo, ['session', 'end', 'f', '--force', '--yes', '--json']);
    assert.is(ended.status, 0, ended.stdout);
    assert.is(ended.json.keptAs, 'refs/hagent/f/ended');
    assert.equal(ended.json.unlanded, ['a.txt']);
    startSession(repo, ['--name', 'g']);
    const empty = hagent(repo, ['session', 'end', 'g', '--force', '--json']);
    assert.is(empty.status, 0, 'nothing to drop: no confirmation needed');
    assert.is(empty.json.keptAs, null);
    assert.is(git(repo, 'for-each-ref', 'refs/hagent/g/'), '');
  },
);

t('a later session of the same name starts from its own base, not the old land base', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\n' });
  let s = startSession(repo, ['--name', 'again']);
  apply(s.worktree, upd('c.txt', 'l1', 'X1'));
  approveAndLand(repo, 'again');
  assert.is(hagent(repo, ['session', 'end', 'again', '--json']).status, 0);
  git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  s = startSession(repo, ['--name', 'again']);
  apply(s.worktree, upd('c.txt', 'l2', 'X2'));
  approveAndLand(repo, 'again');
  assert.is(read(repo, 'c.txt'), 'l1\nX2\n');
});

t('land --yes after the head moved past a partial approval lands the whole head', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const s = startSession(repo, ['--name', 'py']);
  apply(
    s.worktree,
    '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n',
  );
  assert.is(hagent(repo, ['review', '--session', 'py', '--approve', 'a.txt', '--json']).status, 0);
  apply(s.worktree, upd('c.txt', 'c', 'C'));
  const r = hagent(repo, ['land', '--session', 'py', '--yes', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(
    r.json.files.map((f: any) => f.path),
    ['a.txt', 'b.txt', 'c.txt'],
  );
  assert.is(state(repo, 'py'), 'landed');
});

t(
  'a land the user took off the target (reset past it) is not landed any more, and lands again',
  () => {
    const repo = makeRepo({ 'a.txt': '1\n2\n3\n' });
    const s = startSession(repo, ['--name', 'dr']);
    apply(s.worktree, upd('a.txt', '2', '2S'));
    assert.is(hagent(repo, ['land', '--session', 'dr', '--yes', '--json']).status, 0);
    git(repo, 'reset', '-q', '--hard', 'HEAD~1');
    writeFileSync(path.join(repo, 'u.txt'), 'u\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user');
    assert.is(state(repo, 'dr'), 'approved', 'approved, no longer landed');
    assert.is(hagent(repo, ['session', 'end', 'dr', '--json']).json.error.code, 'UNLANDED_WORK');
    const again = hagent(repo, ['land', '--session', 'dr', '--yes', '--json']);
    assert.is(again.status, 0, again.stdout);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), '1\n2S\n3\n');
  },
);

t.run();
