/**
 * `hagent land` refused by the checkout of the target: DIRTY_TARGET says what is in the way (the
 * files, first 20 in the message and all in `files`; or the index.lock a git left) and how to go on.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('land-dirty-target');
const human = { unsetEnv: ['HAGENT_AGENT'] } as const;

/** 25 files, all changed by an approved session. */
function approvedOver25() {
  const files: Record<string, string> = {};
  for (let i = 0; i < 25; i++) files[`f${String(i).padStart(2, '0')}.txt`] = `x${i}\n`;
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', 'd']);
  for (let i = 0; i < 25; i++)
    writeFileSync(path.join(s.worktree, `f${String(i).padStart(2, '0')}.txt`), `y${i}\n`);
  assert.is(hagent(s.worktree, ['sync']).status, 0);
  assert.is(hagent(repo, ['review', '--approve', '--json'], human).status, 0);
  return { repo, s };
}

t('25 dirty files: message names the first 20 and "… and 5 more", files all 25, hint works', () => {
  const { repo } = approvedOver25();
  for (let i = 0; i < 25; i++)
    writeFileSync(path.join(repo, `f${String(i).padStart(2, '0')}.txt`), 'mine\n');
  const r = hagent(repo, ['land', '--json'], human);
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'DIRTY_TARGET');
  assert.is(r.json.error.files.length, 25);
  assert.match(
    r.json.error.message,
    /25 files .* uncommitted changes in .*: f00\.txt, .*f19\.txt … and 5 more \(use --json for all\)$/,
  );
  assert.not.match(r.json.error.message, /f20\.txt/);
  assert.match(r.json.error.hint, /stash push -- f00\.txt f01\.txt f02\.txt …/);
  assert.match(r.json.error.hint, /hagent doctor/);
  assert.match(r.json.error.hint, /hagent land --undo/);
  git(repo, 'stash', 'push', '-q');
  assert.is(hagent(repo, ['land', '--json'], human).status, 0, 'after the stash the land goes');
});

t(
  'an index.lock left in the checkout: the message and hint name it; removing it lets land go',
  () => {
    const { repo } = approvedOver25();
    const lock = path.join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    const r = hagent(repo, ['land'], human);
    assert.is(r.status, 1);
    assert.match(r.stderr, /error\[DIRTY_TARGET\]: .*index\.lock/);
    assert.match(
      r.stderr,
      /hint: another git command holds .*index\.lock: wait for it; if none runs/,
    );
    rmSync(lock);
    assert.is(
      hagent(repo, ['land', '--json'], human).status,
      0,
      'with the lock gone the land goes',
    );
  },
);

t.run();
