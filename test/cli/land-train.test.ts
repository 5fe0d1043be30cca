/**
 * The land train through the CLI (issue: many agents §1–§3): `hagent land S1 S2 …` lands in turn
 * and stops at the first session that cannot go; `--dry-run` predicts it without writing;
 * `--all` takes the approved sessions in the order of their approvals; `hagent land --undo` right
 * after a train takes the whole train back, the user's checkout byte for byte; the gate runs on
 * the exact tree that lands, its pass reused for the same tree, `--no-gate` recorded.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  tempDir,
} from '../helpers/index.js';

const test = suite('land train');

const FILES = { 'f.txt': 'a\nb\nc\nd\ne\nf\ng\nh\n', 'g.txt': 'gee\n' };

/** A patch replacing line `from` of f.txt with `to`. */
const updateF = (from: string, to: string) =>
  `*** Begin Patch\n*** Update File: f.txt\n@@\n-${from}\n+${to}\n*** End Patch\n`;
const addFile = (name: string, text: string) =>
  `*** Begin Patch\n*** Add File: ${name}\n+${text}\n*** End Patch\n`;

/** Starts session `id`, applies `patch` in it and approves it as the human would. */
function approved(repo: string, id: string, patch: string): void {
  const s = startSession(repo, ['--name', id]);
  const r = hagent(s.worktree, ['apply', '-'], { input: patch });
  assert.is(r.status, 0, r.stderr);
  look(repo, id);
  assert.is(hagent(repo, ['review', '--session', id, '--approve']).status, 0);
}

function gate(repo: string, gateValue: unknown): void {
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    `${JSON.stringify({ land: { gate: gateValue } })}\n`,
  );
}

test('a train lands the clean sessions in order and stops at the conflict; the rest is not tried; --dry-run predicted it', () => {
  const repo = makeRepo(FILES);
  approved(repo, 't1', updateF('a', 'A1'));
  approved(repo, 't2', addFile('n2.txt', 'two'));
  approved(repo, 't3', updateF('a', 'A3'));
  approved(repo, 't4', addFile('n4.txt', 'four'));
  const before = git(repo, 'rev-parse', 'main');
  const dry = hagent(repo, ['land', 't1', 't2', 't3', 't4', '--dry-run', '--json']);
  assert.is(dry.status, 1, dry.stderr);
  assert.equal(
    dry.json.steps.map((s: { session: string; outcome: string }) => [s.session, s.outcome]),
    [
      ['t1', 'clean'],
      ['t2', 'clean'],
      ['t3', 'conflict'],
      ['t4', 'clean'],
    ],
  );
  assert.equal(dry.json.steps[2].conflicts, ['f.txt']);
  assert.equal(dry.json.wouldLand, ['t1', 't2']);
  assert.is(dry.json.wouldStopAt, 't3');
  assert.is(dry.json.ok, false, 'a train that would stop: ok false, exit 1');
  assert.is(dry.status, 1);
  assert.is(git(repo, 'rev-parse', 'main'), before, 'a dry run writes no ref');

  const r = hagent(repo, ['land', 't1', 't2', 't3', 't4', '--json']);
  assert.is(r.status, 1, r.stderr);
  assert.is(r.json.ok, false);
  assert.equal(
    r.json.landed.map((l: { session: string }) => l.session),
    ['t1', 't2'],
  );
  assert.is(r.json.stopped.session, 't3');
  assert.is(r.json.stopped.code, 'LAND_CONFLICT');
  assert.match(r.json.stopped.hint, /hagent session update --session t3/);
  assert.match(r.json.stopped.hint, /hagent land t3 t4/);
  // The stop is a refusal like any other; the hint speaks of the stopped session's land alone.
  assert.is(r.json.error.code, 'LAND_CONFLICT');
  assert.match(r.json.error.hint, /^nothing of session t3 was written/);
  assert.equal(r.json.notTried, ['t4']);
  // The target is the chain of the two land commits; the checkout holds them, nothing staged.
  assert.is(git(repo, 'rev-parse', 'main~2'), before);
  assert.match(git(repo, 'log', '-1', '--format=%s', 'main~1'), /land session t1/);
  assert.match(git(repo, 'log', '-1', '--format=%s', 'main'), /land session t2/);
  assert.is(readFileSync(path.join(repo, 'f.txt'), 'utf8').split('\n')[0], 'A1');
  assert.is(git(repo, 'status', '--porcelain'), '');

  // The text form names the stop and how to take the train back.
  const text = hagent(repo, ['land', 't3', 't4']);
  assert.is(text.status, 1);
  assert.match(text.stderr, /error\[LAND_CONFLICT\]: the train stopped at session t3/);
  assert.match(text.stderr, /not tried: t4/);
});

test('land --undo right after a train takes the whole train back in one step; a dirty file is left and listed; landing the same sessions brings it back', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'u1', updateF('a', 'A1'));
  approved(repo, 'u2', addFile('n2.txt', 'two'));
  approved(repo, 'u3', updateF('h', 'H3'));
  const before = git(repo, 'rev-parse', 'main');
  const landed = hagent(repo, ['land', 'u1', 'u2', 'u3', '--json']);
  assert.is(landed.status, 0, landed.stderr + landed.stdout);
  assert.equal(
    landed.json.landed.map((l: { session: string }) => l.session),
    ['u1', 'u2', 'u3'],
  );
  // The user edits a file the train brought; and has a dirty file of their own.
  writeFileSync(path.join(repo, 'n2.txt'), 'mine\n');
  writeFileSync(path.join(repo, 'g.txt'), 'gee, dirty\n');
  const undo = hagent(repo, ['land', '--undo', '--json']);
  assert.is(undo.status, 0, undo.stderr + undo.stdout);
  assert.is(undo.json.train, true);
  assert.equal(undo.json.sessions, ['u1', 'u2', 'u3']);
  assert.is(undo.json.restored, before);
  assert.equal(undo.json.untouched, ['n2.txt']);
  assert.is(git(repo, 'rev-parse', 'main'), before);
  assert.is(readFileSync(path.join(repo, 'f.txt'), 'utf8'), FILES['f.txt']);
  assert.is(readFileSync(path.join(repo, 'n2.txt'), 'utf8'), 'mine\n');
  assert.is(readFileSync(path.join(repo, 'g.txt'), 'utf8'), 'gee, dirty\n');
  assert.is(git(repo, 'diff', '--cached', '--name-only'), '', 'nothing left staged');
  // Every land base went back: the same train lands again, to the same trees.
  writeFileSync(path.join(repo, 'g.txt'), FILES['g.txt']);
  git(repo, 'add', 'n2.txt');
  git(repo, 'commit', '-qm', 'user: n2');
  const again = hagent(repo, ['land', 'u1', 'u3', '--json']);
  assert.is(again.status, 0, again.stderr + again.stdout);
  assert.is(readFileSync(path.join(repo, 'f.txt'), 'utf8').split('\n')[0], 'A1');
  assert.is(readFileSync(path.join(repo, 'f.txt'), 'utf8').split('\n')[7], 'H3');
  // --undo --session takes back one session's land, when it is on top.
  const one = hagent(repo, ['land', '--undo', '--session', 'u3', '--json']);
  assert.is(one.status, 0, one.stderr + one.stdout);
  assert.is(one.json.session, 'u3');
  assert.match(git(repo, 'log', '-1', '--format=%s', 'main'), /land session u1/);
  // Then the train is no longer at the tip: land --undo takes back the land on top (u1).
  const next = hagent(repo, ['land', '--undo', '--json']);
  assert.is(next.status, 0, next.stderr + next.stdout);
  assert.is(next.json.session, 'u1');
  assert.match(git(repo, 'log', '-1', '--format=%s', 'main'), /user: n2/);
});

test('a train whose target moved on is not undone: land --undo names the commit on top and the revert of the whole train, nothing touched', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'm1', updateF('a', 'A1'));
  approved(repo, 'm2', addFile('n2.txt', 'two'));
  approved(repo, 'm3', addFile('n3.txt', 'three'));
  const before = git(repo, 'rev-parse', 'main');
  assert.is(hagent(repo, ['land', 'm1', 'm2', 'm3']).status, 0);
  const trainTip = git(repo, 'rev-parse', 'main');
  writeFileSync(path.join(repo, 'g.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user on top');
  const tip = git(repo, 'rev-parse', 'main');
  // Several sessions exist and none is at the tip: the train is the one meant.
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'TARGET_MOVED');
  assert.match(r.json.error.message, /user on top/);
  assert.ok(
    r.json.error.hint.includes(`git revert ${before.slice(0, 12)}..${trainTip.slice(0, 12)}`),
    r.json.error.hint,
  );
  assert.is(git(repo, 'rev-parse', 'main'), tip);
  const one = hagent(repo, ['land', '--undo', '--session', 'm2', '--json']);
  assert.is(one.status, 1);
  assert.is(one.json.error.code, 'TARGET_MOVED');
});

test('a session in a train with nothing left to land is passed over, not a stop', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'k1', addFile('k1.txt', 'one'));
  approved(repo, 'k2', addFile('k2.txt', 'two'));
  assert.is(hagent(repo, ['land', 'k1']).status, 0);
  const dry = hagent(repo, ['land', 'k1', 'k2', '--dry-run', '--json']);
  assert.is(dry.status, 0, dry.stdout);
  assert.equal(dry.json.wouldLand, ['k2']);
  assert.is(dry.json.wouldStopAt, null);
  assert.is(dry.json.ok, true);
  const r = hagent(repo, ['land', 'k1', 'k2', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(
    r.json.landed.map((l: { session: string }) => l.session),
    ['k2'],
  );
  assert.equal(
    r.json.skipped.map((k: { session: string }) => k.session),
    ['k1'],
  );
});

test('--all lands the approved sessions in the order they were approved; sessions not approved are left', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'b2', addFile('b2.txt', 'b2'));
  approved(repo, 'a1', addFile('a1.txt', 'a1'));
  const s = startSession(repo, ['--name', 'c3']);
  assert.is(hagent(s.worktree, ['apply', '-'], { input: addFile('c3.txt', 'c3') }).status, 0);
  const r = hagent(repo, ['land', '--all', '--json']);
  assert.is(r.status, 0, r.stderr + r.stdout);
  assert.equal(
    r.json.landed.map((l: { session: string }) => l.session),
    ['b2', 'a1'],
  );
  const none = hagent(repo, ['land', '--all', '--json']);
  assert.is(none.status, 1);
  assert.is(none.json.error.code, 'NOTHING_TO_LAND');
  // Naming sessions with --all, --session or --undo is a usage error.
  assert.is(hagent(repo, ['land', 'a1', 'b2', '--all']).status, 2);
  assert.is(hagent(repo, ['land', 'a1', 'b2', '--undo']).status, 2);
});

test('the gate runs on the exact tree that lands: a failure stops the train with GATE_FAILED and how to rerun it; a pass is reused for the same tree; --no-gate is recorded', () => {
  const repo = makeRepo(FILES);
  // Fails when the tree holds bad.txt; prints the tree's files so the test sees where it ran.
  gate(repo, { shell: 'ls; echo "tree=$HAGENT_GATE_TREE"; test ! -e bad.txt' });
  approved(repo, 'g1', addFile('ok.txt', 'fine'));
  approved(repo, 'g2', addFile('bad.txt', 'broken'));
  approved(repo, 'g3', addFile('late.txt', 'late'));
  // hagent gate on g1 alone: passes, recorded with the tree it would land.
  const alone = hagent(repo, ['gate', 'g1', '--json']);
  assert.is(alone.status, 0, alone.stderr + alone.stdout);
  assert.is(alone.json.passed, true);
  assert.is(alone.json.reused, false);
  assert.match(alone.json.stdout, /ok\.txt/);
  assert.match(alone.json.stdout, new RegExp(`tree=${alone.json.tree}`));
  const r = hagent(repo, ['land', 'g1', 'g2', 'g3', '--json']);
  assert.is(r.status, 1, r.stderr + r.stdout);
  assert.equal(
    r.json.landed.map((l: { session: string }) => l.session),
    ['g1'],
  );
  // g1's land reused the pass of the same tree; the landed tree is the one the gate saw.
  assert.is(r.json.landed[0].gate.reused, true);
  assert.is(r.json.landed[0].gate.tree, alone.json.tree);
  assert.is(git(repo, 'rev-parse', 'main^{tree}'), alone.json.tree);
  assert.match(git(repo, 'log', '-1', '--format=%B', 'main'), /^Hagent-Gate: passed/m);
  assert.is(r.json.stopped.code, 'GATE_FAILED');
  assert.is(r.json.stopped.details.exitCode, 1);
  assert.match(r.json.stopped.details.stdout, /bad\.txt/);
  assert.match(r.json.stopped.hint, /cd .*\.gate.* && bash -c/);
  assert.equal(r.json.notTried, ['g3']);
  assert.is(readFileSync(path.join(repo, 'ok.txt'), 'utf8'), 'fine\n');
  // hagent gate on g2: the same failure, exit 1, nothing landed.
  const failed = hagent(repo, ['gate', 'g2']);
  assert.is(failed.status, 1);
  assert.match(failed.stderr, /error\[GATE_FAILED\]/);
  // A dry run counts the failure recorded on g2's tree as where the train would stop.
  const dry = hagent(repo, ['land', 'g2', 'g3', '--dry-run', '--json']);
  assert.is(dry.status, 1, dry.stdout);
  assert.is(dry.json.steps[0].gate, 'failed');
  assert.is(dry.json.wouldStopAt, 'g2');
  assert.equal(dry.json.wouldLand, []);
  // --no-gate lands it anyway and says so in the land commit.
  const forced = hagent(repo, ['land', 'g2', '--no-gate', '--json']);
  assert.is(forced.status, 0, forced.stderr + forced.stdout);
  assert.is(forced.json.gate.skipped, true);
  assert.match(
    git(repo, 'log', '-1', '--format=%B', 'main'),
    /^Hagent-Gate: skipped \(--no-gate\)/m,
  );
  // An argv gate that times out is a failure that says so.
  gate(repo, ['sleep', '30']);
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    `${JSON.stringify({ land: { gate: ['sleep', '30'], gateTimeoutS: 1 } })}\n`,
  );
  const slow = hagent(repo, ['gate', 'g3', '--json']);
  assert.is(slow.status, 1);
  assert.is(slow.json.timedOut, true);
  assert.is(slow.json.passed, false);
  assert.is(slow.json.ok, false);
  assert.is(slow.json.error.code, 'GATE_FAILED');
  assert.ok(slow.json.error.hint, 'the refusal teaches');
});

test('hagent gate on work not approved yet checks the whole head; the land after approval reuses that pass', () => {
  const repo = makeRepo(FILES);
  gate(repo, ['true']);
  const s = startSession(repo, ['--name', 'w1']);
  assert.is(hagent(s.worktree, ['apply', '-'], { input: addFile('w.txt', 'w') }).status, 0);
  // The agent asks from its worktree, before any approval.
  const g = hagent(s.worktree, ['gate', '--json']);
  assert.is(g.status, 0, g.stderr + g.stdout);
  assert.is(g.json.passed, true);
  look(repo, 'w1');
  assert.is(hagent(repo, ['review', '--session', 'w1', '--approve']).status, 0);
  const land = hagent(repo, ['land', 'w1', '--json']);
  assert.is(land.status, 0, land.stderr + land.stdout);
  assert.is(land.json.gate.reused, true);
  assert.is(land.json.gate.tree, g.json.tree);
});

test('hagent gate with no gate configured is NO_GATE', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'n1', addFile('x.txt', 'x'));
  const r = hagent(repo, ['gate', 'n1', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'NO_GATE');
  assert.match(r.json.error.hint, /"land": \{"gate"/);
});

test('land --undo before any land says there is nothing to take back, not which session', () => {
  const repo = makeRepo(FILES);
  approved(repo, 'u1', addFile('x.txt', 'x'));
  approved(repo, 'u2', addFile('y.txt', 'y'));
  const r = hagent(repo, ['land', '--undo', '--yes', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'NOTHING_TO_LAND');
  assert.match(r.json.error.message, /no land to take back/);
});

test('a Ctrl-C of hagent while the gate runs ends the gate too (its own process group)', async () => {
  const repo = makeRepo(FILES);
  const dir = tempDir();
  const pidFile = path.join(dir, 'gate.pid');
  gate(repo, { shell: `echo $$ > ${pidFile}; exec sleep 60` });
  approved(repo, 'c1', addFile('c.txt', 'c'));
  const child = spawn(process.execPath, [BIN, 'gate', 'c1'], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  assert.ok(pid > 0);
  child.kill('SIGINT');
  assert.is(await exited, 130);
  let alive = true;
  for (let i = 0; i < 40 && alive; i++) {
    try {
      process.kill(pid, 0);
      await new Promise((r) => setTimeout(r, 50));
    } catch {
      alive = false;
    }
  }
  assert.not.ok(alive, 'the gate was killed with hagent');
});

test.run();
