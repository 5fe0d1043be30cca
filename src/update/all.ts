/**
 * `hagent session update --all`: every open session brought up to its target in turn, each
 * exactly as `hagent session update` brings one (./index.ts `updateSession`, under that session's
 * lock), never stopping at the first that cannot be: after a land train the rest of the sessions
 * catch up in one command, and each one's outcome is reported.
 */
import { HagentError, toHagentError } from '../errors.js';
import { listSessions, type ChangedFile, type RepoContext } from '../session/index.js';
import { conflictsRefusal, updateSession, type UpdateOptions } from './index.js';

/**
 * What happened to one session:
 * - `updated`: the target was merged in (or, with `rebase`, the patches replayed on it);
 * - `up-to-date`: the session holds the target already;
 * - `conflict`: the merge stopped at conflicts and waits in the worktree, as `session update`
 *   leaves it (code `MERGE_UNRESOLVED`, the hint says how to finish or give it up);
 * - `refused`: nothing was written (outside edits pending, a merge already in progress, the
 *   session lock held, …): `code`, `message` and `hint` are the refusal's.
 */
export type UpdateOutcome = 'updated' | 'up-to-date' | 'conflict' | 'refused';

/** One session's line of `session update --all` (one object of its `--json` `sessions`). */
export interface SessionUpdateReport {
  session: string;
  outcome: UpdateOutcome;
  /** Full ref of the session's target. */
  target: string;
  /** The target commit brought in (absent when refused). */
  merged?: string;
  /** The new session head (`updated` only). */
  commit?: string;
  /** Files the update changed in the worktree (`updated` and `conflict`). */
  files?: ChangedFile[];
  /** Files left with conflict markers (`conflict` only). */
  conflicts?: string[];
  /** The session's worktree, where a conflict waits. */
  worktree: string;
  code?: string;
  message?: string;
  hint?: string;
}

/** The result of {@link updateAllSessions}. */
export interface UpdateAllResult {
  /** True when no session ended in `conflict` or `refused`: nothing needs the user. */
  ok: boolean;
  sessions: SessionUpdateReport[];
}

/**
 * Updates every session that has a target (oldest first), as `hagent session update` does one,
 * and reports each. Sessions started on a detached HEAD have no target to update with and are not
 * listed. A conflict or a refusal does not stop the others. Never throws for one session's
 * failure: it is that session's `refused` outcome (an unexpected fault included, code `INTERNAL`).
 * @throws HagentError GIT_FAILED or IO_FAILED only while listing the sessions.
 */
export async function updateAllSessions(
  ctx: RepoContext,
  options: UpdateOptions = {},
): Promise<UpdateAllResult> {
  const sessions = (await listSessions(ctx.commonDir)).filter((s) => s.target !== null);
  const reports: SessionUpdateReport[] = [];
  for (const s of sessions) {
    const base = { session: s.id, target: s.target!, worktree: s.worktree };
    try {
      const r = await updateSession(ctx, s, options);
      if (r.upToDate) reports.push({ ...base, outcome: 'up-to-date', merged: r.merged });
      else if (r.conflicts.length) {
        const e = conflictsRefusal(r, s.worktree);
        reports.push({
          ...base,
          outcome: 'conflict',
          merged: r.merged,
          files: r.files,
          conflicts: r.conflicts,
          code: e.code,
          message: e.message,
          ...(e.hint ? { hint: e.hint } : {}),
        });
      } else
        reports.push({
          ...base,
          outcome: 'updated',
          merged: r.merged,
          commit: r.commit!,
          files: r.files,
        });
    } catch (error) {
      const e = toHagentError(error);
      reports.push({
        ...base,
        outcome: 'refused',
        code: e.code,
        message: e.message,
        ...(e.hint ? { hint: e.hint } : {}),
      });
    }
  }
  return {
    ok: reports.every((r) => r.outcome === 'updated' || r.outcome === 'up-to-date'),
    sessions: reports,
  };
}

/**
 * The `error` of an `--all` that left sessions needing the user (a `conflict` or a `refused`
 * outcome), or null when none did: the first such session's code and hint, every such session's
 * id in `details.sessions` (each one's own entry says the rest). The command exits 1 with it.
 */
export function updateAllRefusal(result: UpdateAllResult): HagentError | null {
  const needs = result.sessions.filter((s) => s.outcome === 'conflict' || s.outcome === 'refused');
  const first = needs[0];
  if (!first) return null;
  const n = needs.length;
  return new HagentError(
    (first.code ?? 'INTERNAL') as HagentError['code'],
    `${n} session${n === 1 ? '' : 's'} need${n === 1 ? 's' : ''} you: ${needs.map((s) => `${s.session} (${s.outcome === 'conflict' ? 'conflict' : s.code})`).join(', ')}`,
    { sessions: needs.map((s) => s.session) },
    `${first.session}: ${first.hint ?? first.message ?? 'see its entry in sessions'}`,
  );
}
