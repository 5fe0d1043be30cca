/**
 * Lands never lose a line already on the target: random interleavings of user commits, applies,
 * partial and full approvals and lands across 1–3 sessions on one real repository, checked after
 * every land against a model. Each actor (the user, each session) edits its own lines of three
 * files, with an unchanged line between any two actors' lines, so no interleaving conflicts: after
 * a land, the landing session's lines of the approved files hold the session's values, and every
 * other line of the target is exactly what it was before the land. Run through the library in one
 * process (300 interleavings) and through the real CLI (30).
 */
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import { applyPatch, landSession, openRepo, readSession, reviewSession, startSession } from '../../src/index.js';
import { git, hagent, makeRepo } from '../helpers/index.js';
import { runs } from './support.js';

const test = suite('property: land keeps the target');

const FILES = ['a.txt', 'b.txt', 'c.txt'] as const;
const LINES = 16;
/** Line indexes owned by an actor (0 = the user, 1–3 = sessions): 2·actor mod 8, so odd lines never change. */
const slotsOf = (actor: number) => Array.from({ length: LINES }, (_, i) => i).filter((i) => i % 8 === 2 * actor);

type Op =
  | { kind: 'user'; file: number; slot: number }
  | { kind: 'apply'; s: number; file: number; slot: number }
  | { kind: 'land'; s: number; files: number[] | null };

const opArb = (sessions: number): fc.Arbitrary<Op> => fc.oneof(
  fc.record({ kind: fc.constant('user' as const), file: fc.integer({ min: 0, max: 2 }), slot: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ kind: fc.constant('apply' as const), s: fc.integer({ min: 1, max: sessions }), file: fc.integer({ min: 0, max: 2 }), slot: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ kind: fc.constant('apply' as const), s: fc.integer({ min: 1, max: sessions }), file: fc.integer({ min: 0, max: 2 }), slot: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ kind: fc.constant('land' as const), s: fc.integer({ min: 1, max: sessions }), files: fc.option(fc.subarray([0, 1, 2], { minLength: 1 }), { nil: null }) }),
  fc.record({ kind: fc.constant('land' as const), s: fc.integer({ min: 1, max: sessions }), files: fc.option(fc.subarray([0, 1, 2], { minLength: 1 }), { nil: null }) }),
);
const programArb = fc.integer({ min: 1, max: 3 }).chain((n) => fc.array(opArb(n), { minLength: 4, maxLength: 10 }));

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
    return (await startSession(await openRepo(repo), { name })).worktree;
  },
  async apply(repo, name, _worktree, patch) {
    const ctx = await openRepo(repo);
    await applyPatch(ctx, await readSession(ctx.commonDir, name), { patchText: patch, yes: true, noWatch: true });
  },
  async approve(repo, name, files) {
    const ctx = await openRepo(repo);
    return reviewSession(ctx, await readSession(ctx.commonDir, name), { approve: files ?? true }).then(() => 'ok', codeOf);
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
async function runProgram(driver: Driver, ops: readonly Op[]): Promise<number> {
  const repo = makeRepo(Object.fromEntries(FILES.map((f) => [f, text(initial(f))])));
  const target = new Map(FILES.map((f) => [f, initial(f)]));
  const sessions = new Map<number, { worktree: string; base: Map<string, string[]>; files: Map<string, string[]> }>();
  let counter = 0;
  let lands = 0;
  const session = async (s: number) => {
    if (!sessions.has(s)) {
      const worktree = await driver.start(repo, `s${s}`);
      const copy = () => new Map([...target].map(([f, l]) => [f, [...l]]));
      sessions.set(s, { worktree, base: copy(), files: copy() });
    }
    return sessions.get(s)!;
  };
  for (const op of ops) {
    if (op.kind === 'user') {
      const file = FILES[op.file]!;
      const lines = target.get(file)!;
      lines[slotsOf(0)[op.slot]!] = `user-${++counter}`;
      writeFileSync(path.join(repo, file), text(lines));
      git(repo, 'commit', '-qam', `user ${counter}`);
    } else if (op.kind === 'apply') {
      const s = await session(op.s);
      const file = FILES[op.file]!;
      const lines = s.files.get(file)!;
      const at = slotsOf(op.s)[op.slot]!;
      const value = `s${op.s}-${++counter}`;
      await driver.apply(repo, `s${op.s}`, s.worktree, `*** Begin Patch\n*** Update File: ${file}\n-${lines[at]}\n+${value}\n*** End Patch\n`);
      lines[at] = value;
    } else {
      const s = await session(op.s);
      const changed = FILES.filter((f) => s.files.get(f)!.join() !== s.base.get(f)!.join());
      const approved = op.files === null ? null : op.files.map((i) => FILES[i]!).filter((f) => changed.includes(f));
      if (approved !== null && approved.length === 0) continue; // review only approves files the session changed
      const approval = await driver.approve(repo, `s${op.s}`, approved);
      if (changed.length === 0) {
        assert.is(approval, 'NOTHING_TO_LAND', 'nothing to approve in a session without changes');
        continue;
      }
      assert.is(approval, 'ok');
      const expected = new Map([...target].map(([f, l]) => [f, [...l]]));
      for (const f of approved ?? FILES) for (const i of slotsOf(op.s)) expected.get(f)![i] = s.files.get(f)![i]!;
      const same = FILES.every((f) => expected.get(f)!.join() === target.get(f)!.join());
      const landed = await driver.land(repo, `s${op.s}`);
      assert.is(landed, same ? 'NOTHING_TO_LAND' : 'ok', `land of s${op.s} (${approved ?? 'all'}) after ${JSON.stringify(ops)}`);
      for (const f of FILES) {
        assert.is(git(repo, 'show', `main:${f}`), expected.get(f)!.join('\n'), `${f} on main after land of s${op.s} in ${JSON.stringify(ops)}`);
        assert.is(readFileSync(path.join(repo, f), 'utf8'), text(expected.get(f)!), `${f} in the checkout`);
      }
      for (const [f, l] of expected) target.set(f, l);
      lands++;
    }
  }
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
  assert.is(git(repo, 'status', '--porcelain'), '');
  return lands;
}

test('through the library: 300 interleavings, no land loses a line', async () => {
  let lands = 0;
  await fc.assert(fc.asyncProperty(programArb, async (ops) => {
    lands += await runProgram(library, ops);
  }), runs(300));
  assert.ok(lands >= 250, `only ${lands} lands ran`);
});

test('through the CLI: 30 interleavings, no land loses a line', async () => {
  let lands = 0;
  await fc.assert(fc.asyncProperty(programArb, async (ops) => {
    lands += await runProgram(cli, ops);
  }), runs(30));
  assert.ok(lands >= 20, `only ${lands} lands ran`);
});

test.run();
