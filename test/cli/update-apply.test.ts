/**
 * An apply concluding the merge `hagent session update` left in progress, through the real CLI
 * on real repositories, as an agent that edits only through hagent would: the patch that removes
 * the conflict markers is the merge commit; a patch resolving only part of the conflicts is
 * refused with nothing written; an apply of other files leaves the merge in progress; undo after
 * the concluding apply loses nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('apply during a merge left by session update');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;
/** A patch replacing the conflict block of AGENT (session) against USER (main) in `file` by `to`. */
const resolve = (file: string, to: string, agent = 'AGENT', user = 'USER') =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-<<<<<<< HEAD\n-${agent}\n-=======\n-${user}\n->>>>>>> main\n+${to}\n*** End Patch\n`;
const gitDir = (worktree: string) => git(worktree, 'rev-parse', '--absolute-git-dir');
const parents = (repo: string, rev: string) =>
  git(repo, 'rev-list', '--parents', '-n1', rev).split(' ').slice(1);
const MERGE_FILES = ['MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'HAGENT_MERGE_CONFLICTS'];

/**
 * A session whose agent changed line 2 of each of `files` to AGENT, and a user who changed it to
 * USER on main (and the last line, and other.txt, without conflict), then the update: every file
 * of `files` is left conflicted.
 */
function conflicted(files: string[] = ['c.txt'], name = 's1') {
  const text = 'l1\nl2\nl3\nl4\nl5\nl6\n';
  const repo = makeRepo({
    ...Object.fromEntries(files.map((f) => [f, text])),
    'other.txt': 'x\n',
    'n.txt': 'n\n',
  });
  const s = startSession(repo, ['--name', name]);
  for (const f of files)
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd(f, 'l2', 'AGENT') }).status,
      0,
    );
  const agentHead = git(repo, 'rev-parse', `hagent/${name}`);
  for (const f of files) writeFileSync(path.join(repo, f), 'l1\nUSER\nl3\nl4\nl5\nL6USER\n');
  writeFileSync(path.join(repo, 'other.txt'), 'x\ny\n');
  git(repo, 'commit', '-qam', 'user');
  const update = hagent(repo, ['session', 'update', '--session', name, '--json']);
  assert.is(update.status, 0, update.stdout + update.stderr);
  assert.equal(update.json.conflicts, files);
  return { repo, s, agentHead, target: git(repo, 'rev-parse', 'main') };
}

t(
  "the patch that resolves the conflict concludes the merge: a two-parent commit, nothing left of the merge, and the land brings the resolution with the user's lines",
  () => {
    const { repo, s, agentHead, target } = conflicted();
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    const dry = hagent(s.worktree, ['apply', '--dry-run', '-'], {
      input: resolve('c.txt', 'BOTH'),
    });
    assert.is(dry.status, 0, dry.stdout + dry.stderr);
    assert.match(dry.stdout, /would conclude the merge of main/);
    assert.ok(existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')), 'a dry run writes nothing');
    const r = hagent(s.worktree, ['apply', '-'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^M c\.txt$/m);
    assert.match(r.stdout, /concluded the merge of main/);
    const head = git(repo, 'rev-parse', 'hagent/s1');
    assert.equal(
      parents(repo, head),
      [agentHead, target],
      'the merge commit: the session head, then the target',
    );
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'git status is clean');
    for (const f of MERGE_FILES)
      assert.not.ok(existsSync(path.join(gitDir(s.worktree), f)), `${f} is gone`);
    assert.is(
      readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER\n',
    );
    assert.is(
      git(repo, 'show', `${head}:other.txt`),
      'x\ny',
      "the target's clean change is in the merge",
    );
    const message = git(repo, 'log', '-1', '--format=%B', head);
    assert.match(message, /^hagent: merge [0-9a-f]{12} into session s1, conflicts resolved$/m);
    assert.match(message, /^Concluded by hagent apply:$/m);
    assert.match(message, /^Hagent-Op: update$/m);
    assert.match(message, /^Hagent-Patch-Sha256: [0-9a-f]{64}$/m);
    const retry = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(retry.json.error.code, 'NO_CHANGES', 'a retried patch is known as applied');
    assert.is(retry.json.error.alreadyApplied, true);
    const review = hagent(repo, ['review', '--session', 's1', '--json']).json;
    assert.equal(
      review.files.map((f: any) => f.path),
      ['c.txt'],
    );
    assert.is(review.drift, null, 'hagent made every move');
    const land = hagent(repo, ['land', '--session', 's1', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\nl4\nl5\nL6USER\n');
    assert.is(readFileSync(path.join(repo, 'other.txt'), 'utf8'), 'x\ny\n');
    assert.is(git(repo, 'status', '--porcelain'), '');
  },
);

t('--json says the apply concluded the merge, and names the target and the commit merged', () => {
  const { s, target } = conflicted();
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.merge, { concluded: true, target: 'refs/heads/main', merged: target });
  assert.equal(
    r.json.files.map((f: any) => f.path),
    ['c.txt'],
  );
  const plain = conflicted(['c.txt'], 's2');
  const other = hagent(plain.s.worktree, ['apply', '-', '--json'], {
    input: upd('n.txt', 'n', 'N'),
  });
  assert.is(other.json.merge, undefined, 'an apply that concludes nothing says nothing of a merge');
});

t(
  'a patch resolving one of two conflicted files, or leaving markers, is refused MERGE_UNRESOLVED with nothing written; one resolving both concludes',
  () => {
    const { repo, s, agentHead } = conflicted(['a.txt', 'c.txt']);
    const before = {
      a: readFileSync(path.join(s.worktree, 'a.txt')),
      c: readFileSync(path.join(s.worktree, 'c.txt')),
      status: git(s.worktree, 'status', '--porcelain'),
      index: readFileSync(path.join(gitDir(s.worktree), 'index')),
    };
    const unchanged = (why: string) => {
      assert.ok(
        readFileSync(path.join(s.worktree, 'a.txt')).equals(before.a),
        `${why}: a.txt untouched`,
      );
      assert.ok(
        readFileSync(path.join(s.worktree, 'c.txt')).equals(before.c),
        `${why}: c.txt untouched`,
      );
      assert.is(
        git(s.worktree, 'status', '--porcelain'),
        before.status,
        `${why}: git status as the update left it`,
      );
      assert.ok(
        readFileSync(path.join(gitDir(s.worktree), 'index')).equals(before.index),
        `${why}: the index untouched`,
      );
      assert.is(git(repo, 'rev-parse', 'hagent/s1'), agentHead, `${why}: no commit`);
      for (const f of MERGE_FILES)
        assert.ok(existsSync(path.join(gitDir(s.worktree), f)), `${why}: ${f} kept`);
    };
    const one = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(one.status, 1);
    assert.is(one.json.error.code, 'MERGE_UNRESOLVED');
    assert.equal(one.json.error.files, ['a.txt']);
    assert.match(one.json.error.message, /a\.txt/);
    assert.match(one.json.error.hint, /one patch must resolve every conflicted file listed/);
    assert.match(one.json.error.hint, /git add/);
    assert.match(one.json.error.hint, /hagent sync --session s1/);
    unchanged('one of two');
    const half = `*** Begin Patch\n*** Update File: a.txt\n-l1\n+L1\n*** Update File: c.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+BOTH\n*** End Patch\n`;
    const markers = hagent(s.worktree, ['apply', '-', '--json'], { input: half });
    assert.is(
      markers.json.error.code,
      'MERGE_UNRESOLVED',
      'a file the patch writes with its conflict block still in it stays conflicted',
    );
    assert.equal(markers.json.error.files, ['a.txt']);
    assert.equal(markers.json.error.unresolved, [{ path: 'a.txt', reason: 'markers', line: 2 }]);
    unchanged('markers left');
    const dry = hagent(s.worktree, ['apply', '--dry-run', '-', '--json'], {
      input: resolve('c.txt', 'BOTH'),
    });
    assert.is(dry.json.error.code, 'MERGE_UNRESOLVED', 'a dry run says the same');
    const both = `*** Begin Patch\n*** Update File: a.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+A-BOTH\n*** Update File: c.txt\n@@\n-<<<<<<< HEAD\n-AGENT\n-=======\n-USER\n->>>>>>> main\n+C-BOTH\n*** End Patch\n`;
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: both });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(parents(repo, 'hagent/s1').length, 2);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'a conflict resolved with git add and the other one by a patch: the patch concludes the merge with both',
  () => {
    const { repo, s } = conflicted(['a.txt', 'c.txt']);
    writeFileSync(path.join(s.worktree, 'a.txt'), 'l1\nBY HAND\nl3\nl4\nl5\nL6USER\n');
    git(s.worktree, 'add', 'a.txt');
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(git(repo, 'show', 'hagent/s1:a.txt'), 'l1\nBY HAND\nl3\nl4\nl5\nL6USER');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'an apply of files the merge left alone keeps the merge in progress over its commit; then the resolving patch concludes it with both',
  () => {
    const { repo, s, agentHead, target } = conflicted();
    const stale = hagent(s.worktree, ['apply', '-', '--json'], {
      input: upd('other.txt', 'x', 'X'),
    });
    assert.is(
      stale.json.error.code,
      'STALE_FILE',
      "a file the merge changed cleanly is not the head's (as before)",
    );
    assert.is(readFileSync(path.join(s.worktree, 'other.txt'), 'utf8'), 'x\ny\n');
    const n = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('n.txt', 'n', 'N') });
    assert.is(n.status, 0, n.stdout + n.stderr);
    const nHead = n.json.commit;
    assert.equal(parents(repo, nHead), [agentHead], 'an ordinary one-parent commit');
    assert.ok(
      existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')),
      'the merge stays in progress',
    );
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    assert.match(
      git(s.worktree, 'status', '--porcelain'),
      /^M {2}other\.txt$/m,
      'the merged file is still staged',
    );
    // The record followed the new head: markers added by hand are still refused by sync.
    git(s.worktree, 'add', 'c.txt');
    assert.is(hagent(s.worktree, ['sync', '--json']).json.error.code, 'CONFLICT_MARKERS');
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.equal(parents(repo, r.json.commit), [nHead, target]);
    assert.is(git(repo, 'show', 'hagent/s1:n.txt'), 'N');
    assert.is(git(repo, 'show', 'hagent/s1:other.txt'), 'x\ny');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'undo after the concluding apply goes back to the session before the update, and redo brings the merge back',
  () => {
    const { repo, s, agentHead, target } = conflicted();
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    const undo = hagent(s.worktree, ['undo', '--json']);
    assert.is(undo.status, 0, undo.stdout + undo.stderr);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), agentHead, 'the pre-merge head');
    assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'l1\nAGENT\nl3\nl4\nl5\nl6\n');
    assert.is(readFileSync(path.join(s.worktree, 'other.txt'), 'utf8'), 'x\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.not.ok(
      existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')),
      'no merge in progress either',
    );
    const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
    assert.is(redo.status, 0, redo.stdout + redo.stderr);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
    assert.equal(parents(repo, r.json.commit), [agentHead, target]);
    assert.is(
      readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER\n',
    );
  },
);

t(
  'a MERGE_HEAD the session head holds already (what a recovered concluding apply leaves) is ended, not concluded twice',
  () => {
    const { repo, s, target } = conflicted();
    const dir = gitDir(s.worktree);
    const left = Object.fromEntries(MERGE_FILES.map((f) => [f, readFileSync(path.join(dir, f))]));
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('c.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    // The recovery finishes the commit and the ref move (transaction/recover.ts), not the merge state.
    for (const [f, bytes] of Object.entries(left)) writeFileSync(path.join(dir, f), bytes);
    assert.is(readFileSync(path.join(dir, 'MERGE_HEAD'), 'utf8').trim(), target);
    const sync = hagent(s.worktree, ['sync', '--json']);
    assert.is(sync.status, 0, sync.stdout + sync.stderr);
    assert.is(sync.json.commit, null, 'no second merge commit');
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
    for (const f of MERGE_FILES) assert.not.ok(existsSync(path.join(dir, f)), `${f} is gone`);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    for (const [f, bytes] of Object.entries(left)) writeFileSync(path.join(dir, f), bytes);
    const next = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('n.txt', 'n', 'N') });
    assert.is(next.status, 0, next.stdout + next.stderr);
    assert.is(next.json.merge, undefined);
    assert.not.ok(existsSync(path.join(dir, 'MERGE_HEAD')), 'the apply ends it too');
  },
);

t(
  'native edit tools through hooks (Claude Code Edit): an edit leaving conflicts is kept out, markers never committed; the edit after which nothing is conflicted concludes the merge',
  () => {
    const { repo, s, agentHead, target } = conflicted(['a.txt', 'c.txt']);
    const hook = (event: string, file: string, id: string) =>
      hagent(s.worktree, ['hook', 'claude'], {
        input: JSON.stringify({
          hook_event_name: event,
          session_id: 'x',
          cwd: s.worktree,
          tool_name: 'Edit',
          tool_use_id: id,
          tool_input: {
            file_path: path.join(s.worktree, file),
            old_string: '<<<<<<< HEAD',
            new_string: 'BOTH',
          },
        }),
      });
    const edit = (file: string, id: string) => {
      const pre = hook('PreToolUse', file, id);
      assert.is(pre.status, 0, pre.stdout + pre.stderr);
      assert.is(
        git(repo, 'rev-parse', 'hagent/s1'),
        agentHead,
        `PreToolUse on ${file} adopts no conflicted file as an outside edit`,
      );
      writeFileSync(path.join(s.worktree, file), 'l1\nBOTH\nl3\nl4\nl5\nL6USER\n');
      const post = hook('PostToolUse', file, id);
      assert.is(post.status, 0, post.stdout + post.stderr);
    };
    edit('a.txt', 't1');
    assert.is(
      git(repo, 'rev-parse', 'hagent/s1'),
      agentHead,
      'c.txt is still conflicted: nothing committed',
    );
    assert.match(git(s.worktree, 'status', '--porcelain'), /^UU c\.txt$/m);
    assert.ok(existsSync(path.join(gitDir(s.worktree), 'MERGE_HEAD')));
    edit('c.txt', 't2');
    const head = git(repo, 'rev-parse', 'hagent/s1');
    assert.equal(parents(repo, head), [agentHead, target], 'the merge commit');
    assert.is(
      git(repo, 'show', `${head}:a.txt`),
      'l1\nBOTH\nl3\nl4\nl5\nL6USER',
      'the earlier edit is in it',
    );
    assert.is(git(repo, 'show', `${head}:other.txt`), 'x\ny');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    for (const f of MERGE_FILES)
      assert.not.ok(existsSync(path.join(gitDir(s.worktree), f)), `${f} is gone`);
    assert.not.match(
      git(repo, 'log', '-p', `${agentHead}..${head}`, '--first-parent'),
      /^\+<<<<<<< /m,
      'no commit holds the markers',
    );
  },
);

t(
  'CRLF lines: the markers the update writes are matched and removed, the lines keep their CRLF, and a block left in is refused',
  () => {
    const repo = makeRepo({ 'w.txt': 'l1\r\nl2\r\nl3\r\nl4\r\nl5\r\n' });
    const s = startSession(repo, ['--name', 'w']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('w.txt', 'l2', 'AGENT') }).status,
      0,
    );
    writeFileSync(path.join(repo, 'w.txt'), 'l1\r\nUSER\r\nl3\r\nl4\r\nl5\r\n');
    git(repo, 'commit', '-qam', 'user');
    assert.equal(hagent(repo, ['session', 'update', '--session', 'w', '--json']).json.conflicts, [
      'w.txt',
    ]);
    assert.match(readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'), /^<<<<<<< HEAD\r$/m);
    const still = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('w.txt', 'l1', 'L1') });
    assert.is(
      still.json.error.code,
      'MERGE_UNRESOLVED',
      'an edit beside the block leaves it conflicted',
    );
    assert.equal(still.json.error.unresolved, [{ path: 'w.txt', reason: 'markers', line: 2 }]);
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: resolve('w.txt', 'BOTH') });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(
      readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'),
      'l1\r\nBOTH\r\nl3\r\nl4\r\nl5\r\n',
    );
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'a modify/delete conflict is resolved by a patch deleting the file: the merge commit has it deleted',
  () => {
    const repo = makeRepo({ 'd.txt': 'd1\nd2\n', 'keep.txt': 'k\n' });
    const s = startSession(repo, ['--name', 'd']);
    assert.is(
      hagent(s.worktree, ['apply', '-', '--json'], { input: upd('d.txt', 'd2', 'AGENT') }).status,
      0,
    );
    git(repo, 'rm', '-q', 'd.txt');
    git(repo, 'commit', '-qm', 'user deletes d.txt');
    const update = hagent(repo, ['session', 'update', '--session', 'd', '--json']);
    assert.equal(update.json.conflicts, ['d.txt'], update.stdout);
    const r = hagent(s.worktree, ['apply', '-', '--yes', '--json'], {
      input: '*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n',
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.merge.concluded, true);
    assert.is(parents(repo, 'hagent/d').length, 2);
    assert.not.ok(existsSync(path.join(s.worktree, 'd.txt')));
    assert.is(git(repo, 'ls-tree', '--name-only', 'hagent/d'), 'keep.txt');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t.run();
