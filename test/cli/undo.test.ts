/**
 * `hagent undo` through the real CLI: back N patches and `--redo`, an outside edit kept, arguments
 * checked first.
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

t.run();
