/**
 * The head of a session whose branch is gone (deleted by the user: `git branch -D`, `git
 * update-ref -d`): hagent made those commits, so it still knows them, and every one stays
 * reachable until the human drops it (docs/reliability.md, "No work lost"). Where it looks,
 * newest knowledge first:
 *
 * 0. `refs/hagent/<id>/head`, which every ref transaction of hagent moves with the branch;
 * 1. the session worktree's HEAD reflog (`<worktree git dir>/logs/HEAD`): every move of the
 *    branch made in the worktree, hagent's ref transactions and the agent's own git commands;
 *    git cannot read it while HEAD names a missing branch, so its lines are read here (git's
 *    format: `<old> <new> <identity>\t<message>`);
 * 2. the journal: the head after each of the session's writing commands since it started.
 *
 * A candidate counts only when its commit is still in the object store.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { resolveCommit, worktreeGitDirSync } from '../git/index.js';
import { readJournal } from '../journal/index.js';
import type { RepoContext } from './context.js';
import type { Session } from './store.js';

/** A session head found without its branch, and where it was found. */
export interface RecoveredHead {
  head: string;
  from: 'kept-ref' | 'reflog' | 'journal';
}

/**
 * The newest known head of session `s` (see the file's comment), or null when hagent knows none
 * whose commit still exists. Never throws.
 */
export async function recoverSessionHead(
  ctx: RepoContext,
  s: Session,
): Promise<RecoveredHead | null> {
  try {
    const kept = await resolveCommit(ctx.cwd, `refs/hagent/${s.id}/head`);
    const gitDir = worktreeGitDirSync(s.worktree) ?? path.join(ctx.commonDir, 'worktrees', s.id);
    const text = await fs.readFile(path.join(gitDir, 'logs', 'HEAD'), 'utf8').catch(() => '');
    const fromLog = text
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((oid) => /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid) && !/^0+$/.test(oid));
    for (const oid of fromLog.reverse().slice(0, 1)) {
      const commit = await resolveCommit(ctx.cwd, oid);
      // The reflog is newer than the kept ref when the agent committed with git itself.
      if (commit) return { head: commit, from: 'reflog' };
    }
    if (kept) return { head: kept, from: 'kept-ref' };
    const since = Date.parse(s.createdAt);
    const { entries } = await readJournal(ctx.commonDir, { session: s.id });
    for (const e of entries.reverse()) {
      if (!e.ok || !e.head || !(Date.parse(e.time) >= since)) continue;
      const commit = await resolveCommit(ctx.cwd, e.head);
      if (commit) return { head: commit, from: 'journal' };
    }
    return null;
  } catch {
    return null;
  }
}
