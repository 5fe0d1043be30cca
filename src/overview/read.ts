/**
 * The repository's overview: one row per session, read with as few git processes as the answer
 * allows — one `git for-each-ref` for every session's refs (head, approval, land base, landed
 * refs) and the targets, one `git cat-file --batch-command` walking every session's commits, one
 * `git diff-tree --stdin` for every session's changed files (a merge of its target among its
 * commits costs a `merge-base` more). Only a session that has landed before asks land's own
 * question of what is left (session/landed.ts `unlandedPaths`, a few git calls).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { lastGate } from '../gate/index.js';
import { radarOf, type SessionRadar } from '../radar/index.js';
import {
  changedPathsOfPairs,
  diffTrees,
  firstParentChains,
  isAncestor,
  listRefs,
  mergeBase,
  type ListedRef,
} from '../git/index.js';
import {
  approvalRef,
  isInside,
  landBaseRef,
  listBrokenSessions,
  listSessions,
  parseApprovalCommit,
  readDrift,
  sessionRef,
  unlandedPaths,
  type Approval,
  type BrokenSession,
  type Drift,
  type RepoContext,
  type Session,
} from '../session/index.js';

/**
 * A session's land state in the overview:
 * - `landed`: it has landed at least once (a land recorded, or its land-base ref) and nothing is
 *   left to land since its land base (session/landed.ts `unlandedPaths`);
 * - `empty`: it never landed and has nothing to land (no change since its base, or only what its
 *   target holds already, e.g. the target merged in by `session update`);
 * - `approved`: the approval recorded for its **current head** (`review --approve`) covers at
 *   least one path left to land, so `hagent land` would land now (`approval` says whether it
 *   covers all of them);
 * - `open`: anything else: work not approved, an approval of an older head, or its branch gone.
 */
export type OverviewState = 'empty' | 'open' | 'approved' | 'landed';

/**
 * One row of `hagent status` (and one object of its `--json` `sessions`). New columns are new
 * fields here and a new entry of render.ts's column table; existing names never change.
 */
export interface OverviewRow {
  session: string;
  /** The session whose worktree holds the current folder. */
  current: boolean;
  /** The agent `hagent run` last launched in it (`claude`, `codex`, …); null when none is recorded. */
  agent: string | null;
  state: OverviewState;
  /**
   * What the approval of the current head covers of the paths left to land: `all`, `partial`,
   * or null (no approval of this head, or nothing left to land).
   */
  approval: 'all' | 'partial' | null;
  /** Commits on the session branch since its base (first parent; an update's merge counts). */
  commits: number;
  /**
   * Files left to land: for a session that landed before, what it changed since its land base
   * that its target does not hold yet (as `hagent land` decides); for one that never landed, what
   * it changed since its base or since the target commit it last merged in. 0 when empty or landed.
   */
  files: number;
  /** Paths that differ between the session's base and its head (a target merged in counts). */
  changedSinceBase: number;
  /** Lands recorded in the session record. */
  lands: number;
  /** How the branch or its worktree moved without hagent (session/drift.ts), or null. */
  drift: Drift | null;
  worktree: string;
  worktreeExists: boolean;
  branch: string;
  /** Full ref of the land target, or null (started on a detached HEAD). */
  target: string | null;
  base: string;
  /** The session branch's commit; null when the branch is gone. */
  head: string | null;
  createdAt: string;
  /**
   * The other unlanded sessions changing a file this one changes (radar/): per session, the
   * shared paths and whether some changed lines meet (then landing both will most likely conflict).
   */
  overlaps: { session: string; paths: string[]; lines: boolean }[];
  /** The predicted outcome of landing it now (land's own merge, nothing written); null: nothing to land. */
  prediction: 'clean' | 'conflict' | null;
  /**
   * The last gate run for it (a land or `hagent gate`): passed or not, and `current` when it ran
   * on the session's current head over the target's current commit. Null: never run.
   */
  gate: { passed: boolean; current: boolean; tree: string; at: string } | null;
}

/** The whole overview: `{repository, sessions, broken}` (the `--json` of `hagent status` adds `ok`). */
export interface Overview {
  /** The repository's main folder (the git common dir for a bare repository). */
  repository: string;
  sessions: OverviewRow[];
  /** Session records that cannot be read (as `hagent session list` reports them). */
  broken: BrokenSession[];
}

/** What the overview reads of a session's history before its changed files. */
interface History {
  commits: number;
  /**
   * Where the session's own changes start for a session that never landed: its base, or the
   * target commit it last merged in (`session update`), as session/landed.ts `readLandBase` says.
   */
  from: string;
}

/**
 * Reads the overview of every session of the repository, oldest first.
 * @throws HagentError GIT_FAILED.
 */
export async function readOverview(ctx: RepoContext): Promise<Overview> {
  const [sessions, broken] = await Promise.all([
    listSessions(ctx.commonDir),
    listBrokenSessions(ctx.commonDir),
  ]);
  const targets = [...new Set(sessions.flatMap((s) => (s.target ? [s.target] : [])))];
  const refs = new Map<string, ListedRef>(
    sessions.length
      ? (await listRefs(ctx.cwd, ['refs/heads/hagent/', 'refs/hagent/', ...targets])).map((r) => [
          r.ref,
          r,
        ])
      : [],
  );
  const heads = sessions.map((s) => refs.get(sessionRef(s))?.oid ?? null);
  const histories = await readHistories(ctx, sessions, heads, refs);
  // One diff-tree for all: each session's change since its base, and since `from` where it differs.
  const pairs = sessions.flatMap((s, i) => {
    const head = heads[i] ?? s.base;
    const from = histories[i]!.from;
    return from === s.base
      ? [{ from: s.base, to: head }]
      : [
          { from: s.base, to: head },
          { from, to: head },
        ];
  });
  const lists = await changedFiles(ctx, pairs);
  let k = 0;
  const top = ctx.location.topLevel;
  const [rows, radar, gates] = await Promise.all([
    Promise.all(
      sessions.map((s, i) => {
        const sinceBase = lists[k++]!;
        const own = histories[i]!.from === s.base ? sinceBase : lists[k++]!;
        return readRow(ctx, s, heads[i] ?? null, histories[i]!, sinceBase, own, refs, {
          current: top !== null && isInside(s.worktree, top),
        });
      }),
    ),
    sessions.length ? radarOf(ctx) : new Map<string, SessionRadar>(),
    Promise.all(sessions.map((s) => lastGate(ctx.commonDir, s.id))),
  ]);
  for (const [i, row] of rows.entries()) {
    const r = radar.get(row.session);
    const byOther = new Map<string, { session: string; paths: string[]; lines: boolean }>();
    for (const o of r?.overlaps ?? []) {
      const e = byOther.get(o.session) ?? { session: o.session, paths: [], lines: false };
      e.paths.push(o.path);
      e.lines ||= o.linesOverlap;
      byOther.set(o.session, e);
    }
    row.overlaps = [...byOther.values()].sort((a, b) => a.session.localeCompare(b.session));
    row.prediction = r?.prediction?.outcome ?? null;
    const g = gates[i];
    const tip = row.target ? (refs.get(row.target)?.oid ?? null) : null;
    row.gate = g
      ? {
          passed: g.passed,
          current: g.head === row.head && g.previous === tip,
          tree: g.tree,
          at: g.at,
        }
      : null;
  }
  return { repository: repositoryFolder(ctx.commonDir), sessions: rows, broken };
}

/** True when the session has landed at least once: a land recorded, or its land-base ref. */
function everLanded(s: Session, refs: ReadonlyMap<string, ListedRef>): boolean {
  return s.lands.length > 0 || refs.has(landBaseRef(s));
}

/**
 * Each session's commit count since its base (every chain walked in one git process) and, for
 * one that never landed and merged its target in, the target commit it merged last (one
 * `merge-base` and one `--is-ancestor`, only then). @throws HagentError GIT_FAILED.
 */
async function readHistories(
  ctx: RepoContext,
  sessions: readonly Session[],
  heads: readonly (string | null)[],
  refs: ReadonlyMap<string, ListedRef>,
): Promise<History[]> {
  const chains = await firstParentChains(
    ctx.cwd,
    sessions.map((s, i) => ({ head: heads[i] ?? s.base, base: s.base })),
  );
  return Promise.all(
    sessions.map(async (s, i) => {
      const head = heads[i] ?? null;
      const { commits, merges } = chains[i]!;
      const target = s.target ? refs.get(s.target)?.oid : undefined;
      if (!head || !merges || !target || everLanded(s, refs)) return { commits, from: s.base };
      const mb = await mergeBase(ctx.cwd, head, target);
      const from = mb && mb !== s.base && (await isAncestor(ctx.cwd, s.base, mb)) ? mb : s.base;
      return { commits, from };
    }),
  );
}

/** The main folder of a repository whose git common dir is `commonDir`. */
function repositoryFolder(commonDir: string): string {
  return path.basename(commonDir) === '.git' ? path.dirname(commonDir) : commonDir;
}

/**
 * The changed paths of each pair in one git process; should that fail (an object gone), each
 * pair alone, an unreadable one counting as no change.
 */
async function changedFiles(
  ctx: RepoContext,
  pairs: { from: string; to: string }[],
): Promise<string[][]> {
  const todo = pairs.map((p, i) => ({ ...p, i })).filter((p) => p.from !== p.to);
  const out: string[][] = pairs.map(() => []);
  try {
    const lists = await changedPathsOfPairs(ctx.cwd, todo);
    todo.forEach((p, k) => (out[p.i] = lists[k] ?? []));
  } catch {
    await Promise.all(
      todo.map(async (p) => {
        out[p.i] = await diffTrees(ctx.cwd, p.from, p.to).then(
          (c) => c.map((x) => x.path),
          () => [],
        );
      }),
    );
  }
  return out;
}

/** The approval of a session: its ref's commit (one read already), else its record's (older sessions). */
function approvalOf(s: Session, refs: ReadonlyMap<string, ListedRef>): Approval | null {
  const ref = refs.get(approvalRef(s));
  if (!ref) return s.approval ?? null;
  return parseApprovalCommit(`${ref.parents.map((p) => `parent ${p}\n`).join('')}\n${ref.message}`);
}

/**
 * One session's row. What is left to land: for a session that landed before, land's own answer
 * (session/landed.ts `unlandedPaths`: its land base, what the target holds already); for one that
 * never landed, what it changed since `history.from` (`own`) — the same paths unless the user
 * brought them onto the target by hand. @throws HagentError GIT_FAILED.
 */
async function readRow(
  ctx: RepoContext,
  s: Session,
  head: string | null,
  history: History,
  sinceBase: string[],
  own: string[],
  refs: ReadonlyMap<string, ListedRef>,
  where: { current: boolean },
): Promise<OverviewRow> {
  const landed = everLanded(s, refs);
  const [drift, toLand] = await Promise.all([
    head ? readDrift(ctx, s, head) : null,
    !head ? [] : landed ? unlandedPaths(ctx, s, head) : own,
  ]);
  const approval = head ? approvalOf(s, refs) : null;
  let covered: 'all' | 'partial' | null = null;
  if (approval && approval.head === head && toLand.length) {
    const paths = approval.paths;
    const n = paths === null ? toLand.length : toLand.filter((p) => paths.includes(p)).length;
    covered = n === toLand.length ? 'all' : n > 0 ? 'partial' : null;
  }
  const state: OverviewState = !head
    ? 'open'
    : toLand.length === 0
      ? landed
        ? 'landed'
        : 'empty'
      : covered
        ? 'approved'
        : 'open';
  return {
    session: s.id,
    current: where.current,
    agent: s.agent ?? null,
    state,
    approval: covered,
    commits: history.commits,
    files: toLand.length,
    changedSinceBase: sinceBase.length,
    lands: s.lands.length,
    drift,
    worktree: s.worktree,
    worktreeExists: existsSync(s.worktree),
    branch: s.branch,
    target: s.target,
    base: s.base,
    head,
    createdAt: s.createdAt,
    overlaps: [],
    prediction: null,
    gate: null,
  };
}
