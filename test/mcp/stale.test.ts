/**
 * MCP `edit` after an outside change, through the official SDK client against the built server:
 * an edit whose expected_blob is what `read` returned after the change is applied (the outside
 * change adopted first as a commit of its own, then the edit); an edit without a blob on a file
 * changed outside is refused STALE_FILE with a hint naming the server's status and sync tools.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp: edits after an outside change');

t(
  'edit with the blob read after an outside change: the change is adopted as its own commit, then the edit applies',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
    const s = startSession(repo, ['--name', 's1']);
    const c = await connectMcp(repo, ['--session', 's1']);
    try {
      writeFileSync(path.join(s.worktree, 'a.txt'), 'one\nTWO outside\n');
      const r = await c.call('read', { path: 'a.txt' });
      assert.is(r.isError, false, r.text);
      const e = await c.call('edit', {
        path: 'a.txt',
        old_string: 'one',
        new_string: 'uno',
        expected_blob: r.data.blob,
      });
      assert.is(e.isError, false, e.text);
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'uno\nTWO outside\n');
      const log = git(repo, 'log', '--format=%B', 'main..hagent/s1');
      assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '2', log);
      assert.match(git(repo, 'log', '-1', '--format=%B', 'hagent/s1~1'), /Hagent-Outside: true/);
      // The edit's commit holds only the edit.
      const diff = git(repo, 'diff', '-U0', 'hagent/s1~1', 'hagent/s1');
      assert.match(diff, /^-one$/m);
      assert.match(diff, /^\+uno$/m);
      assert.not.match(diff, /^[-+]TWO/m);
    } finally {
      await c.close();
    }
  },
);

t(
  'edit without a blob on a file changed outside: STALE_FILE, its hint names the status and sync tools',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const s = startSession(repo, ['--name', 's2']);
    const c = await connectMcp(repo, ['--session', 's2']);
    try {
      writeFileSync(path.join(s.worktree, 'a.txt'), 'one\noutside\n');
      const e = await c.call('edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' });
      assert.is(e.isError, true);
      assert.match(e.text, /STALE_FILE/);
      assert.match(e.text, /call the status tool .* the sync tool/);
      assert.not.match(e.text, /hagent session status|hagent sync/);
    } finally {
      await c.close();
    }
  },
);

t.run();
