/**
 * Finding the repository and the session a command acts on.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { HagentError, isHagentError } from '../errors.js';
import { locateRepo, parseGitFile, worktreeRepair, type RepoLocation } from '../git/index.js';
import { listSessions, readSession, type Session } from './store.js';
import { gitDirWorktreeRoot, isInside, worktreeRootFor } from './where.js';

/** The repository around the caller's directory. Paths are absolute. */
export interface RepoContext {
  cwd: string;
  location: RepoLocation;
  commonDir: string;
}

/**
 * Opens the repository around `cwd`.
 * @throws HagentError NOT_A_GIT_REPO; BARE_REPO when `allowBare` is false and the repo is bare.
 */
export async function openRepo(cwd: string): Promise<RepoContext> {
  let location: RepoLocation;
  try {
    location = await locateRepo(cwd);
  } catch (error) {
    if (!(
      isHagentError(error) &&
      error.code === 'NOT_A_GIT_REPO' &&
      (await repairMovedSessionWorktree(cwd))
    ))
      throw error;
    location = await locateRepo(cwd);
  }
  return { cwd, location, commonDir: location.commonDir };
}

/**
 * When `cwd` lies in a session worktree whose repository folder was moved — its `.git` file names
 * a git dir that is gone, and it sits at `<common dir>/hagent/worktrees/<id>` of a repository —
 * mends git's links with `git worktree repair` (the session record follows on its next read).
 * @returns whether it repaired one. Never throws.
 */
async function repairMovedSessionWorktree(cwd: string): Promise<boolean> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git');
    if (statSync(dotGit, { throwIfNoEntry: false })?.isFile()) {
      const target = parseGitFile(dir, readFileSync(dotGit, 'utf8'));
      const common = path.dirname(path.dirname(path.dirname(dir)));
      const layout =
        path.basename(path.dirname(dir)) === 'worktrees' &&
        path.basename(path.dirname(path.dirname(dir))) === 'hagent';
      if (!target || existsSync(target) || !layout || !existsSync(path.join(common, 'HEAD')))
        return false;
      return worktreeRepair(common, dir);
    }
    if (statSync(dotGit, { throwIfNoEntry: false }) || path.dirname(dir) === dir) return false;
  }
}

/**
 * The session a command acts on: `explicitId` if given; else the session whose worktree holds
 * `cwd`; else the only session of the repository.
 * @throws HagentError SESSION_NOT_FOUND (unknown id), NOT_IN_SESSION (none exists),
 *   SESSION_AMBIGUOUS (several exist and none is named or holds cwd).
 */
export async function resolveSession(ctx: RepoContext, explicitId?: string): Promise<Session> {
  if (explicitId !== undefined) return readSession(ctx.commonDir, explicitId);
  const sessions = await listSessions(ctx.commonDir);
  const top = ctx.location.topLevel;
  if (top) {
    const here = sessions.find((s) => isInside(s.worktree, top));
    if (here) return here;
  }
  if (sessions.length === 1) return sessions[0]!;
  if (sessions.length === 0) {
    throw new HagentError(
      'NOT_IN_SESSION',
      'no hagent session in this repository',
      {},
      'start one with: hagent session start',
    );
  }
  throw new HagentError(
    'SESSION_AMBIGUOUS',
    `${sessions.length} sessions exist and none holds this directory`,
    { sessions: sessions.map((s) => s.id) },
    `name one with --session (${sessions.map((s) => s.id).join(', ')}), or run inside its worktree`,
  );
}

/**
 * True when `dir` lies in one of hagent's worktree folders of the repository: the one inside the
 * git folder (earlier versions), the default one, or `root` (the configured one, from
 * worktreeRootFor, when the caller has the configuration at hand).
 */
export function isSessionWorktree(ctx: RepoContext, dir: string, root?: string): boolean {
  const roots = [
    gitDirWorktreeRoot(ctx.commonDir),
    worktreeRootFor(ctx.commonDir, null, null, {}),
    ...(root ? [root] : []),
  ];
  return roots.some((r) => isInside(r, dir));
}
