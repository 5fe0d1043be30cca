/**
 * `hagent sync` through the real CLI: outside edits adopted as one commit, denied paths left out.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, updatePatch, writeFiles } from '../helpers/index.js';

const t = suite('sync');

t('sync adopts outside edits as one commit marked outside; undo takes it back', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo);
  writeFiles(s.worktree, { 'a.txt': 'hand edit\n', 'new.txt': 'new\n' });
  const blocked = hagent(s.worktree, ['apply', '-', '--json'], {
    input: updatePatch('a.txt', 'a', 'A'),
  });
  assert.is(blocked.json.error.code, 'STALE_FILE');
  const r = hagent(s.worktree, ['sync', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [
    { path: 'a.txt', status: 'M' },
    { path: 'new.txt', status: 'A' },
  ]);
  assert.match(git(repo, 'log', '-1', '--format=%B', s.branch), /Hagent-Outside: true/);
  assert.is(hagent(s.worktree, ['session', 'status', '--json']).json.outsideEdits.length, 0);
  assert.is(hagent(s.worktree, ['sync', '--json']).json.commit, null, 'nothing left to adopt');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'hand edit', 'A') })
      .status,
    0,
  );
  assert.is(hagent(s.worktree, ['undo', '2', '--json']).status, 0);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  assert.not.ok(existsSync(path.join(s.worktree, 'new.txt')));
});

t('sync leaves out what the path policy denies, and reports it', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  writeFiles(s.worktree, {
    '.env.production': 'SECRET=1\n',
    'server.pem': 'key\n',
    'ok.txt': 'fine\n',
  });
  const r = hagent(s.worktree, ['sync', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [{ path: 'ok.txt', status: 'A' }]);
  assert.equal(r.json.skipped.map((k: { path: string }) => k.path).sort(), [
    '.env.production',
    'server.pem',
  ]);
  assert.is(
    git(repo, 'ls-tree', '--name-only', s.branch, '--', '.env.production', 'server.pem'),
    '',
  );
});

t('a sync with nothing to adopt says so, and writes no journal line and no commit', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'n1']);
  writeFiles(s.worktree, { 'a.txt': 'hand edit\n' });
  assert.is(hagent(s.worktree, ['sync', '--json']).status, 0);
  const head = git(repo, 'rev-parse', s.branch);
  const journal = () => hagent(repo, ['log', '--json']).json.entries.length;
  const before = journal();
  const again = hagent(s.worktree, ['sync']);
  assert.is(again.status, 0, again.stderr);
  assert.match(again.stdout, /^Nothing to adopt: session n1 has no outside edits/);
  const json = hagent(s.worktree, ['sync', '--json']);
  assert.is(json.json.commit, null);
  assert.equal(json.json.files, []);
  assert.is(journal(), before, 'no journal line for a sync that did nothing');
  assert.is(git(repo, 'rev-parse', s.branch), head, 'no commit');
  assert.is(hagent(s.worktree, ['undo', '--json']).status, 0, 'undo takes back the real sync');
  assert.is(git(repo, 'rev-parse', s.branch), s.base);
});

t.run();
