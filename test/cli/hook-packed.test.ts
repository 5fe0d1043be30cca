/**
 * A native edit of a file whose trees are packed (the base commit of a repository after `git gc`,
 * the usual case for a real repository): the pre-tool hook reads them with one `git cat-file`
 * and keeps loose copies, so the post-tool hook reads them in-process; the commit is the one git
 * would make and the repository stays sound. HAGENT_TRACE names the git processes each ran.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const test = suite('hagent hook: packed trees');

test('the post-tool hook of a first edit under packed trees spawns no cat-file', () => {
  const repo = makeRepo({ 'src/lib/a.txt': 'a\n', 'src/lib/b.txt': 'b\n', 'top.txt': 't\n' });
  git(repo, 'gc', '--quiet', '--prune=now');
  assert.is(git(repo, 'count-objects', '-v').match(/^count: (\d+)/m)?.[1], '0', 'all packed');
  const s = startSession(repo, ['--name', 'packed']);
  const file = path.join(s.worktree, 'src', 'lib', 'a.txt');
  const payload = (event: string) =>
    JSON.stringify({
      hook_event_name: event,
      cwd: s.worktree,
      tool_name: 'Write',
      tool_use_id: 'toolu_packed',
      tool_input: { file_path: file, content: 'a2\n' },
    });
  const env = { HAGENT_TRACE: '1' };
  const pre = hagent(s.worktree, ['hook', 'claude'], { input: payload('PreToolUse'), env });
  assert.is(pre.status, 0, pre.stderr);
  assert.match(pre.stderr, /git cat-file --batch/, 'the pre-tool hook reads the packed trees');
  writeFileSync(file, 'a2\n');
  const post = hagent(s.worktree, ['hook', 'claude'], { input: payload('PostToolUse'), env });
  assert.is(post.status, 0, post.stderr);
  assert.match(post.stdout, /hagent recorded this edit as commit/);
  assert.not.match(post.stderr, /git cat-file/, post.stderr);
  assert.is(git(repo, 'show', `${s.branch}:src/lib/a.txt`), 'a2');
  assert.is(git(repo, 'show', `${s.branch}:src/lib/b.txt`), 'b');
  assert.is(git(repo, 'rev-parse', `${s.branch}~1`), s.base);
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  git(repo, 'fsck', '--strict', '--no-dangling');
  // The copies are git's own objects: gc drops them again.
  git(repo, 'gc', '--quiet', '--prune=now');
  git(repo, 'fsck', '--strict', '--no-dangling');
  assert.is(git(repo, 'show', `${s.branch}:src/lib/a.txt`), 'a2');
});

test.run();
