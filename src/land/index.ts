/**
 * land: brings a session's approved changes onto its target branch. The result is computed with
 * `git merge-tree --write-tree` (nothing written on conflict), the target ref moves by
 * compare-and-swap, and a checkout of the target is updated only on the files the land changes,
 * refusing when any of them has uncommitted user changes (design.md invariant 5).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError, isHagentError, toHagentError, type ErrorCode } from '../errors.js';
import { cappedList, shellWord } from '../output/index.js';
import { mergeInProgress } from '../update/index.js';
import {
  checkoutTreeDelta,
  gitlinksTurnedIntoFolders,
  pathsInTheWay,
  firstParentSubjectsDirect,
  diffTrees,
  dirtyPaths,
  listWorktrees,
  locateWorktreeDirect,
  changesHeldBy,
  looseObjectStore,
  mergeTrees,
  readRefPreferDirect,
  Repo,
  type LooseObjectStore,
  type TreeMerge,
  moveRefs,
  writeCommit,
  writeInternalCommit,
  writeTreeWithChanges,
  type TreeChange,
  firstParentSubjects,
  absoluteGitDir,
} from '../git/index.js';
import {
  approvalCoverage,
  approvalMove,
  approveCommand,
  guardTarget,
  headChange,
  isInside,
  patchesFrom,
  readApproval,
  readDrift,
  landBaseRef,
  nextLandedRef,
  readLandBase,
  readSession,
  sessionHead,
  treeIds,
  writeSession,
  type ApprovalCoverage,
  type LandBase,
  type RepoContext,
  type Session,
} from '../session/index.js';
import {
  changesOfDiff,
  guardedWrite,
  runTransaction,
  type Recovery,
} from '../transaction/index.js';
import { loadConfig } from '../config/index.js';
import { deniedReason, type Policy } from '../policy/index.js';
import { trace } from '../trace/index.js';
import { withLandTarget } from './target-lock.js';
import { gateCommandLine, gateFailure, runGate, type GateSubject } from '../gate/index.js';
import type { GateCommand } from '../policy/config.js';
import {
  withTrailer,
  findLandHooks,
  runCommitHooks,
  runPostCommit,
  runRefHook,
  type LandHooksReport,
} from './hooks.js';

/** What recovery did of an interrupted land (transaction/recover.ts, seen from the land). */
export interface LandRecovery {
  /**
   * `restored`: the target had not moved; the checkout's files were put back to it.
   * `kept`: the target had moved (the land got that far, or someone moved it): nothing to undo.
   * `blocked`: an `index.lock` in the checkout; nothing touched, the record stays.
   * `discarded`: the record was unreadable; removed.
   */
  action: 'restored' | 'kept' | 'blocked' | 'discarded';
  target: string | null;
  worktree: string | null;
  files: string[];
  outside: string[];
  indexLock?: string;
}

/** A recovery of a land as {@link LandRecovery}. Pure. */
export function landRecoveryOf(r: Recovery): LandRecovery {
  return {
    action: r.action === 'completed' ? 'kept' : r.action,
    target: r.target,
    worktree: r.worktree,
    files: r.files,
    outside: r.outside,
    ...(r.indexLock ? { indexLock: r.indexLock } : {}),
  };
}
export { undoLand, type LandUndoResult } from './undo.js';

/** Options of {@link landSession}. */
export interface LandOptions {
  mode?: 'squash' | 'merge';
  message?: string;
  /** Land the current head even when it is not (or no longer) approved. */
  yes?: boolean;
  /** Environment for configuration overrides (lock timeout). */
  env?: Readonly<Record<string, string | undefined>>;
  /** `--allow-denied`: land paths the policy denies (the user's explicit override; they are listed in `allowedDenied`). */
  allowDenied?: boolean;
  /** `--no-verify`: skip the user's pre-commit and commit-msg hooks, as git commit does (land/hooks.ts). */
  noVerify?: boolean;
  /** `--no-gate` (false): land without running the configured gate; recorded in the land commit's message. */
  gate?: boolean;
  /** The caller holds the target's lock already (a train: land/train.ts). */
  targetLocked?: boolean;
}

/** What the gate did for a land (`gate` of {@link LandResult}); null there when none is configured. */
export interface LandGate {
  command: GateCommand;
  /** `--no-gate`: not run. */
  skipped: boolean;
  /** An earlier pass on the same tree with the same command was used. */
  reused: boolean;
  /** The tree it checked: the landed commit's tree. */
  tree: string;
  durationMs: number | null;
  worktree: string | null;
}

/** JSON of `hagent land`. */
export interface LandResult {
  ok: true;
  session: string;
  target: string;
  mode: 'squash' | 'merge';
  commit: string;
  previous: string;
  files: { path: string; status: string }[];
  /** The checkout whose files were updated, or null when the target is not checked out. */
  updatedWorktree: string | null;
  /** Ref that keeps the landed session head reachable. */
  backupRef: string;
  /** Present when this land first finished an interrupted one (land/recover.ts). */
  recovered?: LandRecovery;
  /** Paths the policy denies that landed because of `--allow-denied`. */
  allowedDenied?: DeniedPath[];
  /** What went wrong after the land was done (the target moved either way). */
  warnings: string[];
  /**
   * The approval after this land, as `review` reports it: approved paths now `landed`, and the
   * session's changes `notApproved` that stay to land (a partial approval's rest).
   */
  coverage: ApprovalCoverage;
  /** The user's git hooks run for the land commit (land/hooks.ts). */
  hooks: LandHooksReport;
  /** The gate on the tree that landed (gate/index.ts); null when the config names none. */
  gate: LandGate | null;
}

/** A path of a land that the policy refuses, and why. */
export interface DeniedPath {
  path: string;
  reason: string;
}

/**
 * The changes of a land that the path policy refuses, whatever made the commit (patch-language.md
 * §5b, the same rules as apply and sync): a denied path — written, deleted or given another
 * mode — and a symbolic link added or changed. A session's commits made with the agent's own git
 * never passed apply's checks, so the land checks every path it brings. Pure.
 */
export function deniedChanges(changes: readonly TreeChange[], policy: Policy): DeniedPath[] {
  const out: DeniedPath[] = [];
  for (const c of changes) {
    const reason =
      deniedReason(c.path, policy) ??
      (c.newMode === '120000' && c.status !== 'D' ? 'a symbolic link' : null);
    if (reason) out.push({ path: c.path, reason });
  }
  return out;
}

/**
 * The denied changes of `denied` that the land would really bring: a path whose version (or
 * absence) on the target `previous` is the session's already changes nothing there — it came
 * from the user's branch (a `session update` merged it in, or the user committed the same
 * file), so refusing it would send the user after their own commit.
 */
async function notOnTarget(
  cwd: string,
  previous: string,
  pending: readonly TreeChange[],
  denied: DeniedPath[],
): Promise<DeniedPath[]> {
  if (denied.length === 0) return denied;
  const paths = new Set(denied.map((d) => d.path));
  const held = await changesHeldBy(
    cwd,
    previous,
    pending.filter((c) => paths.has(c.path)),
  );
  return denied.filter((d) => !held.has(d.path));
}

export { parseMergeTree } from '../git/index.js';

/**
 * Subjects of the session's patches since its last land, oldest first; for a partial land only those that touched
 * `paths`. Read from the loose commit objects of the first-parent chain when it reaches the base
 * through them (the usual case: `commit-tree` writes loose objects), else `git log`.
 */
async function patchSubjects(
  ctx: RepoContext,
  session: Session,
  head: string,
  paths: string[] | null,
): Promise<string[]> {
  const cwd = ctx.cwd;
  const from = await patchesFrom(ctx, session, head);
  const direct = paths ? null : await firstParentSubjectsDirect(ctx.commonDir, from, head);
  if (direct) return direct;
  return firstParentSubjects(cwd, `${from}..${head}`, paths);
}

/** The squash message: a summary of the session's patches (`subjects`, from {@link patchSubjects}). Pure. */
function squashMessage(
  session: Session,
  head: string,
  subjects: readonly string[],
  files: readonly { path: string; status: string }[],
  paths: string[] | null,
): string {
  // A partial land names the files it lands: a patch subject may name files it leaves behind.
  const lines = paths
    ? files.map((f) => `- ${f.status} ${f.path}`)
    : subjects.map((s) => `- ${s.replace(/^hagent: /, '')}`);
  const scope = paths ? ` (approved: ${paths.length} of the session's files)` : '';
  return `hagent: land session ${session.id} (${subjects.length} patch${subjects.length === 1 ? '' : 'es'}, ${files.length} file${files.length === 1 ? '' : 's'})${scope}\n\n${lines.join('\n')}\n\nHagent-Session: ${session.id}\nHagent-Op: land\nHagent-Head: ${head}\n`;
}

/** What a land merges, over which merge base: see {@link planMerge}. */
interface LandMerge {
  /** The land base now (session/landed.ts). */
  landBase: LandBase;
  /** Tree of the land base: the merge base. */
  baseTree: string;
  /** The session's side: its head tree, or for a partial approval the land base with the approved paths at the head's version; the next land base. */
  theirsTree: string;
  /** The paths that side changes against the land base. */
  pending: TreeChange[];
  /** Tree of the target's commit: the other side of the merge. */
  previousTree: string;
}

/**
 * The refusal of a land that has nothing approved left to bring (`message` says why), in the
 * words review uses: the approved paths that have landed, the changes not approved yet and the
 * command that approves them (`details.coverage`, the shape of review's `coverage`); when the
 * approval covered everything, the way to end the session.
 */
function nothingToLand(
  session: Session,
  message: string,
  coverage: ApprovalCoverage,
  extra: Record<string, unknown> = {},
): HagentError {
  const rest = coverage.notApproved;
  return new HagentError(
    'NOTHING_TO_LAND',
    rest.length
      ? `${message}${coverage.landed.length ? ` (${cappedList(coverage.landed, 5)})` : ''}; not approved yet: ${cappedList(rest, 10)}`
      : message,
    { session: session.id, ...extra, coverage },
    rest.length
      ? `approve the rest with ${approveCommand(session.id, rest)}, then hagent land --session ${session.id}; or end the session without it: hagent session end ${session.id} --force --yes (its head stays reachable as refs/hagent/${session.id}/ended)`
      : `nothing to do; end the session with hagent session end ${session.id}`,
  );
}

/**
 * What a land merges into the target commit `previous` (issue: no work lost §1): the session's
 * changes since what it already landed — its land base — not since its start, so nothing that
 * is on the target already is taken back; limited to the approved paths. The diff and the three
 * trees are read side by side (two git calls).
 * @throws HagentError NOTHING_TO_LAND when every approved change has landed already.
 */
async function planMerge(
  ctx: RepoContext,
  session: Session,
  head: string,
  paths: readonly string[] | null,
  previous: string,
): Promise<LandMerge> {
  const cwd = ctx.cwd;
  const landBase = await readLandBase(ctx, session, head);
  const [pending, [baseTree, headTree, previousTree]] = await Promise.all([
    diffTrees(cwd, landBase.treeish, head, paths ?? []),
    treeIds(cwd, [landBase.treeish, head, previous]),
  ]);
  if (pending.length === 0) {
    const all = paths ? await diffTrees(cwd, landBase.treeish, head) : [];
    throw nothingToLand(
      session,
      `every approved change of session ${session.id} has landed already`,
      approvalCoverage(
        { head, paths: paths ? [...paths] : null, at: '' },
        head,
        all.map((c) => c.path),
      ),
    );
  }
  const theirsTree =
    paths === null
      ? headTree!
      : await writeTreeWithChanges(cwd, landBase.treeish, pending.map(headChange));
  return { landBase, baseTree: baseTree!, theirsTree, pending, previousTree: previousTree! };
}

/**
 * The merge of a land and what it changes on the target. When the target's tree is the merge
 * base (nothing landed on it since the land base, the usual case) the three-way merge is the
 * session's side itself, as `git merge` fast-forwards: no merge-tree, and for a whole-session
 * land the changes are the plan's pending ones, so no second diff either.
 * @throws HagentError GIT_FAILED.
 */
async function mergeOnTarget(
  cwd: string,
  store: LooseObjectStore | null,
  plan: LandMerge,
  previous: string,
  wholeSession: boolean,
): Promise<{ merged: TreeMerge; changed: () => Promise<TreeChange[]> }> {
  if (plan.previousTree === plan.baseTree) {
    trace('land: the target is at the land base: the merge is the session side');
    const merged = { tree: plan.theirsTree, clean: true, conflicts: [] };
    return {
      merged,
      changed: () =>
        wholeSession ? Promise.resolve(plan.pending) : diffTrees(cwd, previous, merged.tree),
    };
  }
  const merged = await mergeTrees(cwd, store, plan.baseTree, plan.previousTree, plan.theirsTree);
  return { merged, changed: () => diffTrees(cwd, previous, merged.tree) };
}

/** What landing a session onto a given target tree would do, predicted without writing (see {@link predictLand}). */
export interface LandPrediction {
  session: string;
  /**
   * `clean`: it lands (`tree` is the result); `conflict`: `conflicts` lists the paths;
   * `refused`: a land would refuse before merging (`code`, `message`, `hint`); `nothing`: every
   * approved change is on the target already.
   */
  outcome: 'clean' | 'conflict' | 'refused' | 'nothing';
  /** The tree the land would put on the target (clean only). */
  tree: string | null;
  /** The session head the prediction merged (null when it did not get that far). */
  head?: string;
  /** The files it would change on the target (clean), or the conflicted paths. */
  files: { path: string; status: string }[];
  conflicts: string[];
  code?: ErrorCode;
  message?: string;
  hint?: string;
}

/**
 * Predicts the land of `session` onto `onto` (a commit or tree of the target, or a tree a
 * train's earlier steps would leave): the approval as land reads it (an outdated or missing
 * approval is `refused`), the same merge (`git merge-tree --write-tree`: objects only, no
 * checkout, no ref), the policy's denied paths. A user's dirty files and git hooks are checked
 * by the land itself. Never throws a refusal: it is the outcome. `wholeHead`: a head the
 * approval does not cover is taken whole, as `land --yes` would (the gate of work not yet approved).
 * @throws HagentError GIT_FAILED.
 */
export async function predictLand(
  ctx: RepoContext,
  session: Session,
  onto: string,
  policy: Policy | null,
  options: { wholeHead?: boolean; head?: string } = {},
): Promise<LandPrediction> {
  const cwd = ctx.cwd;
  const none = { tree: null, files: [], conflicts: [] };
  const refused = (e: HagentError): LandPrediction => ({
    session: session.id,
    outcome: e.code === 'NOTHING_TO_LAND' ? 'nothing' : 'refused',
    ...none,
    code: e.code,
    message: e.message,
    ...(e.hint ? { hint: e.hint } : {}),
  });
  const [head, { approval: stored }] = await Promise.all([
    options.head ?? sessionHead(ctx, session),
    readApproval(ctx, session),
  ]);
  // `wholeHead`: the head as a land --yes would take it when the approval does not cover it.
  const approval =
    options.wholeHead && stored?.head !== head ? { head, paths: null, at: '' } : stored;
  if (!approval)
    return refused(
      new HagentError(
        'NOT_APPROVED',
        `nothing in session ${session.id} is approved`,
        { session: session.id },
        `review it with hagent review --session ${session.id}, then approve it with hagent review --session ${session.id} --approve`,
      ),
    );
  if (approval.head !== head)
    return refused(
      new HagentError(
        'APPROVAL_OUTDATED',
        `session ${session.id} moved after its approval (approved ${approval.head.slice(0, 12)}, head ${head.slice(0, 12)})`,
        { session: session.id },
        `review the new patches and approve again (hagent review --session ${session.id} --approve)`,
      ),
    );
  let plan: LandMerge;
  try {
    plan = await planMerge(ctx, session, head, approval.paths, onto);
  } catch (e) {
    if (isHagentError(e) && e.code === 'NOTHING_TO_LAND') return refused(e);
    throw e;
  }
  const denied = policy
    ? await notOnTarget(cwd, onto, plan.pending, deniedChanges(plan.pending, policy))
    : [];
  if (denied.length)
    return refused(
      new HagentError(
        'LAND_DENIED',
        `session ${session.id} changes ${denied.length} path${denied.length === 1 ? '' : 's'} the policy protects: ${denied.map((d) => d.path).join(', ')}`,
        { session: session.id },
        'land it alone with --allow-denied once you have reviewed them',
      ),
    );
  const store = onto.length === 40 ? await looseObjectStore(ctx.commonDir, onto) : null;
  const { merged, changed } = await mergeOnTarget(cwd, store, plan, onto, approval.paths === null);
  if (!merged.clean)
    return {
      session: session.id,
      outcome: 'conflict',
      tree: null,
      head,
      files: [],
      conflicts: merged.conflicts,
    };
  const files = (await changed()).map((c) => ({ path: c.path, status: c.status }));
  if (files.length === 0) return { session: session.id, outcome: 'nothing', ...none };
  return { session: session.id, outcome: 'clean', tree: merged.tree, head, files, conflicts: [] };
}

/** What landing a session now would give, as {@link landOutlook} computes it (the radar's prediction). */
export interface LandOutlook {
  /** `clean`: the merge has no conflict; `conflict`: `paths` conflict. */
  outcome: 'clean' | 'conflict';
  /** The conflicting paths (empty when clean). */
  paths: string[];
  /** The target commit the prediction merged onto. */
  target: string;
  /** The session head it merged. */
  head: string;
}

/**
 * The outcome of landing `session` now, for the radar (src/radar/): {@link predictLand} onto the
 * target's commit, the approved paths when the approval is of the current head, else the whole
 * head, the policy left to the land. Reads only (objects aside, as a refused land leaves).
 * @returns null when there is nothing to predict: no target branch, the target is gone, or
 *   nothing is left to land.
 * @throws HagentError SESSION_NOT_FOUND (the session branch is gone), GIT_FAILED.
 */
export async function landOutlook(
  ctx: RepoContext,
  session: Session,
  head?: string,
): Promise<LandOutlook | null> {
  if (!session.target) return null;
  const previous = await readRefPreferDirect(ctx.cwd, ctx.commonDir, session.target);
  if (!previous) return null;
  const p = await predictLand(ctx, session, previous, null, {
    wholeHead: true,
    ...(head ? { head } : {}),
  });
  if (p.outcome !== 'clean' && p.outcome !== 'conflict') return null;
  return {
    outcome: p.outcome,
    paths: p.conflicts,
    target: previous,
    head: p.head!,
  };
}

/**
 * Refuses while any worktree is rebasing the target branch (its HEAD is detached then, so the
 * branch shows in no worktree): `<git dir>/rebase-{merge,apply}/head-name` names it.
 * @throws HagentError DIRTY_TARGET.
 */
async function assertNoRebaseOf(commonDir: string, target: string): Promise<void> {
  const gitDirs = [
    commonDir,
    ...(await fs.readdir(path.join(commonDir, 'worktrees')).catch(() => [] as string[])).map((n) =>
      path.join(commonDir, 'worktrees', n),
    ),
  ];
  for (const dir of gitDirs) {
    for (const kind of ['rebase-merge', 'rebase-apply']) {
      const name = await fs.readFile(path.join(dir, kind, 'head-name'), 'utf8').catch(() => null);
      if (name?.trim() === target) {
        throw new HagentError(
          'DIRTY_TARGET',
          `${target.replace('refs/heads/', '')} is being rebased (${path.join(dir, kind)})`,
          { files: [] },
          'finish or abort the rebase (git rebase --continue or --abort), then land again; nothing was touched',
        );
      }
    }
  }
}

/**
 * Refuses while the checkout of the target is in the middle of a rebase, merge, cherry-pick,
 * revert or bisect: moving the branch under it would break the operation (and its --abort
 * would drop the land). @throws HagentError DIRTY_TARGET naming the operation.
 */
async function assertNoOperationInProgress(
  ctx: RepoContext,
  worktree: string,
  target: string,
): Promise<void> {
  // The git dir of the checkout: known when it is where hagent runs, read from its files when it
  // is a linked worktree, else asked.
  const gitDir =
    ctx.location.topLevel &&
    isInside(ctx.location.topLevel, worktree) &&
    isInside(worktree, ctx.location.topLevel)
      ? ctx.location.gitDir
      : (locateWorktreeDirect(worktree)?.gitDir ?? (await absoluteGitDir(worktree)));
  const markers: [string, string][] = [
    ['rebase-merge', 'a rebase'],
    ['rebase-apply', 'a rebase or am'],
    ['MERGE_HEAD', 'a merge'],
    ['CHERRY_PICK_HEAD', 'a cherry-pick'],
    ['REVERT_HEAD', 'a revert'],
    ['BISECT_LOG', 'a bisect'],
  ];
  for (const [name, what] of markers) {
    if (
      await fs.stat(path.join(gitDir, name)).then(
        () => true,
        () => false,
      )
    ) {
      throw new HagentError(
        'DIRTY_TARGET',
        `${worktree} is in the middle of ${what} on ${target.replace('refs/heads/', '')}`,
        { files: [], worktree },
        `finish or abort it (git status says how), then land again; nothing was touched`,
      );
    }
  }
}

/**
 * The gate of a land (gate/index.ts) on `subject.tree`: null when none is configured, skipped
 * with `--no-gate`, else run (or an earlier pass on the same tree reused).
 * @throws HagentError GATE_FAILED (the land stops, nothing written); GIT_FAILED.
 */
async function landGate(
  ctx: RepoContext,
  config: Awaited<ReturnType<typeof loadConfig>>,
  options: LandOptions,
  subject: GateSubject,
): Promise<LandGate | null> {
  const command = config.land.gate;
  if (!command) return null;
  if (options.gate === false)
    return {
      command,
      skipped: true,
      reused: false,
      tree: subject.tree,
      durationMs: null,
      worktree: null,
    };
  const r = await runGate(
    ctx,
    { ...config.land, worktreeRoot: config.runtime.worktreeRoot, mainRoot: config.root },
    subject,
    options.env ?? process.env,
  );
  if (!r.passed) throw gateFailure(r, subject.session);
  return {
    command,
    skipped: false,
    reused: r.reused,
    tree: r.tree,
    durationMs: r.durationMs,
    worktree: r.worktree,
  };
}

/**
 * Lands the approved changes of a session on its target branch, under the session lock;
 * journaled.
 * @throws HagentError NOTHING_TO_LAND, NOT_APPROVED, APPROVAL_OUTDATED (head moved after
 *   approval), DETACHED_TARGET, SESSION_DRIFTED (the branch was reset past its base), LAND_DENIED (a path the policy protects, unless allowDenied), LAND_CONFLICT (conflicted paths listed, nothing written),
 *   DIRTY_TARGET (user-modified files listed, nothing touched), TARGET_MOVED (CAS lost).
 */
export async function landSession(
  ctx: RepoContext,
  session: Session,
  options: LandOptions = {},
): Promise<LandResult> {
  const config = await loadConfig(ctx, options.env ?? {}, session.target);
  const timeoutMs = config.runtime.lockTimeoutMs;
  const underTarget = <T>(fn: () => Promise<T>): Promise<T> =>
    options.targetLocked ? fn() : withLandTarget(ctx.commonDir, session, 'land', timeoutMs, fn);
  const { value } = await underTarget(() =>
    guardedWrite(
      guardTarget(ctx, session),
      'land',
      { timeoutMs, withoutWorktree: true },
      async (recovery) => {
        // An interrupted land was recovered by the envelope (transaction/recover.ts).
        const recovered = recovery?.command === 'land' ? landRecoveryOf(recovery) : null;
        if (recovered) trace(`land: an interrupted land ${recovered.action}`);
        // Re-read the metadata under the lock: an approval may have been recorded meanwhile.
        const r = await landLocked(
          ctx,
          await readSession(ctx.commonDir, session.id),
          options,
          config,
        );
        return {
          value: recovered ? { ...r, recovered } : r,
          files: r.files.map((f) => f.path),
          head: r.commit,
        };
      },
    ),
  );
  return value;
}

/**
 * The refusal of a checkout with changes in the land's way: the first files named (all in
 * `details.files`), and the ways on — the user's own changes are committed or stashed; changes
 * the user did not make are an interrupted hagent command's, which `hagent doctor` finishes or
 * undoes (and a land that did complete is taken back with `hagent land --undo`).
 */
function dirtyTargetError(worktree: string, dirty: readonly string[]): HagentError {
  return new HagentError(
    'DIRTY_TARGET',
    `${dirty.length} file${dirty.length === 1 ? '' : 's'} the land would change ${dirty.length === 1 ? 'has' : 'have'} uncommitted changes in ${worktree}: ${cappedList(dirty)}`,
    { files: [...dirty], worktree },
    `commit or stash your changes to ${dirty.length === 1 ? 'it' : 'them'} (git -C ${worktree} stash push --include-untracked${dirty.length > 3 ? '' : ` -- ${dirty.map(shellWord).join(' ')}`}), then land again; nothing was touched. Changes you did not make are an interrupted hagent command's: run hagent doctor, then land again (or hagent land --undo to take the last land back)`,
  );
}

/**
 * Brings the checkout of the target from `previous` to `tree` on the changed files only
 * (`read-tree -m -u`), refusing — nothing touched — when that would lose a user's byte: what
 * read-tree overwrites silently is checked first ({@link pathsInTheWay}); uncommitted changes
 * to tracked files are read-tree's refusal, listed with `git status`.
 * @throws HagentError DIRTY_TARGET listing the files.
 */
async function updateCheckout(
  worktree: string,
  previous: string,
  tree: string,
  files: readonly { path: string; status: string }[],
): Promise<void> {
  const inTheWay = await pathsInTheWay(worktree, files);
  if (inTheWay.length) throw dirtyTargetError(worktree, inTheWay);
  try {
    await checkoutTreeDelta(worktree, previous, tree);
  } catch (error) {
    if (isHagentError(error) && error.code === 'DIRTY_TARGET') {
      const dirty = await dirtyPaths(
        worktree,
        files.map((f) => f.path),
      );
      if (dirty.length) throw dirtyTargetError(worktree, dirty);
      const named = Array.isArray(error.details.files) ? (error.details.files as string[]) : [];
      if (named.length && !error.details.lock) throw dirtyTargetError(worktree, named);
    }
    throw error;
  }
}

async function landLocked(
  ctx: RepoContext,
  session: Session,
  options: LandOptions,
  config: Awaited<ReturnType<typeof loadConfig>>,
): Promise<LandResult> {
  const policy = config.policy;
  const cwd = ctx.cwd;
  const mode = options.mode ?? 'squash';
  const head = await sessionHead(ctx, session);
  if (head === session.base && session.lands.length === 0)
    throw new HagentError(
      'NOTHING_TO_LAND',
      `session ${session.id} has no applied patch`,
      { session: session.id },
      'apply a patch first',
    );
  const drift = await readDrift(ctx, session, head);
  if (drift?.kind === 'rewound' && drift.pastBase) {
    throw new HagentError(
      'SESSION_DRIFTED',
      `session ${session.id}: its branch was moved outside hagent to a commit that does not hold the session's base`,
      { session: session.id, drift },
      `nothing was written; ${drift.hint}`,
    );
  }
  const stored = await readApproval(ctx, session);
  let approval = stored.approval;
  if (!approval) {
    if (!options.yes) {
      const pending = (
        await diffTrees(cwd, (await readLandBase(ctx, session, head)).treeish, head)
      ).map((c) => c.path);
      const coverage = approvalCoverage(null, head, pending);
      if (pending.length === 0)
        throw nothingToLand(session, `session ${session.id} has no changes to land`, coverage);
      throw new HagentError(
        'NOT_APPROVED',
        `nothing in session ${session.id} is approved`,
        { session: session.id, coverage },
        `review it with hagent review --session ${session.id}, approve with hagent review --session ${session.id} --approve [PATH…], or land with --yes`,
      );
    }
    approval = { head, paths: null, at: new Date().toISOString() };
  } else if (approval.head !== head) {
    if (!options.yes)
      throw new HagentError(
        'APPROVAL_OUTDATED',
        `session ${session.id} moved after its approval (approved ${approval.head.slice(0, 12)}, head ${head.slice(0, 12)})`,
        { session: session.id, approved: approval.head, head },
        approval.paths
          ? `review the new patches and approve again (hagent review --session ${session.id} --approve ${approval.paths.slice(0, 3).map(shellWord).join(' ')}${approval.paths.length > 3 ? ' …' : ''}), or land with --yes, which lands the whole current head, not only the approved paths`
          : `review the new patches and approve again (hagent review --session ${session.id} --approve), or land the current head with --yes`,
      );
    // --yes lands the current head without an approval: all of it, not the old approval's paths.
    approval = { head, paths: null, at: new Date().toISOString() };
  }
  if (!session.target)
    throw new HagentError(
      'DETACHED_TARGET',
      `session ${session.id} has no target branch (it was started on a detached HEAD)`,
      { session: session.id },
      `check out a branch and start a new session from it, or merge hagent/${session.id} yourself`,
    );
  const target = session.target;
  const previous = await readRefPreferDirect(cwd, ctx.commonDir, target);
  if (!previous)
    throw new HagentError(
      'TARGET_MOVED',
      `target branch ${target} no longer exists`,
      { target },
      'recreate the branch, or merge the session branch yourself',
    );

  // git's identity for the commit, asked now (three spawns) to overlap the reads of the merge.
  void Repo.of(ctx).identity();
  const [plan, store] = await Promise.all([
    planMerge(ctx, session, head, approval.paths, previous),
    looseObjectStore(ctx.commonDir, previous),
  ]);
  const denied = await notOnTarget(
    cwd,
    previous,
    plan.pending,
    deniedChanges(plan.pending, policy),
  );
  if (denied.length && !options.allowDenied) {
    throw new HagentError(
      'LAND_DENIED',
      `session ${session.id} changes ${denied.length} path${denied.length === 1 ? '' : 's'} the policy protects: ${denied.map((d) => `${d.path} (${d.reason})`).join(', ')}`,
      { session: session.id, files: denied.map((d) => d.path), denied },
      `nothing was written; drop them from the session (hagent undo, or approve only the other files: hagent review --approve PATH…), or, if you want them on ${target.replace('refs/heads/', '')}, land with --allow-denied`,
    );
  }
  const { merged, changed: changedOnTarget } = await mergeOnTarget(
    cwd,
    store,
    plan,
    previous,
    approval.paths === null,
  );
  const { tree, conflicts } = merged;
  if (!merged.clean) {
    throw new HagentError(
      'LAND_CONFLICT',
      `landing session ${session.id} on ${target} conflicts in ${conflicts.length} file${conflicts.length === 1 ? '' : 's'}: ${cappedList(conflicts)}`,
      { session: session.id, target, files: conflicts },
      mergeInProgress(session.worktree)
        ? `nothing was written; the session's update is still merging ${target.replace('refs/heads/', '')}: resolve the conflict markers in ${session.worktree} and git add each file (or apply a patch that resolves them), run hagent sync --session ${session.id}, review it again (hagent review --session ${session.id}) and approve it (hagent review --session ${session.id} --approve), then land again`
        : `nothing was written; run hagent session update --session ${session.id} (it merges ${target.replace('refs/heads/', '')} into the session and leaves conflict markers in its worktree), resolve them there and git add each file, run hagent sync --session ${session.id}, review it again (hagent review --session ${session.id}) and approve it (hagent review --session ${session.id} --approve), then land again`,
    );
  }
  // The next land base: the session's side of this merge, over the last one, with the commit
  // that landed it (none when only the land base moves) as second parent.
  const landBaseMove = async (landed: string | null) => ({
    ref: landBaseRef(session),
    newOid: await writeInternalCommit(
      cwd,
      store,
      plan.theirsTree,
      [plan.landBase.parent, ...(landed ? [landed] : [])],
      `hagent: land base of session ${session.id}\n`,
    ),
    oldOid: plan.landBase.ref,
  });
  // Independent reads side by side: what changes, the patch subjects for the message, the checkouts.
  const [changed, subjects, worktrees, backupRef] = await Promise.all([
    changedOnTarget(),
    options.message === undefined
      ? patchSubjects(ctx, session, head, approval.paths)
      : Promise.resolve([]),
    listWorktrees(cwd, ctx.commonDir),
    nextLandedRef(ctx, session),
  ]);
  const files = changed.map((c) => ({ path: c.path, status: c.status }));
  const gitlinks = gitlinksTurnedIntoFolders(changed);
  if (gitlinks.length)
    throw new HagentError(
      'SUBMODULE_PATH',
      `landing session ${session.id} would replace the submodule ${gitlinks.join(', ')} with a folder of files`,
      { path: gitlinks[0]!, files: gitlinks, session: session.id },
      'nothing was written; change the submodule in its own repository, and in the session worktree restore the gitlink (git rm -r --cached PATH, git checkout <base> -- PATH), then hagent sync and land again',
    );
  if (files.length === 0) {
    // The target holds every approved change by content already: that is landed, and the next
    // land starts from here. Only the land base moves.
    const move = await landBaseMove(null);
    await moveRefs(
      cwd,
      [{ ref: move.ref, old: move.oldOid, new: move.newOid }],
      `hagent land ${session.id}: already on ${target}`,
    );
    const all = approval.paths ? await diffTrees(cwd, plan.landBase.treeish, head) : [];
    throw nothingToLand(
      session,
      `${target} already holds every approved change of session ${session.id}; recorded as landed`,
      approvalCoverage(
        approval,
        head,
        all.map((c) => c.path).filter((p) => !approval.paths!.includes(p)),
      ),
      { target },
    );
  }

  let message = options.message ?? squashMessage(session, head, subjects, files, approval.paths);

  const checkouts = worktrees.filter((w) => w.branch === target);
  if (checkouts.length > 1) {
    throw new HagentError(
      'DIRTY_TARGET',
      `${target} is checked out in ${checkouts.length} worktrees (${checkouts.map((w) => w.path).join(', ')}); hagent updates only one`,
      { files: [], worktrees: checkouts.map((w) => w.path) },
      'switch all but one of them to another branch, then land again; nothing was touched',
    );
  }
  const checkout = checkouts[0];
  await assertNoRebaseOf(ctx.commonDir, target);
  if (checkout) await assertNoOperationInProgress(ctx, checkout.path, target);
  // The gate on the exact tree that lands, before any hook or write (gate/index.ts).
  const gate = await landGate(ctx, config, options, {
    tree,
    previous,
    target,
    session: session.id,
    head,
  });
  if (gate)
    message = withTrailer(
      message,
      `Hagent-Gate: ${gate.skipped ? 'skipped (--no-gate)' : `passed (${gateCommandLine(gate.command)})`}`,
    );
  // The user's own hooks, as git commit would run them for this commit (land/hooks.ts).
  // Without a checkout of the target, the main worktree's: never a session worktree's.
  const hooks = await findLandHooks(
    worktrees[0]?.path ?? cwd,
    ctx.commonDir,
    checkout?.path ?? null,
  );
  const verified = await runCommitHooks(hooks, cwd, {
    checkout: checkout?.path ?? null,
    previous,
    tree,
    message,
    noVerify: !!options.noVerify,
  });
  // The land as one transaction (transaction/run.ts): the commit and the next land base are
  // written first (unreferenced: a refused land leaves at most those objects); then the record;
  // then the checkout of the target, if any, on the changed files only; then the target, the
  // ref that keeps the landed session head reachable and the land base, in one ref transaction:
  // a land that moved the target always recorded what it landed.
  // In-process when git's identity for hagent is known here (git/commit-direct.ts).
  const made = await writeCommit(
    cwd,
    ctx.commonDir,
    ctx.location.gitDir,
    store,
    tree,
    mode === 'merge' ? [previous, head] : [previous],
    verified.endsWith('\n') ? verified : `${verified}\n`,
  );
  trace(made.inProcess ? 'land: committed in-process' : 'land: committed');
  const commit = made.oid;
  const landBase = await landBaseMove(commit);
  // The approval the land used (recorded when --yes made it), in the same ref transaction.
  const approvalRefMove = await approvalMove(ctx, store, session, stored, approval);
  const targetMove = { ref: target, old: previous, new: commit };
  await runRefHook(hooks, 'prepared', targetMove);
  await runTransaction(
    ctx.commonDir,
    cwd,
    {
      kind: 'land',
      session: session.id,
      message: `hagent land ${session.id} (${mode})`,
      worktrees: checkout
        ? [
            {
              path: checkout.path,
              owner: 'checkout',
              files: changesOfDiff(changed),
              publish: {
                kind: 'checkout',
                run: () => updateCheckout(checkout.path, previous, tree, files),
                revert: () => checkoutTreeDelta(checkout.path, tree, previous),
              },
            },
          ]
        : [],
      refs: [
        { ref: target, old: previous, new: commit },
        { ref: backupRef, old: null, new: head },
        { ref: landBase.ref, old: landBase.oldOid, new: landBase.newOid },
        approvalRefMove,
      ],
      note: null,
      rollForward: false,
    },
    { cwd, commonDir: ctx.commonDir, gitDir: ctx.location.gitDir, store },
  ).catch(async (e: unknown) => {
    await runRefHook(hooks, 'aborted', targetMove);
    throw e;
  });
  await runRefHook(hooks, 'committed', targetMove);
  // The session file keeps a list of lands for display; every decision of a later land reads
  // the refs just moved (the land base, the approval), so a kill before this write loses no
  // state a land depends on, and a failure of it does not undo or deny the land: a warning.
  // Nor does a crash that loses it, so it is not fsynced (two synchronous fsyncs saved).
  const warnings: string[] = [];
  const postCommit = await runPostCommit(hooks);
  if (postCommit) warnings.push(postCommit);
  await writeSession(
    ctx.commonDir,
    {
      ...session,
      lands: [...session.lands, { head, commit, target, mode, at: new Date().toISOString() }],
    },
    { durable: false },
  ).catch((e: unknown) => {
    warnings.push(
      `landed; the session record could not be updated (${toHagentError(e).message}): its list of lands misses this one, which changes nothing a later land or undo decides`,
    );
  });
  // What is left of the session after a partial land: the changes not approved (review's words).
  const rest = approval.paths ? await diffTrees(cwd, plan.theirsTree, head) : [];
  return {
    warnings,
    ok: true,
    session: session.id,
    target,
    mode,
    commit,
    previous,
    files,
    updatedWorktree: checkout?.path ?? null,
    backupRef,
    ...(denied.length ? { allowedDenied: denied } : {}),
    hooks: hooks.report,
    gate,
    coverage: approvalCoverage(
      approval,
      head,
      rest.map((c) => c.path),
    ),
  };
}
