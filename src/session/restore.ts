/**
 * Recreating a session worktree the user removed (`git worktree remove --force`, or `rm -rf`
 * with or without `git worktree prune`): the session's work is its branch, so the worktree is
 * checked out again from it, at the path the session records. Nothing else needs the worktree
 * back: land works from the branch's commits, and `session end` ends a session without one.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { listWorktrees, worktreeAddBranch } from '../git/index.js';
import { withSessionLock } from '../lock/index.js';
import { mainCheckoutRoot } from '../config/index.js';
import type { RepoContext } from './context.js';
import { copyWorktreeIncludes, sessionHead } from './lifecycle.js';
import { sessionRef } from './store.js';
import { isInside } from './where.js';
import type { Session } from './store.js';

/** What {@link restoreWorktree} did. */
export interface RestoredWorktree {
  session: string;
  worktree: string;
  /** The session head checked out there. */
  head: string;
  /** Files copied in from the main checkout by `.worktreeinclude`, as at session start. */
  included: string[];
}

/**
 * The words of every message about a session whose worktree is gone: the three ways on, each a
 * command that works as given.
 */
export function missingWorktreeHint(id: string): string {
  return `recreate it from the session branch with: hagent doctor --session ${id} --restore-worktree; or land its work without it (hagent land --session ${id}), or end it (hagent session end ${id})`;
}

/**
 * Checks the session branch out again in a new worktree at `session.worktree`, under the
 * session lock, when that folder is gone. Reuses git's registration of the missing folder
 * (`worktree add --force`) only when no present worktree has the branch checked out.
 * @throws HagentError WORKTREE_BROKEN when the folder exists (not missing: nothing to recreate)
 *   or the branch is checked out in another present worktree (the work is there);
 *   SESSION_NOT_FOUND when the branch is gone; LOCKED; GIT_FAILED.
 */
export async function restoreWorktree(
  ctx: RepoContext,
  session: Session,
): Promise<RestoredWorktree> {
  return withSessionLock(
    ctx.commonDir,
    session.id,
    { command: 'restore worktree' },
    {},
    async () => {
      const at = session.worktree;
      if (
        await fs.lstat(at).then(
          () => true,
          () => false,
        )
      )
        throw new HagentError(
          'WORKTREE_BROKEN',
          `session ${session.id}: ${at} exists, so there is no worktree to recreate`,
          { session: session.id, worktree: at },
          `run hagent doctor --session ${session.id} to see what is wrong with it; to recreate it, move ${at} away first (keep what it holds)`,
        );
      const head = await sessionHead(ctx, session);
      const ref = sessionRef(session);
      const holders = (await listWorktrees(ctx.cwd, ctx.commonDir)).filter((w) => w.branch === ref);
      let registered = false;
      for (const w of holders) {
        if (
          await fs.stat(w.path).then(
            () => true,
            () => false,
          )
        )
          throw new HagentError(
            'WORKTREE_BROKEN',
            `session ${session.id}: its branch ${session.branch} is checked out in ${w.path}`,
            { session: session.id, worktree: w.path },
            `work there, or switch ${w.path} to another branch (git -C ${w.path} switch --detach), then run hagent doctor --session ${session.id} --restore-worktree again`,
          );
        registered = true;
      }
      await fs.mkdir(path.dirname(at), { recursive: true });
      await worktreeAddBranch(ctx.cwd, at, session.branch, registered);
      const top = await mainCheckoutRoot(ctx);
      const included = top && !isInside(at, top) ? await copyWorktreeIncludes(top, at) : [];
      return { session: session.id, worktree: at, head, included };
    },
  );
}
