/**
 * `hagent doctor` through the real CLI: it finishes an interrupted apply, removes stray temp files,
 * and judges each session on its own. Also: doctor keeps the index of a session whose update left
 * a merge in progress.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  makeRepo,
  startSession,
  updatePatch,
  writeFiles,
  writeIntentRecord,
} from '../helpers/index.js';

const t = suite('doctor');

t(
  'an interrupted apply is finished by the next command, and doctor removes stray temp files',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'dr']);
    const head = git(repo, 'rev-parse', s.branch);
    // The state a kill -9 between publish and commit leaves: the file written, the intent recorded.
    writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
    const newOid = git(s.worktree, 'hash-object', '-w', 'a.txt');
    const oldOid = git(repo, 'rev-parse', `${head}:a.txt`);
    writeIntentRecord(repo, 'dr', {
      txid: 'x',
      targets: [{ rel: 'a.txt', prior: oldOid, next: newOid }],
    });
    writeFiles(s.worktree, { 'sub/.x.txt.hagent-dead-1.tmp': 'leftover\n' });
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(d.json.recoveries[0].action, 'completed');
    assert.is(git(repo, 'show', `${s.branch}:a.txt`), 'A');
    assert.ok(d.json.findings.some((f: { kind: string }) => f.kind === 'stray-temp-files'));
    assert.not.ok(existsSync(path.join(s.worktree, 'sub/.x.txt.hagent-dead-1.tmp')));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.is(hagent(repo, ['doctor', '--json']).json.findings.length, 0, 'all well afterwards');
  },
);

t(
  'doctor --session s2 does not call s1 an orphan, and one broken session does not stop the others',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startSession(repo, ['--name', 's1']);
    const s2 = startSession(repo, ['--name', 's2']);
    startSession(repo, ['--name', 's3']);
    const one = hagent(repo, ['doctor', '--session', 's2', '--json']);
    assert.is(one.status, 0, one.stdout);
    assert.equal(one.json.findings, [], JSON.stringify(one.json.findings));
    // s2: an interrupted apply whose head moved since: doctor may not finish it.
    const common = path.join(repo, '.git');
    mkdirSync(path.join(common, 'hagent', 'tx'), { recursive: true });
    writeFileSync(
      path.join(common, 'hagent', 'tx', 's2.json'),
      JSON.stringify({
        version: 1,
        txid: 'x1',
        session: 's2',
        command: 'apply',
        pid: 999999,
        startedAt: new Date().toISOString(),
        head: '1'.repeat(40),
        commit: null,
        message: 'm\n',
        note: null,
        targets: [{ rel: 'a.txt', prior: null, next: null, tmp: null }],
      }),
    );
    const all = hagent(repo, ['doctor', '--json']);
    assert.is(all.status, 0, all.stdout);
    assert.equal(all.json.sessions, ['s1', 's2', 's3']);
    const broken = all.json.findings.filter((f: any) => f.session === 's2');
    assert.is(broken.length, 1, JSON.stringify(all.json.findings));
    assert.is(broken[0].kind, 'session-unchecked');
    assert.is(broken[0].fixed, false);
    assert.equal(
      all.json.findings.filter((f: any) => f.kind.startsWith('orphan')),
      [],
    );
    // Its hint works: check the files, remove the stale record, run again.
    const record = path.join(common, 'hagent', 'tx', 's2.json');
    assert.ok(broken[0].hint.includes(record), broken[0].hint);
    rmSync(record);
    assert.equal(hagent(repo, ['doctor', '--json']).json.findings, []);
    assert.is(
      hagent(s2.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'a', 'A') })
        .status,
      0,
    );
  },
);

// `hagent doctor` on a session whose `session update` left a merge in progress: the index holds
// the merge (unmerged entries, files the merge brought, resolutions already `git add`ed), which
// is not an index out of step with the head; doctor leaves it, and sync then concludes the merge.

t('doctor keeps the index of a conflicted update, resolved part included', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'd.txt': 'd1\nd2\n', 'e.txt': 'e\n' });
  const s = startSession(repo, ['--name', 'm']);
  for (const [f, from, to] of [
    ['c.txt', 'l2', 'SESSION'],
    ['d.txt', 'd2', 'SESSION'],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch(f, from, to) });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  writeFileSync(path.join(repo, 'd.txt'), 'd1\nUSER\n');
  writeFileSync(path.join(repo, 'e.txt'), 'e on main\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', 'm', '--json']);
  assert.is(update.status, 1, update.stdout + update.stderr);
  assert.equal(update.json.conflicts, ['c.txt', 'd.txt']);
  writeFileSync(path.join(s.worktree, 'd.txt'), 'd1\nBOTH\n');
  git(s.worktree, 'add', 'd.txt');
  const index = git(s.worktree, 'ls-files', '-s');
  assert.match(git(s.worktree, 'ls-files', '-u'), /\tc\.txt$/m, 'c.txt unmerged');

  const doctor = hagent(repo, ['doctor', '--json']);
  assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
  assert.equal(
    doctor.json.findings.filter((f: any) => f.kind === 'index-out-of-step'),
    [],
    JSON.stringify(doctor.json.findings),
  );
  assert.is(git(s.worktree, 'ls-files', '-s'), index, 'the index is the merge as it was');

  writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
  git(s.worktree, 'add', 'c.txt');
  const sync = hagent(s.worktree, ['sync', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.is(git(repo, 'show', 'hagent/m:d.txt'), 'd1\nBOTH');
  assert.is(git(repo, 'show', 'hagent/m:e.txt'), 'e on main');
});

t(
  "a land target lock whose holder died (a killed land) is cleared; a lock of this host's live process stays",
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const targets = path.join(repo, '.git', 'hagent', 'locks', 'targets');
    mkdirSync(targets, { recursive: true });
    const holder = (pid: number) =>
      JSON.stringify({
        pid,
        hostname: os.hostname(),
        command: 'land',
        startedAt: new Date().toISOString(),
        token: 'abcdef0123456789',
      });
    const dead = spawnSync('true').pid!; // a process that has exited
    writeFileSync(path.join(targets, 'dead.lock'), holder(dead));
    writeFileSync(path.join(targets, 'live.lock'), holder(process.pid));
    const r = hagent(repo, ['doctor', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    const f = r.json.findings.find((x: any) => x.kind === 'dead-lock');
    assert.ok(f, r.stdout);
    assert.equal(f.paths, [path.join(targets, 'dead.lock')]);
    assert.is(f.fixed, true);
    assert.not.ok(existsSync(path.join(targets, 'dead.lock')));
    assert.ok(existsSync(path.join(targets, 'live.lock')), "the live holder's lock stays");
  },
);

t.run();
