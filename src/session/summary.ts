/**
 * One line per session for `hagent session list` and the state `session status` reports:
 * commits, land state (empty / open / approved / landed / drifted), approval and drift.
 *
 * Cost: what a summary says besides drift depends only on the refs it reads (head, target, land
 * base, approval) and the session record, so it is kept in `<git-common-dir>/hagent/summary-cache.json`
 * under a key of those; a list asks git only for a session whose key changed. Drift is read each
 * time (in-process; the reflog and the worktree's HEAD file).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { diffTrees, firstParentChain, Repo } from '../git/index.js';
import { type RepoContext } from './context.js';
import { hagentDir, listSessions, sessionRef, type Session } from './store.js';
import { landBaseRef, unlandedPaths } from './landed.js';
import { approvalRef, readApproval } from './approval.js';
import { readDrift, worktreeHeadDrift, type Drift } from './drift.js';

export interface SessionSummary {
  id: string;
  worktree: string;
  branch: string;
  base: string;
  head: string | null;
  target: string | null;
  commits: number;
  createdAt: string;
  approved: boolean;
  /** Every change of the session is on its target ({@link unlandedPaths}); false for an empty session. */
  landed: boolean;
  /**
   * `empty`: no change was ever made (nothing to land); `landed`: every change is on the target;
   * `approved`: the approval of the head covers work that has not landed; `open`: work not approved yet;
   * `drifted`: the worktree is off the session branch (another branch or a detached HEAD checked
   * out, see `drift`), so work may sit where hagent does not see it: never `empty` or `landed` then.
   */
  state: SessionState;
  /** How the branch or its worktree moved without hagent (session/drift.ts), or null. */
  drift: Drift | null;
  /** Whether the session's worktree folder exists (`hagent doctor` deals with a missing one). */
  worktreeExists: boolean;
}

/** The land state of a session, as {@link SessionSummary.state} says. */
export type SessionState = 'empty' | 'open' | 'approved' | 'landed' | 'drifted';

/**
 * The land state of a session whose branch is at `head` (null: the branch is gone, `open`);
 * `drifted` while its worktree is off the session branch.
 * @throws HagentError GIT_FAILED.
 */
export async function sessionState(
  ctx: RepoContext,
  s: Session,
  head: string | null,
): Promise<SessionState> {
  // Commits and edits on another branch are not on the session branch: what it holds says nothing.
  if (worktreeHeadDrift(s)) return 'drifted';
  return landState(ctx, s, head);
}

/** {@link sessionState} without the worktree's drift: what the branch's commits say. */
async function landState(
  ctx: RepoContext,
  s: Session,
  head: string | null,
): Promise<Exclude<SessionState, 'drifted'>> {
  if (!head) return 'open';
  if (head === s.base && s.lands.length === 0) return 'empty';
  const unlanded = await unlandedPaths(ctx, s, head);
  if (unlanded.length === 0)
    return s.lands.length === 0 && (await diffTrees(ctx.cwd, s.base, head)).length === 0
      ? 'empty'
      : 'landed';
  // Approved: the approval of this head covers work that has not landed yet.
  const { approval } = await readApproval(ctx, s);
  const paths = approval?.head === head ? approval.paths : undefined;
  return paths === null || (paths && unlanded.some((p) => paths.includes(p))) ? 'approved' : 'open';
}

/**
 * The refs a session's summary (and its radar) depends on: its branch, land base, approval and
 * target, for every session given, each once.
 */
export function summaryRefNames(sessions: readonly Session[]): string[] {
  const names = new Set<string>();
  for (const s of sessions) {
    names.add(sessionRef(s));
    names.add(landBaseRef(s));
    names.add(approvalRef(s));
    if (s.target) names.add(s.target);
  }
  return [...names];
}

/** A session's summary from what was read of it. */
export function summaryOf(
  s: Session,
  head: string | null,
  read: { commits: number; approved: boolean; state: SessionState; drift: Drift | null },
): SessionSummary {
  return {
    id: s.id,
    worktree: s.worktree,
    branch: s.branch,
    base: s.base,
    head,
    target: s.target,
    commits: read.commits,
    createdAt: s.createdAt,
    approved: read.approved,
    landed: read.state === 'landed',
    state: read.state,
    drift: read.drift,
    worktreeExists: existsSync(s.worktree),
  };
}

/** What a summary keeps between runs, under the key it was computed for. */
interface Kept {
  key: string;
  commits: number;
  state: Exclude<SessionState, 'drifted'>;
  approved: boolean;
}

interface CacheFile {
  version: 1;
  sessions: Record<string, Kept>;
}

const cacheFile = (commonDir: string) => path.join(hagentDir(commonDir), 'summary-cache.json');

async function readCache(commonDir: string): Promise<CacheFile> {
  const raw = (await readJsonFile(cacheFile(commonDir)).catch(() => null)) as CacheFile | null;
  return raw && raw.version === 1 && raw.sessions ? raw : { version: 1, sessions: {} };
}

/**
 * Summaries of every session, oldest first. Refs are read in one go (in-process where git's files
 * allow); a session's commits and land state come from the cache while its key (base, head,
 * target, land base, approval, lands) holds, else from git.
 * @throws HagentError GIT_FAILED.
 */
export async function listSessionSummaries(ctx: RepoContext): Promise<SessionSummary[]> {
  const sessions = await listSessions(ctx.commonDir);
  const [refs, cache] = await Promise.all([
    Repo.of(ctx).readRefs(summaryRefNames(sessions)),
    readCache(ctx.commonDir),
  ]);
  let dirty = false;
  const out = await Promise.all(
    sessions.map(async (s): Promise<SessionSummary> => {
      const head = refs.get(sessionRef(s)) ?? null;
      const key = JSON.stringify([
        s.base,
        head,
        s.target && refs.get(s.target),
        refs.get(landBaseRef(s)),
        refs.get(approvalRef(s)),
        s.approval ?? null,
        s.lands.map((l) => l.commit),
      ]);
      let kept = cache.sessions[s.id];
      const drift = head ? readDrift(ctx, s, head) : null;
      if (kept?.key !== key) {
        const [commits, state, approved] = await Promise.all([
          head ? firstParentChain(ctx.cwd, s.base, head).then((c) => c.length) : 0,
          landState(ctx, s, head),
          readApproval(ctx, s).then((a) => !!head && a.approval?.head === head),
        ]);
        kept = { key, commits, state, approved };
        cache.sessions[s.id] = kept;
        dirty = true;
      }
      const state = worktreeHeadDrift(s) ? 'drifted' : kept.state;
      return summaryOf(s, head, { ...kept, state, drift: await drift });
    }),
  );
  const live = new Set(sessions.map((s) => s.id));
  for (const id of Object.keys(cache.sessions))
    if (!live.has(id)) (delete cache.sessions[id], (dirty = true));
  if (dirty)
    await writeJsonFile(cacheFile(ctx.commonDir), cache, { durable: false }).catch(() => undefined);
  return out;
}
