/**
 * `hagent gate [SESSION]`: the land gate on the tree a land of the session would put on its
 * target now, without landing: of its approved paths when its head is approved, else of its whole
 * head (so the agent can check its work before the human approves it). It writes nothing but the gate's recorded result (and objects of
 * the predicted merge), so a later land of the same tree reuses the pass.
 */
import { HagentError } from '../errors.js';
import { readRef } from '../git/index.js';
import { loadConfig } from '../config/index.js';
import { gateFailure, runGate, type GateResult } from '../gate/index.js';
import type { RepoContext, Session } from '../session/index.js';
import { predictLand } from './index.js';
import { withLandTarget } from './target-lock.js';

/** JSON of `hagent gate`. */
export interface SessionGateResult extends GateResult {
  ok: boolean;
  target: string;
}

/**
 * Runs the gate for `session` on its predicted land tree, holding the target's lock (the gate's
 * scratch worktree is the target's). A failure is returned (`ok: false`), with `error` the
 * refusal a land would give.
 * @throws HagentError NO_GATE (none configured); DETACHED_TARGET; TARGET_MOVED (the branch is
 *   gone); the predicted land's refusal (LAND_CONFLICT, LAND_DENIED, NOTHING_TO_LAND): there is
 *   no tree to check; LOCKED.
 */
export async function gateSession(
  ctx: RepoContext,
  session: Session,
  env: Readonly<Record<string, string | undefined>>,
  options: { rerun?: boolean } = {},
): Promise<{ result: SessionGateResult; error: HagentError | null }> {
  const target = session.target;
  if (!target)
    throw new HagentError(
      'DETACHED_TARGET',
      `session ${session.id} has no target branch`,
      { session: session.id },
      'a gate checks what would land on a branch; this session has none',
    );
  const config = await loadConfig(ctx, env, target);
  const command = config.land.gate;
  if (!command)
    throw new HagentError(
      'NO_GATE',
      'no land gate is configured',
      { path: config.file ?? '.hagent/config.json' },
      'add one to .hagent/config.json in your checkout, e.g. "land": {"gate": ["npm", "test"]}',
    );
  return withLandTarget(ctx.commonDir, session, 'gate', config.runtime.lockTimeoutMs, async () => {
    const previous = await readRef(ctx.cwd, target);
    if (!previous)
      throw new HagentError(
        'TARGET_MOVED',
        `target branch ${target} no longer exists`,
        { target },
        'recreate the branch',
      );
    const p = await predictLand(ctx, session, previous, config.policy, { wholeHead: true });
    if (p.outcome === 'conflict')
      throw new HagentError(
        'LAND_CONFLICT',
        `landing session ${session.id} on ${target} would conflict in ${p.conflicts.length} file${p.conflicts.length === 1 ? '' : 's'}: ${p.conflicts.join(', ')}`,
        { session: session.id, target, files: p.conflicts },
        `there is no tree to check; hagent session update --session ${session.id} merges ${target.replace('refs/heads/', '')} into the session`,
      );
    if (p.outcome !== 'clean' || !p.tree)
      throw new HagentError(
        p.code ?? 'NOTHING_TO_LAND',
        p.message ?? `session ${session.id} has nothing to land`,
        { session: session.id },
        p.hint ?? 'there is no tree to check',
      );
    const r = await runGate(
      ctx,
      { ...config.land, worktreeRoot: config.runtime.worktreeRoot, mainRoot: config.root },
      { tree: p.tree, previous, target, session: session.id, head: p.head ?? null },
      env,
      options,
    );
    return {
      result: { ...r, ok: r.passed, target },
      error: r.passed ? null : gateFailure(r, session.id),
    };
  });
}
