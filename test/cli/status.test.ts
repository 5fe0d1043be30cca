/**
 * `hagent status` through the real CLI on real repositories: the overview's text and JSON for
 * sessions in each state (empty, open, approved, landed), the agent `hagent run` records, drift,
 * and `--watch` in a pipe printing a new frame after a session changes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BIN,
  git,
  GIT_ENV,
  hagent,
  look,
  makeRepo,
  startSession,
  updatePatch,
} from '../helpers/index.js';

const t = suite('status');

/** A repository with four sessions: em (empty), op (open), ap (approved), la (landed). */
function fourStates() {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const s = Object.fromEntries(
    ['em', 'op', 'ap', 'la'].map((n) => [n, startSession(repo, ['--name', n])]),
  ) as Record<string, ReturnType<typeof startSession>>;
  const apply = (id: string, file: string, from: string, to: string) => {
    const r = hagent(repo, ['apply', '-', '--session', id, '--json'], {
      input: updatePatch(file, from, to),
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
  };
  apply('op', 'a.txt', 'a', 'OP');
  apply('ap', 'b.txt', 'b', 'AP');
  apply('la', 'c.txt', 'c', 'LA');
  for (const id of ['ap', 'la']) {
    look(repo, id);
    const r = hagent(repo, ['review', '--session', id, '--approve', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  const land = hagent(repo, ['land', '--session', 'la', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  return { repo, s };
}

t('status --json gives every session its state, commits, files, drift and worktree', () => {
  const { repo, s } = fourStates();
  const r = hagent(repo, ['status', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.ok, true);
  assert.is(r.json.repository, repo);
  const by = Object.fromEntries(r.json.sessions.map((x: any) => [x.session, x]));
  assert.equal(
    r.json.sessions.map((x: any) => [x.session, x.state]),
    [
      ['em', 'empty'],
      ['op', 'open'],
      ['ap', 'approved'],
      ['la', 'landed'],
    ],
  );
  assert.equal(
    Object.keys(by.op),
    [
      'session',
      'current',
      'agent',
      'state',
      'approval',
      'commits',
      'files',
      'changedSinceBase',
      'lands',
      'drift',
      'worktree',
      'worktreeExists',
      'branch',
      'target',
      'base',
      'head',
      'createdAt',
      'overlaps',
      'prediction',
      'gate',
    ],
    'stable field names, in this order',
  );
  assert.is(by.em.commits, 0);
  assert.is(by.em.files, 0);
  assert.is(by.op.commits, 1);
  assert.is(by.op.files, 1);
  assert.is(by.op.approval, null);
  assert.is(by.ap.approval, 'all');
  assert.is(by.la.files, 0, 'nothing left to land');
  assert.is(by.la.changedSinceBase, 1);
  assert.is(by.la.lands, 1);
  assert.is(by.op.worktree, s.op!.worktree);
  assert.is(by.op.worktreeExists, true);
  assert.is(by.op.target, 'refs/heads/main');
  assert.is(by.op.drift, null);
  assert.is(by.op.current, false, 'run from the main checkout, no session is current');
  assert.is(by.op.agent, null, 'no hagent run launched an agent in it');
  // An approval of an older head does not count: the session moved on.
  const more = hagent(repo, ['apply', '-', '--session', 'ap', '--json'], {
    input: updatePatch('a.txt', 'a', 'AP2'),
  });
  assert.is(more.status, 0, more.stdout);
  const after = hagent(repo, ['status', '--json']).json.sessions.find(
    (x: any) => x.session === 'ap',
  );
  assert.is(after.state, 'open');
  assert.is(after.approval, null);
  assert.is(after.files, 2);
});

t('status prints one aligned line per session, the current one marked, no colour in a pipe', () => {
  const { repo, s } = fourStates();
  const r = hagent(s.op!.worktree, ['status']);
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stdout, /\u001b\[/, 'no ANSI codes in a pipe');
  const lines = r.stdout.trimEnd().split('\n');
  assert.is(lines[0], `${repo}: 4 sessions`);
  assert.match(
    lines[1]!,
    /^ {2}SESSION +AGENT +STATE +COMMITS +FILES +TARGET +DRIFT +OVERLAPS +LAND +GATE +WORKTREE$/,
  );
  const rows = lines.slice(2);
  assert.is(rows.length, 4);
  assert.match(rows[0]!, /^ {2}em +- +empty +0 +0 +main +- +- +- +- +\//);
  assert.match(
    rows[1]!,
    /^\* op +- +open +1 +1 +main +- +- +clean +- +\//,
    'the session you are in, marked',
  );
  assert.match(rows[2]!, /^ {2}ap +- +approved +1 +1 +main/);
  assert.match(rows[3]!, /^ {2}la +- +landed +1 +0 +main/);
  // Aligned: every column starts at the same place on every line.
  const col = (line: string) => line.indexOf('main');
  assert.equal(new Set(rows.map(col)).size, 1, rows.join('\n'));
  assert.ok(rows[1]!.endsWith(s.op!.worktree));
  const empty = hagent(makeRepo(), ['status']);
  assert.is(empty.status, 0);
  assert.match(empty.stdout, /No sessions\. Start one with: hagent run claude/);
  assert.equal(hagent(makeRepo(), ['status', '--json']).json.sessions, []);
});

t('status shows the agent hagent run recorded and a worktree moved off its branch', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const run = hagent(repo, ['run', 'claude', '--name', 'r1', '--no-sandbox', '--json'], {
    env: { HAGENT_CLAUDE_BIN: '/bin/true' },
  });
  assert.is(run.status, 0, run.stdout + run.stderr);
  const record = JSON.parse(
    readFileSync(path.join(repo, '.git', 'hagent', 'sessions', 'r1.json'), 'utf8'),
  );
  assert.is(record.agent, 'claude', 'recorded in the session record at the start of the run');
  const s = startSession(repo, ['--name', 'd1']);
  git(s.worktree, 'switch', '-q', '-c', 'elsewhere');
  const r = hagent(repo, ['status', '--json']);
  const by = Object.fromEntries(r.json.sessions.map((x: any) => [x.session, x]));
  assert.is(by.r1.agent, 'claude');
  assert.is(by.d1.agent, null);
  assert.is(by.d1.drift.kind, 'other-branch');
  const text = hagent(repo, ['status']).stdout;
  assert.match(text, /r1 +claude +empty/);
  assert.match(text, /d1 +- +empty .* other-branch /);
});

t(
  'status --watch in a pipe prints a new frame after a session changes, and ends on SIGINT',
  async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startSession(repo, ['--name', 'w1']);
    const child = spawn(process.execPath, [BIN, 'status', '--watch'], {
      cwd: repo,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const frames = () => out.split('\n\n').filter((f) => f.trim());
    const waitFor = async (n: number) => {
      for (let i = 0; i < 200 && frames().length < n; i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.ok(frames().length >= n, `${n} frame(s) in time: ${out}${err}`);
    };
    try {
      await waitFor(1);
      assert.match(frames()[0]!, /w1 +- +empty +0 +0/);
      const r = hagent(repo, ['apply', '-', '--session', 'w1', '--json'], {
        input: updatePatch('a.txt', 'a', 'W'),
      });
      assert.is(r.status, 0, r.stdout);
      await waitFor(2);
      assert.match(frames()[1]!, /w1 +- +open +1 +1/);
      assert.is(frames().length, 2, 'one frame per change, none while nothing changes');
    } finally {
      child.kill('SIGINT');
    }
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    assert.is(code, 0, `a clean exit on Ctrl-C: ${err}`);
  },
);

t('status --watch --json prints one line of JSON per frame', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  startSession(repo, ['--name', 'w2']);
  const child = spawn(process.execPath, [BIN, 'status', '--watch', '--json'], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    for (let i = 0; i < 200 && !out.includes('\n'); i++)
      await new Promise((r) => setTimeout(r, 50));
    writeFileSync(path.join(repo, 'a.txt'), 'user\n');
    git(repo, 'commit', '-qam', 'user');
    hagent(repo, ['session', 'end', 'w2', '--json']);
    // Frames of the end's steps may come between (its worktree detached for the pool): the
    // last one shows no session.
    const last = () => JSON.parse(out.trimEnd().split('\n').pop()!).sessions.length;
    for (let i = 0; i < 200 && last() > 0; i++) await new Promise((r) => setTimeout(r, 50));
  } finally {
    child.kill('SIGTERM');
  }
  await new Promise((r) => child.on('exit', r));
  const lines = out.split('\n').filter(Boolean);
  assert.ok(lines.length >= 2, out);
  assert.is(JSON.parse(lines[0]!).sessions[0].session, 'w2');
  assert.equal(JSON.parse(lines[lines.length - 1]!).sessions, [], 'the ended session is gone');
});

t(
  'the overview shows which sessions overlap, the predicted land and the last gate (current or old)',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    mkdirSync(path.join(repo, '.hagent'), { recursive: true });
    writeFileSync(path.join(repo, '.hagent', 'config.json'), '{"land": {"gate": ["true"]}}\n');
    for (const [id, to] of [
      ['x1', 'X1'],
      ['x2', 'X2'],
    ] as const) {
      startSession(repo, ['--name', id]);
      const r = hagent(repo, ['apply', '-', '--session', id], {
        input: updatePatch('a.txt', 'a', to),
      });
      assert.is(r.status, 0, r.stderr);
    }
    startSession(repo, ['--name', 'x3']);
    assert.is(
      hagent(repo, ['apply', '-', '--session', 'x3'], { input: updatePatch('b.txt', 'b', 'B3') })
        .status,
      0,
    );
    assert.is(hagent(repo, ['gate', 'x3']).status, 0);
    let st = hagent(repo, ['status', '--json']);
    assert.is(st.status, 0, st.stderr);
    let by = Object.fromEntries(st.json.sessions.map((r: { session: string }) => [r.session, r]));
    assert.equal(by.x1.overlaps, [{ session: 'x2', paths: ['a.txt'], lines: true }]);
    assert.equal(by.x3.overlaps, []);
    assert.is(by.x1.prediction, 'clean');
    assert.is(by.x3.gate.passed, true);
    assert.is(by.x3.gate.current, true);
    assert.is(by.x1.gate, null);
    // x1 lands: x2 now predicts a conflict, and x3's gate ran over an older target commit.
    look(repo, 'x1');
    assert.is(hagent(repo, ['review', '--session', 'x1', '--approve']).status, 0);
    assert.is(hagent(repo, ['land', 'x1']).status, 0);
    st = hagent(repo, ['status', '--json']);
    by = Object.fromEntries(st.json.sessions.map((r: { session: string }) => [r.session, r]));
    assert.is(by.x2.prediction, 'conflict');
    assert.is(by.x3.gate.current, false);
    assert.is(by.x1.gate.passed, true, "the land's own gate run is recorded");
    const text = hagent(repo, ['status']);
    assert.match(text.stdout, /OVERLAPS +LAND +GATE/);
    assert.match(text.stdout, /x2 .* conflict /);
    assert.match(text.stdout, /x3 .* passed\(old\)/);
  },
);

t.run();
