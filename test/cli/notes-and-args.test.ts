/**
 * Findings of a hostile test, through the real CLI: notes of sessions applying at the same
 * moment are all kept; a notes ref lock or an intent temp file left by a killed writer is removed; repeated or
 * value-less options are usage errors on both argument paths (fast path and yargs).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, GIT_ENV, git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('notes and arguments');

function applyAsync(cwd: string, patch: string): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'apply', '-', '--json', '--yes'], {
      cwd,
      env: { ...process.env, ...GIT_ENV },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => resolve({ status: code ?? -1, out }));
    child.stdin.end(patch);
  });
}

t('four sessions applying side by side: every commit keeps its note', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
  const sessions = ['a', 'b', 'c', 'd'].map((n) => ({
    n,
    s: startSession(repo, ['--name', `s-${n}`]),
  }));
  const commits: string[] = [];
  // Each session applies 8 patches in a row; the four sessions run side by side.
  await Promise.all(
    sessions.map(async ({ n, s }) => {
      for (let round = 0; round < 8; round++) {
        const r = await applyAsync(
          s.worktree,
          `*** Begin Patch\n*** Update File: ${n}.txt\n@@\n-${round === 0 ? n : `${n} ${round - 1}`}\n+${n} ${round}\n*** End Patch\n`,
        );
        assert.is(r.status, 0, r.out);
        const json = JSON.parse(r.out);
        assert.equal(json.warnings, [], 'no note warning');
        commits.push(json.commit);
      }
    }),
  );
  // Each session keeps its notes in a notes ref of its own (refs/notes/hagent-sessions/<id>).
  const noted = new Set(
    sessions.flatMap(({ n }) =>
      git(repo, 'notes', `--ref=hagent-sessions/s-${n}`, 'list')
        .split('\n')
        .map((l) => l.split(' ')[1]),
    ),
  );
  for (const c of commits) assert.ok(noted.has(c), `note of ${c}`);
});

t('an intent temp file of a writer that died is removed by the next writing command', () => {
  const repo = makeRepo();
  const s = startSession(repo, ['--name', 'tmpy']);
  const tx = path.join(repo, '.git', 'hagent', 'tx');
  mkdirSync(tx, { recursive: true });
  const dead = path.join(tx, 'tmpy.json.999999999-abc123.tmp');
  const other = path.join(tx, 'other.json.999999999-abc123.tmp');
  writeFileSync(dead, '{');
  writeFileSync(other, '{');
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo!\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.not.ok(existsSync(dead), "this session's dead temp is gone");
  assert.ok(existsSync(other), "another session's is left to that session");
});

t(
  'value options given twice, negated, or with a lone - are USAGE errors, on the fast path and through yargs',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'args']);
    writeFileSync(
      path.join(repo, 'p.patch'),
      '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# x\n*** End Patch\n',
    );
    const lines = [
      ['check', 'p.patch', '--dir', '.', '--dir', '.'],
      ['check', 'p.patch', '--no-dir'],
      ['check', 'p.patch', '--dir', '-'],
      ['apply', 'p.patch', '--session', 'args', '--no-base'],
      ['apply', 'p.patch', '--session', 'args', '--base', '-'],
      ['apply', 'p.patch', '--session', '-'],
      ['land', '--session', 'args', '--message', '-'],
      ['land', '--session', 'args', '--message', 'x', '--message', 'y'],
    ];
    for (const l of lines) {
      const r = hagent(repo, [...l, '--json']);
      assert.is(r.status, 2, `${l.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.is(r.json?.error?.code ?? r.json?.code, 'USAGE', l.join(' '));
    }
    assert.is(git(repo, 'rev-parse', 'HEAD'), s.base, 'nothing landed');
  },
);

t(
  'a lock on the old global notes ref is never removed, and no longer blocks a note: the next apply keeps its note, byte for byte',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'nl']);
    const lock = path.join(repo, '.git', 'refs', 'notes', 'hagent.lock');
    mkdirSync(path.dirname(lock), { recursive: true });
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+a  \n*** End Patch\n\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(r.status, 0, r.stdout);
    assert.equal(r.json.warnings, [], 'no note warning');
    assert.ok(existsSync(lock), "a lock git may hold is git's: left alone");
    const blob = git(repo, 'notes', '--ref=hagent-sessions/nl', 'list', r.json.commit);
    assert.is(
      spawnSync('git', ['cat-file', 'blob', blob], { cwd: repo }).stdout.toString('utf8'),
      patch,
      'the patch text, trailing spaces and blank line kept',
    );
  },
);

t.run();
