/**
 * `hagent land` after approvals in steps, through the real CLI: review, land and session end tell
 * the same story of a partial approval (the `coverage` of their JSON), and land, land --undo and
 * land again never drop an approved path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, look } from '../helpers/index.js';

const t = suite('land-approval');

/** A repository with p1.txt, p2.txt, sub/p3.txt and a session "pa" changing all three. */
function threeChanges() {
  const repo = makeRepo({ 'p1.txt': '1\n', 'p2.txt': '2\n', 'sub/p3.txt': '3\n' });
  const s = startSession(repo, ['--name', 'pa']);
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Update File: p1.txt\n-1\n+1x\n*** Update File: p2.txt\n-2\n+2x\n' +
      '*** Update File: sub/p3.txt\n-3\n+3x\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, s };
}

const onMain = (repo: string, file: string) => git(repo, 'show', `main:${file}`);

t('a partial approval, then land: review, land and session end agree on what is left', () => {
  const { repo } = threeChanges();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'p1.txt']).status, 0);
  const land = hagent(repo, ['land', '--json']);
  assert.is(land.status, 0, land.stdout);
  assert.equal(land.json.files, [{ path: 'p1.txt', status: 'M' }]);
  const rest = {
    current: true,
    toLand: [],
    landed: ['p1.txt'],
    notApproved: ['p2.txt', 'sub/p3.txt'],
  };
  assert.equal(land.json.coverage, rest);
  // review: what landed, what is not approved, how to approve it; no "Land with".
  const review = hagent(repo, ['review', '--stat']);
  assert.not.match(review.stdout, /Land with/);
  assert.match(review.stdout, /Approved and landed already: p1\.txt/);
  assert.match(
    review.stdout,
    /Not approved yet: p2\.txt, sub\/p3\.txt\. Approve with: hagent review --session pa --approve p2\.txt sub\/p3\.txt, then hagent land --session pa/,
  );
  assert.equal(hagent(repo, ['review', '--json']).json.coverage, rest);
  // land: nothing approved is left, and it says what is not approved and how to approve it.
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 1);
  assert.is(again.json.error.code, 'NOTHING_TO_LAND');
  assert.match(
    again.json.error.message,
    /has landed already \(p1\.txt\); not approved yet: p2\.txt, sub\/p3\.txt/,
  );
  assert.equal(again.json.error.coverage, rest);
  assert.match(
    again.json.error.hint,
    /hagent review --session pa --approve p2\.txt sub\/p3\.txt, then hagent land --session pa/,
  );
  assert.match(again.json.error.hint, /hagent session end pa --force --yes/);
  // session end: the rest is not approved, and the hint says so (not "land it").
  const end = hagent(repo, ['session', 'end', '--json']);
  assert.is(end.status, 1);
  assert.is(end.json.error.code, 'UNLANDED_WORK');
  assert.match(
    end.json.error.message,
    /p2\.txt, sub\/p3\.txt, none of it approved \(approved and landed: p1\.txt\)/,
  );
  assert.equal(end.json.error.coverage, rest);
  assert.match(
    end.json.error.hint,
    /^approve it with hagent review --session pa --approve p2\.txt sub\/p3\.txt, then hagent land --session pa/,
  );
  // Approve part of the rest: session end names both parts.
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'p2.txt']).status, 0);
  const mixed = hagent(repo, ['session', 'end', '--json']);
  assert.match(mixed.json.error.message, /approved: p2\.txt, not approved yet: sub\/p3\.txt/);
  assert.match(
    mixed.json.error.hint,
    /^land the approved part with hagent land --session pa and approve the rest with hagent review --session pa --approve sub\/p3\.txt/,
  );
  // Following the hints ends it.
  const second = hagent(repo, ['land']);
  assert.match(
    second.stdout,
    /Not approved yet, so not landed: sub\/p3\.txt\. Approve with: hagent review --session pa --approve sub\/p3\.txt/,
  );
  look(repo, 'pa');
  assert.is(hagent(repo, ['review', '--session', 'pa', '--approve', 'sub/p3.txt']).status, 0);
  assert.is(hagent(repo, ['land', '--session', 'pa']).status, 0);
  const done = hagent(repo, ['review']);
  assert.match(done.stdout, /^Nothing to review: everything session pa changed has landed/m);
  assert.is(hagent(repo, ['session', 'end', 'pa', '--json']).status, 0);
  assert.is(readFileSync(path.join(repo, 'sub', 'p3.txt'), 'utf8'), '3x\n');
});

t('land, land --undo, land --undo, land: every approved path lands again', () => {
  const { repo } = threeChanges();
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'p1.txt']).status, 0);
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  look(repo);
  assert.is(hagent(repo, ['review', '--approve', 'p2.txt']).status, 0);
  const second = hagent(repo, ['land', '--json']);
  assert.is(second.status, 0, second.stdout);
  assert.equal(second.json.files, [{ path: 'p2.txt', status: 'M' }]);
  const base = git(repo, 'rev-parse', 'main~2');
  assert.is(hagent(repo, ['land', '--undo', '--json']).status, 0);
  assert.is(hagent(repo, ['land', '--undo', '--json']).status, 0);
  assert.is(git(repo, 'rev-parse', 'main'), base, 'both lands are off the target');
  assert.is(onMain(repo, 'p1.txt'), '1');
  const review = hagent(repo, ['review', '--json']);
  assert.equal(review.json.coverage.toLand, ['p1.txt', 'p2.txt'], 'both approved paths wait');
  const again = hagent(repo, ['land', '--json']);
  assert.is(again.status, 0, again.stdout);
  assert.equal(again.json.files, [
    { path: 'p1.txt', status: 'M' },
    { path: 'p2.txt', status: 'M' },
  ]);
  assert.is(onMain(repo, 'p1.txt'), '1x');
  assert.is(onMain(repo, 'p2.txt'), '2x');
  assert.is(onMain(repo, 'sub/p3.txt'), '3', 'the path never approved stays out');
  assert.equal(again.json.coverage.notApproved, ['sub/p3.txt']);
});

t('land of a session whose patches change nothing: NOTHING_TO_LAND before NOT_APPROVED', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'nz']);
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch\n',
  });
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-b\n+a\n*** End Patch\n',
  });
  const land = hagent(repo, ['land', '--json']);
  assert.is(land.json.error.code, 'NOTHING_TO_LAND', land.stdout);
  assert.match(land.json.error.hint, /hagent session end nz/);
  assert.match(
    hagent(repo, ['review']).stdout,
    /^Nothing to review: the patches of session nz leave no change/m,
  );
});

t.run();
