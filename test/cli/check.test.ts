/**
 * `hagent check`: locating a patch without writing, against a session worktree or any folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BIN,
  git,
  GIT_ENV,
  hagent,
  makeRepo,
  startSession,
  tempDir,
  writeFiles,
} from '../helpers/index.js';

const t = suite('check');

t('check reports each chunk with its 1-based lines and level, writing nothing', () => {
  const dir = tempDir();
  writeFiles(dir, { 'a.py': 'def f():\n    return 1\n\ndef g():\n    return 2\n' });
  const patch =
    '*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    return 2   \n+    return 3\n*** End Patch\n';
  const r = hagent(dir, ['check', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.files[0].path, 'a.py');
  assert.equal(r.json.files[0].chunks, [
    { chunk: 1, level: 'trim-end', startLine: 5, oldCount: 1, newCount: 1 },
  ]);
  assert.is(
    readFileSync(path.join(dir, 'a.py'), 'utf8'),
    'def f():\n    return 1\n\ndef g():\n    return 2\n',
  );
});

t('check refuses like apply, with the code and the candidates', () => {
  const dir = tempDir();
  writeFiles(dir, { 'r.rs': 'fn a() {\n    return 1;\n}\nfn b() {\n    return 1;\n}\n' });
  const r = hagent(dir, ['check', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Update File: r.rs\n-    return 1;\n+    return 2;\n*** End Patch\n',
  });
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'AMBIGUOUS_MATCH');
  assert.equal(r.json.error.candidates, [2, 5]);
});

t('check uses the session worktree when one is named', () => {
  const repo = makeRepo({ 'x.txt': 'x\n' });
  const s = startSession(repo, ['--name', 'c']);
  writeFiles(repo, { 'x.txt': 'changed in the main checkout\n' });
  const r = hagent(repo, ['check', '-', '--json', '--session', 'c'], {
    input: '*** Begin Patch\n*** Update File: x.txt\n-x\n+y\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(r.json.dir, s.worktree);
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/c'), '0');
});

t('check --dir naming a missing folder is a usage error saying so, not "install git"', () => {
  const dir = tempDir();
  const missing = path.join(dir, 'nonexist');
  const r = hagent(dir, ['check', '--dir', missing, '--json', '-'], {
    input: '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n',
  });
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.message, 'no such folder');
  assert.not.match(JSON.stringify(r.json), /install git/);
});

t('a current folder removed under the shell is named, not reported as git missing', () => {
  const repo = makeRepo();
  const gone = path.join(repo, 'sub');
  mkdirSync(gone);
  for (const args of [
    ['session', 'list', '--json'],
    ['check', '--json', '-'],
    ['run', 'claude', '--json'],
  ]) {
    // The shell enters the folder, removes it, then starts hagent there (as a user whose folder vanished).
    const r = spawnSync(
      'sh',
      [
        '-c',
        'mkdir -p "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"',
        'sh',
        gone,
        process.execPath,
        BIN,
        ...args,
      ],
      { encoding: 'utf8', input: '', env: { ...process.env, ...GIT_ENV } },
    );
    assert.is(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    const out = JSON.parse(r.stdout);
    assert.is(out.error.code, 'IO_FAILED', r.stdout);
    assert.match(out.error.message, `${gone} does not exist`);
    assert.not.match(r.stdout + r.stderr, /install git/);
  }
});

t.run();
