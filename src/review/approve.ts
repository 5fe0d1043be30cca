/**
 * The head a `hagent review --approve` approves: the one `--head` names, or the one the last
 * review in this terminal showed (review/seen.ts). docs/approval-and-hooks.md.
 */
import { HagentError } from '../errors.js';
import { resolveCommit } from '../git/index.js';
import type { RepoContext } from '../session/index.js';
import { notReviewed, type ReviewedFrom } from './moved.js';
import { readSeen } from './seen.js';

/**
 * The reviewed head of an approval of session `sessionId`: `named` (a commit name) resolved, else
 * the head the last review in this terminal showed.
 * @throws HagentError USAGE for a `named` that is no commit; NOT_REVIEWED when nothing is named
 *   and no review of the session was shown in this terminal.
 */
export async function reviewedHead(
  ctx: RepoContext,
  sessionId: string,
  named: string | undefined,
): Promise<{ reviewedHead: string; reviewedFrom: ReviewedFrom }> {
  if (named !== undefined) {
    const oid = await resolveCommit(ctx.cwd, named);
    if (!oid)
      throw new HagentError(
        'USAGE',
        `--head ${named} names no commit`,
        { head: named },
        `name the head to approve by its id (hagent review --session ${sessionId} --json gives it)`,
      );
    return { reviewedHead: oid, reviewedFrom: 'named' };
  }
  const seen = await readSeen(ctx.commonDir, sessionId).catch(() => null);
  if (!seen) throw notReviewed(sessionId);
  return { reviewedHead: seen.head, reviewedFrom: 'terminal' };
}
