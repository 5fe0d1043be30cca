/**
 * `hagent mcp` through the official MCP SDK client over stdio: the built server is spawned in a
 * real repository, every tool is listed and called, and each result is checked against the
 * repository's state (commits, files, journal), as an agent would see it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, git, GIT_ENV, hagent, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp, type McpConnection } from '../helpers/mcp.js';
import { sandboxMissing } from '../helpers/sandbox.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('hagent mcp: every tool through the SDK client');

const FILES = {
  'a.txt': 'one\ntwo\nthree\n',
  'src/app.ts': 'export const x = 1;\nexport const y = 2;\nexport const x2 = 1;\n',
  'dup.txt': 'same\nother\nsame\n',
};

function setup(): { repo: string; s: ReturnType<typeof startSession> } {
  const repo = makeRepo(FILES);
  return { repo, s: startSession(repo, ['--name', 's1']) };
}

const hashObject = (file: string) =>
  execFileSync('git', ['hash-object', '--no-filters', file], { encoding: 'utf8' }).trim();
/** The numbered lines of a read's text (after its header line). */
const lines = (text: string) => text.slice(text.indexOf('\n') + 1);
const commits = (repo: string) => Number(git(repo, 'rev-list', '--count', 'main..hagent/s1'));

async function withServer(
  cwd: string,
  args: string[],
  body: (c: McpConnection) => Promise<void>,
): Promise<void> {
  const c = await connectMcp(cwd, args);
  try {
    await body(c);
  } finally {
    await c.close();
  }
}

t(
  'lists the session tools with input and output schemas and annotations; approve, land and end are not offered',
  async () => {
    const { repo } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const { tools } = await c.client.listTools();
      const names = tools.map((x) => x.name).sort();
      assert.equal(names, [
        'apply_patch',
        'check',
        'edit',
        'exec',
        'log',
        'read',
        'redo',
        'review',
        'status',
        'sync',
        'undo',
        'write',
      ]);
      for (const tool of tools) {
        assert.is(tool.inputSchema.type, 'object', tool.name);
        assert.is(tool.outputSchema?.type, 'object', `${tool.name} has an output schema`);
        assert.type(tool.annotations?.readOnlyHint, 'boolean', tool.name);
        assert.type(tool.annotations?.destructiveHint, 'boolean', tool.name);
        assert.type(tool.annotations?.idempotentHint, 'boolean', tool.name);
        assert.ok(tool.description && tool.description.length > 20, tool.name);
      }
      const readOnly = tools
        .filter((x) => x.annotations?.readOnlyHint)
        .map((x) => x.name)
        .sort();
      assert.equal(readOnly, ['check', 'log', 'read', 'review', 'status']);
      assert.equal(
        Object.keys(
          (tools.find((x) => x.name === 'edit')!.inputSchema as { properties: object }).properties,
        ).sort(),
        ['expected_blob', 'new_string', 'old_string', 'path', 'replace_all', 'yes'],
      );
    });
  },
);

t('read gives numbered lines, a range, and the blob id git gives the bytes on disk', async () => {
  const { repo, s } = setup();
  await withServer(repo, ['--session', 's1'], async (c) => {
    const r = await c.call('read', { path: 'a.txt' });
    assert.is(r.isError, false, r.text);
    assert.is(lines(r.text), '1\tone\n2\ttwo\n3\tthree');
    assert.is(r.text.split('\n')[0], `a.txt: lines 1-3 of 3, blob ${r.data.blob}`);
    assert.is(
      r.data.text,
      lines(r.text),
      'the lines are in the structured content too (Claude Code gives the model only that)',
    );
    assert.is(r.data.blob, hashObject(path.join(s.worktree, 'a.txt')));
    assert.is(r.data.headBlob, r.data.blob);
    assert.is(r.data.outsideEdit, false);
    assert.is(r.data.totalLines, 3);
    const part = await c.call('read', { path: 'a.txt', offset: 2, limit: 1 });
    assert.is(lines(part.text), '2\ttwo');
    assert.is(part.data.truncated, true);
    const missing = await c.call('read', { path: 'nope.txt' });
    assert.is(missing.isError, true);
    assert.is(missing.data.error.code, 'FILE_NOT_FOUND');
    const denied = await c.call('read', { path: '../outside.txt' });
    assert.is(denied.data.error.code, 'PATH_DENIED');
  });
});

t(
  'edit replaces exactly one occurrence as one commit; refusals teach with code, message and hint',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const r = await c.call('read', { path: 'a.txt' });
      const e = await c.call('edit', {
        path: 'a.txt',
        old_string: 'two',
        new_string: 'TWO',
        expected_blob: r.data.blob,
      });
      assert.is(e.isError, false, e.text);
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
      assert.is(e.data.commit, git(repo, 'rev-parse', 'hagent/s1'));
      assert.equal(e.data.files, [
        { path: 'a.txt', op: 'update', added: 1, removed: 1, level: 'exact' },
      ]);
      assert.is(e.data.blobs['a.txt'], hashObject(path.join(s.worktree, 'a.txt')));
      assert.ok(e.text.startsWith('Success. Updated the following files:\nM a.txt'), e.text);
      assert.ok(
        git(repo, 'notes', '--ref=hagent-sessions/s1', 'show', e.data.commit).includes('+TWO'),
        'the note holds the edit as a diff',
      );

      const gone = await c.call('edit', { path: 'a.txt', old_string: 'two', new_string: 'x' });
      assert.is(gone.isError, true);
      assert.is(gone.data.error.code, 'CONTEXT_NOT_FOUND');
      assert.ok(gone.data.error.hint.length > 10);
      assert.ok(gone.text.startsWith('error[CONTEXT_NOT_FOUND]'), gone.text);
      const twice = await c.call('edit', {
        path: 'dup.txt',
        old_string: 'same',
        new_string: 'SAME',
      });
      assert.is(twice.data.error.code, 'AMBIGUOUS_MATCH');
      assert.equal(twice.data.error.candidates, [1, 3]);
      const all = await c.call('edit', {
        path: 'dup.txt',
        old_string: 'same',
        new_string: 'SAME',
        replace_all: true,
      });
      assert.is(all.isError, false, all.text);
      assert.is(readFileSync(path.join(s.worktree, 'dup.txt'), 'utf8'), 'SAME\nother\nSAME\n');
      const same = await c.call('edit', { path: 'a.txt', old_string: 'one', new_string: 'one' });
      assert.is(same.data.error.code, 'NO_CHANGES');
      const created = await c.call('edit', {
        path: 'new/b.txt',
        old_string: '',
        new_string: 'fresh\n',
      });
      assert.is(created.data.files[0].op, 'add', created.text);
      const stale = await c.call('edit', {
        path: 'a.txt',
        old_string: 'one',
        new_string: 'uno',
        expected_blob: r.data.blob,
      });
      assert.is(stale.data.error.code, 'STALE_FILE', 'expected_blob from before the first edit');
      assert.is(commits(repo), 3);
      assert.is(git(s.worktree, 'status', '--porcelain'), '');
    });
  },
);

t(
  'write creates a file, and replaces one only with its blob id (expected_blob or a read by this server)',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const made = await c.call('write', { path: 'docs/new.md', content: '# new\n' });
      assert.is(made.isError, false, made.text);
      assert.is(made.data.files[0].op, 'add');
      const blind = await c.call('write', { path: 'src/app.ts', content: 'replaced\n' });
      assert.is(blind.data.error.code, 'STALE_FILE', 'never read here');
      assert.is(readFileSync(path.join(s.worktree, 'src/app.ts'), 'utf8'), FILES['src/app.ts']);
      const wrong = await c.call('write', {
        path: 'src/app.ts',
        content: 'replaced\n',
        expected_blob: '0'.repeat(40),
      });
      assert.is(wrong.data.error.code, 'STALE_FILE');
      await c.call('read', { path: 'src/app.ts' });
      const ok = await c.call('write', { path: 'src/app.ts', content: 'replaced\n' });
      assert.is(ok.isError, false, ok.text);
      assert.is(readFileSync(path.join(s.worktree, 'src/app.ts'), 'utf8'), 'replaced\n');
      const again = await c.call('write', { path: 'src/app.ts', content: 'again\n' });
      assert.is(again.isError, false, 'its own write counts as known');
      const token = await c.call('write', {
        path: 'a.txt',
        content: 'A\n',
        expected_blob: hashObject(path.join(s.worktree, 'a.txt')),
      });
      assert.is(token.isError, false, token.text);
      assert.is(commits(repo), 4);
    });
  },
);

t(
  'apply_patch applies a Codex patch or a unified diff; base_blobs and base refuse a changed target; dry_run writes nothing',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const read = await c.call('read', { path: 'a.txt' });
      const head0 = git(repo, 'rev-parse', 'hagent/s1');
      const dry = await c.call('apply_patch', {
        patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n',
        dry_run: true,
      });
      assert.is(dry.data.commit, null);
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), FILES['a.txt']);
      const applied = await c.call('apply_patch', {
        patch:
          '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Add File: b.txt\n+b\n*** End Patch\n',
        base_blobs: { 'a.txt': read.data.blob, 'b.txt': null },
      });
      assert.is(applied.isError, false, applied.text);
      assert.ok(
        applied.text.startsWith('Success. Updated the following files:\nM a.txt\nA b.txt'),
        applied.text,
      );
      const staleBlobs = await c.call('apply_patch', {
        patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n',
        base_blobs: { 'a.txt': read.data.blob },
      });
      assert.is(staleBlobs.data.error.code, 'STALE_FILE');
      const staleBase = await c.call('apply_patch', {
        patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n',
        base: head0,
      });
      assert.is(staleBase.data.error.code, 'STALE_FILE');
      const udiff = await c.call('apply_patch', {
        patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 1\n-two\n+2\n three\n',
      });
      assert.is(udiff.isError, false, udiff.text);
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), '1\n2\nthree\n');
      const broken = await c.call('apply_patch', {
        patch: '*** Begin Patch\n*** Frobnicate: a.txt\n*** End Patch\n',
      });
      assert.is(broken.data.error.code, 'PATCH_SYNTAX');
      assert.is(commits(repo), 2);
    });
  },
);

t('check, status, review, log, undo, redo and sync return the CLI JSON shapes', async () => {
  const { repo, s } = setup();
  await withServer(repo, ['--session', 's1'], async (c) => {
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch\n';
    const chk = await c.call('check', { patch });
    assert.is(chk.isError, false, chk.text);
    assert.equal(chk.data.files[0].chunks[0], {
      chunk: 1,
      level: 'exact',
      startLine: 1,
      oldCount: 2,
      newCount: 2,
    });
    assert.is(commits(repo), 0);
    await c.call('apply_patch', { patch });
    writeFileSync(path.join(repo, 'main-only.txt'), 'm\n');
    git(repo, 'add', 'main-only.txt');
    git(repo, 'commit', '-q', '-m', 'on main');
    const st = await c.call('status');
    assert.is(st.isError, false, st.text);
    assert.is(st.data.id, 's1');
    assert.is(st.data.commits, 1);
    assert.equal(st.data.changed, [{ path: 'a.txt', status: 'M' }]);
    assert.equal(st.data.targetDrift, { targetHead: git(repo, 'rev-parse', 'main'), commits: 1 });
    assert.equal(st.data.drift, null, 'the session branch itself did not move outside hagent');
    const rv = await c.call('review', { stat: true });
    assert.equal(rv.data.files, [{ path: 'a.txt', status: 'M', added: 1, removed: 1 }]);
    assert.is(rv.data.approval, null);
    const full = await c.call('review');
    assert.ok(full.data.diff.includes('+2'));
    const un = await c.call('undo');
    assert.is(un.data.direction, 'undo');
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), FILES['a.txt']);
    const re = await c.call('redo', { steps: 1 });
    assert.is(re.data.direction, 'redo');
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\n2\nthree\n');
    writeFileSync(path.join(s.worktree, 'outside.txt'), 'made by a build\n');
    const sy = await c.call('sync');
    assert.equal(sy.data.files, [{ path: 'outside.txt', status: 'A' }]);
    assert.is(sy.data.commit, git(repo, 'rev-parse', 'hagent/s1'));
    const none = await c.call('sync');
    assert.is(none.data.commit, null);
    await c.call('edit', { path: 'a.txt', old_string: 'nothing like this', new_string: 'x' });
    const log = await c.call('log', { failed: true });
    assert.is(log.data.entries.at(-1).code, 'CONTEXT_NOT_FOUND');
    assert.ok(
      log.data.entries.every((e: { session: string; ok: boolean }) => e.session === 's1' && !e.ok),
    );
    const last = await c.call('log', { n: 2 });
    assert.is(last.data.entries.length, 2);
  });
});

t(
  'exec runs a guarded command in the worktree: its files become one commit; failure and timeout are results, the guard a refusal',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const made = await c.call('exec', {
        command: 'echo built > out.txt && echo to-stdout && echo to-stderr >&2',
      });
      assert.is(made.isError, false, made.text);
      assert.is(made.data.ok, true);
      assert.is(made.data.exitCode, 0);
      assert.is(made.data.stdout, 'to-stdout\n');
      assert.is(made.data.stderr, 'to-stderr\n');
      assert.equal(made.data.changed, [{ path: 'out.txt', status: 'A' }]);
      assert.is(made.data.commit, git(repo, 'rev-parse', 'hagent/s1'));
      assert.is(readFileSync(path.join(s.worktree, 'out.txt'), 'utf8'), 'built\n');
      const failed = await c.call('exec', { command: 'exit 3' });
      assert.is(failed.isError, false);
      assert.equal([failed.data.ok, failed.data.exitCode, failed.data.commit], [false, 3, null]);
      const slow = await c.call('exec', { command: 'sleep 30', timeout: 1 });
      assert.equal([slow.data.ok, slow.data.timedOut, slow.data.exitCode], [false, true, null]);
      assert.match(slow.text, /timed out/);
      const blocked = await c.call('exec', { command: 'git push --force origin main' });
      assert.is(blocked.isError, true);
      assert.is(blocked.data.error.code, 'GUARD_BLOCKED');
      const undone = await c.call('undo');
      assert.is(undone.isError, false, undone.text);
      assert.not.ok(
        existsSync(path.join(s.worktree, 'out.txt')),
        "undo takes the command's files back",
      );
    });
  },
);

t(
  "exec without a sandbox reports a script's write into the user's checkout as outside, in the data and the text",
  async () => {
    const { repo, s } = setup();
    writeFileSync(path.join(s.worktree, 's.sh'), `echo x >> '${path.join(repo, 'a.txt')}'\n`);
    const c = await connectMcp(repo, ['--session', 's1'], { HAGENT_BWRAP: '' });
    try {
      const r = await c.call('exec', { command: 'sh s.sh' });
      assert.is(r.isError, false, r.text);
      assert.equal(r.data.outside.paths, ['a.txt']);
      assert.match(r.text, /WARNING: the user's main checkout .* changed while the command ran/);
      assert.match(r.text, /WARNING: no sandbox: .*the shell guard alone checked this command/);
      assert.is(r.data.sandbox.on, false);
      const status = await c.call('status', {});
      assert.is(status.data.sandbox.on, false);
      assert.match(status.data.sandbox.reason, /bubblewrap \(bwrap\) is not installed/);
      const quiet = await c.call('exec', { command: 'true' });
      assert.is(quiet.data.outside, null);
    } finally {
      await c.close();
    }
  },
);

testOrSkip(
  t,
  'sandbox',
  sandboxMissing,
)(
  "exec in the sandbox: a script's write into the user's checkout is stopped, and the agent told why",
  async () => {
    const { repo, s } = setup();
    const before = readFileSync(path.join(repo, 'a.txt'), 'utf8');
    writeFileSync(path.join(s.worktree, 's.sh'), `echo x >> '${path.join(repo, 'a.txt')}'\n`);
    await withServer(repo, ['--session', 's1'], async (c) => {
      const status = await c.call('status', {});
      assert.is(status.data.sandbox.on, true, status.text);
      const r = await c.call('exec', { command: 'sh s.sh' });
      assert.is(r.isError, false, r.text);
      assert.is(r.data.outside, null);
      assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), before);
      assert.equal(r.data.sandbox.denied[0].path, realpathSync(path.join(repo, 'a.txt')));
      assert.match(
        r.text,
        /hagent sandbox: .*a\.txt: read-only: outside the session worktree; the user's checkout changes only through hagent land/,
      );
    });
  },
);

t(
  'an outside edit between read and edit is refused STALE_FILE and its bytes are kept',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const r = await c.call('read', { path: 'a.txt' });
      writeFileSync(path.join(s.worktree, 'a.txt'), 'one\ntwo\nthree\nadded by hand\n');
      const e = await c.call('edit', { path: 'a.txt', old_string: 'two', new_string: 'TWO' });
      assert.is(e.data.error.code, 'STALE_FILE', e.text);
      const w = await c.call('write', { path: 'a.txt', content: 'x\n' });
      assert.is(w.data.error.code, 'STALE_FILE');
      const p = await c.call('apply_patch', {
        patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch\n',
        base_blobs: { 'a.txt': r.data.blob },
      });
      assert.is(p.data.error.code, 'STALE_FILE');
      assert.is(
        readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
        'one\ntwo\nthree\nadded by hand\n',
      );
      const again = await c.call('read', { path: 'a.txt' });
      assert.is(again.data.outsideEdit, true);
      assert.is(commits(repo), 0);
    });
  },
);

t(
  'a change of .hagent/config.json is seen on the next call (policy, then an invalid file, then fixed)',
  async () => {
    const { repo } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      assert.is((await c.call('write', { path: 'secret/one.txt', content: '1\n' })).isError, false);
      mkdirSync(path.join(repo, '.hagent'), { recursive: true });
      writeFileSync(
        path.join(repo, '.hagent', 'config.json'),
        JSON.stringify({ deniedPaths: ['secret/**'] }),
      );
      const denied = await c.call('write', { path: 'secret/two.txt', content: '2\n' });
      assert.is(denied.data.error.code, 'PATH_DENIED', denied.text);
      writeFileSync(path.join(repo, '.hagent', 'config.json'), '{"maxFiles": "ten"}');
      const invalid = await c.call('write', { path: 'ok.txt', content: 'ok\n' });
      assert.is(invalid.data.error.code, 'CONFIG_INVALID', invalid.text);
      writeFileSync(
        path.join(repo, '.hagent', 'config.json'),
        JSON.stringify({ maxChangedLines: 1 }),
      );
      const limited = await c.call('write', { path: 'two-lines.txt', content: 'a\nb\n' });
      assert.is(limited.data.error.code, 'LIMIT_EXCEEDED', limited.text);
      writeFileSync(path.join(repo, '.hagent', 'config.json'), '{}');
      assert.is(
        (await c.call('write', { path: 'secret/three.txt', content: '3\n' })).isError,
        false,
      );
    });
  },
);

t(
  'bad arguments are schema errors (tool errors), not crashes; the server answers afterwards',
  async () => {
    const { repo } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      for (const [name, args] of [
        ['read', { path: 7 }],
        ['read', {}],
        ['edit', { path: 'a.txt', old_string: 'one' }],
        ['write', { path: 'a.txt', content: 'x', expected_blob: 'abc' }],
        ['undo', { steps: -1 }],
        ['apply_patch', { patch: '' }],
        ['log', { n: 1.5 }],
      ] as const) {
        const r = await c.call(name, args as Record<string, unknown>);
        assert.is(r.isError, true, `${name} ${JSON.stringify(args)}`);
        assert.match(r.text, /validation|Invalid/i);
      }
      let unknown = '';
      await c.client.callTool({ name: 'land', arguments: {} }).then(
        (r) => {
          unknown = r.isError ? 'tool error' : 'ok';
        },
        (e: Error) => {
          unknown = e.message;
        },
      );
      assert.match(unknown, /not found/);
      assert.is((await c.call('read', { path: 'a.txt' })).isError, false);
    });
  },
);

t('read shows a line longer than 2,000 characters cut, with its length', async () => {
  const { repo, s } = setup();
  writeFileSync(path.join(s.worktree, 'min.js'), `short\n${'y'.repeat(300_000)}\nend\n`);
  await withServer(repo, ['--session', 's1'], async (c) => {
    const r = await c.call('read', { path: 'min.js' });
    assert.is(r.isError, false, r.text);
    assert.is(r.data.cutLines, 1);
    assert.ok(r.text.length < 3000, `${r.text.length} characters`);
    assert.match(r.text.split('\n')[0]!, /\(1 line longer than 2,000 characters shown cut\)/);
    assert.is(
      lines(r.text).split('\n')[1],
      `2\t${'y'.repeat(2000)}… [line cut: 300000 characters in all]`,
    );
    assert.is(lines(r.text).split('\n')[2], '3\tend');
    assert.is(r.data.text, lines(r.text));
    assert.is(
      r.data.blob,
      hashObject(path.join(s.worktree, 'min.js')),
      'the blob is of the whole file',
    );
  });
});

t('a 5 MB patch is applied through the protocol', async () => {
  const { repo, s } = setup();
  await withServer(repo, ['--session', 's1'], async (c) => {
    const line = 'x'.repeat(7499);
    const patch = `*** Begin Patch\n*** Add File: big.txt\n${Array.from({ length: 700 }, (_, i) => `+${String(i).padStart(6, '0')}${line}`).join('\n')}\n*** End Patch\n`;
    assert.ok(patch.length > 5_000_000, `${patch.length} bytes`);
    const refused = await c.call('apply_patch', { patch });
    assert.is(refused.data.error.code, 'CONFIRMATION_REQUIRED', '700 lines need a yes');
    assert.match(refused.data.error.hint, /call the tool again with yes: true/);
    const r = await c.call('apply_patch', { patch, yes: true });
    assert.is(r.isError, false, r.text.slice(0, 300));
    const bytes = readFileSync(path.join(s.worktree, 'big.txt'), 'utf8');
    assert.is(bytes.length, 700 * 7506);
    assert.is(r.data.blobs['big.txt'], hashObject(path.join(s.worktree, 'big.txt')));
    const read = await c.call('read', { path: 'big.txt', offset: 700 });
    assert.ok(lines(read.text).startsWith('700\t000699x'));
    assert.is(commits(repo), 1);
  });
});

t(
  'the server never serves stale state: a CLI apply, undo and end made meanwhile are seen on the next call',
  async () => {
    const { repo, s } = setup();
    await withServer(repo, ['--session', 's1'], async (c) => {
      const first = await c.call('read', { path: 'a.txt' });
      const cli = hagent(s.worktree, ['apply', '-', '--json'], {
        input: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n',
      });
      assert.is(cli.status, 0, cli.stderr);
      const seen = await c.call('read', { path: 'a.txt' });
      assert.is(lines(seen.text).split('\n')[0], '1\tONE');
      assert.is.not(seen.data.head, first.data.head);
      const st = await c.call('status');
      assert.is(st.data.head, cli.json.commit);
      assert.is(
        hagent(s.worktree, ['apply', '-', '--json'], {
          input: '*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch\n',
        }).status,
        0,
      );
      const stale = await c.call('write', { path: 'a.txt', content: 'mine\n' });
      assert.is(
        stale.data.error.code,
        'STALE_FILE',
        'the blob this server read is no longer on disk',
      );
      assert.is(hagent(s.worktree, ['undo', '2', '--json']).status, 0);
      assert.is((await c.call('status')).data.head, s.base);
      assert.is(hagent(repo, ['session', 'end', 's1', '--json']).status, 0);
      const ended = await c.call('status');
      assert.is(ended.data.error.code, 'SESSION_NOT_FOUND');
      // A new session given the same name is not the one this server served.
      assert.is(hagent(repo, ['session', 'start', '--name', 's1', '--json']).status, 0);
      for (const [tool, args] of [
        ['status', {}],
        ['write', { path: 'new.txt', content: 'x\n' }],
      ] as const) {
        const other = await c.call(tool, args);
        assert.is(other.data.error?.code, 'SESSION_NOT_FOUND', `${tool}: ${other.text}`);
        assert.match(other.data.error.message, /has ended; a new session has the same name/);
        assert.match(other.data.error.hint, /restart the MCP server/);
      }
    });
  },
);

t(
  'in a packed repository the head trees come through the warm cat-file process: read and apply_patch still see them',
  async () => {
    const { repo, s } = setup();
    git(repo, 'repack', '-a', '-d', '-q');
    git(repo, 'prune-packed');
    await withServer(repo, ['--session', 's1'], async (c) => {
      const r = await c.call('read', { path: 'src/app.ts' });
      assert.is(
        r.data.headBlob,
        hashObject(path.join(s.worktree, 'src/app.ts')),
        'the head blob, read from the pack',
      );
      const p = await c.call('apply_patch', {
        patch:
          '*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const y = 2;\n+export const y = 3;\n*** End Patch\n',
      });
      assert.is(p.isError, false, p.text);
      assert.is(
        git(repo, 'show', 'hagent/s1:src/app.ts'),
        'export const x = 1;\nexport const y = 3;\nexport const x2 = 1;',
      );
      assert.is(
        git(repo, 'show', 'hagent/s1:a.txt'),
        'one\ntwo\nthree',
        'the other files of the packed tree are kept',
      );
      assert.is(git(s.worktree, 'status', '--porcelain'), '');
    });
  },
);

t(
  'a 2025-era client (initialize, as the agents of today open) is served too: list and call over raw JSON-RPC lines',
  async () => {
    const { repo, s } = setup();
    const child = spawn(process.execPath, [BIN, 'mcp', '--session', 's1'], {
      cwd: repo,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const answers = new Map<number, any>();
    let buffer = '';
    const waiters = new Map<number, () => void>();
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        const m = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (typeof m.id === 'number') {
          answers.set(m.id, m);
          waiters.get(m.id)?.();
        }
      }
    });
    const request = (id: number, method: string, params?: object) =>
      new Promise<any>((resolve) => {
        waiters.set(id, () => resolve(answers.get(id)));
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })}\n`,
        );
      });
    try {
      const init = await request(1, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'legacy', version: '1' },
      });
      assert.is(init.result.protocolVersion, '2025-06-18');
      assert.is(init.result.serverInfo.name, 'hagent');
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
      );
      const list = await request(2, 'tools/list');
      assert.ok(list.result.tools.some((x: { name: string }) => x.name === 'edit'));
      const edit = await request(3, 'tools/call', {
        name: 'edit',
        arguments: { path: 'a.txt', old_string: 'one', new_string: 'uno' },
      });
      assert.is(edit.result.isError, undefined, JSON.stringify(edit));
      assert.is(edit.result.structuredContent.commit, git(repo, 'rev-parse', 'hagent/s1'));
      assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'uno\ntwo\nthree\n');
      const refused = await request(4, 'tools/call', {
        name: 'edit',
        arguments: { path: 'a.txt', old_string: 'one', new_string: 'x' },
      });
      assert.is(refused.result.isError, true);
      assert.is(refused.result.structuredContent.error.code, 'CONTEXT_NOT_FOUND');
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  },
);

t(
  'hagent mcp --new starts a session and serves it; without a session it refuses before serving',
  async () => {
    const repo = makeRepo(FILES);
    const none = hagent(repo, ['mcp']);
    assert.is(none.status, 1);
    assert.match(none.stderr, /NOT_IN_SESSION/);
    const both = hagent(repo, ['mcp', '--new', '--session', 'x']);
    assert.is(both.status, 2);
    await withServer(repo, ['--new', '--name', 'fresh'], async (c) => {
      const st = await c.call('status');
      assert.is(st.data.id, 'fresh');
      assert.is((await c.call('write', { path: 'n.txt', content: 'n\n' })).isError, false);
      assert.is(git(repo, 'rev-list', '--count', 'main..hagent/fresh'), '1');
      assert.match(c.stderr(), /serving session fresh/);
    });
  },
);

t.run();
