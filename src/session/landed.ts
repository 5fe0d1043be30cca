/**
 * What a session has landed, and what it has not.
 *
 * A session's **land base** is the state it has already landed: its base with every path it
 * landed at the version that landed. It is the merge base of the next land, so a land merges only
 * what the session changed since its last land; with the original base instead, a file changed on
 * the target after a land would be taken back to the session's version of the old lines.
 * It lives in a ref (`refs/hagent/<id>/land-base`, a commit whose tree is the land base), moved in
 * the same ref transaction as the target, so a land that moved the target always moved it too.
 */
import {
  diffTrees,
  lsTree,
  mergeTrees,
  readRef,
  writeTreeWithChanges,
  type LooseObjectStore,
  type TreeChange,
  mergeBase,
  isAncestor,
  Repo,
  treeIdsOf,
  refNames,
  firstParentChainWithParents,
} from '../git/index.js';
import type { RepoContext } from './context.js';
import type { Session } from './store.js';

/** Ref of a session's land base. */
export function landBaseRef(session: Pick<Session, 'id'>): string {
  return `refs/hagent/${session.id}/land-base`;
}

/** A session's land base. */
export interface LandBase {
  /** A tree-ish holding the land base: a commit, or a tree derived from old land records. */
  treeish: string;
  /** The ref's value now, for the compare-and-swap of the next land; null while it does not exist. */
  ref: string | null;
  /**
   * `base`: nothing landed yet; `landed`: what the session landed; `target`: a target commit the
   * session merged or rebased onto after both (`hagent session update`, or the agent's own git).
   */
  since: 'base' | 'landed' | 'target';
  /** The commit the next land base builds on (first parent): the land base in use, or the session base. */
  parent: string;
}

/**
 * Reads a session's land base: the newest of its base, what it landed (its ref; for a session
 * landed before the ref existed, the base with every path whose landed version the land commits
 * hold, by content) and — given its `head` — the target commit its history merged in last
 * (`git merge-base head target`, when that came after the base and after the last land), whose
 * tree then holds everything the session has in common with the target.
 * @throws HagentError GIT_FAILED.
 */
export async function readLandBase(
  ctx: RepoContext,
  session: Session,
  head?: string,
): Promise<LandBase> {
  const cwd = ctx.cwd;
  const refs = await Repo.of(ctx).readRefs([
    landBaseRef(session),
    ...(session.target ? [session.target] : []),
  ]);
  const ref = refs.get(landBaseRef(session)) ?? null;
  const target = session.target ? (refs.get(session.target) ?? null) : null;
  // What has landed and is still on the target: a land the user took off the target (reset past
  // its commit) no longer counts, nor what was recorded on top of it.
  const landed = ref ? await landedStillOnTarget(cwd, session, ref, target) : null;
  // Without the ref (a session from before it, or every land undone): the session record's
  // lands that are still on the target. An undone land is not, whether or not a land --undo
  // killed after its refs moved got to take it off the record.
  const lands = ref
    ? session.lands
    : target
      ? (
          await Promise.all(
            session.lands.map(async (l) => ((await isAncestor(cwd, l.commit, target)) ? l : null)),
          )
        ).filter((l) => l !== null)
      : [];
  if (head && target) {
    const mb = await mergeBase(cwd, head, target);
    if (mb && mb !== session.base && (await isAncestor(cwd, session.base, mb))) {
      const lastLand = ref ? landed?.landCommit : lands[lands.length - 1]?.commit;
      if (!lastLand || (await isAncestor(cwd, lastLand, mb)))
        return { treeish: mb, ref, since: 'target', parent: landed?.commit ?? session.base };
    }
  }
  if (ref)
    return landed
      ? { treeish: landed.commit, ref, since: 'landed', parent: landed.commit }
      : { treeish: session.base, ref, since: 'base', parent: session.base };
  if (lands.length === 0)
    return { treeish: session.base, ref: null, since: 'base', parent: session.base };
  let treeish = session.base;
  for (const land of lands) {
    const changed = await diffTrees(cwd, treeish, land.head);
    if (changed.length === 0) continue;
    const paths = changed.map((c) => c.path);
    const [inHead, inLand] = await Promise.all([
      lsTree(cwd, land.head, paths),
      lsTree(cwd, land.commit, paths),
    ]);
    const landed = changed.filter(
      (c) =>
        inHead.get(c.path)?.oid === inLand.get(c.path)?.oid &&
        inHead.get(c.path)?.mode === inLand.get(c.path)?.mode,
    );
    if (landed.length === 0) continue;
    treeish = await writeTreeWithChanges(
      cwd,
      treeish,
      landed.map((c) => headChange(c)),
    );
  }
  return { treeish, ref: null, since: 'landed', parent: session.base };
}

/**
 * The newest land base of the chain at `ref` whose last land commit is still on `target` (or
 * that follows no land at all), and that land commit; null when none is. Each land base's first
 * parent is the one before it, its second parent the land commit that landed it (none for a
 * record of changes the target held already).
 */
async function landedStillOnTarget(
  cwd: string,
  session: Session,
  ref: string,
  target: string | null,
): Promise<{ commit: string; landCommit: string | undefined } | null> {
  const chain = await firstParentChainWithParents(cwd, ref, session.base);
  let from = 0;
  for (let i = 0; i < chain.length; i++) {
    const landCommit = chain[i]![2];
    if (!landCommit) continue;
    if (target && (await isAncestor(cwd, landCommit, target)))
      return { commit: chain[from]![0]!, landCommit };
    from = i + 1;
  }
  return from < chain.length ? { commit: chain[from]![0]!, landCommit: undefined } : null;
}

/** The change that takes a path to its `to` side of a diff. Pure. */
export function headChange(c: TreeChange): { path: string; mode: string; oid: string | null } {
  return c.status === 'D'
    ? { path: c.path, mode: '0', oid: null }
    : { path: c.path, mode: c.newMode, oid: c.newOid };
}

/** Tree ids of several revisions or tree-ish values, in one git call. */
export const treeIds = treeIdsOf;

/**
 * The paths of a session's work that are not on its target: what changed between its land base
 * and `head`, unless the target already holds it — the same version, or a merge of the target
 * with the session's changes over the land base that equals the target (the target has every
 * change by content, and maybe more of its own). Every pending path when the session has no
 * target or the target is gone.
 * @returns repository-relative paths, in git's order; empty when everything has landed.
 */
export async function unlandedPaths(
  ctx: RepoContext,
  session: Session,
  head: string,
  store: LooseObjectStore | null = null,
): Promise<string[]> {
  const base = await readLandBase(ctx, session, head);
  const pending = await diffTrees(ctx.cwd, base.treeish, head);
  if (pending.length === 0) return [];
  const paths = pending.map((c) => c.path);
  const target = session.target ? await Repo.of(ctx).readRef(session.target) : null;
  if (!target) return paths;
  // The target is the land base itself (nothing landed on it since, the usual case): it holds
  // the land base's version of every pending path, which the head changed, and the merge below
  // would be the head's tree. Every pending path differs; no git call needed to say so.
  if (target === base.treeish) return paths;
  const [inHead, inTarget] = await Promise.all([
    lsTree(ctx.cwd, head, paths),
    lsTree(ctx.cwd, target, paths),
  ]);
  const differing = paths.filter(
    (p) =>
      inHead.get(p)?.oid !== inTarget.get(p)?.oid || inHead.get(p)?.mode !== inTarget.get(p)?.mode,
  );
  if (differing.length === 0) return [];
  const [baseTree, targetTree, headTree] = await treeIds(ctx.cwd, [base.treeish, target, head]);
  const merged = await mergeTrees(ctx.cwd, store, baseTree!, targetTree!, headTree!);
  return merged.clean && merged.tree === targetTree ? [] : differing;
}

/**
 * The next free `refs/hagent/<id>/landed/<n>`: the ref that keeps a landed head reachable. Counted
 * from the refs themselves, not from the session record, which is written after them.
 */
export async function nextLandedRef(
  ctx: RepoContext,
  session: Pick<Session, 'id'>,
): Promise<string> {
  const prefix = `refs/hagent/${session.id}/landed/`;
  const taken = (await refNames(ctx.cwd, prefix))
    .map((r) => Number(r.slice(prefix.length)))
    .filter((n) => Number.isInteger(n));
  return `${prefix}${Math.max(0, ...taken) + 1}`;
}

/** Where a session's patches since its last land start: that land's head when it is still in the session's history, else the base. */
export async function patchesFrom(
  ctx: RepoContext,
  session: Session,
  head: string,
): Promise<string> {
  const last = session.lands[session.lands.length - 1]?.head;
  return last && last !== head && (await isAncestor(ctx.cwd, last, head)) ? last : session.base;
}
