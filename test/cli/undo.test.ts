/**
 * `hagent undo` through the real CLI: back N patches and `--redo`, an outside edit kept, arguments
 * checked first. Also: an undo or redo killed before its one ref transaction (the branch and
 * the redo ref move in that one transaction, so no kill can separate them).
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
    // The head kept beside the branch moves in the same ref transaction.
    ['refs/heads/hagent/u1', 'refs/hagent/u1/redo', 'refs/hagent/u1/head'],
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

t(
  'undo and redo refuse while a merge waits in the worktree (its conflicts would be dropped), and go once it is concluded',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const s = startSession(repo, ['--name', 'um']);
    assert.is(
      hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'one', 'session') }).status,
      0,
    );
    assert.is(
      hagent(s.worktree, ['apply', '-'], {
        input: '*** Begin Patch\n*** Add File: during.txt\n+x\n*** End Patch\n',
      }).status,
      0,
    );
    assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
    writeFileSync(path.join(repo, 'a.txt'), 'main\n');
    git(repo, 'commit', '-q', '-am', 'main moves');
    assert.is(hagent(repo, ['session', 'update', '--json']).json.error.code, 'MERGE_UNRESOLVED');
    const conflicted = readFileSync(path.join(s.worktree, 'a.txt'), 'utf8');
    const head = git(repo, 'rev-parse', 'hagent/um');
    for (const args of [['undo'], ['undo', '--redo']]) {
      const r = hagent(s.worktree, [...args, '--json']);
      assert.is(r.status, 1, r.stdout);
      assert.is(r.json.error.code, 'MERGE_IN_PROGRESS');
      assert.equal(r.json.error.conflicted, ['a.txt']);
      assert.match(r.json.error.hint, /merge --abort/);
      assert.is(git(repo, 'rev-parse', 'hagent/um'), head, `${args.join(' ')} moved nothing`);
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), conflicted);
    }
    const text = hagent(s.worktree, ['undo']);
    assert.match(
      text.stderr,
      /error\[MERGE_IN_PROGRESS\]: a merge is in progress in .*: undo would drop its conflicts/,
    );
    // Concluded by resolving and syncing: the merge commit can be undone (back to before it).
    writeFileSync(path.join(s.worktree, 'a.txt'), 'both\n');
    git(s.worktree, 'add', 'a.txt');
    assert.is(hagent(s.worktree, ['sync', '--json']).status, 0);
    const undone = hagent(s.worktree, ['undo', '--json']);
    assert.is(undone.status, 0, undone.stdout);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'session\n');
  },
);

t.run();
