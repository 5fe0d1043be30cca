/**
 * The MCP tools concluding the merge `hagent session update` left in progress, through the
 * official SDK client against the built server: read gives the conflicted file as the worktree
 * holds it (markers and all) with its blob id, edit and write with that token resolve it, and
 * the one commit is the merge commit; an edit leaving a conflict block is refused.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp: concluding a merge in progress');

const BLOCK = '<<<<<<< HEAD\nAGENT\n=======\nUSER\n>>>>>>> main\n';

/** A session and a user who changed line 2 of c.txt each their own way, then the update left the conflict. */
function conflicted() {
  const repo = makeRepo({ 'c.txt': 'l1\nl2\nl3\n', 'other.txt': 'x\n' });
  const s = startSession(repo, ['--name', 's1']);
  assert.is(
    hagent(s.worktree, ['apply', '-'], {
      input: '*** Begin Patch\n*** Update File: c.txt\n-l2\n+AGENT\n*** End Patch\n',
    }).status,
    0,
  );
  const agentHead = git(repo, 'rev-parse', 'hagent/s1');
  writeFileSync(path.join(repo, 'c.txt'), 'l1\nUSER\nl3\n');
  writeFileSync(path.join(repo, 'other.txt'), 'x\ny\n');
  git(repo, 'commit', '-qam', 'user');
  assert.equal(hagent(repo, ['session', 'update', '--session', 's1', '--json']).json.conflicts, [
    'c.txt',
  ]);
  assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), `l1\n${BLOCK}l3\n`);
  return { repo, s, agentHead, target: git(repo, 'rev-parse', 'main') };
}

t(
  'read gives the markers and their blob id; an edit leaving the block is refused; the edit replacing it is the merge commit',
  async () => {
    const { repo, s, agentHead, target } = conflicted();
    const c = await connectMcp(repo, ['--session', 's1']);
    try {
      const st = await c.call('status', {});
      assert.is(st.isError, false, st.text);
      assert.equal(
        { ...st.data.merge, hint: undefined },
        {
          mergeHead: target,
          byUpdate: true,
          conflicted: ['c.txt'],
          unresolved: ['c.txt'],
          hint: undefined,
        },
        'status shows the merge waiting, as hagent session status does',
      );
      const r = await c.call('read', { path: 'c.txt' });
      assert.is(r.isError, false, r.text);
      assert.match(r.text, /^2\t<<<<<<< HEAD$/m);
      assert.is(r.data.conflicted, true);
      assert.is(
        r.data.outsideEdit,
        false,
        "the markers are the file's current content, not an outside edit",
      );
      assert.match(r.text, /conflicted by the merge in progress/);
      const beside = await c.call('edit', {
        path: 'c.txt',
        old_string: 'l1',
        new_string: 'L1',
        expected_blob: r.data.blob,
      });
      assert.is(beside.isError, true, beside.text);
      assert.is(beside.data.error.code, 'MERGE_UNRESOLVED');
      assert.equal(beside.data.error.files, ['c.txt']);
      assert.is(
        readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'),
        `l1\n${BLOCK}l3\n`,
        'nothing written',
      );
      assert.is(git(repo, 'rev-parse', 'hagent/s1'), agentHead);
      const e = await c.call('edit', {
        path: 'c.txt',
        old_string: BLOCK,
        new_string: 'BOTH\n',
        expected_blob: r.data.blob,
      });
      assert.is(e.isError, false, e.text);
      assert.match(e.text, /^concluded the merge of main$/m);
      assert.equal(e.data.merge, { concluded: true, target: 'refs/heads/main', merged: target });
      assert.is(e.data.commit, git(repo, 'rev-parse', 'hagent/s1'));
      assert.equal(git(repo, 'rev-list', '--parents', '-n1', e.data.commit).split(' ').slice(1), [
        agentHead,
        target,
      ]);
      assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\n');
      assert.is(git(s.worktree, 'status', '--porcelain'), '');
      assert.not.ok(
        existsSync(path.join(git(s.worktree, 'rev-parse', '--absolute-git-dir'), 'MERGE_HEAD')),
      );
      const again = await c.call('read', { path: 'c.txt' });
      assert.is(again.data.outsideEdit, false);
      assert.is((await c.call('status', {})).data.merge, null, 'no merge waits once concluded');
    } finally {
      await c.close();
    }
    const land = hagent(repo, ['land', '--session', 's1', '--yes', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
    assert.is(readFileSync(path.join(repo, 'c.txt'), 'utf8'), 'l1\nBOTH\nl3\n');
    assert.is(readFileSync(path.join(repo, 'other.txt'), 'utf8'), 'x\ny\n');
  },
);

t('write of the whole file after a read of it concludes the merge too', async () => {
  const { repo, s, agentHead, target } = conflicted();
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    const unread = await c.call('write', { path: 'c.txt', content: 'l1\nBOTH\nl3\n' });
    assert.is(unread.data.error.code, 'STALE_FILE', 'a write still needs the file read first');
    assert.is(readFileSync(path.join(s.worktree, 'c.txt'), 'utf8'), `l1\n${BLOCK}l3\n`);
    assert.is((await c.call('read', { path: 'c.txt' })).isError, false);
    const w = await c.call('write', { path: 'c.txt', content: 'l1\nBOTH\nl3\n' });
    assert.is(w.isError, false, w.text);
    assert.is(w.data.merge.concluded, true);
    assert.equal(git(repo, 'rev-list', '--parents', '-n1', 'hagent/s1').split(' ').slice(1), [
      agentHead,
      target,
    ]);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  } finally {
    await c.close();
  }
});

t.run();
