/**
 * `hagent review` through the real CLI: stat, patches and diff, `--approve`, and a repository git
 * cannot read. Also: an unknown session, refused by every command.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  git,
  hagent,
  makeRepo,
  repoWithSession,
  startSession,
  updatePatch,
  look,
} from '../helpers/index.js';

const t = suite('review');

t('review shows stat, patches and diff; --approve records the head', () => {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  hagent(s.worktree, ['apply', '-'], {
    input: '*** Begin Patch\n*** Add File: c.txt\n+see\n*** End Patch\n',
  });
  const r = hagent(repo, ['review', '--json']);
  assert.is(r.status, 0);
  assert.equal(r.json.files, [
    { path: 'a.txt', status: 'M', added: 1, removed: 1 },
    { path: 'c.txt', status: 'A', added: 1, removed: 0 },
  ]);
  assert.is(r.json.patches.length, 2);
  assert.equal(r.json.patches[0].files, [{ status: 'A', path: 'c.txt' }]);
  assert.match(r.json.diff, /\+TWO/);
  assert.is(r.json.approval, null);
  const human = hagent(repo, ['review']);
  assert.match(human.stdout, /2 patches, 2 files to land/);
  assert.not.match(human.stdout, /\u001b\[/, 'no colours in a pipe');
  const withText = hagent(repo, ['review', '--patches', '--json']);
  assert.match(withText.json.patches[1].patch, /\*\*\* Update File: a.txt/);
  look(repo);
  const a = hagent(repo, ['review', '--approve', '--json']);
  assert.is(a.json.approval.head, git(repo, 'rev-parse', 'hagent/s1'));
  assert.is(a.json.approval.paths, null);
  look(repo);
  const bad = hagent(repo, ['review', '--approve', 'zzz.txt', '--json']);
  assert.is(bad.status, 2, 'an unknown path is a usage error');
  assert.is(bad.json.error.code, 'USAGE');
});

t('review --approve -- -x approves the file named -x only', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', '-x': 'x\n' });
  const s = startSession(repo, ['--name', 'd1']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: -x\n-x\n+X\n*** End Patch\n',
  });
  assert.is(applied.status, 0, applied.stdout);
  look(repo);
  const r = hagent(repo, ['review', '--approve', '--json', '--', '-x']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.approval.paths, ['-x']);
  const bare = hagent(repo, ['review', '--json', '--', '-x']);
  assert.is(bare.status, 2, 'paths without --approve are a usage error, not ignored');
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(git(repo, 'show', 'main:-x'), 'X');
  assert.is(git(repo, 'show', 'main:a.txt'), 'a', 'a.txt was not approved');
});

t('an object missing from the repository: GIT_FAILED with git’s message, nothing moved', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'g1']);
  const r0 = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r0.status, 0, r0.stdout + r0.stderr);
  const head = git(repo, 'rev-parse', 'hagent/g1');
  const tree = git(repo, 'rev-parse', 'hagent/g1^{tree}');
  rmSync(path.join(repo, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
  const r = hagent(repo, ['review', '--session', 'g1', '--json']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'GIT_FAILED');
  // review runs git diff, diff-tree and log at once: either may be the one to report it.
  assert.match(
    r.json.error.message,
    /^git (diff|diff-tree|log) failed \(exit 128\): fatal: unable to read tree/,
  );
  // git diff and log name the missing tree; git diff-tree, given the commit, names the commit.
  assert.ok(
    r.json.error.message.includes(tree) || r.json.error.message.includes(head),
    r.json.error.message,
  );
  assert.is(r.json.error.argv[0], 'git');
  assert.match(r.json.error.hint, /the files and refs are as they were before the command/);
  const text = hagent(repo, ['review', '--session', 'g1']);
  assert.is(text.status, 1);
  assert.match(text.stderr, /^error\[GIT_FAILED\]: git (diff|diff-tree|log) failed/);
  assert.is(git(repo, 'rev-parse', 'hagent/g1'), head, 'the session branch did not move');
});

// --- An unknown session ---
// An unknown session is a refusal everywhere: `review --approve ID` (a session id where paths go)
// and every command taking `--session` exit 1 with SESSION_NOT_FOUND and a hint naming
// `hagent session list`.

function withChange() {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  return { repo, s };
}

t('review --approve nosuch: SESSION_NOT_FOUND, exit 1, hint names session list and paths', () => {
  const { repo } = withChange();
  look(repo);
  const r = hagent(repo, ['review', '--approve', 'nosuch', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'SESSION_NOT_FOUND');
  assert.match(r.json.error.hint, /hagent session list/);
  assert.match(r.json.error.hint, /hagent review --session ID --approve/);
  assert.match(r.json.error.hint, /a\.txt/);
  assert.is(hagent(repo, ['review', '--json']).json.approval, null, 'nothing approved');
});

t('review --approve <another session>: USAGE naming the command that approves it', () => {
  const { repo } = withChange();
  startSession(repo, ['--name', 'other']);
  look(repo, 's1');
  const r = hagent(repo, ['review', '--session', 's1', '--approve', 'other', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 2, r.stdout);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.hint, /hagent review --session other --approve/);
});

t('a path that is not among the changes stays a USAGE error about paths', () => {
  const { repo } = withChange();
  look(repo);
  const r = hagent(repo, ['review', '--approve', 'b.txt', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 2, r.stdout);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.message, /not among the changes to land: b\.txt/);
});

t('every command taking --session refuses an unknown one with SESSION_NOT_FOUND, exit 1', () => {
  const { repo } = withChange();
  const commands: string[][] = [
    ['session', 'status'],
    ['session', 'end', '--yes'],
    ['session', 'update'],
    ['apply', '-'],
    ['check', '-'],
    ['review'],
    ['review', '--approve'],
    ['land'],
    ['land', '--undo'],
    ['undo'],
    ['undo', '--redo'],
    ['sync'],
    ['doctor'],
    ['log'],
    ['exec', '--', 'true'],
    ['guard', '--', 'ls'],
  ];
  for (const c of commands) {
    const dashes = c.indexOf('--');
    const args =
      dashes < 0
        ? [...c, '--session', 'nosuch', '--json']
        : [...c.slice(0, dashes), '--session', 'nosuch', '--json', ...c.slice(dashes)];
    const r = hagent(repo, args, {
      input: updatePatch('a.txt', 'one', 'ONE'),
      unsetEnv: ['HAGENT_AGENT'],
    });
    assert.is(r.status, 1, `${c.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.is(r.json?.error?.code, 'SESSION_NOT_FOUND', c.join(' '));
    assert.match(r.json.error.hint, /hagent session list/, c.join(' '));
  }
});

t('review --approve <this session>: USAGE naming the command that approves it whole', () => {
  const { repo, s } = withChange();
  look(repo);
  const r = hagent(repo, ['review', '--approve', s.id, '--json'], { unsetEnv: ['HAGENT_AGENT'] });
  assert.is(r.status, 2, r.stdout);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.hint, new RegExp(`hagent review --session ${s.id} --approve`));
});

t('words after -- are refused by a command that reads none: nothing is ended or undone', () => {
  const { repo, s } = withChange();
  for (const args of [
    ['session', 'end', '--force', '--yes', '--', 'typo-name'],
    ['undo', '--session', s.id, '--', '2'],
    ['session', 'status', '--', 'nosuch'],
  ]) {
    const r = hagent(repo, [...args, '--json'], { unsetEnv: ['HAGENT_AGENT'] });
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, /takes no words after --/);
  }
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions.length, 1, 'not ended');
  assert.match(git(s.worktree, 'show', 'HEAD:a.txt'), /TWO/, 'not undone');
});

// --- Approving in steps, by path as git takes it ---

/** A repository with p1.txt, p2.txt, sub/p3.txt, sub/p4.txt and a session "st" changing all four. */
function fourChanges() {
  const repo = makeRepo({
    'p1.txt': '1\n',
    'p2.txt': '2\n',
    'sub/p3.txt': '3\n',
    'sub/p4.txt': '4\n',
  });
  const s = startSession(repo, ['--name', 'st']);
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Update File: p1.txt\n-1\n+1x\n*** Update File: p2.txt\n-2\n+2x\n' +
      '*** Update File: sub/p3.txt\n-3\n+3x\n*** Update File: sub/p4.txt\n-4\n+4x\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, s };
}

t(
  'a second --approve adds to the approval of the same head; it prints a confirmation, not the diff',
  () => {
    const { repo } = fourChanges();
    look(repo);
    const first = hagent(repo, ['review', '--approve', 'p1.txt']);
    assert.is(first.status, 0, first.stderr);
    assert.not.match(first.stdout, /^[-+]{3} /m, 'no diff after approving');
    assert.not.match(first.stdout, /Applied patches/);
    assert.match(first.stdout, /^Approved p1\.txt of session st at head [0-9a-f]{12}\.$/m);
    assert.match(first.stdout, /Land with: hagent land --session st/);
    assert.match(
      first.stdout,
      /Not approved yet: p2\.txt, sub\/p3\.txt, sub\/p4\.txt\. Approve with: hagent review --session st --approve p2\.txt sub\/p3\.txt sub\/p4\.txt/,
    );
    look(repo);
    const second = hagent(repo, ['review', '--approve', 'p2.txt', '--json']);
    assert.is(second.status, 0, second.stdout);
    assert.equal(second.json.approval.paths, ['p1.txt', 'p2.txt'], 'the union, not a replacement');
    assert.ok(second.json.diff, '--json still carries the diff');
    assert.equal(second.json.coverage, {
      current: true,
      toLand: ['p1.txt', 'p2.txt'],
      landed: [],
      notApproved: ['sub/p3.txt', 'sub/p4.txt'],
    });
    look(repo);
    const human = hagent(repo, ['review', '--approve', 'sub/p3.txt']);
    assert.match(human.stdout, /^Approved sub\/p3\.txt of session st/m);
    assert.match(human.stdout, /Approved at this head now: p1\.txt, p2\.txt, sub\/p3\.txt\./);
    look(repo);
    const all = hagent(repo, ['review', '--approve', '--json']);
    assert.is(all.json.approval.paths, null, '--approve without paths approves every file');
    look(repo);
    const some = hagent(repo, ['review', '--approve', 'p1.txt']);
    assert.match(some.stdout, /Every file was approved at this head already; it still is\./);
    assert.is(hagent(repo, ['review', '--json']).json.approval.paths, null);
    // A new head: the approval of the old one is not widened but replaced.
    const s = hagent(repo, ['session', 'status', '--json']).json;
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('p1.txt', '1x', '1y') });
    look(repo);
    const fresh = hagent(repo, ['review', '--approve', 'p2.txt', '--json']);
    assert.equal(fresh.json.approval.paths, ['p2.txt']);
  },
);

t(
  '--approve takes pathspecs relative to the current folder: ./p, sub/, sub, a file of a subfolder',
  () => {
    const { repo } = fourChanges();
    look(repo);
    const dot = hagent(repo, ['review', '--approve', './p2.txt', '--json']);
    assert.is(dot.status, 0, dot.stdout);
    assert.equal(dot.json.approval.paths, ['p2.txt']);
    look(repo);
    const folder = hagent(repo, ['review', '--approve', 'sub', '--json']);
    assert.equal(folder.json.approval.paths, ['p2.txt', 'sub/p3.txt', 'sub/p4.txt']);
    const { repo: repo2 } = fourChanges();
    look(repo2);
    const slash = hagent(repo2, ['review', '--approve', 'sub/', '--json']);
    assert.equal(
      slash.json.approval.paths,
      ['sub/p3.txt', 'sub/p4.txt'],
      'a folder approves its changed files',
    );
    // From a subfolder of the checkout, and of the session worktree: relative to it, as git is.
    const { repo: repo3, s: s3 } = fourChanges();
    look(path.join(repo3, 'sub'));
    const sub = hagent(path.join(repo3, 'sub'), [
      'review',
      '--approve',
      'p3.txt',
      '../p1.txt',
      '--json',
    ]);
    assert.is(sub.status, 0, sub.stdout);
    assert.equal(sub.json.approval.paths, ['p1.txt', 'sub/p3.txt']);
    look(path.join(s3.worktree, 'sub'));
    const inWorktree = hagent(
      path.join(s3.worktree, 'sub'),
      ['review', '--approve', '.', '--json'],
      {
        unsetEnv: ['HAGENT_AGENT'],
      },
    );
    assert.equal(inWorktree.json.approval.paths, ['p1.txt', 'sub/p3.txt', 'sub/p4.txt']);
    // A path that matches no changed file: refused, naming it as given and as resolved.
    look(path.join(repo, 'sub'));
    const none = hagent(path.join(repo, 'sub'), ['review', '--approve', 'p9.txt', '--json']);
    assert.is(none.status, 2, none.stdout);
    assert.is(none.json.error.code, 'USAGE');
    assert.match(
      none.json.error.message,
      /not among the changes to land: p9\.txt \(sub\/p9\.txt: not changed by this session\)/,
    );
    assert.equal(none.json.error.files, ['p9.txt']);
    assert.equal(none.json.error.paths, ['sub/p9.txt']);
    assert.match(none.json.error.hint, /p1\.txt, p2\.txt, sub\/p3\.txt, sub\/p4\.txt/);
    look(repo);
    const outside = hagent(repo, ['review', '--approve', '../elsewhere.txt', '--json']);
    assert.is(outside.status, 2);
    assert.match(outside.json.error.message, /outside the repository/);
    assert.equal(
      hagent(repo, ['review', '--json']).json.approval.paths,
      ['p2.txt', 'sub/p3.txt', 'sub/p4.txt'],
      'refusals approved nothing',
    );
    // The hint works when followed.
    const hinted = none.json.error.hint
      .match(/\((hagent review [^)]*)\)/)[1]
      .split(' ')
      .slice(1);
    assert.is(hagent(repo, hinted).status, 0);
  },
);

t('an empty session: review says there is nothing to review, and land agrees', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  startSession(repo, ['--name', 'e1']);
  const r = hagent(repo, ['review']);
  assert.is(r.status, 0, r.stderr);
  assert.match(
    r.stdout,
    /^Nothing to review: session e1 has no changes since its base [0-9a-f]{12}\. Apply a patch first\.$/m,
  );
  assert.not.match(r.stdout, /Not approved yet/);
  const land = hagent(repo, ['land', '--json']);
  assert.is(land.json.error.code, 'NOTHING_TO_LAND');
  assert.match(land.json.error.hint, /apply a patch first/);
  look(repo);
  const approve = hagent(repo, ['review', '--approve', '--json']);
  assert.is(approve.json.error.code, 'NOTHING_TO_LAND');
  assert.match(approve.json.error.hint, /apply a patch first/);
});

t.run();
