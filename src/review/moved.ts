/**
 * What arrived in a session after the review a human approves from: the check that makes
 * `hagent review --approve` approve what was reviewed (docs/approval-and-hooks.md).
 */
import { HagentError } from '../errors.js';
import { cappedList, short } from '../output/index.js';
import { diffTrees, firstParentLogWithNames, isAncestor } from '../git/index.js';
import { PATCH_LOG_FORMAT, parseLogNameStatus } from './index.js';

/** A commit that arrived since the review, with the files it touched. */
export interface Arrived {
  commit: string;
  subject: string;
  files: string[];
}

/** Where the reviewed head came from: the last review in this terminal, or `--head`. */
export type ReviewedFrom = 'terminal' | 'named';

/**
 * Checks that approving `specs` (null: every path) at `head` approves only what the human saw at
 * `reviewed`: the same head, or — for an approval by path — a head where none of the named paths
 * changed since. Returns normally when that holds.
 * @throws HagentError HEAD_MOVED listing the commits (and their files) that arrived since, or, when
 *   the session was undone or rewritten under the review, the files that differ.
 */
export async function assertReviewedHead(
  cwd: string,
  sessionId: string,
  reviewed: string,
  head: string,
  specs: readonly string[] | null,
  from: ReviewedFrom,
): Promise<void> {
  if (reviewed === head) return;
  const pathspecs = specs === null || specs.some((s) => s === '' || s === '.') ? [] : specs;
  const changed = (await diffTrees(cwd, reviewed, head, pathspecs)).map((c) => c.path);
  if (specs !== null && changed.length === 0) return;
  const forward = await isAncestor(cwd, reviewed, head);
  const arrived: Arrived[] = forward
    ? parseLogNameStatus(
        await firstParentLogWithNames(cwd, PATCH_LOG_FORMAT, [`${reviewed}..${head}`]),
      ).map((p) => ({ commit: p.commit, subject: p.subject, files: p.files.map((f) => f.path) }))
    : [];
  const seenWhere = from === 'named' ? 'the head you named' : 'the review shown in this terminal';
  const what = forward
    ? `${arrived.length} commit${arrived.length === 1 ? '' : 's'} arrived since ${seenWhere}: ${arrived
        .slice(0, 3)
        .map((a) => `${short(a.commit)} ${cappedList(a.files, 3)}`)
        .join('; ')}${arrived.length > 3 ? '; …' : ''}`
    : `its history was rewritten since ${seenWhere} (an undo?); these files differ: ${cappedList(changed, 5)}`;
  throw new HagentError(
    'HEAD_MOVED',
    `session ${sessionId} moved from ${short(reviewed)} to ${short(head)}: ${what}`,
    { session: sessionId, reviewed, head, arrived, files: changed },
    `nothing was approved; see what arrived with hagent review --session ${sessionId}, then approve again (a script approves the head it names: hagent review --session ${sessionId} --approve --head ${head})`,
  );
}

/** The refusal of an approval in a terminal that was shown no review of the session. */
export function notReviewed(sessionId: string): HagentError {
  return new HagentError(
    'NOT_REVIEWED',
    `no review of session ${sessionId} was shown in this terminal, so there is no head to approve`,
    { session: sessionId },
    `nothing was approved; run hagent review --session ${sessionId}, read it, then hagent review --session ${sessionId} --approve (a script names the head it approves: hagent review --approve --head SHA, the head review --json gives)`,
  );
}
