/**
 * `hagent land --undo` (and `hagent undo --land`) through the real CLI: the target goes back by
 * compare-and-swap, a checked-out target gets back only the files that still hold the landed
 * bytes, the session is approved and not landed again, and a land that moved on or was pushed is
 * refused with nothing touched.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('land --undo');

function landed(files: Record<string, string>, patch: string, name = 'u') {
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', name]);
  const a = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(a.status, 0, a.stdout);
  assert.is(hagent(repo, ['review', '--session', name, '--approve', '--json']).status, 0);
  const l = hagent(repo, ['land', '--session', name, '--json']);
  assert.is(l.status, 0, l.stdout);
  return { repo, s, land: l.json };
}

const PATCH =
  '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: n.txt\n+new\n*** Delete File: d.txt\n*** End Patch\n';

t('takes the land back, puts back the checkout, and land lands it again', () => {
  const { repo, land } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.undone, land.commit);
  assert.is(r.json.restored, land.previous);
  assert.is(git(repo, 'rev-parse', 'main'), land.previous);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
  assert.is(readFileSync(path.join(repo, 'd.txt'), 'utf8'), 'd\n');
  assert.not.ok(existsSync(path.join(repo, 'n.txt')));
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].state, 'approved');
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 0, again.stdout);
  assert.is(
    git(repo, 'rev-parse', 'main^{tree}'),
    git(repo, 'rev-parse', `${land.commit}^{tree}`),
    'the same tree lands again',
  );
});

t('a file changed since the land keeps its bytes and is listed', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  writeFileSync(path.join(repo, 'n.txt'), 'user edit\n');
  const r = hagent(repo, ['undo', '--land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.untouched, ['n.txt']);
  assert.is(readFileSync(path.join(repo, 'n.txt'), 'utf8'), 'user edit\n');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
});

t('refused when the target moved on, naming the commits on top', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  writeFileSync(path.join(repo, 'x.txt'), 'x\n');
  git(repo, 'add', 'x.txt');
  git(repo, 'commit', '-qm', 'on top');
  const head = git(repo, 'rev-parse', 'main');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.json.error.code, 'TARGET_MOVED');
  assert.match(r.json.error.message, /1 commit on top/);
  assert.match(r.json.error.hint, /git revert/);
  assert.is(git(repo, 'rev-parse', 'main'), head);
});

t('refused when the land was pushed', () => {
  const { repo } = landed({ 'a.txt': 'a\n', 'd.txt': 'd\n' }, PATCH);
  const remote = tempDir('hagent-remote-');
  git(remote, 'init', '-q', '--bare');
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', '-u', 'origin', 'main');
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.json.error.code, 'LAND_PUSHED');
  git(repo, 'branch', '--unset-upstream');
  const unset = hagent(repo, ['land', '--undo', '--json']);
  assert.is(
    unset.json.error.code,
    'LAND_PUSHED',
    'any remote-tracking branch that holds it counts',
  );
  assert.equal(unset.json.error.remotes, ['refs/remotes/origin/main']);
});

t('the last land is found past a later land that only recorded changes the target held', () => {
  const { repo, s, land } = landed(
    { 'a.txt': '1\n2\n3\n4\n5\n' },
    '*** Begin Patch\n*** Update File: a.txt\n-1\n+S1\n*** End Patch\n',
  );
  writeFileSync(path.join(repo, 'a.txt'), 'S1\n2\n3\n4\nU5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Update File: a.txt\n-5\n+U5\n*** End Patch\n',
    }).status,
    0,
  );
  const recorded = hagent(repo, ['land', '--yes', '--json']);
  assert.is(recorded.json.error.code, 'NOTHING_TO_LAND');
  git(repo, 'reset', '-q', '--hard', land.commit);
  const r = hagent(repo, ['land', '--undo', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(r.json.undone, land.commit);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), '1\n2\n3\n4\n5\n');
});

t('undoing a second land goes back to what the first one landed', () => {
  const { repo, s } = landed(
    { 'c.txt': 'l1\nl2\nl3\nl4\nl5\n' },
    '*** Begin Patch\n*** Update File: c.txt\n-l5\n+S5\n*** End Patch\n',
  );
  writeFileSync(path.join(repo, 'c.txt'), 'U1\nl2\nl3\nl4\nS5\n');
  git(repo, 'commit', '-qam', 'user');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], {
      input: '*** Begin Patch\n*** Update File: c.txt\n-l3\n+S3\n*** End Patch\n',
    }).status,
    0,
  );
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nS3\nl4\nS5\n');
  assert.is(hagent(repo, ['land', '--undo', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nl3\nl4\nS5\n');
  const review = hagent(repo, ['review', '--json']).json;
  assert.equal(
    review.files.map((f: any) => f.path),
    ['c.txt'],
  );
  assert.match(review.diff, /\+S3/);
  assert.not.match(review.diff, /^\+S5/m, 'the first land is still landed');
  assert.is(hagent(repo, ['land', '--yes', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'U1\nl2\nS3\nl4\nS5\n');
});

t.run();
