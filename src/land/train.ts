/**
 * The land train: several sessions landed in turn onto one target branch (`hagent land S1 S2 …`,
 * `--all`). Each step is exactly a land (land/index.ts: compare-and-swap on the target, policy,
 * the gate on the exact tree, dirty files untouched, land base moved); the train holds the
 * target's lock from its first step to its last, so no other land comes between two of its
 * steps, and stops at the first session that cannot go: what landed before it stays landed.
 *
 * A record of the train (`<common dir>/hagent/trains/<target key>.json`, rewritten after each
 * step) lets `hagent land --undo` take the whole train back in one transaction (land/undo.ts)
 * while the target still ends at the train's last land commit.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError, isHagentError } from '../errors.js';
import { diffTrees, readRef, symbolicHead } from '../git/index.js';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { loadConfig } from '../config/index.js';
import { recordedGate } from '../gate/index.js';
import {
  hagentDir,
  isInside,
  listSessions,
  readApproval,
  readLandBase,
  sessionHead,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { withTargetLock } from '../lock/index.js';
import {
  landSession,
  predictLand,
  type LandOptions,
  type LandPrediction,
  type LandResult,
} from './index.js';

/** Why a train stopped: the session and the refusal of its land, as the CLI prints any refusal. */
export interface TrainStop {
  session: string;
  code: string;
  message: string;
  hint: string;
  details: Record<string, unknown>;
}

/** JSON of `hagent land S1 S2 …` / `--all`. */
export interface TrainResult {
  /** true when every session landed. */
  ok: boolean;
  target: string;
  /** The lands made, in order (each as `hagent land --json` prints one). */
  landed: LandResult[];
  /** Sessions with nothing left to land (landed already, or on the target by content): passed over. */
  skipped: { session: string; message: string }[];
  /** The session the train stopped at, or null. */
  stopped: TrainStop | null;
  /** The sessions after the stop, never tried. */
  notTried: string[];
}

/** One land of a train, as its record keeps it. */
export interface TrainLand {
  session: string;
  /** The target before this land. */
  previous: string;
  /** The land commit. */
  commit: string;
}

/** The record of the last train on a target. */
export interface TrainRecord {
  version: 1;
  target: string;
  at: string;
  lands: TrainLand[];
}

function trainFile(commonDir: string, target: string): string {
  const key = createHash('sha256').update(target).digest('hex').slice(0, 32);
  return path.join(hagentDir(commonDir), 'trains', `${key}.json`);
}

/** The record of the last train onto `target`, or null (none, or unreadable). */
export async function readTrain(commonDir: string, target: string): Promise<TrainRecord | null> {
  const raw = (await readJsonFile(trainFile(commonDir, target)).catch(
    () => null,
  )) as TrainRecord | null;
  if (!raw || raw.version !== 1 || raw.target !== target || !Array.isArray(raw.lands)) return null;
  return raw;
}

/** Removes the record of the last train onto `target` (after its undo). */
export async function forgetTrain(commonDir: string, target: string): Promise<void> {
  await fs.rm(trainFile(commonDir, target), { force: true });
}

/**
 * The sessions of a train, checked: at least one, none twice, all landing on one branch.
 * @throws HagentError USAGE naming the problem; DETACHED_TARGET for a session without a target.
 */
function trainTarget(sessions: readonly Session[]): string {
  if (sessions.length === 0)
    throw new HagentError(
      'USAGE',
      'no session to land',
      {},
      'name the sessions (hagent land s1 s2), or approve some first (hagent review --session ID --approve) and use --all',
    );
  const seen = new Set<string>();
  for (const s of sessions) {
    if (seen.has(s.id))
      throw new HagentError(
        'USAGE',
        `session ${s.id} is named twice`,
        { session: s.id },
        'name each session once',
      );
    seen.add(s.id);
  }
  const first = sessions[0]!;
  if (!first.target)
    throw new HagentError(
      'DETACHED_TARGET',
      `session ${first.id} has no target branch (it was started on a detached HEAD)`,
      { session: first.id },
      `land the others without it; merge hagent/${first.id} yourself`,
    );
  const other = sessions.find((s) => s.target !== first.target);
  if (other)
    throw new HagentError(
      'USAGE',
      `sessions ${first.id} and ${other.id} land on different branches (${first.target!.replace('refs/heads/', '')}, ${(other.target ?? 'none').replace('refs/heads/', '')})`,
      { sessions: sessions.map((s) => s.id) },
      'land the sessions of each branch in a train of their own',
    );
  return first.target!;
}

/**
 * The branch a train or a train's undo concerns when none is named: the target of the session
 * whose worktree holds `ctx.cwd`, else the branch checked out there.
 * @returns a full ref, or null (detached, or not in a worktree).
 */
export async function currentTarget(ctx: RepoContext): Promise<string | null> {
  const top = ctx.location.topLevel;
  if (top) {
    const here = (await listSessions(ctx.commonDir)).find((s) => isInside(s.worktree, top));
    if (here) return here.target;
    return symbolicHead(top);
  }
  return null;
}

/**
 * `--all`: every session onto `target` with an approval and changes that have not landed, in the
 * order they were approved.
 */
export async function approvedSessions(ctx: RepoContext, target: string): Promise<Session[]> {
  const out: { s: Session; at: string }[] = [];
  for (const s of await listSessions(ctx.commonDir)) {
    if (s.target !== target) continue;
    const { approval } = await readApproval(ctx, s);
    if (!approval) continue;
    const head = await sessionHead(ctx, s);
    const landBase = await readLandBase(ctx, s, head);
    if ((await diffTrees(ctx.cwd, landBase.treeish, head)).length === 0) continue;
    out.push({ s, at: approval.at });
  }
  return out.sort((a, b) => a.at.localeCompare(b.at)).map((x) => x.s);
}

/**
 * Lands `sessions` in turn onto their common target, holding the target's lock throughout;
 * passes over a session with nothing left to land (`skipped`); stops at the first other refusal
 * (what landed stays landed, the rest is `notTried`). Each land
 * rewrites the train's record.
 * @throws HagentError USAGE / DETACHED_TARGET for a train that cannot start (nothing touched);
 *   LOCKED when another land holds the target; an error that is no refusal (GIT_FAILED…).
 */
export async function landTrain(
  ctx: RepoContext,
  sessions: readonly Session[],
  options: LandOptions = {},
): Promise<TrainResult> {
  const target = trainTarget(sessions);
  const config = await loadConfig(ctx, options.env ?? {}, target);
  return withTargetLock(
    ctx.commonDir,
    target,
    { command: `land ${sessions.map((s) => s.id).join(' ')}` },
    { timeoutMs: config.runtime.lockTimeoutMs },
    async () => {
      const landed: LandResult[] = [];
      const skipped: TrainResult['skipped'] = [];
      const record: TrainRecord = { version: 1, target, at: new Date().toISOString(), lands: [] };
      for (const [i, s] of sessions.entries()) {
        let r: LandResult;
        try {
          r = await landSession(ctx, s, { ...options, targetLocked: true });
        } catch (e) {
          // A session with nothing left to land is passed over: stopping there would ask the
          // user to run the same train again.
          if (isHagentError(e) && e.code === 'NOTHING_TO_LAND') {
            skipped.push({ session: s.id, message: e.message });
            continue;
          }
          // A refusal stops the train; anything else is thrown, unless lands were made: they
          // are reported with the stop.
          if (!isHagentError(e) && landed.length === 0) throw e;
          const err = isHagentError(e) ? e : null;
          return {
            ok: false,
            target,
            landed,
            skipped,
            stopped: {
              session: s.id,
              code: err?.code ?? 'INTERNAL',
              message: err?.message ?? String(e),
              hint: trainHint(err?.hint ?? '', sessions.slice(i), landed.length > 0),
              details: err?.details ?? {},
            },
            notTried: sessions.slice(i + 1).map((x) => x.id),
          };
        }
        landed.push(r);
        record.lands.push({ session: s.id, previous: r.previous, commit: r.commit });
        await writeJsonFile(trainFile(ctx.commonDir, target), record);
      }
      return { ok: true, target, landed, skipped, stopped: null, notTried: [] };
    },
  );
}

/** The stop's own hint, then how to land the rest once it is mended. Pure. */
function trainHint(hint: string, rest: readonly Session[], landedBefore: boolean): string {
  const [stopped, ...after] = rest;
  let h = hint.replace(/[.;\s]+$/, '');
  // The land's own hint speaks of that land alone: the train's lands before it stay.
  if (landedBefore)
    h = h.replace(
      /^nothing was (written|touched)/,
      `nothing of session ${stopped!.id} was written`,
    );
  if (after.length === 0) return `${h}; then land it: hagent land ${stopped!.id}`;
  return `${h}; then land it and the rest: hagent land ${rest.map((s) => s.id).join(' ')}`;
}

/** One step of a predicted train (`hagent land … --dry-run`). */
export interface TrainPredictionStep extends LandPrediction {
  /** The recorded gate result on the tree it would land: passed, failed, or null (not run there, or no gate). */
  gate: 'passed' | 'failed' | null;
}

/** JSON of `hagent land … --dry-run`. */
export interface TrainPrediction {
  /** False when the train would stop (`wouldStopAt`): the exit code is 1 then. */
  ok: boolean;
  dryRun: true;
  target: string;
  steps: TrainPredictionStep[];
  /** The sessions the train would land, in order (the steps before the first that is not clean). */
  wouldLand: string[];
  /** The first session that would stop the train, or null. */
  wouldStopAt: string | null;
}

/**
 * Predicts a train without writing a ref, a file or the checkout: each session's land onto the
 * chain of results before it (`git merge-tree --write-tree`; a session that would not land is
 * left out of the chain, so the later steps are still predicted; a session with nothing left to
 * land is passed over, as the train passes it over; a clean step whose tree already failed the
 * gate counts as the stop).
 * @throws HagentError USAGE / DETACHED_TARGET as {@link landTrain}; TARGET_MOVED when the target is gone.
 */
export async function predictTrain(
  ctx: RepoContext,
  sessions: readonly Session[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<TrainPrediction> {
  const target = trainTarget(sessions);
  const config = await loadConfig(ctx, env, target);
  let onto = await readRef(ctx.cwd, target);
  if (!onto)
    throw new HagentError(
      'TARGET_MOVED',
      `target branch ${target} no longer exists`,
      { target },
      'recreate the branch, or merge the session branches yourself',
    );
  const steps: TrainPredictionStep[] = [];
  let wouldStopAt: string | null = null;
  const wouldLand: string[] = [];
  for (const s of sessions) {
    const p = await predictLand(ctx, s, onto, config.policy);
    const gate =
      p.tree && config.land.gate
        ? await recordedGate(ctx.commonDir, p.tree, config.land.gate).then((g) =>
            g ? (g.passed ? 'passed' : 'failed') : null,
          )
        : null;
    steps.push({ ...p, gate });
    // A gate that failed on this very tree will most likely fail again when the land reruns it.
    if (p.outcome === 'clean' && p.tree && gate !== 'failed') {
      onto = p.tree;
      if (wouldStopAt === null) wouldLand.push(s.id);
    } else if (p.outcome !== 'nothing' && wouldStopAt === null) wouldStopAt = s.id;
  }
  return { ok: wouldStopAt === null, dryRun: true, target, steps, wouldLand, wouldStopAt };
}
