/**
 * Concurrent lands on one target (issue 26, class 8): ten `hagent land` processes of different
 * sessions started at once, several rounds, through the real CLI on a real repository. Each land
 * lands or is refused with nothing touched: the user's checkout holds exactly the landed
 * sessions' changes, its index equals the target's tree, and no intent record stays behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, GIT_ENV, git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('land-concurrent');

/** Runs `hagent land --yes --json` for each session at once; resolves with each exit and JSON. */
function landAll(
  repo: string,
  ids: string[],
): Promise<{ id: string; status: number; json: any }[]> {
  return Promise.all(
    ids.map(
      (id) =>
        new Promise<{ id: string; status: number; json: any }>((resolve) => {
          const p = spawn(
            process.execPath,
            [BIN, 'land', '--yes', '--json', '--session', id],
            // A generous lock wait: ten lands in a row on a busy machine.
            { cwd: repo, env: { ...process.env, ...GIT_ENV, HAGENT_LOCK_TIMEOUT_MS: '120000' } },
          );
          let out = '';
          p.stdout.on('data', (d: Buffer) => (out += d.toString()));
          p.on('close', (status) => {
            let json: any = null;
            try {
              json = JSON.parse(out);
            } catch {
              json = { raw: out };
            }
            resolve({ id, status: status ?? -1, json });
          });
        }),
    ),
  );
}

t('ten lands at once on one checked-out target: each lands or touches nothing', async () => {
  const files: Record<string, string> = { 'README.md': '# demo\n' };
  const repo = makeRepo(files);
  const expected = new Map<string, string>(Object.entries(files));
  for (let round = 0; round < 3; round++) {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = `r${round}s${i}`;
      const s = startSession(repo, ['--name', id]);
      const rel = `f${round}-${i}.txt`;
      const r = hagent(s.worktree, ['apply', '-'], {
        input: `*** Begin Patch\n*** Add File: ${rel}\n+from ${id}\n*** End Patch\n`,
      });
      assert.is(r.status, 0, r.stdout + r.stderr);
      ids.push(id);
    }
    const results = await landAll(repo, ids);
    for (const r of results) {
      const rel = `f${round}-${r.id.slice(r.id.indexOf('s') + 1)}.txt`;
      if (r.status === 0) expected.set(rel, `from ${r.id}\n`);
      else assert.is(r.status, 1, JSON.stringify(r.json));
    }
    // Nothing staged, nothing modified: the index and the files are the target's tree.
    assert.is(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', `round ${round}`);
    const tracked = git(repo, 'ls-files').split('\n').filter(Boolean).sort();
    assert.equal(tracked, [...expected.keys()].sort(), `round ${round}: exactly the landed files`);
    for (const [rel, text] of expected)
      assert.is(readFileSync(path.join(repo, rel), 'utf8'), text, rel);
    const tx = path.join(repo, '.git', 'hagent', 'tx');
    assert.equal(existsSync(tx) ? readdirSync(tx) : [], [], 'no intent record left behind');
    const landed = results.filter((r) => r.status === 0).length;
    assert.ok(landed >= 1, `round ${round}: at least one land`);
  }
});

t.run();
