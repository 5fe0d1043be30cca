/**
 * The `apply_patch` bin (dist/apply_patch.cjs): Codex's calling convention and success text, the
 * session of the current folder, paths read against that folder, hagent's teaching errors.
 * (Its text against the real Codex binary: test/codex/differential.ts.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, GIT_ENV, makeRepo, ROOT, startSession } from '../helpers/index.js';

const t = suite('apply_patch bin');
const BIN = path.join(ROOT, 'dist', 'apply_patch.cjs');

function run(cwd: string, args: string[], input = '') {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function setup() {
  const repo = makeRepo({ 'm.txt': 'one\n', 'del.txt': 'x\n', 'sub/src.txt': 'mv\n' });
  mkdirSync(path.join(repo, '.hagent'));
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    JSON.stringify({ confirmDeletes: false }),
  );
  return { repo, s: startSession(repo) };
}

t(
  'applies the patch given as the argument and prints the A, then M, then D lines as Codex does',
  () => {
    const { repo, s } = setup();
    const r = run(s.worktree, [
      '*** Begin Patch\n*** Delete File: del.txt\n*** Update File: sub/src.txt\n*** Move to: sub/dst.txt\n@@\n-mv\n+moved\n*** Update File: m.txt\n@@\n-one\n+uno\n*** Add File: new.txt\n+hi\n*** End Patch',
    ]);
    assert.is(r.status, 0, r.stderr);
    assert.is(
      r.stdout,
      'Success. Updated the following files:\nA new.txt\nM sub/dst.txt\nM m.txt\nD del.txt\n',
    );
    assert.is(r.stderr, '');
    assert.is(readFileSync(path.join(s.worktree, 'sub/dst.txt'), 'utf8'), 'moved\n');
    assert.is(git(repo, 'rev-list', '--count', `main..${s.branch}`), '1');
  },
);

t(
  'reads the patch on stdin, and its paths against the current folder (--preserve-crlf accepted)',
  () => {
    const { s } = setup();
    const r = run(
      path.join(s.worktree, 'sub'),
      ['--preserve-crlf'],
      '*** Begin Patch\n*** Update File: src.txt\n@@\n-mv\n+here\n*** End Patch\n',
    );
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, 'Success. Updated the following files:\nM src.txt\n');
    assert.is(readFileSync(path.join(s.worktree, 'sub/src.txt'), 'utf8'), 'here\n');
  },
);

t('a refusal is the teaching error on stderr, exit 1, nothing written; usage errors exit 2', () => {
  const { s } = setup();
  const r = run(s.worktree, [
    '*** Begin Patch\n*** Update File: m.txt\n@@\n-nope\n+x\n*** End Patch',
  ]);
  assert.is(r.status, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /^error\[CONTEXT_NOT_FOUND\]: /);
  assert.match(r.stderr, /hint: /);
  assert.is(readFileSync(path.join(s.worktree, 'm.txt'), 'utf8'), 'one\n');
  assert.is(run(s.worktree, [], '').status, 2);
  assert.is(run(s.worktree, ['a', 'b']).status, 2);
  assert.not.ok(existsSync(path.join(s.worktree, 'x')));
});

t('a risky patch is refused with a hint naming hagent apply --yes, since the bin has none', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  const r = run(s.worktree, ['*** Begin Patch\n*** Delete File: a.txt\n*** End Patch']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /CONFIRMATION_REQUIRED[\s\S]*hagent apply --yes/);
  assert.ok(existsSync(path.join(s.worktree, 'a.txt')));
});

t('outside any session it is refused', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const r = run(repo, ['*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /NOT_IN_SESSION/);
});

t.run();
