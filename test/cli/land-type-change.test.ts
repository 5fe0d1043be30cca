/**
 * A land that changes a path's type on a clean checkout: a folder replaced by a file or by a
 * symlink (`d/f.txt` → file `d`), a file replaced by a folder, a file replaced by a symlink.
 * Each lands, the checkout then matching the session's tree; before, a folder replaced by a
 * file or symlink was refused as DIRTY_TARGET on a clean checkout, a refusal no hint could clear.
 * Untracked files in the folder the land removes still stop it (they would be lost).
 */
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, look, makeRepo, startSession } from '../helpers/index.js';

const t = suite('land: type changes');

/** A session on a repository of `files`, with `change` made in its worktree and committed there with git (as an agent's shell does). */
function landed(
  files: Record<string, string>,
  change: (wt: string) => void,
  before?: (repo: string) => void,
) {
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', 's1']);
  change(s.worktree);
  git(s.worktree, 'add', '-A');
  git(s.worktree, 'commit', '-q', '-m', 'type change');
  before?.(repo);
  look(repo); // the human reads the review first
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  // Symlinks are paths the policy protects: the human lands them knowingly.
  return { repo, s, land: hagent(repo, ['land', '--yes', '--allow-denied', '--json']) };
}

const rm = (wt: string, rel: string) => git(wt, 'rm', '-q', '-r', rel);

t('a folder replaced by a file lands on a clean checkout', () => {
  const { repo, land } = landed({ 'd/f.txt': 'f\n', 'a.txt': 'a\n' }, (wt) => {
    rm(wt, 'd');
    writeFileSync(path.join(wt, 'd'), 'now a file\n');
  });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(readFileSync(path.join(repo, 'd'), 'utf8'), 'now a file\n');
  assert.is(git(repo, 'status', '--porcelain'), '');
});

t('a folder replaced by a symlink lands on a clean checkout', () => {
  const { repo, land } = landed({ 'd/e/f.txt': 'f\n', 'a.txt': 'a\n' }, (wt) => {
    rm(wt, 'd');
    symlinkSync('a.txt', path.join(wt, 'd'));
  });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(readlinkSync(path.join(repo, 'd')), 'a.txt');
  assert.is(git(repo, 'status', '--porcelain'), '');
});

t('a file replaced by a folder, and a file replaced by a symlink, land', () => {
  const { repo, land } = landed({ d: 'file\n', l: 'file\n', 'a.txt': 'a\n' }, (wt) => {
    rm(wt, 'd');
    rm(wt, 'l');
    writeFiles(wt);
  });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(readFileSync(path.join(repo, 'd', 'f.txt'), 'utf8'), 'inside\n');
  assert.ok(lstatSync(path.join(repo, 'l')).isSymbolicLink());
  assert.is(git(repo, 'status', '--porcelain'), '');
});

function writeFiles(wt: string): void {
  git(wt, 'status'); // nothing: keeps the index fresh
  mkdirSync(path.join(wt, 'd'));
  writeFileSync(path.join(wt, 'd', 'f.txt'), 'inside\n');
  symlinkSync('a.txt', path.join(wt, 'l'));
}

t('an untracked file in the folder the land replaces stops it, nothing touched', () => {
  const { repo, land } = landed(
    { 'd/f.txt': 'f\n', 'a.txt': 'a\n' },
    (wt) => {
      rm(wt, 'd');
      writeFileSync(path.join(wt, 'd'), 'now a file\n');
    },
    (repo) => writeFileSync(path.join(repo, 'd', 'mine.txt'), 'mine\n'),
  );
  assert.is(land.status, 1, land.stdout);
  assert.is(land.json.error.code, 'DIRTY_TARGET');
  assert.is(readFileSync(path.join(repo, 'd', 'mine.txt'), 'utf8'), 'mine\n');
  assert.is(readFileSync(path.join(repo, 'd', 'f.txt'), 'utf8'), 'f\n');
});

t.run();
