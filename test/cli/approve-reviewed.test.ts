/**
 * `hagent review --approve` approves what the human was shown, through the real CLI in real
 * repositories: the head the last `review` in that terminal showed (HEAD_MOVED when the agent
 * applied more since, NOT_REVIEWED when that terminal was shown nothing), `--head SHA` for
 * scripts, approval by path when the named paths did not change, and a rename approved as one move.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, GIT_ENV, git, hagent, look, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('approve-reviewed');

const addPatch = (file: string, line: string) =>
  `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch\n`;

/** A repository with a session "s1" that changed a.txt (one patch), as the human reviews it. */
function reviewedSession() {
  const repo = makeRepo({ 'a.txt': 'one\n', 'keep.txt': 'keep\n' });
  const s = startSession(repo, ['--name', 's1']);
  const r = hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, s };
}

const approvalRef = (repo: string) =>
  spawnSync('git', ['rev-parse', '--verify', '--quiet', 'refs/hagent/s1/approved'], {
    cwd: repo,
    encoding: 'utf8',
  }).stdout.trim();

t(
  'a patch applied after the review is not approved with it: HEAD_MOVED names it, land lands nothing unseen',
  () => {
    const { repo, s } = reviewedSession();
    const shown = hagent(repo, ['review', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(shown.status, 0, shown.stdout + shown.stderr);
    const seenHead = shown.json.head;
    assert.is(
      seenHead,
      git(repo, 'rev-parse', 'hagent/s1'),
      'review --json carries the head shown',
    );
    const text = hagent(repo, ['review'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.match(text.stdout, new RegExp(`Shown: head ${seenHead.slice(0, 12)}`));
    // The agent, still running, applies a second patch.
    const more = hagent(s.worktree, ['apply', '-'], { input: addPatch('b.txt', 'curl x | sh') });
    assert.is(more.status, 0, more.stdout + more.stderr);
    const head = git(repo, 'rev-parse', 'hagent/s1');
    const r = hagent(repo, ['review', '--approve', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'HEAD_MOVED');
    assert.is(r.json.error.reviewed, seenHead);
    assert.is(r.json.error.head, head);
    assert.equal(
      r.json.error.arrived.map((a: { files: string[] }) => a.files),
      [['b.txt']],
    );
    assert.match(r.json.error.message, /1 commit arrived since the review shown in this terminal/);
    assert.match(r.json.error.hint, /hagent review --session s1/);
    assert.match(r.json.error.hint, new RegExp(`--approve --head ${head}`));
    assert.is(approvalRef(repo), '', 'nothing was approved');
    const land = hagent(repo, ['land', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(land.json.error.code, 'NOT_APPROVED');
    assert.is(git(repo, 'ls-tree', '--name-only', 'main', 'b.txt'), '');
    // Reviewed again, the same command approves the head now shown.
    look(repo);
    const ok = hagent(repo, ['review', '--approve', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(ok.status, 0, ok.stdout + ok.stderr);
    assert.is(ok.json.approval.head, head);
  },
);

t('approval by path: refused only when a named path changed since the review', () => {
  const { repo, s } = reviewedSession();
  look(repo);
  assert.is(hagent(s.worktree, ['apply', '-'], { input: addPatch('b.txt', 'new') }).status, 0);
  const a = hagent(repo, ['review', '--approve', 'a.txt', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(a.status, 0, a.stdout + a.stderr);
  assert.equal(a.json.approval.paths, ['a.txt']);
  const b = hagent(repo, ['review', '--approve', 'b.txt', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(b.status, 1, b.stdout);
  assert.is(b.json.error.code, 'HEAD_MOVED');
  assert.equal(b.json.error.files, ['b.txt']);
  // A folder names what arrives under it too.
  const root = hagent(repo, ['review', '--approve', '.', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(root.json.error.code, 'HEAD_MOVED');
  // The land brings what was approved: a.txt, not b.txt.
  const land = hagent(repo, ['land', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
});

t(
  '--approve --head SHA approves the head it names, or refuses HEAD_MOVED; --head alone is usage',
  () => {
    const { repo, s } = reviewedSession();
    const first = git(repo, 'rev-parse', 'hagent/s1');
    assert.is(hagent(s.worktree, ['apply', '-'], { input: addPatch('b.txt', 'new') }).status, 0);
    const head = git(repo, 'rev-parse', 'hagent/s1');
    const env = { unsetEnv: ['HAGENT_AGENT'] };
    const old = hagent(repo, ['review', '--approve', '--head', first.slice(0, 10), '--json'], env);
    assert.is(old.json.error.code, 'HEAD_MOVED');
    assert.match(old.json.error.message, /since the head you named/);
    const bad = hagent(repo, ['review', '--approve', '--head', 'nosuchrev', '--json'], env);
    assert.is(bad.status, 2);
    assert.is(bad.json.error.code, 'USAGE');
    const alone = hagent(repo, ['review', '--head', head, '--json'], env);
    assert.is(alone.status, 2);
    const ok = hagent(repo, ['review', '--approve', '--head', head, '--json'], env);
    assert.is(ok.status, 0, ok.stdout + ok.stderr);
    assert.is(ok.json.approval.head, head);
  },
);

t('no review shown in this terminal: NOT_REVIEWED; an agent’s review shows no human', () => {
  const { repo } = reviewedSession();
  const none = hagent(repo, ['review', '--approve', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(none.status, 1, none.stdout);
  assert.is(none.json.error.code, 'NOT_REVIEWED');
  assert.match(none.json.error.hint, /run hagent review --session s1/);
  assert.match(none.json.error.hint, /--approve --head SHA/);
  // The agent reads the review (its marker set): that is no human's review.
  const agent = hagent(repo, ['review', '--json'], { env: { HAGENT_AGENT: 's1' } });
  assert.is(agent.status, 0);
  const still = hagent(repo, ['review', '--approve', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(still.json.error.code, 'NOT_REVIEWED');
});

/** Runs `hagent <args>` for each of `commands` in one real pseudo-terminal (`script`). */
function inTerminal(cwd: string, commands: string[][]): string {
  const line = commands
    .map((c) => [process.execPath, BIN, ...c].map((w) => `'${w}'`).join(' '))
    .join('; echo "rc=$?"; ');
  const r = spawnSync('script', ['-qec', `${line}; echo "rc=$?"`, '/dev/null'], {
    cwd,
    env: { ...process.env, ...GIT_ENV, HAGENT_AGENT: '' },
    encoding: 'utf8',
  });
  return r.stdout;
}

testOrSkip(
  t,
  'a review shown in one terminal approves there, not in another terminal',
  existsSync('/usr/bin/script') || existsSync('/bin/script')
    ? undefined
    : 'script(1) is needed for a pseudo-terminal',
)('a review shown in one terminal approves there, not in another terminal', () => {
  const { repo } = reviewedSession();
  // Terminal 1 is shown the review; terminal 2 (another pseudo-terminal) was not.
  const one = inTerminal(repo, [['review', '--stat']]);
  assert.match(one, /Shown: head/);
  const two = inTerminal(repo, [['review', '--approve']]);
  assert.match(two, /NOT_REVIEWED/);
  assert.match(two, /rc=1/);
  // Shown and approved in the same terminal: approved.
  const same = inTerminal(repo, [
    ['review', '--stat'],
    ['review', '--approve'],
  ]);
  assert.match(same, /Approved every file of session s1/);
  assert.match(same, /rc=0\s*$/);
});

t('a rename shows as one; approving one side approves the move whole, and it lands whole', () => {
  const repo = makeRepo({ 'old.txt': 'line 1\nline 2\nline 3\nline 4\n', 'keep.txt': 'k\n' });
  const s = startSession(repo, ['--name', 's1']);
  const mv = hagent(s.worktree, ['exec', '--', 'git', 'mv', 'old.txt', 'new.txt']);
  assert.is(mv.status, 0, mv.stdout + mv.stderr);
  const shown = look(repo);
  assert.equal(shown.json.renames, [{ from: 'old.txt', to: 'new.txt', similarity: 100 }]);
  const text = hagent(repo, ['review', '--stat'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.match(text.stdout, /^ {2}R old\.txt → new\.txt/m);
  assert.not.match(text.stdout, /^ {2}D old\.txt/m);
  const a = hagent(repo, ['review', '--approve', 'old.txt'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(a.status, 0, a.stdout + a.stderr);
  assert.match(a.stdout, /old\.txt → new\.txt is one move: both sides approved/);
  const land = hagent(repo, ['land', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(git(repo, 'ls-tree', '--name-only', 'main', 'old.txt'), '');
  assert.is(git(repo, 'show', 'main:new.txt'), 'line 1\nline 2\nline 3\nline 4');
  // The other side named alone: the same.
  const repo2 = makeRepo({ 'old.txt': 'x\ny\nz\n' });
  const s2 = startSession(repo2, ['--name', 's1']);
  assert.is(hagent(s2.worktree, ['exec', '--', 'git', 'mv', 'old.txt', 'new.txt']).status, 0);
  look(repo2);
  const b = hagent(repo2, ['review', '--approve', 'new.txt', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.equal(b.json.approval.paths, ['new.txt', 'old.txt']);
  assert.equal(b.json.movedWith, [{ from: 'old.txt', to: 'new.txt', similarity: 100 }]);
});

t(
  'the MCP review tool shows the head and the move; the agent reading it approves nothing for the human',
  async () => {
    const repo = makeRepo({ 'old.txt': 'a\nb\nc\n' });
    startSession(repo, ['--name', 's1']);
    const c = await connectMcp(repo, ['--session', 's1']);
    try {
      const mv = await c.call('exec', { command: 'git mv old.txt new.txt' });
      assert.is(mv.isError, false, mv.text);
      const rv = await c.call('review', { stat: true });
      assert.is(rv.isError, false, rv.text);
      assert.is(rv.data.head, git(repo, 'rev-parse', 'hagent/s1'));
      assert.equal(rv.data.renames, [{ from: 'old.txt', to: 'new.txt', similarity: 100 }]);
    } finally {
      await c.close();
    }
    const r = hagent(repo, ['review', '--approve', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(r.json.error.code, 'NOT_REVIEWED');
  },
);

t.run();
