/**
 * Paths of the MCP tools, through the official SDK client against the built server: read, edit,
 * write and apply_patch's base_blobs share one rule — a relative path is worktree-relative; an
 * absolute path inside the session worktree, or inside the user's main checkout (mapped to the
 * same file in the worktree), is accepted; any other absolute path is refused PATH_DENIED naming
 * it, and nothing is written.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, makeRepo, startSession, tempDir } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp: paths');

t('read and edit accept an absolute path inside the worktree or the main checkout', async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 's1']);
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    for (const p of [
      path.join(s.worktree, 'a.txt'),
      path.join(realpathSync(s.worktree), 'a.txt'),
      path.join(repo, 'a.txt'),
    ]) {
      const r = await c.call('read', { path: p });
      assert.is(r.isError, false, `${p}: ${r.text}`);
      assert.is(r.data.path, 'a.txt');
      const mapped = p === path.join(repo, 'a.txt');
      assert.is(r.data.warnings?.length ?? 0, mapped ? 1 : 0, `${p}: ${r.data.warnings}`);
      if (mapped) {
        assert.match(
          r.data.warnings[0],
          /is in the main checkout .*this is the session's copy, a\.txt/,
        );
        assert.match(r.text.split('\n')[0]!, /\(warning: .* is in the main checkout/);
        assert.is(r.text.split('\n')[1], '1\tone', 'the lines follow the header line');
      }
    }
    const r = await c.call('read', { path: 'a.txt' });
    const e = await c.call('edit', {
      path: path.join(s.worktree, 'a.txt'),
      old_string: 'one',
      new_string: 'two',
      expected_blob: r.data.blob,
    });
    assert.is(e.isError, false, e.text);
    const e2 = await c.call('edit', {
      path: path.join(repo, 'a.txt'),
      old_string: 'two',
      new_string: 'three',
    });
    assert.is(e2.isError, false, e2.text);
    assert.match(e2.text, /main checkout/);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'three\n');
    assert.is(
      readFileSync(path.join(repo, 'a.txt'), 'utf8'),
      'one\n',
      'the main checkout is untouched',
    );
  } finally {
    await c.close();
  }
});

t(
  'an absolute path outside both is refused PATH_DENIED naming it, by read, edit, write and apply_patch',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const s = startSession(repo, ['--name', 's1']);
    const elsewhere = tempDir('hagent-elsewhere-');
    const evil = path.join(elsewhere, 'evil.txt');
    const head = git(repo, 'rev-parse', 'hagent/s1');
    const c = await connectMcp(repo, ['--session', 's1']);
    try {
      const calls: [string, Record<string, unknown>][] = [
        ['read', { path: evil }],
        ['edit', { path: evil, old_string: '', new_string: 'x\n' }],
        ['write', { path: evil, content: 'x\n' }],
        ['apply_patch', { patch: `*** Begin Patch\n*** Add File: ${evil}\n+x\n*** End Patch\n` }],
        [
          'apply_patch',
          {
            patch: '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n',
            base_blobs: { [evil]: null },
          },
        ],
      ];
      for (const [tool, args] of calls) {
        const r = await c.call(tool, args);
        assert.is(r.isError, true, `${tool}: ${r.text}`);
        assert.is(r.data.error.code, 'PATH_DENIED', `${tool}: ${r.text}`);
        assert.ok(r.data.error.message.includes(evil), `${tool}: ${r.data.error.message}`);
        assert.match(r.data.error.hint, 'relative to the worktree');
      }
      assert.not.ok(
        existsSync(path.join(s.worktree, 'evil.txt')),
        'nothing written in the worktree',
      );
      assert.not.ok(existsSync(evil));
      assert.is(git(repo, 'rev-parse', 'hagent/s1'), head, 'no commit');
    } finally {
      await c.close();
    }
  },
);

t.run();
