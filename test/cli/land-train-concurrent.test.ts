/**
 * Concurrent lands and trains on one target (issue 24 §1): ten `hagent land` processes started at
 * once, each a single land or a train of 2–3 sessions, 20 rounds, on one checked-out target with
 * the user's dirty files. Two of the sessions change the same line, so every round one land is
 * refused (LAND_CONFLICT) or a train stops at it. Each land lands or is refused with nothing
 * touched: after the round, the target's new history is exactly the lands the processes report,
 * nothing is staged, the checkout equals the target but for the user's own changes (whose bytes
 * never change), the refused sessions' refs are as before and no intent record is left in
 * `<common dir>/hagent/tx`. The round's lands are then taken back (in-process, one undo of the
 * chain) so the next round lands the same sessions again, grouped otherwise.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyPatch, openRepo, readSession, reviewSession, startSession } from '../../src/index.js';
import { undoTrain } from '../../src/land/undo.js';
import { BIN, GIT_ENV, git, makeRepo, TEST_CACHE } from '../helpers/index.js';
import { recordCodes } from '../helpers/codes.js';
import { prng } from '../helpers/random.js';

const t = suite('land-train-concurrent');
process.env.XDG_CACHE_HOME = TEST_CACHE;

const ROUNDS = 20;
/** Sizes of the ten processes' lands: five single lands, three trains of 2, two of 3. */
const GROUPS = [1, 1, 1, 1, 1, 2, 2, 2, 3, 3];
const CLEAN = GROUPS.reduce((a, b) => a + b, 0) - 2;

interface Run {
  ids: string[];
  status: number;
  json: any;
  out: string;
}

function land(repo: string, ids: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, 'land', ...ids, '--json'], {
      cwd: repo,
      env: { ...process.env, ...GIT_ENV, HAGENT_LOCK_TIMEOUT_MS: '300000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => {
      recordCodes(out, err);
      let json: any = null;
      try {
        json = JSON.parse(out);
      } catch {
        json = null;
      }
      resolve({ ids, status: status ?? -1, json, out: out + err });
    });
  });
}

/** Each session's refs (`refs/hagent/<id>/…`), one line each. */
function hagentRefs(repo: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of git(repo, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/hagent/')
    .split('\n')
    .filter(Boolean)) {
    const id = line.split(' ')[1]!.split('/')[2]!;
    out.set(id, [...(out.get(id) ?? []), line]);
  }
  return out;
}

t(
  'ten lands and trains at once, 20 rounds: each lands or is refused with nothing touched',
  async () => {
    const t0 = Date.now();
    const files: Record<string, string> = {
      'shared.txt': 'one\ntwo\nthree\n',
      'user/dirty.txt': 'committed\n',
    };
    const repo = makeRepo(files);
    const ctx = await openRepo(repo);
    const ids: string[] = [];
    const make = async (id: string, patch: string) => {
      await startSession(ctx, { name: id, env: process.env });
      await applyPatch(ctx, await readSession(ctx.commonDir, id), {
        patchText: patch,
        yes: true,
        noWatch: true,
      });
      await reviewSession(ctx, await readSession(ctx.commonDir, id), { approve: true });
      ids.push(id);
    };
    for (let i = 0; i < CLEAN; i++)
      await make(`c${i}`, `*** Begin Patch\n*** Add File: c/${i}.txt\n+c${i}\n*** End Patch\n`);
    for (const x of ['x1', 'x2'])
      await make(x, `*** Begin Patch\n*** Update File: shared.txt\n-two\n+${x}\n*** End Patch\n`);
    // The user's own changes, present all along: a changed tracked file and an untracked one.
    writeFileSync(path.join(repo, 'user/dirty.txt'), 'the user is editing this\n');
    writeFileSync(path.join(repo, 'notes.txt'), 'untracked notes\n');
    const status0 = git(repo, 'status', '--porcelain', '--untracked-files=all');
    assert.is(status0, ' M user/dirty.txt\n?? notes.txt');
    const target0 = git(repo, 'rev-parse', 'main');
    const r = prng(0x24c);
    let refused = 0;
    let landedTotal = 0;
    const tx = path.join(repo, '.git', 'hagent', 'tx');

    for (let round = 0; round < ROUNDS; round++) {
      const order = [...ids].sort(() => r() - 0.5);
      const groups: string[][] = [];
      let at = 0;
      for (const size of GROUPS) {
        groups.push(order.slice(at, at + size));
        at += size;
      }
      const refs0 = hagentRefs(repo);
      const runs = await Promise.all(groups.map((g) => land(repo, g)));
      const context = `round ${round}: ${JSON.stringify(groups)}`;

      // What each process says it landed, and what it refused.
      const landed: { session: string; commit: string; previous: string }[] = [];
      const notLanded: string[] = [];
      for (const run of runs) {
        assert.ok(run.json, `${context}: ${run.ids.join(' ')} printed no JSON: ${run.out}`);
        if (run.ids.length === 1) {
          if (run.status === 0) landed.push(run.json);
          else {
            assert.is(run.status, 1, run.out);
            assert.is(run.json.error.code, 'LAND_CONFLICT', `${context}: ${run.out}`);
            notLanded.push(run.ids[0]!);
          }
          continue;
        }
        assert.is(run.status, run.json.ok ? 0 : 1, run.out);
        landed.push(...run.json.landed);
        if (run.json.stopped) {
          assert.is(run.json.stopped.code, 'LAND_CONFLICT', `${context}: ${run.out}`);
          notLanded.push(run.json.stopped.session, ...run.json.notTried);
        }
        // A train's lands are one after the other: no other land comes between two of its steps.
        for (let i = 1; i < run.json.landed.length; i++)
          assert.is(run.json.landed[i].previous, run.json.landed[i - 1].commit, context);
      }
      assert.is(landed.length + notLanded.length, ids.length, context);
      // Exactly one of the two sessions changing the same line lands.
      assert.is(
        ['x1', 'x2'].filter((x) => landed.some((l) => l.session === x)).length,
        1,
        `${context}: x1/x2`,
      );
      refused += notLanded.length;
      landedTotal += landed.length;

      // The target's history is the reported lands, one chain from target0.
      const history = git(repo, 'rev-list', '--first-parent', '--reverse', `${target0}..main`)
        .split('\n')
        .filter(Boolean);
      const byCommit = new Map(landed.map((l) => [l.commit, l]));
      assert.is(history.length, landed.length, `${context}: ${history.length} commits on main`);
      const chain = history.map((c, i) => {
        const l = byCommit.get(c);
        assert.ok(l, `${context}: ${c} on main is no reported land`);
        assert.is(l!.previous, i === 0 ? target0 : history[i - 1], context);
        return l!;
      });

      // Nothing touched beyond the lands: nothing staged, the files are the target's but for the
      // user's own changes, no intent record.
      assert.is(git(repo, 'diff', '--cached', '--name-only'), '', `${context}: staged leftovers`);
      assert.is(
        git(repo, 'status', '--porcelain', '--untracked-files=all'),
        status0,
        `${context}: status`,
      );
      assert.is(
        readFileSync(path.join(repo, 'user/dirty.txt'), 'utf8'),
        'the user is editing this\n',
      );
      assert.is(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'untracked notes\n');
      for (const l of landed)
        if (l.session.startsWith('c'))
          assert.is(
            readFileSync(path.join(repo, `c/${l.session.slice(1)}.txt`), 'utf8'),
            `${l.session}\n`,
          );
      for (const id of notLanded) {
        if (id.startsWith('c')) assert.not.ok(existsSync(path.join(repo, `c/${id.slice(1)}.txt`)));
      }
      const refs1 = hagentRefs(repo);
      for (const id of notLanded)
        assert.equal(refs1.get(id), refs0.get(id), `${context}: refs of ${id}`);
      assert.equal(existsSync(tx) ? readdirSync(tx) : [], [], `${context}: intent records left`);

      // Back to the start for the next round: the round's lands taken back as one chain.
      await undoTrain(ctx, {
        target: 'refs/heads/main',
        lands: chain.map((l) => ({ session: l.session, previous: l.previous, commit: l.commit })),
      });
      assert.is(git(repo, 'rev-parse', 'main'), target0, `${context}: undone`);
      assert.is(git(repo, 'status', '--porcelain', '--untracked-files=all'), status0, context);
    }
    assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
    process.stdout.write(
      `\n  ${ROUNDS} rounds × 10 processes: ${landedTotal} lands, ${refused} refused or not tried: ${Date.now() - t0} ms\n`,
    );
  },
);

t.run();
