/**
 * GIT_FAILED is git itself failing where hagent did not expect it: git missing from PATH, or a
 * repository whose object database lost an object. The refusal names git's own words and
 * command, exits 1, and nothing is changed.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('git failures');

t('git missing from PATH: GIT_FAILED saying so; with git back on PATH the command works', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const noGit = tempDir('hagent-no-git-');
  const r = hagent(repo, ['session', 'start', '--json'], { env: { PATH: noGit } });
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'GIT_FAILED');
  assert.match(r.json.error.message, /^cannot run git: spawn git ENOENT/);
  assert.match(r.json.error.hint, /install git 2\.38 or newer and make sure it is on PATH/);
  assert.is(git(repo, 'branch', '--list', 'hagent/*'), '', 'no session branch');
  const again = hagent(repo, ['session', 'start', '--json']);
  assert.is(again.status, 0, again.stdout + again.stderr);
});

t('an object missing from the repository: GIT_FAILED with git’s message, nothing moved', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'g1']);
  const r0 = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r0.status, 0, r0.stdout + r0.stderr);
  const head = git(repo, 'rev-parse', 'hagent/g1');
  const tree = git(repo, 'rev-parse', 'hagent/g1^{tree}');
  rmSync(path.join(repo, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
  const r = hagent(repo, ['review', '--session', 'g1', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'GIT_FAILED');
  // review runs git diff and git log at once: either may be the one to report it.
  assert.match(
    r.json.error.message,
    /^git (diff|log) failed \(exit 128\): fatal: unable to read tree/,
  );
  assert.ok(r.json.error.message.includes(tree), r.json.error.message);
  assert.is(r.json.error.argv[0], 'git');
  assert.match(r.json.error.hint, /the files and refs are as they were before the command/);
  const text = hagent(repo, ['review', '--session', 'g1']);
  assert.is(text.status, 1);
  assert.match(text.stderr, /^error\[GIT_FAILED\]: git (diff|log) failed/);
  assert.is(git(repo, 'rev-parse', 'hagent/g1'), head, 'the session branch did not move');
});

t.run();
