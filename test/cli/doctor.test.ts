/**
 * `hagent doctor` through the real CLI: it finishes an interrupted apply, removes stray temp files,
 * and judges each session on its own.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
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

t.run();
