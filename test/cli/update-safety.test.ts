/**
 * `hagent session update` and the merge it leaves, held to what `git merge` does in the same
 * state, through the real CLI on real repositories: an ignored file of the worktree that the
 * target now tracks is never overwritten; a conflict leaves the index stages and the marker
 * labels git would; sync does not conclude a merge whose conflicted files still hold markers;
 * a policy-denied path the target brings is the user's, not the agent's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite("session update: no work lost, git's conflict shape");

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;
const lines8 = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n';

/** `git ls-files -u` as `stage path` pairs (object ids left out: they are compared apart). */
const unmerged = (cwd: string) =>
  git(cwd, 'ls-files', '-u')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [info, p] = l.split('\t');
      const [mode, oid, stage] = info!.split(' ');
      return { mode, oid, stage, path: p };
    });

t(
  'an ignored file of the worktree that the target now tracks is not overwritten: refused, naming it, nothing written',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.gitignore': '*.local\n' });
    const s = startSession(repo, ['--name', 'ig']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
      0,
    );
    writeFileSync(path.join(s.worktree, 'conf.local'), "the agent's own settings\n");
    writeFileSync(path.join(repo, 'conf.local'), "the user's tracked settings\n");
    git(repo, 'add', '-f', 'conf.local');
    writeFileSync(path.join(repo, 'u.txt'), 'u\n');
    git(repo, 'add', 'u.txt');
    git(repo, 'commit', '-qm', 'user tracks conf.local');
    const head = git(repo, 'rev-parse', 'hagent/ig');
    const r = hagent(repo, ['session', 'update', 'ig', '--json']);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'DIRTY_TARGET');
    assert.equal(r.json.error.files, ['conf.local']);
    assert.match(r.json.error.message, /conf\.local/);
    assert.is(
      readFileSync(path.join(s.worktree, 'conf.local'), 'utf8'),
      "the agent's own settings\n",
      'not overwritten',
    );
    assert.is(git(repo, 'rev-parse', 'hagent/ig'), head, 'the branch did not move');
    assert.not.ok(existsSync(path.join(s.worktree, 'u.txt')), 'nothing of the merge written');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    // The hint works: move the file away, update again.
    assert.match(r.json.error.hint, /move|delete/);
    assert.match(r.json.error.hint, /hagent session update --session ig/);
    const kept = path.join(tempDir(), 'conf.local');
    renameSync(path.join(s.worktree, 'conf.local'), kept);
    const again = hagent(repo, ['session', 'update', 'ig', '--json']);
    assert.is(again.status, 0, again.stdout + again.stderr);
    assert.is(
      readFileSync(path.join(s.worktree, 'conf.local'), 'utf8'),
      "the user's tracked settings\n",
    );
    assert.is(readFileSync(kept, 'utf8'), "the agent's own settings\n");
  },
);

t('the same with conflicts: the ignored file stays, nothing is left half-merged', () => {
  const repo = makeRepo({ 'c.txt': 'c\n', '.gitignore': 'build/\n' });
  const s = startSession(repo, ['--name', 'igc']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'c', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'USER\n');
  const build = path.join(s.worktree, 'build');
  mkdirSync(build);
  writeFileSync(path.join(build, 'out.txt'), 'built by the agent\n');
  mkdirSync(path.join(repo, 'build'), { recursive: true });
  writeFileSync(path.join(repo, 'build', 'out.txt'), 'tracked by the user\n');
  git(repo, 'add', '-f', 'build/out.txt', 'c.txt');
  git(repo, 'commit', '-qm', 'user');
  const r = hagent(repo, ['session', 'update', 'igc', '--json']);
  assert.is(r.json?.error?.code, 'DIRTY_TARGET', r.stdout + r.stderr);
  assert.equal(r.json.error.files, ['build/out.txt']);
  assert.is(readFileSync(path.join(build, 'out.txt'), 'utf8'), 'built by the agent\n');
  assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'SESSION\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'no merge left in progress');
});

/**
 * The history of a rename/modify conflict made twice: once as a session (hagent), once as plain
 * branches in a scratch repository where real `git merge` runs. Returns both worktrees.
 */
function renameModify(): { wt: string; scratch: string; id: string } {
  const repo = makeRepo({ 'a.txt': lines8 });
  const s = startSession(repo, ['--name', 'rm']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'l2', 'SESSION') }).status,
    0,
  );
  git(repo, 'mv', 'a.txt', 'b.txt');
  writeFileSync(path.join(repo, 'b.txt'), lines8.replace('l2', 'USER'));
  git(repo, 'add', 'b.txt');
  git(repo, 'commit', '-qm', 'user renames and edits');
  const scratch = makeRepo({ 'a.txt': lines8 });
  git(scratch, 'checkout', '-qb', 'hagent/rm');
  writeFileSync(path.join(scratch, 'a.txt'), lines8.replace('l2', 'SESSION'));
  git(scratch, 'commit', '-qam', 'session');
  git(scratch, 'checkout', '-q', 'main');
  git(scratch, 'mv', 'a.txt', 'b.txt');
  writeFileSync(path.join(scratch, 'b.txt'), lines8.replace('l2', 'USER'));
  git(scratch, 'add', 'b.txt');
  git(scratch, 'commit', '-qm', 'user renames and edits');
  git(scratch, 'checkout', '-q', 'hagent/rm');
  const r = spawnGitMerge(scratch, 'main');
  assert.is(r, 1, 'git merge conflicts too');
  const u = hagent(repo, ['session', 'update', 'rm', '--json']);
  assert.is(u.status, 0, u.stdout + u.stderr);
  assert.equal(u.json.conflicts, ['b.txt']);
  return { wt: s.worktree, scratch, id: 'rm' };
}

function spawnGitMerge(cwd: string, branch: string): number {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'merge', '-q', branch], {
    cwd,
    encoding: 'utf8',
  });
  return r.status ?? -1;
}

t('a rename/modify conflict leaves the index stages and markers real git merge leaves', () => {
  const { wt, scratch } = renameModify();
  const ours = unmerged(wt);
  const theirs = unmerged(scratch);
  assert.equal(ours, theirs, 'the same git ls-files -u, object ids included');
  assert.equal(
    ours.map((e) => `${e.stage} ${e.path}`),
    ['1 b.txt', '2 b.txt', '3 b.txt'],
  );
  assert.is(
    readFileSync(path.join(wt, 'b.txt'), 'utf8'),
    readFileSync(path.join(scratch, 'b.txt'), 'utf8'),
    'the same file, labels included',
  );
  assert.equal(git(wt, 'status', '--porcelain'), git(scratch, 'status', '--porcelain'));
});

t(
  'after a rename/modify conflict, git checkout --theirs / --ours, git add and hagent sync conclude it',
  () => {
    for (const side of ['--theirs', '--ours']) {
      const { wt, id } = renameModify();
      git(wt, 'checkout', side, 'b.txt');
      git(wt, 'add', 'b.txt');
      const sync = hagent(wt, ['sync', '--json']);
      assert.is(sync.status, 0, sync.stdout + sync.stderr);
      assert.is(sync.json.merged?.length, 40);
      assert.is(git(wt, 'status', '--porcelain'), '');
      assert.is(
        readFileSync(path.join(wt, 'b.txt'), 'utf8'),
        lines8.replace('l2', side === '--theirs' ? 'USER' : 'SESSION'),
      );
      assert.is(git(wt, 'ls-tree', '--name-only', `hagent/${id}`), 'b.txt');
    }
  },
);

t('conflict markers are labelled HEAD and the target branch, as git merge labels them', () => {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  git(repo, 'branch', '-m', 'main', 'trunk');
  const s = startSession(repo, ['--name', 'lab']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(hagent(repo, ['session', 'update', 'lab', '--json']).status, 0);
  assert.is(
    readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
    'l1\n<<<<<<< HEAD\nSESSION\n=======\nUSER\n>>>>>>> trunk\nl3\n',
  );
  // diff3 style names the merge base by its short id, as git merge does.
  git(s.worktree, 'merge', '--abort');
  git(s.worktree, 'config', 'merge.conflictStyle', 'diff3');
  assert.is(hagent(repo, ['session', 'update', 'lab', '--json']).status, 0);
  const base = git(repo, 'rev-parse', '--short', `${'hagent/lab'}~1`);
  assert.is(
    readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
    `l1\n<<<<<<< HEAD\nSESSION\n||||||| ${base}\nl2\n=======\nUSER\n>>>>>>> trunk\nl3\n`,
  );
});

t(
  'git reset -- FILE clears the unmerged entry; sync still refuses while the markers are in it, naming the lines',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'o.txt': 'o\n' });
    const s = startSession(repo, ['--name', 'mk']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'SESSION') }).status,
      0,
    );
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
    git(repo, 'commit', '-qam', 'user');
    const head = git(repo, 'rev-parse', 'hagent/mk');
    assert.equal(hagent(repo, ['session', 'update', 'mk', '--json']).json.conflicts, ['c.txt']);
    git(s.worktree, 'reset', '-q', '--', 'c.txt');
    assert.equal(unmerged(s.worktree), [], 'git no longer lists it');
    // A file that was not conflicted may hold marker-like lines: it is not blocked.
    writeFileSync(path.join(s.worktree, 'o.txt'), '<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n');
    const r = hagent(s.worktree, ['sync', '--json']);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'CONFLICT_MARKERS');
    assert.equal(r.json.error.files, ['c.txt']);
    assert.is(r.json.error.path, 'c.txt');
    assert.is(r.json.error.line, 2);
    assert.match(r.json.error.message, /c\.txt:2/);
    assert.match(r.json.error.hint, /git add/);
    assert.match(r.json.error.hint, /hagent sync/);
    assert.is(git(repo, 'rev-parse', 'hagent/mk'), head, 'nothing committed');
    // Following the hint concludes it.
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.is(
      git(repo, 'rev-list', '--parents', '-n1', 'hagent/mk').split(' ').length,
      3,
      'the merge commit',
    );
    assert.is(git(repo, 'show', 'hagent/mk:o.txt'), '<<<<<<< a\nx\n=======\ny\n>>>>>>> b');
  },
);

/** A session whose update conflicts on c.txt while the target also adds a `.env` (a denied path) of the user's. */
function userEnvConflict(name: string): { repo: string; s: { worktree: string } } {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
  const s = startSession(repo, ['--name', name]);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'SESSION') }).status,
    0,
  );
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  writeFileSync(path.join(repo, '.env'), 'USER_SECRET=1\n');
  git(repo, 'add', '-f', '.env', 'c.txt');
  git(repo, 'commit', '-qm', 'user adds .env');
  assert.equal(hagent(repo, ['session', 'update', name, '--json']).json.conflicts, ['c.txt']);
  return { repo, s };
}

t(
  "a denied path the target brings in a conflicted update is the user's: kept in the merge, and the land does not refuse it",
  () => {
    const { repo, s } = userEnvConflict('den');
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.equal(sync.json.skipped, [], "the target's .env is not skipped");
    assert.is(git(repo, 'show', 'hagent/den:.env'), 'USER_SECRET=1');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    const review = hagent(repo, ['review', '--session', 'den', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['c.txt'],
    );
    const land = hagent(repo, ['land', '--session', 'den', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.equal(land.json.files, [{ path: 'c.txt', status: 'M' }]);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'USER_SECRET=1\n');
  },
);

t(
  "the agent's own edit of a denied path during the merge stays out: the merge carries the target's version",
  () => {
    const { repo, s } = userEnvConflict('den2');
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    writeFileSync(path.join(s.worktree, '.env'), 'AGENT_SECRET=2\n');
    git(s.worktree, 'add', '-f', 'c.txt', '.env');
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.equal(
      sync.json.skipped.map((k: any) => k.path),
      ['.env'],
    );
    assert.is(
      git(repo, 'show', 'hagent/den2:.env'),
      'USER_SECRET=1',
      "the merge carries the target's version, not the agent's",
    );
    const land = hagent(repo, ['land', '--session', 'den2', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'USER_SECRET=1\n');
  },
);

t("a land does not refuse a denied path whose content is the target's already", () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'same']);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
    0,
  );
  // The agent's own git commit of the same .env the user then commits on the target.
  writeFileSync(path.join(s.worktree, '.env'), 'K=1\n');
  git(s.worktree, 'add', '-f', '.env');
  git(s.worktree, 'commit', '-qm', 'agent .env');
  writeFileSync(path.join(repo, '.env'), 'K=1\n');
  git(repo, 'add', '-f', '.env');
  git(repo, 'commit', '-qm', 'user .env');
  const land = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.equal(land.json.files, [{ path: 'a.txt', status: 'M' }]);
  // A different .env is still refused.
  writeFileSync(path.join(s.worktree, '.env'), 'K=2\n');
  git(s.worktree, 'commit', '-qam', 'agent changes .env');
  const refused = hagent(repo, ['land', '--session', 'same', '--yes', '--json']);
  assert.is(refused.json?.error?.code, 'LAND_DENIED', refused.stdout);
  assert.equal(refused.json.error.files, ['.env']);
});

t(
  '--rebase refused on a conflict: its hint (update without --rebase, resolve, sync) is the way out',
  () => {
    const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n' });
    const s = startSession(repo, ['--name', 'rb']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('c.txt', 'l2', 'SESSION') }).status,
      0,
    );
    writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
    git(repo, 'commit', '-qam', 'user');
    const refused = hagent(repo, ['session', 'update', 'rb', '--rebase', '--json']);
    assert.is(refused.json?.error?.code, 'LAND_CONFLICT', refused.stdout);
    assert.match(refused.json.error.hint, /hagent session update --session rb \(without --rebase/);
    assert.match(refused.json.error.hint, /hagent sync --session rb/);
    const u = hagent(repo, ['session', 'update', '--session', 'rb', '--json']);
    assert.equal(u.json.conflicts, ['c.txt']);
    writeFileSync(path.join(s.worktree, 'c.txt'), 'l1\nBOTH\nl3\n');
    git(s.worktree, 'add', 'c.txt');
    assert.is(hagent(repo, ['sync', '--session', 'rb', '--json']).status, 0);
    const land = hagent(repo, ['land', '--session', 'rb', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\n');
  },
);

t.run();
