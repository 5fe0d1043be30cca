/**
 * Where a session's approval lives: `refs/hagent/<id>/approved`, a commit whose parent is the
 * approved head and whose message holds the approved paths, moved by review --approve, land and
 * session end in their ref transactions. A session's JSON approval (earlier versions) is still
 * honoured. Also: a session end killed at its ref transaction is finished by the next command.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, repoWithSession, updatePatch } from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('land-approval');
const REF = 'refs/hagent/s1/approved';

/** The ref's id, or '' when it does not exist. */
function refOf(repo: string, ref: string): string {
  return git(repo, 'for-each-ref', '--format=%(objectname)', ref);
}

/** A session s1 with two files changed, one patch each; its head. */
function twoFiles(): { repo: string; worktree: string; head: string } {
  const { repo, s } = repoWithSession();
  for (const [file, from, to] of [
    ['a.txt', 'two', 'TWO'],
    ['b.txt', 'bee', 'BEE'],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch(file, from, to) });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  return { repo, worktree: s.worktree, head: git(repo, 'rev-parse', 'hagent/s1') };
}

const sessionFile = (repo: string) => path.join(repo, '.git', 'hagent', 'sessions', 's1.json');

t('review --approve points the approval ref at a commit of the head and the paths', () => {
  const { repo, head } = twoFiles();
  assert.is(refOf(repo, REF), '', 'no approval yet');
  const r = hagent(repo, ['review', '--approve', 'a.txt', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.approval.paths, ['a.txt']);
  const oid = refOf(repo, REF);
  assert.ok(oid, 'the ref exists');
  assert.is(git(repo, 'rev-parse', `${oid}^@`), head, 'its only parent is the approved head');
  assert.is(git(repo, 'rev-parse', `${oid}^{tree}`), git(repo, 'rev-parse', `${head}^{tree}`));
  assert.match(git(repo, 'log', '-1', '--format=%B', oid), /"paths":\["a.txt"\]/);
  assert.is(JSON.parse(readFileSync(sessionFile(repo), 'utf8')).approval, null, 'not in the JSON');
  const status = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(status.json.approved, true);
  assert.is(status.json.state, 'approved');
  // Approving again (all paths) moves the ref to a new commit: the last approval counts.
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  assert.is.not(refOf(repo, REF), oid);
  assert.match(git(repo, 'log', '-1', '--format=%B', REF), /"paths":null/);
  assert.is(git(repo, 'fsck', '--no-progress', '--no-dangling', '--strict').trim(), '');
});

t('land keeps the approval it landed in the same ref transaction as the target', () => {
  const { repo, head } = twoFiles();
  assert.is(hagent(repo, ['review', '--approve', 'a.txt', '--json']).status, 0);
  const approved = refOf(repo, REF);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(
    r.json.files.map((f: { path: string }) => f.path),
    ['a.txt'],
  );
  assert.is(refOf(repo, REF), approved, 'verified, not moved');
});

t(
  'land --yes without an approval records the one it used, in the ref transaction of the target',
  () => {
    const { repo, head } = twoFiles();
    const next = hagent(repo, ['land', '--yes', '--json']);
    assert.is(next.status, 0, next.stdout + next.stderr);
    const after = refOf(repo, REF);
    assert.ok(after, 'the approval ref exists');
    assert.is(git(repo, 'rev-parse', `${after}^@`), head);
    assert.match(git(repo, 'log', '-1', '--format=%B', after), /"paths":null/);
    const line = git(repo, 'reflog', 'show', '-1', '--format=%gs', REF);
    assert.is(line, git(repo, 'reflog', 'show', '-1', '--format=%gs', 'refs/heads/main'));
    assert.match(line, /hagent land s1/);
  },
);

t('land --undo leaves the approval, so the session is approved again', () => {
  const { repo } = twoFiles();
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const approved = refOf(repo, REF);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.state, 'landed');
  const undo = hagent(repo, ['land', '--undo', '--session', 's1', '--json']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.is(refOf(repo, REF), approved);
  const status = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(status.json.state, 'approved');
  assert.is(status.json.approved, true);
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 0, 'landed again without a new approval: ' + again.stdout);
});

t("a session's JSON approval of an earlier version is still honoured", () => {
  const { repo, head } = twoFiles();
  const record = JSON.parse(readFileSync(sessionFile(repo), 'utf8'));
  record.approval = { head, paths: ['b.txt'], at: '2025-01-01T00:00:00.000Z' };
  writeFileSync(sessionFile(repo), JSON.stringify(record));
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.state, 'approved');
  const review = hagent(repo, ['review', '--json']);
  assert.equal(review.json.approval.paths, ['b.txt']);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(
    r.json.files.map((f: { path: string }) => f.path),
    ['b.txt'],
    'only the approved path',
  );
  assert.ok(refOf(repo, REF), 'the land wrote the approval into the ref');
  assert.match(git(repo, 'log', '-1', '--format=%B', REF), /"paths":\["b.txt"\]/);
});

t('session end deletes the approval ref with the branch', () => {
  const { repo } = twoFiles();
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  const r = hagent(repo, ['session', 'end', 's1', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(refOf(repo, REF), '');
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
});

t('a session end killed at its ref transaction is finished by doctor', () => {
  const { repo, worktree, head } = twoFiles();
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const killed = hagent(repo, ['session', 'end', 's1', '--force', '--yes', '--json'], {
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.ok(existsSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json')), 'its record stays');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.ok(
    d.json.findings.some((f: { message: string }) => /session end was completed/.test(f.message)),
  );
  assert.not.ok(existsSync(worktree), 'the worktree is removed');
  assert.not.ok(existsSync(sessionFile(repo)), 'the metadata is removed');
  assert.not.ok(existsSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json')));
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
  assert.is(refOf(repo, REF), '');
  assert.is(refOf(repo, 'refs/hagent/s1/ended'), head, 'the unlanded work stays reachable');
  assert.not.match(git(repo, 'worktree', 'list', '--porcelain'), /s1/);
});

t('a session end killed at its ref transaction is finished by session end again', () => {
  const { repo, worktree } = twoFiles();
  const killed = hagent(repo, ['session', 'end', 's1', '--force', '--yes', '--json'], {
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1);
  const r = hagent(repo, ['session', 'end', 's1', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered, 'completed');
  assert.not.ok(existsSync(worktree));
  assert.is(refOf(repo, 'refs/heads/hagent/s1'), '');
  assert.is(
    hagent(repo, ['session', 'status', 's1', '--json']).json.error.code,
    'SESSION_NOT_FOUND',
  );
});

t.run();
