/**
 * Lands never lose a line already on the target: random interleavings of user commits, applies,
 * partial and full approvals and lands across 1–3 sessions on one real repository, checked after
 * every land against a model. Each actor (the user, each session) edits its own lines of three
 * files, with an unchanged line between any two actors' lines; the user may also edit a
 * session's lines. The model predicts each land as a three-way merge per line over the session's
 * land base (what it landed last): the side that changed a line wins, both changing it differently
 * is a conflict. After a land the target must equal the model exactly, in the ref and in the
 * checkout; a predicted conflict must be refused with nothing written. Run through the library in
 * one process (300 interleavings) and through the real CLI (30).
 */
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import {
  applyPatch,
  landSession,
  openRepo,
  readSession,
  reviewSession,
  startSession,
} from '../../src/index.js';
import { git, hagent, makeRepo, TEST_CACHE, look } from '../helpers/index.js';
import { runs } from './support.js';

const test = suite('property: land keeps the target');
// Session worktrees of the in-process calls go where the CLI's do in tests: not the user's cache.
process.env.XDG_CACHE_HOME = TEST_CACHE;

const FILES = ['a.txt', 'b.txt', 'c.txt'] as const;
const LINES = 16;
/** Line indexes owned by an actor (0 = the user, 1–3 = sessions): 2·actor mod 8, so odd lines never change. */
const slotsOf = (actor: number) =>
  Array.from({ length: LINES }, (_, i) => i).filter((i) => i % 8 === 2 * actor);

type Op =
  | { kind: 'user'; file: number; line: number }
  | { kind: 'apply'; s: number; file: number; slot: number }
  | { kind: 'land'; s: number; files: number[] | null };

const opArb = (sessions: number): fc.Arbitrary<Op> =>
  fc.oneof(
    fc.record({
      kind: fc.constant('user' as const),
      file: fc.integer({ min: 0, max: 2 }),
      line: fc.oneof(
        fc.constantFrom(0, 8),
        fc.integer({ min: 0, max: 7 }).map((i) => 2 * i),
      ),
    }),
    fc.record({
      kind: fc.constant('apply' as const),
      s: fc.integer({ min: 1, max: sessions }),
      file: fc.integer({ min: 0, max: 2 }),
      slot: fc.integer({ min: 0, max: 1 }),
    }),
    fc.record({
      kind: fc.constant('apply' as const),
      s: fc.integer({ min: 1, max: sessions }),
      file: fc.integer({ min: 0, max: 2 }),
      slot: fc.integer({ min: 0, max: 1 }),
    }),
    fc.record({
      kind: fc.constant('land' as const),
      s: fc.integer({ min: 1, max: sessions }),
      files: fc.option(fc.subarray([0, 1, 2], { minLength: 1 }), { nil: null }),
    }),
    fc.record({
      kind: fc.constant('land' as const),
      s: fc.integer({ min: 1, max: sessions }),
      files: fc.option(fc.subarray([0, 1, 2], { minLength: 1 }), { nil: null }),
    }),
  );
const programArb = fc
  .integer({ min: 1, max: 3 })
  .chain((n) => fc.array(opArb(n), { minLength: 4, maxLength: 10 }));

/** What a driver answers for approve and land: ok, or the refusal's code. */
type Outcome = 'ok' | string;

/** The four operations, through the library or the CLI. */
interface Driver {
  start(repo: string, name: string): Promise<string>;
  apply(repo: string, name: string, worktree: string, patch: string): Promise<void>;
  approve(repo: string, name: string, files: string[] | null): Promise<Outcome>;
  land(repo: string, name: string): Promise<Outcome>;
}

const codeOf = (e: unknown): string => {
  if (isHagentError(e)) return e.code;
  throw e;
};

const library: Driver = {
  async start(repo, name) {
    return (await startSession(await openRepo(repo), { name, env: process.env })).worktree;
  },
  async apply(repo, name, _worktree, patch) {
    const ctx = await openRepo(repo);
    await applyPatch(ctx, await readSession(ctx.commonDir, name), {
      patchText: patch,
      yes: true,
      noWatch: true,
    });
  },
  async approve(repo, name, files) {
    const ctx = await openRepo(repo);
    return reviewSession(ctx, await readSession(ctx.commonDir, name), {
      approve: files ?? true,
    }).then(() => 'ok', codeOf);
  },
  async land(repo, name) {
    const ctx = await openRepo(repo);
    return landSession(ctx, await readSession(ctx.commonDir, name)).then(() => 'ok', codeOf);
  },
};

const cli: Driver = {
  async start(repo, name) {
    const r = hagent(repo, ['session', 'start', '--name', name, '--json']);
    assert.is(r.status, 0, r.stdout + r.stderr);
    return r.json.worktree;
  },
  async apply(_repo, _name, worktree, patch) {
    const r = hagent(worktree, ['apply', '-', '--yes', '--json'], { input: patch });
    assert.is(r.status, 0, r.stdout + r.stderr);
  },
  async approve(repo, name, files) {
    look(repo, name);
    const r = hagent(repo, ['review', '--session', name, '--approve', ...(files ?? []), '--json']);
    return r.status === 0 ? 'ok' : r.json.error.code;
  },
  async land(repo, name) {
    const r = hagent(repo, ['land', '--session', name, '--json']);
    return r.status === 0 ? 'ok' : r.json.error.code;
  },
};

const initial = (file: string) => Array.from({ length: LINES }, (_, i) => `${file[0]}${i}`);
const text = (lines: readonly string[]) => `${lines.join('\n')}\n`;

/** Runs one interleaving; throws (through assert) on the first land that loses or misplaces a line. */
async function runProgram(
  driver: Driver,
  ops: readonly Op[],
): Promise<{ lands: number; conflicts: number }> {
  const repo = makeRepo(Object.fromEntries(FILES.map((f) => [f, text(initial(f))])));
  const target = new Map<string, string[]>(FILES.map((f) => [f, initial(f)]));
  const sessions = new Map<
    number,
    { worktree: string; landBase: Map<string, string[]>; files: Map<string, string[]> }
  >();
  const copy = (m: ReadonlyMap<string, string[]>) => new Map([...m].map(([f, l]) => [f, [...l]]));
  let counter = 0;
  let lands = 0;
  let conflicts = 0;
  const session = async (s: number) => {
    if (!sessions.has(s)) {
      const worktree = await driver.start(repo, `s${s}`);
      sessions.set(s, { worktree, landBase: copy(target), files: copy(target) });
    }
    return sessions.get(s)!;
  };
  for (const op of ops) {
    if (op.kind === 'user') {
      const file = FILES[op.file]!;
      const lines = target.get(file)!;
      lines[op.line] = `user-${++counter}`;
      writeFileSync(path.join(repo, file), text(lines));
      git(repo, 'commit', '-qam', `user ${counter}`);
    } else if (op.kind === 'apply') {
      const s = await session(op.s);
      const file = FILES[op.file]!;
      const lines = s.files.get(file)!;
      const at = slotsOf(op.s)[op.slot]!;
      const value = `s${op.s}-${++counter}`;
      await driver.apply(
        repo,
        `s${op.s}`,
        s.worktree,
        `*** Begin Patch\n*** Update File: ${file}\n-${lines[at]}\n+${value}\n*** End Patch\n`,
      );
      lines[at] = value;
    } else {
      const s = await session(op.s);
      const pending = FILES.filter((f) => s.files.get(f)!.join() !== s.landBase.get(f)!.join());
      const approved =
        op.files === null
          ? null
          : op.files.map((i) => FILES[i]!).filter((f) => pending.includes(f));
      if (approved !== null && approved.length === 0) continue; // review approves only files left to land
      const approval = await driver.approve(repo, `s${op.s}`, approved);
      if (pending.length === 0) {
        assert.is(approval, 'NOTHING_TO_LAND', 'nothing to approve when everything has landed');
        continue;
      }
      assert.is(approval, 'ok');
      // Per line, over the land base: the side that changed it wins; both, differently: a conflict.
      const expected = copy(target);
      let conflict = false;
      for (const f of approved ?? FILES) {
        const [b, o, t] = [s.landBase.get(f)!, target.get(f)!, s.files.get(f)!];
        for (let i = 0; i < LINES; i++) {
          if (t[i] === b[i] || t[i] === o[i]) continue;
          if (o[i] === b[i]) expected.get(f)![i] = t[i]!;
          else conflict = true;
        }
      }
      const same = FILES.every((f) => expected.get(f)!.join() === target.get(f)!.join());
      const landed = await driver.land(repo, `s${op.s}`);
      const context = `land of s${op.s} (${approved ?? 'all'}) in ${JSON.stringify(ops)}`;
      assert.is(landed, conflict ? 'LAND_CONFLICT' : same ? 'NOTHING_TO_LAND' : 'ok', context);
      if (conflict) {
        conflicts++;
        continue;
      }
      for (const f of FILES) {
        assert.is(
          git(repo, 'show', `main:${f}`),
          expected.get(f)!.join('\n'),
          `${f} on main after ${context}`,
        );
        assert.is(
          readFileSync(path.join(repo, f), 'utf8'),
          text(expected.get(f)!),
          `${f} in the checkout`,
        );
      }
      for (const f of approved ?? FILES) s.landBase.set(f, [...s.files.get(f)!]);
      for (const [f, l] of expected) target.set(f, l);
      lands++;
    }
  }
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
  assert.is(git(repo, 'status', '--porcelain'), '');
  return { lands, conflicts };
}

/** Runs `count` interleavings through `driver`; at least `minLands` lands and `minConflicts` refused conflicts must have run. */
async function check(
  driver: Driver,
  count: number,
  minLands: number,
  minConflicts: number,
): Promise<void> {
  let lands = 0;
  let conflicts = 0;
  await fc.assert(
    fc.asyncProperty(programArb, async (ops) => {
      const r = await runProgram(driver, ops);
      lands += r.lands;
      conflicts += r.conflicts;
    }),
    runs(count),
  );
  assert.ok(lands >= minLands, `only ${lands} lands ran`);
  assert.ok(conflicts >= minConflicts, `only ${conflicts} conflicting lands were tried`);
}

test('through the library: 300 interleavings, no land loses a line', () =>
  check(library, 300, 200, 1));

test('through the CLI: 30 interleavings, no land loses a line', () => check(cli, 30, 12, 0));

test.run();
