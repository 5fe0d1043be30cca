/**
 * `hagent undo` through the real CLI: back N patches and `--redo`, an outside edit kept, arguments
 * checked first. Also: an undo or redo killed before its one ref transaction, and one killed
 * between moving the session branch and its redo ref (the record carries the redo ref's move).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  makeRepo,
  repoWithSession,
  startSession,
  updatePatch,
  writeFiles,
} from '../helpers/index.js';
import { killAtRefTransaction } from '../helpers/kill-git.js';

const t = suite('undo');

t('undo moves back N patches, files included, and --redo brings them back', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  const unconfirmed = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Add File: sub/new.txt\n+n\n*** Delete File: b.txt\n*** End Patch\n',
  });
  assert.is(
    unconfirmed.json.error.code,
    'CONFIRMATION_REQUIRED',
    'a delete needs a yes without a TTY',
  );
  hagent(s.worktree, ['apply', '-', '--yes'], {
    input:
      '*** Begin Patch\n*** Add File: sub/new.txt\n+n\n*** Delete File: b.txt\n*** End Patch\n',
  });
  const head = git(repo, 'rev-parse', 'hagent/s1');
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '2');
  const u = hagent(s.worktree, ['undo', '--json']);
  assert.is(u.status, 0, u.stdout);
  assert.is(u.json.steps, 1);
  assert.ok(existsSync(path.join(s.worktree, 'b.txt')), 'a deleted file comes back');
  assert.not.ok(existsSync(path.join(s.worktree, 'sub')), 'an added file (and its folder) goes');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const past = hagent(s.worktree, ['undo', '5', '--json']);
  assert.is(past.status, 1);
  assert.is(past.json.error.code, 'UNDO_PAST_BASE');
  assert.is(past.json.error.available, 1);
  const u2 = hagent(s.worktree, ['undo', '--json']);
  assert.is(u2.json.to, git(repo, 'rev-parse', 'main'));
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  const none = hagent(s.worktree, ['undo', '--json']);
  assert.is(none.json.error.code, 'UNDO_PAST_BASE');
  const r = hagent(s.worktree, ['undo', '--redo', '2', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), head);
  assert.ok(existsSync(path.join(s.worktree, 'sub', 'new.txt')));
  const more = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(more.json.error.code, 'NOTHING_TO_REDO');
});

t('undo refuses to overwrite an outside edit with STALE_FILE', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  writeFileSync(path.join(s.worktree, 'a.txt'), 'hand edit\n');
  const head = git(repo, 'rev-parse', 'hagent/s1');
  const r = hagent(s.worktree, ['undo', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'hand edit\n');
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), head);
});

t('a new apply after undo keeps the undone commits reachable', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  const undone = git(repo, 'rev-parse', 'hagent/s1');
  hagent(s.worktree, ['undo']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('b.txt', 'bee', 'BEE') })
      .status,
    0,
  );
  assert.match(
    git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/hagent/s1/undone/'),
    new RegExp(undone),
  );
});

t('undo 0 (or -1, or a word) is a usage error before the session is picked', () => {
  const repo = makeRepo();
  startSession(repo, ['--name', 'a']);
  startSession(repo, ['--name', 'b']);
  for (const n of ['0', '-1', 'two']) {
    const r = hagent(repo, ['undo', n, '--json']);
    assert.is(r.status, 2, `${n}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, 'USAGE', n);
  }
  assert.is(
    hagent(repo, ['undo', '--json']).json.error.code,
    'SESSION_AMBIGUOUS',
    'a good count still needs one session',
  );
});

// An undo or redo killed (kill -9) between its files and its refs: the record of the one
// transaction names the session branch and the redo ref together, so the next command finishes
// both — the redo is never lost (before, the redo ref was written after the record was removed).

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

t('an undo killed before its refs moved is finished by the next command, redo included', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'u1']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') });
  assert.is(applied.status, 0, applied.stdout);
  const killed = hagent(s.worktree, ['undo', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  const record = path.join(repo, '.git', 'hagent', 'tx', 'u1.json');
  assert.ok(existsSync(record), 'the record names what was left half done');
  assert.equal(
    JSON.parse(readFileSync(record, 'utf8')).refs.map((r: { ref: string }) => r.ref),
    ['refs/heads/hagent/u1', 'refs/hagent/u1/redo'],
  );
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(d.json.recoveries[0].action, 'completed');
  assert.is(git(repo, 'rev-parse', s.branch), s.base);
  assert.is(git(repo, 'rev-parse', 'refs/hagent/u1/redo'), applied.json.commit, 'redo kept');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(redo.status, 0, redo.stdout);
  assert.is(git(repo, 'rev-parse', s.branch), applied.json.commit);
});

t('a redo killed before its refs moved is finished: branch forward, redo ref gone', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'u2']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') });
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
  const killed = hagent(s.worktree, ['undo', '--redo', '--json'], { env: killAtRefTransaction() });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  const next = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'A', 'B') });
  assert.is(next.status, 0, next.stdout);
  assert.is(next.json.recovery.action, 'completed');
  assert.is(next.json.parent, applied.json.commit, 'the redo was finished first');
  assert.is(git(repo, 'for-each-ref', 'refs/hagent/u2/redo'), '');
});

// An undo or redo killed between moving the session branch and moving its redo ref: the intent
// record carries the redo ref's move, so the recovery that completes the command makes it too.
// The record is written here as such a kill leaves it (the kill -9 figure,
// bench/reliability/kills.ts, finds the instant at random); `hagent doctor` recovers.

const P1 = '*** Begin Patch\n*** Update File: a.txt\n-a1\n+a1 by 1\n*** End Patch\n';
const P2 =
  '*** Begin Patch\n*** Update File: b.txt\n-b1\n+b1 by 2\n*** Delete File: c.txt\n*** End Patch\n';
const DEAD_PID = 4_000_000; // above Linux's largest pid_max: never a live process

function setup() {
  const repo = makeRepo({ 'a.txt': 'a1\n', 'b.txt': 'b1\n', 'c.txt': 'c1\n' });
  const s = startSession(repo, ['--name', 'u']);
  for (const p of [P1, P2]) {
    const r = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: p });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  const common = git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
  const h2 = git(repo, 'rev-parse', 'hagent/u');
  const h1 = git(repo, 'rev-parse', 'hagent/u~1');
  return { repo, s, common, h1, h2 };
}

/** The record of a `command` moving the session from `head` to `commit`, as a kill leaves it. */
function intent(
  repo: string,
  common: string,
  o: { command: string; head: string; commit: string; refs: unknown[] },
) {
  const targets = git(repo, 'diff-tree', '-r', '--no-renames', o.head, o.commit)
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [meta, rel] = l.split('\t');
      const [oldMode, newMode, oldOid, newOid] = meta!.slice(1).split(' ');
      const side = (mode: string, oid: string) => (/^0+$/.test(mode) ? null : { oid, mode });
      return { rel, prior: side(oldMode!, oldOid!), next: side(newMode!, newOid!), tmp: null };
    });
  writeFiles(common, {
    'hagent/tx/u.json': JSON.stringify({
      version: 1,
      txid: `${o.command}-test`,
      session: 'u',
      command: o.command,
      pid: DEAD_PID,
      startedAt: new Date().toISOString(),
      head: o.head,
      commit: o.commit,
      message: '',
      note: null,
      targets,
      refs: o.refs,
    }),
  });
}

t('an undo killed after the branch moved keeps its redo', () => {
  const { repo, s, common, h1, h2 } = setup();
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
  git(repo, 'update-ref', '-d', 'refs/hagent/u/redo');
  intent(repo, common, {
    command: 'undo',
    head: h2,
    commit: h1,
    refs: [{ ref: 'refs/hagent/u/redo', oid: h2, old: null }],
  });
  const doctor = hagent(repo, ['doctor', '--json']);
  assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
  assert.is(doctor.json.recoveries[0]?.action, 'completed', doctor.stdout);
  assert.is(git(repo, 'rev-parse', 'refs/hagent/u/redo'), h2, 'the redo ref is written');
  const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(redo.status, 0, redo.stdout + redo.stderr);
  assert.is(git(repo, 'rev-parse', 'hagent/u'), h2, 'redo brings the undone patch back');
});

t('a redo killed in the deletion of its redo ref: locks cleared, the ref deleted', () => {
  const { repo, s, common, h1, h2 } = setup();
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
  assert.is(hagent(s.worktree, ['undo', '--redo', '--json']).status, 0);
  git(repo, 'update-ref', 'refs/hagent/u/redo', h2);
  // git killed inside `update-ref -d` leaves both of its locks.
  writeFileSync(path.join(common, 'packed-refs.lock'), '');
  writeFileSync(path.join(common, 'refs', 'hagent', 'u', 'redo.lock'), '');
  intent(repo, common, {
    command: 'redo',
    head: h1,
    commit: h2,
    refs: [{ ref: 'refs/hagent/u/redo', oid: null, old: h2 }],
  });
  const doctor = hagent(repo, ['doctor', '--json']);
  assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
  assert.is(doctor.json.recoveries[0]?.action, 'completed', doctor.stdout);
  assert.is(git(repo, 'for-each-ref', 'refs/hagent/u/redo'), '', 'the redo ref is gone');
  assert.is(git(repo, 'rev-parse', 'hagent/u'), h2);
  const land = hagent(repo, ['land', '--session', 'u', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
});

t.run();
