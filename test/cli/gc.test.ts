/**
 * What sessions leave behind (issue 26, class 11), through the real CLI on real repositories:
 * worktree folders of repositories that were deleted (found by doctor and, once a day, by
 * session start; sizes reported; dropped by `hagent gc` on the human's word, never those of a
 * repository that may only be unmounted unless named), and the refs and agent folders of ended
 * sessions (dropped when nothing can use them; `ended` and other kept work only when named or
 * older than `--older-than`).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, tempDir } from '../helpers/index.js';

const t = suite('gc');

const addFile = (rel: string, text: string) =>
  `*** Begin Patch\n*** Add File: ${rel}\n+${text}\n*** End Patch\n`;

/** A session started in `repo` with a cache folder of its own (`cache`); its JSON. */
function start(repo: string, cache: string, name: string) {
  const r = hagent(repo, ['session', 'start', '--json', '--name', name], {
    env: { XDG_CACHE_HOME: cache },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { ...r.json, stderr: r.stderr };
}

/** `hagent …` with the cache folder `cache`. */
const run = (cwd: string, cache: string, args: string[]) =>
  hagent(cwd, args, { env: { XDG_CACHE_HOME: cache } });

t(
  'worktree folders of a deleted repository: found with sizes, dropped only on the human word',
  () => {
    const cache = tempDir('hagent-gc-cache-');
    const gone = makeRepo({ 'big.txt': 'x'.repeat(50_000) });
    const s = start(gone, cache, 'g1');
    const goneFolder = path.dirname(s.worktree);
    rmSync(gone, { recursive: true, force: true });
    // Session start looks once a day: as on the next day.
    const stamp = path.join(cache, 'hagent', 'worktrees', '.orphans-checked');
    const yesterday = new Date(Date.now() - 2 * 86400_000);
    utimesSync(stamp, yesterday, yesterday);
    const repo = makeRepo();
    const live = start(repo, cache, 'l1');
    assert.match(
      live.stderr,
      /note: 1 session worktree in 1 folder .* belongs to repositories that are not there/,
    );
    assert.match(live.stderr, /hagent gc/);
    const doctor = run(repo, cache, ['doctor', '--json']);
    const found = doctor.json.leftovers.find((i: any) => i.name === goneFolder);
    assert.ok(found, doctor.stdout);
    assert.is(found.action, 'drop');
    assert.ok(found.bytes >= 50_000, `size reported: ${found.bytes}`);
    // Without a terminal and without --yes: refused, nothing dropped; --dry-run drops nothing.
    const refused = run(repo, cache, ['gc', '--json']);
    assert.is(refused.status, 1);
    assert.is(refused.json.error.code, 'CONFIRMATION_REQUIRED');
    assert.is(run(repo, cache, ['gc', '--dry-run', '--json']).status, 0);
    assert.ok(existsSync(goneFolder));
    const gc = run(repo, cache, ['gc', '--yes', '--json']);
    assert.is(gc.status, 0, gc.stdout + gc.stderr);
    assert.ok(gc.json.dropped.includes(goneFolder));
    assert.ok(gc.json.bytesFreed >= 50_000);
    assert.not.ok(existsSync(goneFolder));
    assert.ok(existsSync(live.worktree), "the live repository's worktree stays");
  },
);

t('a repository that may only be unmounted: its worktrees stay unless the folder is named', () => {
  const cache = tempDir('hagent-gc-cache-');
  const mount = tempDir('hagent-gc-mnt-');
  const disk = path.join(mount, 'disk');
  mkdirSync(disk);
  git(disk, 'init', '-q', '--initial-branch=main', 'repo');
  const repoOnDisk = path.join(disk, 'repo');
  writeFileSync(path.join(repoOnDisk, 'a.txt'), 'a\n');
  git(repoOnDisk, 'add', '-A');
  git(repoOnDisk, 'commit', '-q', '-m', 'i');
  const s = start(repoOnDisk, cache, 'u1');
  const folder = path.dirname(s.worktree);
  rmSync(disk, { recursive: true, force: true }); // the mount point stays, empty
  const repo = makeRepo();
  const kept = run(repo, cache, ['gc', '--yes', '--json']);
  assert.is(kept.status, 0, kept.stdout + kept.stderr);
  const item = kept.json.items.find((i: any) => i.name === folder);
  assert.is(item.action, 'keep');
  assert.match(item.reason, /not mounted/);
  assert.ok(existsSync(s.worktree));
  const named = run(repo, cache, ['gc', path.basename(folder), '--yes', '--json']);
  assert.ok(named.json.dropped.includes(folder), named.stdout);
  assert.not.ok(existsSync(folder));
});

t(
  'refs and agent folders of ended sessions: dropped when nothing needs them; ended work kept',
  () => {
    const cache = tempDir('hagent-gc-cache-');
    const repo = makeRepo();
    const a = start(repo, cache, 'a');
    hagent(a.worktree, ['apply', '-'], {
      input: addFile('a.txt', 'a'),
      env: { XDG_CACHE_HOME: cache },
    });
    assert.is(run(repo, cache, ['land', '--yes', '--session', 'a']).status, 0);
    mkdirSync(path.join(repo, '.git', 'hagent', 'agents', 'a'), { recursive: true });
    writeFileSync(path.join(repo, '.git', 'hagent', 'agents', 'a', 'state.json'), '{}');
    assert.is(run(repo, cache, ['session', 'end', 'a']).status, 0);
    const b = start(repo, cache, 'b');
    hagent(b.worktree, ['apply', '-'], {
      input: addFile('b.txt', 'b'),
      env: { XDG_CACHE_HOME: cache },
    });
    assert.is(run(repo, cache, ['session', 'end', 'b', '--force', '--yes']).status, 0);
    const c = start(repo, cache, 'c');
    hagent(c.worktree, ['apply', '-'], {
      input: addFile('c.txt', 'c'),
      env: { XDG_CACHE_HOME: cache },
    });
    assert.is(run(repo, cache, ['land', '--yes', '--session', 'c']).status, 0);
    const refs = () => git(repo, 'for-each-ref', '--format=%(refname)').split('\n');
    const before = refs();
    assert.ok(before.includes('refs/hagent/a/landed/1'));
    assert.ok(before.includes('refs/notes/hagent-sessions/a'));
    assert.ok(before.includes('refs/hagent/b/ended'));
    const doctor = run(repo, cache, ['doctor', '--json']);
    assert.ok(doctor.json.leftovers.some((i: any) => i.name === 'refs/hagent/a/landed/1'));
    const human = run(repo, cache, ['doctor']).stdout;
    assert.match(human, /Left behind: 3 items hagent gc drops .*, 2 it keeps/, human);
    const gc = run(repo, cache, ['gc', '--yes', '--json']);
    assert.is(gc.status, 0, gc.stdout + gc.stderr);
    const after = refs();
    assert.not.ok(after.includes('refs/hagent/a/landed/1'));
    assert.not.ok(after.includes('refs/notes/hagent-sessions/a'));
    assert.not.ok(existsSync(path.join(repo, '.git', 'hagent', 'agents', 'a')));
    assert.ok(after.includes('refs/hagent/b/ended'), 'the work b ended with stays');
    for (const r of before.filter((x) => /\/c\/|hagent-sessions\/c$/.test(x)))
      assert.ok(after.includes(r), `the live session's ${r} stays`);
    // Older than 100000 days: nothing; named: gone.
    run(repo, cache, ['gc', '--older-than', '100000', '--yes']);
    assert.ok(refs().includes('refs/hagent/b/ended'));
    const named = run(repo, cache, ['gc', 'b', '--yes', '--json']);
    assert.ok(named.json.dropped.includes('refs/hagent/b/ended'), named.stdout);
    assert.equal(readdirSync(path.join(repo, '.git', 'hagent', 'agents')), []);
  },
);

t.run();
