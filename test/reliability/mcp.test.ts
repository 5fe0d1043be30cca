/**
 * `hagent mcp` under concurrency and kill -9, through the SDK client over stdio: many calls at
 * once on one server, two servers and the CLI writing one session at the same time (no update
 * lost), and a server killed with SIGKILL in the middle of an apply (finished or undone by the
 * next call, never half-applied).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, git, GIT_ENV, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp under concurrency and kill -9');

const numbered = (name: string, n = 5) =>
  Array.from({ length: n }, (_, i) => `${name} line ${i}`).join('\n') + '\n';

function repoWith(files: string[]): { repo: string; s: ReturnType<typeof startSession> } {
  const repo = makeRepo(Object.fromEntries(files.map((f) => [f, numbered(f)])));
  return { repo, s: startSession(repo, ['--name', 's1']) };
}

/** Applies a patch with the CLI as another process, asynchronously. */
function cliApply(cwd: string, patch: string): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'apply', '-', '--json'], {
      cwd,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stdin.end(patch);
    child.on('close', (status) => resolve({ status, stdout }));
  });
}

t(
  'concurrent calls on one server: every edit lands as its own commit, reads answer meanwhile',
  async () => {
    const files = Array.from({ length: 8 }, (_, i) => `f${i}.txt`);
    const { repo, s } = repoWith(files);
    const c = await connectMcp(repo, ['--session', 's1']);
    try {
      const calls = [
        ...files.map((f) =>
          c.call('edit', { path: f, old_string: `${f} line 2`, new_string: `${f} LINE 2` }),
        ),
        ...files.map((f) => c.call('read', { path: f })),
        c.call('status'),
      ];
      const results = await Promise.all(calls);
      for (const r of results) assert.is(r.isError, false, r.text);
      for (const f of files)
        assert.ok(readFileSync(path.join(s.worktree, f), 'utf8').includes(`${f} LINE 2`), f);
      assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), String(files.length));
      assert.is(git(s.worktree, 'status', '--porcelain'), '');
    } finally {
      await c.close();
    }
  },
);

t('two servers and a CLI apply on one session at the same time: no update is lost', async () => {
  const files = ['a.txt', 'b.txt', 'c.txt'];
  const { repo, s } = repoWith(files);
  const one = await connectMcp(repo, ['--session', 's1']);
  const two = await connectMcp(s.worktree);
  try {
    const rounds = 4;
    const work: Promise<{ ok: boolean; what: string }>[] = [];
    for (let i = 0; i < rounds; i++) {
      work.push(
        one
          .call('edit', {
            path: 'a.txt',
            old_string: `a.txt line ${i}`,
            new_string: `a.txt LINE ${i} by one`,
          })
          .then((r) => ({ ok: !r.isError, what: r.text })),
      );
      work.push(
        two
          .call('apply_patch', {
            patch: `*** Begin Patch\n*** Update File: b.txt\n@@\n-b.txt line ${i}\n+b.txt LINE ${i} by two\n*** End Patch\n`,
          })
          .then((r) => ({ ok: !r.isError, what: r.text })),
      );
      work.push(
        cliApply(
          s.worktree,
          `*** Begin Patch\n*** Update File: c.txt\n@@\n-c.txt line ${i}\n+c.txt LINE ${i} by cli\n*** End Patch\n`,
        ).then((r) => ({ ok: r.status === 0, what: r.stdout })),
      );
    }
    const done = await Promise.all(work);
    for (const d of done) assert.ok(d.ok, d.what);
    assert.is(
      git(repo, 'rev-list', '--count', 'main..hagent/s1'),
      String(rounds * 3),
      'one commit per change',
    );
    const head = git(repo, 'rev-parse', 'hagent/s1');
    for (let i = 0; i < rounds; i++) {
      assert.ok(git(repo, 'show', `${head}:a.txt`).includes(`a.txt LINE ${i} by one`));
      assert.ok(git(repo, 'show', `${head}:b.txt`).includes(`b.txt LINE ${i} by two`));
      assert.ok(git(repo, 'show', `${head}:c.txt`).includes(`c.txt LINE ${i} by cli`));
    }
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'the worktree holds exactly the head');
    const log = await one.call('log');
    assert.is(
      log.data.entries.filter(
        (e: { ok: boolean; command: string }) => e.ok && e.command === 'apply',
      ).length,
      rounds * 3,
    );
  } finally {
    await one.close();
    await two.close();
  }
});

t(
  'a server killed with SIGKILL mid-apply: the next call finishes or undoes the transaction',
  async () => {
    // The kill must land while the intent record exists; a large write keeps that window open.
    let caught = false;
    for (let attempt = 0; attempt < 6 && !caught; attempt++) {
      const { repo, s } = repoWith(['a.txt', 'b.txt']);
      const intent = path.join(repo, '.git', 'hagent', 'tx', 's1.json');
      const c = await connectMcp(repo, ['--session', 's1']);
      const content =
        Array.from({ length: 300 }, (_, i) => `${i} ${'y'.repeat(8000)}`).join('\n') + '\n';
      const pending = c.call('write', { path: 'big.txt', content, yes: true }).catch(() => null);
      const deadline = Date.now() + 20_000;
      while (!existsSync(intent) && Date.now() < deadline)
        await new Promise((r) => setImmediate(r));
      process.kill(c.pid, 'SIGKILL');
      await pending;
      await c.close().catch(() => undefined);
      caught = existsSync(intent);
      if (!caught) continue;
      const next = await connectMcp(repo, ['--session', 's1']);
      try {
        const r = await next.call('edit', {
          path: 'a.txt',
          old_string: 'a.txt line 1',
          new_string: 'a.txt LINE 1',
        });
        assert.is(r.isError, false, r.text);
        assert.ok(
          ['completed', 'restored'].includes(r.data.recovery?.action),
          JSON.stringify(r.data.recovery),
        );
        assert.not.ok(existsSync(intent), 'the intent record is gone');
        const head = git(repo, 'rev-parse', 'hagent/s1');
        const inHead = git(repo, 'ls-tree', '--name-only', head).split('\n');
        const onDisk = existsSync(path.join(s.worktree, 'big.txt'));
        assert.is(
          inHead.includes('big.txt'),
          onDisk,
          'big.txt is in the head exactly when it is on disk',
        );
        if (onDisk)
          assert.is(
            readFileSync(path.join(s.worktree, 'big.txt'), 'utf8'),
            content,
            'never half-written',
          );
        assert.is(
          git(s.worktree, 'status', '--porcelain', '--ignored', '--untracked-files=all'),
          '',
          'the worktree equals the head, no temp file left',
        );
      } finally {
        await next.close();
      }
    }
    assert.ok(caught, 'the kill landed inside the transaction in one of the attempts');
  },
);

t.run();
