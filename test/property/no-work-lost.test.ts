/**
 * No work lost (issue 26): random interleavings of hagent's writes — apply, sync, land,
 * land --undo, session update, session end, a worktree recreated — with the user's own git and
 * files between them — commits on the target, uncommitted edits in the checkout, outside edits in
 * a session worktree, worktrees removed (`git worktree remove --force`, `rm -rf` + prune) —
 * on one real repository, through the library in one process. After every step:
 * - every blob the test wrote (the agent's patches, the user's commits, outside edits that
 *   hagent adopted) is readable from some ref (`git rev-list --objects --all`, no reflog);
 * - the user's uncommitted file in the checkout is byte-equal to what the user wrote;
 * - the checkout holds nothing staged and no file hagent did not land (no byte outside the
 *   session), and a folder beside the repository is untouched.
 * A refusal is fine when it is one of the expected codes, and touches nothing.
 *
 * Among the user's steps: the session branch deleted (HAGENT_PROP_BRANCH_DELETION), a nested git
 * repository made in a worktree (HAGENT_PROP_NESTED), a path a land deleted reused by the user as
 * a folder, then land --undo (HAGENT_PROP_REUSED); each generated unless its variable is 0.
 * HAGENT_PROP_RUNS sets the number of runs.
 */
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import {
  applyPatch,
  endSession,
  landSession,
  openRepo,
  readSession,
  startSession,
} from '../../src/index.js';
import { undoLand } from '../../src/land/index.js';
import { updateSession } from '../../src/update/index.js';
import { syncSession } from '../../src/sync/index.js';
import { restoreWorktree } from '../../src/session/index.js';
import { runDoctor } from '../../src/doctor/index.js';
import { git, makeRepo, TEST_CACHE, tempDir } from '../helpers/index.js';
import { runs } from './support.js';

const test = suite('property: no work lost');
process.env.XDG_CACHE_HOME = TEST_CACHE;

const on = (name: string) => (process.env[name] === '0' ? 0 : 3);

type Op =
  | { kind: 'apply'; s: number }
  | { kind: 'outside'; s: number }
  | { kind: 'sync'; s: number }
  | { kind: 'land'; s: number }
  | { kind: 'landUndo'; s: number }
  | { kind: 'update'; s: number }
  | { kind: 'end'; s: number }
  | { kind: 'removeWorktree'; s: number; prune: boolean }
  | { kind: 'restore'; s: number }
  | { kind: 'userCommit' }
  | { kind: 'userEdit' }
  | { kind: 'deleteBranch'; s: number }
  | { kind: 'nested'; s: number }
  | { kind: 'reuse' };

const S = fc.integer({ min: 0, max: 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: S.map((s) => ({ kind: 'apply' as const, s })) },
  { weight: 2, arbitrary: S.map((s) => ({ kind: 'outside' as const, s })) },
  { weight: 2, arbitrary: S.map((s) => ({ kind: 'sync' as const, s })) },
  { weight: 3, arbitrary: S.map((s) => ({ kind: 'land' as const, s })) },
  { weight: 2, arbitrary: S.map((s) => ({ kind: 'landUndo' as const, s })) },
  { weight: 1, arbitrary: S.map((s) => ({ kind: 'update' as const, s })) },
  { weight: 1, arbitrary: S.map((s) => ({ kind: 'end' as const, s })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('removeWorktree' as const),
      s: S,
      prune: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: S.map((s) => ({ kind: 'restore' as const, s })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'userCommit' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'userEdit' as const }) },
  {
    weight: on('HAGENT_PROP_BRANCH_DELETION'),
    arbitrary: S.map((s) => ({ kind: 'deleteBranch' as const, s })),
  },
  { weight: on('HAGENT_PROP_NESTED'), arbitrary: S.map((s) => ({ kind: 'nested' as const, s })) },
  { weight: on('HAGENT_PROP_REUSED'), arbitrary: fc.constant({ kind: 'reuse' as const }) },
);

/** Refusals a step may meet in these states; each must have touched nothing. */
const EXPECTED = new Set([
  'NOTHING_TO_LAND',
  'NOTHING_TO_UNDO',
  'NO_LAND',
  'TARGET_MOVED',
  'LAND_CONFLICT',
  'WORKTREE_BROKEN',
  'SESSION_NOT_FOUND',
  'UPDATE_CONFLICT',
  'MERGE_CONFLICT',
  'DIRTY_TARGET',
  'NOTHING_TO_SYNC',
  'UNLANDED_WORK',
  'SESSION_DRIFTED',
  'LAND_UNDO_MOVED',
  'STALE_FILE',
]);

const blobOf = (repo: string, text: string) =>
  execFileSync('git', ['hash-object', '--stdin'], { cwd: repo, input: text }).toString().trim();

/** Runs one interleaving; throws (through assert) at the first step that loses or strays. */
async function runProgram(ops: readonly Op[]): Promise<void> {
  const repo = makeRepo({ 'u.txt': 'user 0\n', 'd.txt': 'delete me\n' });
  const beside = tempDir('hagent-prop-beside-');
  writeFileSync(path.join(beside, 'keep.txt'), 'not hagent’s\n');
  const written = new Map<string, string>(); // blob id → what wrote it
  const sessions: ({ name: string; worktree: string; pending: string[] } | null)[] = [null, null];
  let userText = 'user 0\n';
  let n = 0;
  let generation = 0;
  const reused: string[] = [];
  let deleter: string | null = null;
  const ctx = await openRepo(repo);
  const session = async (s: number) => {
    if (!sessions[s]) {
      const name = `p${s}-${generation++}`;
      const r = await startSession(ctx, { name, env: process.env });
      sessions[s] = { name, worktree: r.worktree, pending: [] };
    }
    return sessions[s]!;
  };
  const refused = (e: unknown, step: string) => {
    if (!isHagentError(e) || !EXPECTED.has(e.code)) throw e;
    return `${step}: ${e.code}`;
  };
  const record = (text: string, what: string) => written.set(blobOf(repo, text), what);
  for (const op of ops) {
    const tag = `${op.kind}${'s' in op ? ` s${op.s}` : ''}`;
    try {
      switch (op.kind) {
        case 'apply': {
          const s = await session(op.s);
          const text = `agent ${s.name} line ${++n}\n`;
          await applyPatch(ctx, await readSession(ctx.commonDir, s.name), {
            patchText: `*** Begin Patch\n*** Add File: a${n}.txt\n+${text.trimEnd()}\n*** End Patch\n`,
            yes: true,
            noWatch: true,
          });
          record(text, tag);
          break;
        }
        case 'outside': {
          const s = await session(op.s);
          if (!existsSync(s.worktree)) break;
          const text = `outside ${++n}\n`;
          writeFileSync(path.join(s.worktree, `o${n}.txt`), text);
          s.pending.push(text);
          break;
        }
        case 'sync': {
          const s = sessions[op.s];
          if (!s) break;
          await syncSession(ctx, await readSession(ctx.commonDir, s.name), process.env);
          for (const p of s.pending.splice(0)) record(p, `${tag} (adopted)`);
          break;
        }
        case 'land': {
          const s = sessions[op.s];
          if (!s) break;
          await landSession(ctx, await readSession(ctx.commonDir, s.name), { yes: true });
          break;
        }
        case 'landUndo': {
          const s = sessions[op.s];
          if (!s) break;
          await undoLand(ctx, await readSession(ctx.commonDir, s.name), process.env);
          break;
        }
        case 'update': {
          const s = sessions[op.s];
          if (!s) break;
          await updateSession(ctx, await readSession(ctx.commonDir, s.name), { env: process.env });
          break;
        }
        case 'end': {
          const s = sessions[op.s];
          if (!s) break;
          await endSession(ctx, s.name, { force: true, confirm: async () => true });
          // A forced end keeps the uncommitted files as `ended`: they count as kept.
          for (const p of s.pending.splice(0)) record(p, `${tag} (kept)`);
          sessions[op.s] = null;
          break;
        }
        case 'removeWorktree': {
          const s = sessions[op.s];
          if (!s || !existsSync(s.worktree)) break;
          // The user throws away what is uncommitted there: theirs to lose, not hagent's.
          s.pending = [];
          if (op.prune) {
            rmSync(s.worktree, { recursive: true, force: true });
            git(repo, 'worktree', 'prune');
          } else git(repo, 'worktree', 'remove', '--force', s.worktree);
          break;
        }
        case 'restore': {
          const s = sessions[op.s];
          if (!s || existsSync(s.worktree)) break;
          await restoreWorktree(ctx, await readSession(ctx.commonDir, s.name));
          break;
        }
        case 'userCommit': {
          const text = `user commit ${++n}\n`;
          writeFileSync(path.join(repo, `c${n}.txt`), text);
          git(repo, 'add', `c${n}.txt`);
          git(repo, 'commit', '-q', '-m', `user ${n}`);
          record(text, tag);
          break;
        }
        case 'userEdit': {
          userText += `user edit ${++n}\n`;
          writeFileSync(path.join(repo, 'u.txt'), userText);
          break;
        }
        case 'deleteBranch': {
          const s = sessions[op.s];
          if (!s) break;
          git(repo, 'update-ref', '-d', `refs/heads/hagent/${s.name}`);
          // What every refusal then says to do (class 4): doctor puts the branch back.
          await runDoctor(ctx, s.name, {});
          break;
        }
        case 'nested': {
          const s = await session(op.s);
          if (!existsSync(s.worktree)) break;
          const sub = path.join(s.worktree, `pkg${++n}`);
          mkdirSync(sub);
          git(sub, 'init', '-q');
          const text = `nested ${n}\n`;
          writeFileSync(path.join(sub, 'index.js'), text);
          s.pending.push(text);
          break;
        }
        case 'reuse': {
          // A session deletes d.txt, lands, the user makes a folder d.txt with files of
          // theirs, and the land is taken back (each step one op).
          const s = await session(0);
          const d = path.join(repo, 'd.txt');
          const isFolder = existsSync(d) && statSync(d).isDirectory();
          if (deleter !== s.name) {
            deleter = s.name;
            if (!isFolder)
              await applyPatch(ctx, await readSession(ctx.commonDir, s.name), {
                patchText: '*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n',
                yes: true,
                noWatch: true,
              });
          } else if (existsSync(d) && !isFolder) {
            await landSession(ctx, await readSession(ctx.commonDir, s.name), { yes: true });
          } else if (!existsSync(d)) {
            mkdirSync(d);
            const rel = `d.txt/mine${++n}.txt`;
            writeFileSync(path.join(repo, rel), `the user's ${n}\n`);
            reused.push(rel);
          } else await undoLand(ctx, await readSession(ctx.commonDir, s.name), process.env);
          break;
        }
      }
    } catch (e) {
      refused(e, tag);
    }
    // Every blob written is readable from a ref.
    const objects = new Set(
      git(repo, 'rev-list', '--objects', '--all')
        .split('\n')
        .map((l) => l.split(' ')[0]),
    );
    for (const [oid, what] of written)
      assert.ok(
        objects.has(oid),
        `after ${tag}: the blob of ${what} is not reachable from any ref`,
      );
    // The user's uncommitted edit, byte-equal; nothing else changed in the checkout.
    assert.is(readFileSync(path.join(repo, 'u.txt'), 'utf8'), userText, `after ${tag}: u.txt`);
    for (const rel of reused)
      assert.ok(existsSync(path.join(repo, rel)), `after ${tag}: the user's ${rel} is gone`);
    const status = git(repo, 'status', '--porcelain', '--untracked-files=all')
      .split('\n')
      .filter(Boolean)
      .filter((l) => l !== ' M u.txt' && !reused.some((r) => l === `?? ${r}`));
    assert.equal(status, [], `after ${tag}: the checkout holds only the user's changes`);
    assert.equal(readdirSync(beside), ['keep.txt'], `after ${tag}: a folder beside it`);
  }
}

test('land, land --undo, update, end and worktree restore among the user’s own git: nothing lost', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 12 }), (ops) =>
      runProgram(ops).catch((e: unknown) => {
        console.error(String((e as Error).message ?? e));
        throw e;
      }),
    ),
    runs(Number(process.env.HAGENT_PROP_RUNS ?? 15)),
  );
});

test.run();
