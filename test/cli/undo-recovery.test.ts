/**
 * An undo or redo killed between moving the session branch and moving its redo ref: the intent
 * record carries the redo ref's move, so the recovery that completes the command makes it too.
 * The record is written here as such a kill leaves it (the kill -9 figure,
 * bench/reliability/kills.ts, finds the instant at random); `hagent doctor` recovers.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, writeFiles } from '../helpers/index.js';

const t = suite('undo and redo recovery');

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
