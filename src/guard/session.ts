/**
 * The guard context of a session: its worktree, its target branch as a protected branch, and
 * the relaxations of `.hagent/config.json` read from the user's main checkout (never from the
 * session worktree: an agent must not relax its own guard).
 */
import { loadConfig } from '../config/index.js';
import type { RepoContext, Session } from '../session/index.js';
import type { GuardContext } from './index.js';

/**
 * The {@link GuardContext} for commands an agent runs in `session`.
 * @throws HagentError CONFIG_INVALID for a broken `.hagent/config.json`.
 */
export async function sessionGuardContext(
  ctx: RepoContext,
  session: Session,
  env: Readonly<Record<string, string | undefined>>,
): Promise<GuardContext> {
  const config = await loadConfig(ctx, env);
  const target = session.target?.replace(/^refs\/heads\//, '');
  return {
    worktree: session.worktree,
    protectedBranches: target ? [target] : [],
    allow: config.guard.allow,
    ...(config.root ? { checkout: config.root } : {}),
    gitDir: ctx.commonDir,
  };
}
