/**
 * A land killed (kill -9) after it changed the user's checkout and before the target branch
 * moved: the next land or `hagent doctor` puts the checkout back (transaction/recover.ts). The kill is
 * exact: a git wrapper on PATH runs the real `read-tree` of the land, then kills hagent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('land recovery');

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/**
 * PATH with a `git` that kills its parent (hagent) right after the first `read-tree -m -u`
 * (the land's update of the checkout), or right before it (`before`); `halfway` instead leaves the state of a read-tree killed
 * while writing: the first landed file written, the index untouched and its index.lock left.
 */
function killingGit(
  mode: 'before' | 'after' | 'halfway',
  firstFile?: { path: string; text: string },
): Record<string, string> {
  const bin = tempDir('hagent-killgit-');
  const body =
    mode === 'before'
      ? 'kill -9 $PPID; exit 0'
      : mode === 'after'
        ? `"${REAL_GIT}" "$@"; kill -9 $PPID; exit 0`
        : `printf '%s' '${firstFile!.text}' > '${firstFile!.path}'; : > "$(${JSON.stringify(REAL_GIT)} rev-parse --git-dir)/index.lock"; kill -9 $PPID; exit 0`;
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" read-tree -m -u "*) ${body} ;;
esac
exec "${REAL_GIT}" "$@"
`,
    { mode: 0o755 },
  );
  return { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}

/** A repo whose session changed a.txt, added new.txt and deleted gone.txt, approved. */
function approvedSession(): { repo: string; worktree: string; main: string } {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'keep.txt': 'k\n' });
  const s = startSession(repo, ['--name', 's1']);
  const patch =
    '*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+TWO\n*** Add File: dir/new.txt\n+new\n*** Delete File: gone.txt\n*** End Patch\n';
  const applied = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  return { repo, worktree: s.worktree, main: git(repo, 'rev-parse', 'main') };
}

function killedLand(repo: string, env: Record<string, string>): void {
  const r = hagent(repo, ['land', '--json'], { env });
  assert.is(r.status, -1, `hagent was killed (status ${r.status}: ${r.stdout}${r.stderr})`);
}

t('a land killed after the checkout changed: the next land puts it back, then lands', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  assert.is(git(repo, 'rev-parse', 'main'), main, 'the target did not move');
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'one\nTWO\n',
    'the checkout holds the landed files',
  );
  assert.ok(git(repo, 'status', '--porcelain').length > 0);
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.recovered.action, 'restored');
  assert.equal([...r.json.recovered.files].sort(), ['a.txt', 'dir/new.txt', 'gone.txt']);
  assert.is(r.json.previous, main);
  assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  assert.is(git(repo, 'status', '--porcelain'), '', 'the checkout matches the landed commit');
  assert.is(readFileSync(path.join(repo, 'dir', 'new.txt'), 'utf8'), 'new\n');
  assert.not.ok(existsSync(path.join(repo, 'gone.txt')));
});

t('doctor puts the checkout back; a file changed since the kill is left alone and reported', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  writeFileSync(path.join(repo, 'a.txt'), 'the user typed this after the crash\n');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  const f = d.json.findings.find((x: { kind: string }) => x.kind === 'interrupted-land');
  assert.ok(f, JSON.stringify(d.json.findings));
  assert.is(f.fixed, true);
  assert.equal([...f.paths].sort(), ['dir/new.txt', 'gone.txt']);
  assert.match(f.hint, /a\.txt/);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'the user typed this after the crash\n',
    "the user's bytes are kept",
  );
  assert.is(
    readFileSync(path.join(repo, 'gone.txt'), 'utf8'),
    'bye\n',
    'a file the land deleted is back',
  );
  assert.not.ok(
    existsSync(path.join(repo, 'dir')),
    'a file the land added is gone, with its folder',
  );
  assert.is(git(repo, 'status', '--porcelain'), ' M a.txt', 'only the user edit remains, unstaged');
  const again = hagent(repo, ['doctor', '--json']);
  assert.not.ok(
    again.json.findings.some((x: { kind: string }) => x.kind === 'interrupted-land'),
    'the record is gone',
  );
});

t('after a kill, a target the user moved is left as it is', () => {
  const { repo, main } = approvedSession();
  killedLand(repo, killingGit('after'));
  git(repo, 'commit', '-q', '-m', 'the user committed what was staged');
  const moved = git(repo, 'rev-parse', 'main');
  assert.is.not(moved, main);
  const d = hagent(repo, ['doctor', '--json']);
  const f = d.json.findings.find((x: { kind: string }) => x.kind === 'interrupted-land');
  assert.match(f.message, /already moved/);
  assert.is(git(repo, 'rev-parse', 'main'), moved);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nTWO\n');
});

t(
  'a land killed inside read-tree (index.lock left): refused with the lock named, then put back and landed',
  () => {
    const { repo, main } = approvedSession();
    const lock = path.join(repo, '.git', 'index.lock');
    killedLand(repo, killingGit('halfway', { path: 'a.txt', text: 'one\nTWO\n' }));
    assert.ok(existsSync(lock));
    const blocked = hagent(repo, ['land', '--json']);
    assert.is(blocked.status, 1);
    assert.is(blocked.json.error.code, 'DIRTY_TARGET');
    assert.ok(blocked.json.error.hint.includes(lock), blocked.json.error.hint);
    assert.is(git(repo, 'rev-parse', 'main'), main);
    assert.is(
      readFileSync(path.join(repo, 'a.txt'), 'utf8'),
      'one\nTWO\n',
      'nothing touched while locked',
    );
    spawnSync('rm', ['-f', lock]);
    const r = hagent(repo, ['land', '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.recovered.action, 'restored');
    assert.is(git(repo, 'status', '--porcelain'), '');
    assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
  },
);

t('a land refused for a dirty file leaves no record behind', () => {
  const { repo } = approvedSession();
  writeFileSync(path.join(repo, 'a.txt'), 'dirty\n');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.not.ok(existsSync(path.join(repo, '.git', 'hagent', 'land', 's1.json')));
});

t('a killed land leaves its record where every transaction of the session keeps it', () => {
  const { repo } = approvedSession();
  killedLand(repo, killingGit('after'));
  // One record schema and one place for every kind of transaction (transaction/record.ts).
  const record = JSON.parse(
    readFileSync(path.join(repo, '.git', 'hagent', 'tx', 's1.json'), 'utf8'),
  );
  assert.is(record.kind, 'land');
  assert.is(record.worktrees[0].owner, 'checkout');
  assert.equal(
    record.refs.map((r: { ref: string }) => r.ref),
    ['refs/heads/main', 'refs/hagent/s1/landed/1', 'refs/hagent/s1/land-base'],
  );
});

t(
  'a land killed before read-tree leaves the index as the user had it (staged-only and removed entries)',
  () => {
    const { repo, main } = approvedSession();
    writeFileSync(path.join(repo, 'staged.txt'), 'only in the index\n');
    git(repo, 'add', 'staged.txt');
    spawnSync('rm', [path.join(repo, 'staged.txt')]);
    git(repo, 'rm', '-q', '--cached', 'keep.txt');
    const before = git(repo, 'status', '--porcelain');
    killedLand(repo, killingGit('before'));
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(git(repo, 'rev-parse', 'main'), main);
    assert.is(git(repo, 'status', '--porcelain'), before, 'nothing of the user changed');
    assert.match(git(repo, 'ls-files', '-s', 'staged.txt'), /staged\.txt/);
  },
);

t('a file the land turned into a folder comes back as the file', () => {
  const repo = makeRepo({ x: 'a file\n', 'keep.txt': 'k\n' });
  const s = startSession(repo, ['--name', 's1']);
  const patch =
    '*** Begin Patch\n*** Delete File: x\n*** Add File: x/inside.txt\n+inside\n*** End Patch\n';
  const applied = hagent(s.worktree, ['apply', '-', '--yes', '--json'], { input: patch });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const main = git(repo, 'rev-parse', 'main');
  killedLand(repo, killingGit('after'));
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(git(repo, 'rev-parse', 'main'), main);
  assert.is(readFileSync(path.join(repo, 'x'), 'utf8'), 'a file\n');
  assert.is(git(repo, 'status', '--porcelain'), '');
  const r = hagent(repo, ['land', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(readFileSync(path.join(repo, 'x', 'inside.txt'), 'utf8'), 'inside\n');
});

t.run();
