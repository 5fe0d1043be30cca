/**
 * `hagent mcp` keeps one `git update-ref --stdin` for the ref moves of its applies: one git
 * serves call after call, a git killed between calls is replaced by the next call (which works
 * and leaves no ref lock), a refused transaction ends git and the next call starts another, and
 * closing the server ends it.
 */
import { readdirSync, readFileSync, writeFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp, type McpConnection } from '../helpers/mcp.js';

const t = suite('hagent mcp: the kept ref transaction process');

/** The pids of the `git update-ref` processes whose parent is `pid` (Linux /proc). */
function refProcessesOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (ppid === pid && argv.includes('update-ref')) out.push(Number(name));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** Every `*.lock` file under the repository's refs folder (left by a git killed mid-move). */
function refLocks(repo: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.lock')) found.push(p);
    }
  };
  walk(path.join(repo, '.git', 'refs'));
  return found;
}

const numbered = Array.from({ length: 6 }, (_, i) => `line ${i}`).join('\n') + '\n';

async function edit(c: McpConnection, i: number, from = `line ${i}`) {
  return c.call('edit', { path: 'a.txt', old_string: from, new_string: `LINE ${i}` });
}

/** A session `s1` on a repository of `a.txt`, its server, and the git of its first apply. */
async function servedAfterOneApply() {
  const repo = makeRepo({ 'a.txt': numbered });
  const s = startSession(repo, ['--name', 's1']);
  const c = await connectMcp(repo, ['--session', 's1']);
  const r = await edit(c, 0);
  assert.is(r.isError, false, r.text);
  const [first] = refProcessesOf(c.pid);
  assert.ok(first, 'a kept update-ref runs after the first apply');
  return { repo, s, c, first: first };
}

const waitFor = async (what: () => boolean, ms = 5000) => {
  const until = Date.now() + ms;
  while (!what() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return what();
};

t('one git update-ref serves call after call, each move with its reflog line', async () => {
  const repo = makeRepo({ 'a.txt': numbered });
  startSession(repo, ['--name', 's1']);
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    const pids = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const r = await edit(c, i);
      assert.is(r.isError, false, r.text);
      assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.data.commit);
      for (const p of refProcessesOf(c.pid)) pids.add(p);
    }
    assert.is(pids.size, 1, `one kept process, saw ${[...pids].join(', ')}`);
    const lines = git(repo, 'reflog', '--format=%gs', 'hagent/s1').split('\n');
    assert.is(lines.filter((l) => l === 'hagent apply (hagent mcp)').length, 3);
    assert.equal(refLocks(repo), []);
  } finally {
    await c.close();
  }
});

t('the git killed between calls: the next call starts another and leaves no ref lock', async () => {
  const { repo, s, c, first } = await servedAfterOneApply();
  try {
    process.kill(first, 'SIGKILL');
    assert.ok(await waitFor(() => !refProcessesOf(c.pid).includes(first)), 'it ended');
    const r = await edit(c, 1);
    assert.is(r.isError, false, r.text);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.data.commit);
    const [second] = refProcessesOf(c.pid);
    assert.ok(second && second !== first, 'a new git serves the next call');
    assert.equal(refLocks(repo), []);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.is((await edit(c, 2)).isError, false, 'and the one after');
  } finally {
    await c.close();
  }
});

t('a refused move ends git; nothing moved, the next call works with a new one', async () => {
  const { repo, s, c, first } = await servedAfterOneApply();
  try {
    const head = git(repo, 'rev-parse', 'hagent/s1');
    // Another git holding the branch's ref lock: git's transaction is refused at `prepare`.
    const lock = path.join(repo, '.git', 'refs', 'heads', 'hagent', 's1.lock');
    writeFileSync(lock, '');
    const refused = await edit(c, 1);
    unlinkSync(lock);
    assert.is(refused.isError, true);
    assert.match(refused.text, /TARGET_MOVED/);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), head, 'nothing moved');
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      git(repo, 'show', `${head}:a.txt`) + '\n',
    );
    assert.ok(await waitFor(() => !refProcessesOf(c.pid).includes(first)), 'the git ended');
    const r = await edit(c, 1);
    assert.is(r.isError, false, r.text);
    assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.data.commit);
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.equal(refLocks(repo), []);
  } finally {
    await c.close();
  }
});

t('closing the server ends its git', async () => {
  const { c, first: kept } = await servedAfterOneApply();
  await c.close();
  const alive = () => {
    try {
      process.kill(kept, 0);
      return !readFileSync(`/proc/${kept}/stat`, 'utf8').includes(') Z ');
    } catch {
      return false;
    }
  };
  assert.ok(await waitFor(() => !alive()), 'the kept git exited with the server');
});

t.run();
