/**
 * `hagent session update --all` through the real CLI: one clean, one conflicting and one
 * up-to-date session in one run, each reported; never stopping at the conflict; the exit status;
 * `--session` refused beside it; refused for an agent.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, updatePatch } from '../helpers/index.js';

const t = suite('update --all');

/**
 * Sessions `conf` (changes c.txt's l2, which the user changes too), `clean` (changes b.txt) and
 * `fresh` (started after the user's commit: up to date), oldest first.
 */
function threeSessions() {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'b.txt': 'b\n' });
  const conf = startSession(repo, ['--name', 'conf']);
  const clean = startSession(repo, ['--name', 'clean']);
  for (const [id, patch] of [
    ['conf', updatePatch('c.txt', 'l2', 'SESSION')],
    ['clean', updatePatch('b.txt', 'b', 'B')],
  ] as const) {
    const r = hagent(repo, ['apply', '-', '--session', id, '--json'], { input: patch });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  git(repo, 'commit', '-qam', 'user');
  const fresh = startSession(repo, ['--name', 'fresh']);
  return { repo, conf, clean, fresh, main: git(repo, 'rev-parse', 'main') };
}

t('--all updates the clean one, leaves the conflict in its worktree, reports each; exit 1', () => {
  const { repo, conf, clean, fresh, main } = threeSessions();
  const r = hagent(repo, ['session', 'update', '--all', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.ok, false);
  assert.equal(
    r.json.sessions.map((s: any) => [s.session, s.outcome]),
    [
      ['conf', 'conflict'],
      ['clean', 'updated'],
      ['fresh', 'up-to-date'],
    ],
    'the conflict, first, does not stop the others',
  );
  const [c, u, f] = r.json.sessions;
  assert.is(c.code, 'MERGE_UNRESOLVED');
  assert.equal(c.conflicts, ['c.txt']);
  assert.match(c.hint, /hagent sync --session conf/);
  assert.is(c.worktree, conf.worktree);
  assert.is(u.merged, main);
  assert.is(u.commit, git(repo, 'rev-parse', 'hagent/clean'));
  assert.equal(git(repo, 'rev-parse', 'hagent/clean^2'), main, 'a merge of main');
  assert.is(readFileSync(path.join(clean.worktree, 'c.txt'), 'utf8'), 'l1\nUSER\nl3\n');
  assert.is(f.merged, main);
  assert.is(git(repo, 'rev-parse', 'hagent/fresh'), fresh.base, 'nothing made for it');
  assert.is(r.json.error.code, 'MERGE_UNRESOLVED');
  assert.equal(r.json.error.sessions, ['conf']);
  // Left as `session update` leaves one: markers, unmerged entries, MERGE_HEAD.
  assert.match(readFileSync(path.join(conf.worktree, 'c.txt'), 'utf8'), /^<<<<<<< /m);
  assert.match(git(conf.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
  // Again: the merge waiting is that session's refusal; the others are up to date now.
  const again = hagent(repo, ['session', 'update', '--all', '--json']);
  assert.is(again.status, 1);
  assert.equal(
    again.json.sessions.map((s: any) => [s.session, s.outcome, s.code ?? null]),
    [
      ['conf', 'refused', 'MERGE_IN_PROGRESS'],
      ['clean', 'up-to-date', null],
      ['fresh', 'up-to-date', null],
    ],
  );
  // Given up, the conflict aside: all up to date but conf, which conflicts again.
  git(conf.worktree, 'merge', '--abort');
  const text = hagent(repo, ['session', 'update', '--all']);
  assert.is(text.status, 1, text.stderr);
  const lines = text.stdout.split('\n');
  assert.match(lines[0]!, /^conf +conflict +1 file with conflicts, left in its worktree: c\.txt$/);
  assert.match(lines[1]!, /^clean +up-to-date +already holds main \(/);
  assert.match(lines[2]!, /^fresh +up-to-date +already holds main \(/);
  assert.match(text.stdout, /1 of 3 need you:\n {2}conf: in .* hagent sync --session conf/);
});

t('--all exits 0 when every session is updated or up to date', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  startSession(repo, ['--name', 'one']);
  startSession(repo, ['--name', 'two']);
  writeFileSync(path.join(repo, 'b.txt'), 'user\n');
  git(repo, 'commit', '-qam', 'user');
  const r = hagent(repo, ['session', 'update', '--all']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^one +updated +merged main \([0-9a-f]{12}\): [0-9a-f]{12}, 1 file$/m);
  assert.match(r.stdout, /^two +updated /m);
  const json = hagent(repo, ['session', 'update', '--all', '--json']);
  assert.is(json.status, 0);
  assert.is(json.json.ok, true);
  assert.not.ok('error' in json.json);
  assert.equal(
    json.json.sessions.map((s: any) => s.outcome),
    ['up-to-date', 'up-to-date'],
  );
});

t('--all beside --session or an id is a usage error; an agent is refused HUMAN_ONLY', () => {
  const repo = makeRepo();
  startSession(repo, ['--name', 'x']);
  for (const args of [
    ['--all', '--session', 'x'],
    ['x', '--all'],
  ]) {
    const r = hagent(repo, ['session', 'update', ...args, '--json']);
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, 'USAGE');
  }
  const agent = hagent(repo, ['session', 'update', '--all', '--json'], {
    env: { HAGENT_AGENT: 'x' },
  });
  assert.is(agent.status, 1);
  assert.is(agent.json.error.code, 'HUMAN_ONLY');
});

t.run();
