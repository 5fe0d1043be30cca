/**
 * Long file lists in human output: a change over many files shows the first 20 and one
 * "… and N more (use --json for all)" line; `--json` keeps every file.
 */
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, repoWithSession, writeFiles } from '../helpers/index.js';

const t = suite('session-long-lists');

const MORE = /^ {2}… and 5 more \(use --json for all\)$/m;

/** 25 new files written in the session worktree outside hagent. */
function withOutsideEdits() {
  const { repo, s } = repoWithSession();
  const files: Record<string, string> = {};
  for (let i = 0; i < 25; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = `${i}\n`;
  writeFiles(s.worktree, files);
  return { repo, s };
}

t('session status lists 20 outside edits and says how many more; --json has all 25', () => {
  const { repo } = withOutsideEdits();
  const human = hagent(repo, ['session', 'status', 's1']);
  assert.is(human.status, 0, human.stderr);
  assert.match(human.stdout, /outside edits pending \(25\)/);
  assert.is(human.stdout.match(/^ {4}A many\//gm)?.length, 20);
  assert.match(human.stdout, /^ {4}… and 5 more \(use --json for all\)$/m);
  const json = hagent(repo, ['session', 'status', 's1', '--json']);
  assert.is(json.json.outsideEdits.length, 25);
});

t('sync, status, undo and land print the first 20 files, then "… and 5 more"', () => {
  const { repo, s } = withOutsideEdits();
  const sync = hagent(s.worktree, ['sync']);
  assert.is(sync.status, 0, sync.stderr);
  assert.is(sync.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(sync.stdout, MORE);
  const status = hagent(repo, ['session', 'status', 's1']);
  assert.is(status.stdout.match(/^ {4}A many\//gm)?.length, 20);
  assert.match(status.stdout, /^ {4}… and 5 more \(use --json for all\)$/m);
  assert.is(hagent(repo, ['session', 'status', 's1', '--json']).json.changed.length, 25);
  const review = hagent(repo, ['review', '--stat']);
  assert.is(review.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(review.stdout, MORE);
  assert.is(hagent(repo, ['review', '--approve', '--json']).status, 0);
  const land = hagent(repo, ['land'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(land.status, 0, land.stderr);
  assert.is(land.stdout.match(/^ {2}A many\//gm)?.length, 20);
  assert.match(land.stdout, MORE);
  const undo = hagent(path.join(s.worktree), ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout);
  assert.is(undo.json.files.length, 25, '--json keeps the whole list');
});

t('exactly 20 files: all listed, no "more" line', () => {
  const { repo, s } = repoWithSession();
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`few/f${i}.txt`] = `${i}\n`;
  writeFiles(s.worktree, files);
  const status = hagent(repo, ['session', 'status', 's1']);
  assert.is(status.stdout.match(/^ {4}A few\//gm)?.length, 20);
  assert.not.match(status.stdout, /more \(use --json for all\)/);
});

t('session end refused over 25 unlanded files: the message names 20, files has all 25', () => {
  const { repo, s } = withOutsideEdits();
  assert.is(hagent(s.worktree, ['sync']).status, 0);
  const r = hagent(repo, ['session', 'end', 's1', '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'UNLANDED_WORK');
  assert.is(r.json.error.files.length, 25);
  assert.match(r.json.error.message, /many\/f19\.txt … and 5 more \(use --json for all\)$/);
  assert.not.match(r.json.error.message, /f20/);
});

t.run();
