/**
 * Session start, list, status and end.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { HagentError } from '../errors.js';
import { cappedList } from '../output/index.js';
import {
  assertGitVersion,
  createRef,
  parseGitFile,
  diffTrees,
  firstParentChain,
  readHeadDirectSync,
  readRef,
  readRefs,
  pruneWorktrees,
  removeWorktree,
  type RefMove,
  readRefPreferDirect,
  readRefsDirect,
  readRefsDirectSync,
  Repo,
  resolveCommit,
  deleteRef,
  ignoredPaths,
  statusRecords,
  symbolicHead,
  untrackedMatching,
  worktreeAdd,
  worktreeRemove,
} from '../git/index.js';
import { copyFileNoClobber, isTempName, readEntry } from '../fsx/index.js';
import { type RepoContext, resolveSession } from './context.js';
import { isInside, worktreeRootFor } from './where.js';
import {
  listSessions,
  readSession,
  removeSession,
  SESSION_ID,
  sessionBranch,
  sessionRef,
  sessionFilePath,
  writeSession,
  type Session,
} from './store.js';
import { readIntent } from '../transaction/record.js';
import { runTransaction } from '../transaction/run.js';
import { finishInterruptedEnds } from '../transaction/recover.js';
import { withSessionLock } from '../lock/index.js';
import { readJournal } from '../journal/index.js';
import { landBaseRef, unlandedPaths } from './landed.js';
import {
  approvalCoverage,
  approvalRef,
  approveCommand,
  readApproval,
  type ApprovalCoverage,
} from './approval.js';
import { readDrift, worktreeHeadDrift, type Drift } from './drift.js';
import { sessionState, summaryOf, type SessionSummary } from './summary.js';
import { loadConfig } from '../config/index.js';
import { deniedReason, type Policy } from '../policy/index.js';
import { commitWorktreeBytes, DEPENDENCY_FOLDERS, enterPool, takeFromPool } from './pool.js';
import { nestedRepositories } from './snapshot.js';
import { recoverSessionHead } from './recover-head.js';

/** What the writing envelope (lock, recovery, journal) needs to know of a session. */
export function guardTarget(
  ctx: RepoContext,
  session: Session,
): { commonDir: string; session: string; worktree: string; ref: string; base: string } {
  return {
    commonDir: ctx.commonDir,
    session: session.id,
    worktree: session.worktree,
    ref: sessionRef(session),
    base: session.base,
  };
}

/** Ref holding the furthest undone head, for `hagent undo --redo`. */
export function redoRef(session: Pick<Session, 'id'>): string {
  return `refs/hagent/${session.id}/redo`;
}

/**
 * After a new commit on a session whose patches were undone, the undone commits can no longer
 * be redone in place: they are kept reachable under `refs/hagent/<id>/undone/<sha>`. The ref
 * moves that do it (none when `redo` is null), made in the same ref transaction as the commit's.
 */
export function retireRedoMoves(session: Pick<Session, 'id'>, redo: string | null): RefMove[] {
  if (!redo) return [];
  return [
    {
      ref: `refs/hagent/${session.id}/undone/${redo.slice(0, 12)}`,
      old: null,
      new: redo,
      unchecked: true,
    },
    { ref: redoRef(session), old: redo, new: null },
  ];
}

/**
 * The session head and its redo ref: read from git's ref files when the repository keeps them
 * there (no spawn), else with one `git for-each-ref`.
 * @throws HagentError SESSION_NOT_FOUND when the branch is gone.
 */
export async function readSessionRefs(
  ctx: RepoContext,
  session: Session,
): Promise<{ head: string; redo: string | null }> {
  const refs = await Repo.of(ctx).readRefs([sessionRef(session), redoRef(session)]);
  const head = refs.get(sessionRef(session));
  if (!head)
    throw new HagentError(
      'SESSION_NOT_FOUND',
      `session ${session.id}: its branch ${sessionBranch(session.id)} is gone`,
      { session: session.id },
      branchGoneHint(session.id),
    );
  return { head, redo: refs.get(redoRef(session)) ?? null };
}

/** How to go on when a session's branch is gone: doctor puts it back at the head hagent knows. */
export function branchGoneHint(id: string): string {
  return `restore it with: hagent doctor --session ${id} (the branch comes back at the session's last head, from the worktree's reflog or the journal); or end it with: hagent session end ${id} --force --yes (its head is kept as refs/hagent/${id}/ended)`;
}

/** Current head commit of a session. @throws HagentError SESSION_NOT_FOUND when its branch is gone. */
export async function sessionHead(ctx: RepoContext, session: Session): Promise<string> {
  const head = await Repo.of(ctx).readRef(sessionRef(session));
  if (!head)
    throw new HagentError(
      'SESSION_NOT_FOUND',
      `session ${session.id}: its branch ${sessionBranch(session.id)} is gone`,
      { session: session.id },
      branchGoneHint(session.id),
    );
  return head;
}

function newSessionId(): string {
  const d = new Date();
  const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/**
 * Records in the session's record which agent `hagent run` launches in it (`agent`, e.g.
 * `claude`), read afresh and written under the session lock so that a land's write of the record
 * at the same moment is not lost. An agent already recorded is replaced: the field names the last
 * one. Additive: older versions of hagent read the record as before (they drop the field when
 * they write it). @returns the session as recorded.
 * @throws HagentError SESSION_NOT_FOUND, SESSION_CORRUPT, LOCKED.
 */
export async function recordSessionAgent(
  ctx: RepoContext,
  id: string,
  agent: string,
  options: { timeoutMs?: number } = {},
): Promise<Session> {
  return withSessionLock(ctx.commonDir, id, { command: 'run' }, options, async () => {
    const fresh = await readSession(ctx.commonDir, id);
    if (fresh.agent === agent) return fresh;
    const next = { ...fresh, agent };
    await writeSession(ctx.commonDir, next, { durable: false });
    return next;
  });
}

/** Options of {@link startSession}. */
export interface StartOptions {
  name?: string;
  base?: string;
  /** Environment for the configuration (HAGENT_* overrides, XDG_CACHE_HOME, HOME); default none. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** JSON of `hagent session start`. */
export interface StartResult {
  id: string;
  worktree: string;
  branch: string;
  base: string;
  target: string | null;
  included: string[];
  /** True when the worktree came from the pool (moved to the new base) rather than checked out afresh. */
  recycled: boolean;
}

/**
 * Creates a session: a worktree `<root>/<id>` (worktreeRootFor) on a new branch `hagent/<id>`
 * from `base` (default HEAD), recording the base and the land target (the branch checked out in
 * the caller's worktree), and copies ignored files named by `.worktreeinclude`. The worktree is
 * a pooled one moved to `base` when the pool has one (only the files changed since are
 * written), else a fresh `git worktree add`.
 * @throws HagentError BARE_REPO, GIT_TOO_OLD, UNKNOWN_REV, SESSION_EXISTS, USAGE (bad name;
 *   started inside a session worktree), CONFIG_INVALID.
 */
export async function startSession(ctx: RepoContext, options: StartOptions): Promise<StartResult> {
  if (ctx.location.bare || !ctx.location.topLevel) {
    throw new HagentError(
      'BARE_REPO',
      'this is a bare repository: a session needs a checked-out branch to land on',
      {},
      'run hagent in a repository with a working tree',
    );
  }
  const top = ctx.location.topLevel;
  const id = options.name ?? newSessionId();
  if (!SESSION_ID.test(id)) {
    throw new HagentError(
      'USAGE',
      `invalid session name ${JSON.stringify(id)}`,
      {},
      'use 1-64 letters, digits, ".", "_" or "-", not starting with "." or "-"',
    );
  }
  const branch = sessionBranch(id);
  // git's version is checked while the checkout runs: the check's spawn would otherwise wait in
  // front of it (~15-30 ms). A git too old for hagent still makes worktrees; that one is removed.
  const checkVersion = () =>
    assertGitVersion(ctx.cwd).then(
      () => null,
      (e: unknown) => e,
    );
  const env = options.env ?? {};
  let base: string;
  let target: string | null;
  let root: string;
  let pool: number;
  try {
    const [existing, refs, config] = await Promise.all([
      listSessions(ctx.commonDir),
      readStartRefs(ctx, top, options.base, `refs/heads/${branch}`),
      loadConfig(ctx, env),
    ]);
    const inside = existing.find((s) => isInside(s.worktree, top));
    if (inside) {
      throw new HagentError(
        'USAGE',
        `you are inside session ${inside.id}'s worktree`,
        { session: inside.id },
        'start new sessions from your own checkout',
      );
    }
    if (existing.some((s) => s.id === id)) {
      throw new HagentError(
        'SESSION_EXISTS',
        `a session named ${id} already exists`,
        { session: id },
        'pick another --name, or end the old one with hagent session end',
      );
    }
    if (!refs.base) {
      const baseRev = options.base ?? 'HEAD';
      const hint =
        options.base === undefined
          ? 'the repository has no commit yet: make a first commit'
          : 'name a branch, tag or commit that exists (git log shows them)';
      throw new HagentError(
        'UNKNOWN_REV',
        `unknown revision ${JSON.stringify(baseRev)}`,
        { rev: baseRev },
        hint,
      );
    }
    if (refs.branchExists) {
      throw new HagentError(
        'SESSION_EXISTS',
        `branch ${branch} already exists`,
        { branch },
        'pick another --name, or delete that branch',
      );
    }
    base = refs.base;
    target = refs.target;
    root = worktreeRootFor(ctx.commonDir, config.root, config.runtime.worktreeRoot, env);
    pool = config.runtime.pool;
  } catch (e) {
    throw (await checkVersion()) ?? e; // a git too old for hagent is the first thing to fix
  }
  const worktree = path.join(root, id);
  if (
    await fs.lstat(worktree).then(
      () => true,
      () => false,
    )
  ) {
    throw new HagentError(
      'SESSION_EXISTS',
      `the session folder ${worktree} already exists (left by an earlier session named ${id}?)`,
      { session: id, path: worktree },
      `pick another --name, or look inside it and remove it (rm -r ${JSON.stringify(worktree)}) if nothing there is needed; nothing was created`,
    );
  }
  if (pool > 0) {
    const [{ taken }, tooOld] = await Promise.all([
      takeFromPool(ctx.commonDir, top, root, worktree, branch, base),
      checkVersion(),
    ]);
    if (tooOld) {
      if (taken) await removeStartedWorktree(top, worktree, `refs/heads/${branch}`);
      throw tooOld;
    }
    if (taken) {
      const session: Session = {
        version: 1,
        id,
        worktree,
        branch,
        base,
        target,
        createdAt: new Date().toISOString(),
        approval: null,
        lands: [],
      };
      const included = await recordStart(ctx, top, session, true);
      return { id, worktree, branch, base, target, included, recycled: true };
    }
  }
  await fs.mkdir(path.dirname(worktree), { recursive: true });
  // The checkout's spawn first: a spawn holds Node's thread for the fork (~10 ms here).
  const adding = worktreeAdd(top, worktree, branch, base).then(
    () => null,
    (e: unknown) => e,
  );
  const [added, tooOld] = await Promise.all([adding, checkVersion()]);
  if (tooOld) {
    if (!added) await removeStartedWorktree(top, worktree, `refs/heads/${branch}`);
    throw tooOld;
  }
  if (added) {
    // git makes the branch before the checkout: a checkout that failed leaves it, still at base
    // (it did not exist before), which a retry would take for an existing session.
    await deleteRef(top, `refs/heads/${branch}`, base);
    throw added;
  }
  const session: Session = {
    version: 1,
    id,
    worktree,
    branch,
    base,
    target,
    createdAt: new Date().toISOString(),
    approval: null,
    lands: [],
  };
  const included = await recordStart(ctx, top, session, false);
  return { id, worktree, branch, base, target, included, recycled: false };
}

/**
 * Records the new session and copies the files `.worktreeinclude` names into its worktree. A
 * failure (a full disk, a read-only `.git`) takes the record, the worktree and the branch back
 * before it is thrown: a refused start leaves nothing a retry would take for an existing session.
 * @returns the copied paths. @throws the file system's error (IO_FAILED through toHagentError).
 */
async function recordStart(
  ctx: RepoContext,
  top: string,
  session: Session,
  replace: boolean,
): Promise<string[]> {
  try {
    await writeSession(ctx.commonDir, session, { durable: false });
    return await copyWorktreeIncludes(top, session.worktree, { replace });
  } catch (e) {
    await removeSession(ctx.commonDir, session.id).catch(() => undefined);
    await removeStartedWorktree(top, session.worktree, `refs/heads/${session.branch}`).catch(
      () => undefined,
    );
    throw e;
  }
}

/** Takes back a worktree and branch session start made, when it refuses after the checkout. */
async function removeStartedWorktree(
  top: string,
  worktree: string,
  branchRef: string,
): Promise<void> {
  await worktreeRemove(top, worktree);
  await deleteRef(top, branchRef);
}

/**
 * What session start needs of the refs: the base commit (`base`, default HEAD; null when it does
 * not resolve to a commit), the branch checked out in `top` (the land target; null when HEAD is
 * detached) and whether `branchRef` exists already. Read from git's files when the repository
 * keeps them there (no spawn: each costs ~10-20 ms before the checkout), else asked of git.
 * @throws HagentError GIT_FAILED (git path only).
 */
async function readStartRefs(
  ctx: RepoContext,
  top: string,
  base: string | undefined,
  branchRef: string,
): Promise<{ base: string | null; target: string | null; branchExists: boolean }> {
  const head = readHeadDirectSync(ctx.location.gitDir, ctx.commonDir);
  const taken = readRefsDirectSync(ctx.commonDir, [branchRef]);
  const [baseOid, target, branchOid] = await Promise.all([
    base === undefined && head ? head.oid : resolveCommit(ctx.cwd, base ?? 'HEAD'),
    head ? head.branch : symbolicHead(top),
    taken ? (taken.get(branchRef) ?? null) : readRef(ctx.cwd, branchRef),
  ]);
  return { base: baseOid, target, branchExists: branchOid !== null };
}

/**
 * Copies into `worktree` the files of `top` that git ignores and `.worktreeinclude` names
 * (gitignore syntax). Never overwrites a path that exists in the worktree, except, with
 * `replace` (a recycled worktree), a file git ignores there too: the copy a pooled worktree kept
 * gives way to the checkout's current one. Skips symlinks.
 * @returns the copied paths (relative, `/`-separated).
 */
export async function copyWorktreeIncludes(
  top: string,
  worktree: string,
  options: { replace?: boolean } = {},
): Promise<string[]> {
  const includeFile = path.join(top, '.worktreeinclude');
  try {
    await fs.access(includeFile);
  } catch {
    return [];
  }
  const candidates = await untrackedMatching(top, includeFile);
  if (candidates.length === 0) return [];
  const ignored = await ignoredPaths(top, candidates);
  const copied: string[] = [];
  const present: string[] = [];
  for (const rel of ignored) {
    const entry = await readEntry(top, rel);
    if (entry.kind !== 'file') continue;
    // Never through a symlink on the worktree side either (a tracked link at --base).
    const there = await readEntry(worktree, rel);
    if (there.kind === 'file') present.push(rel);
    if (there.kind !== 'missing') continue;
    if (await copyFileNoClobber(path.join(top, rel), path.join(worktree, rel))) copied.push(rel);
  }
  if (options.replace && present.length) {
    // Only files git ignores in the worktree (check-ignore never names a tracked file).
    for (const rel of await ignoredPaths(worktree, present)) {
      await fs.rm(path.join(worktree, rel), { force: true });
      if (await copyFileNoClobber(path.join(top, rel), path.join(worktree, rel))) copied.push(rel);
    }
  }
  return copied;
}

/** One line of `hagent session list`. */
/** A changed file of a session against its base. `status` is git's letter (A, M, D, T). */
export interface ChangedFile {
  path: string;
  status: string;
}

/** JSON of `hagent session status`. */
export interface StatusResult extends SessionSummary {
  changed: ChangedFile[];
  /** Files in the worktree that differ from the session head (edits made outside hagent). */
  outsideEdits: ChangedFile[];
  /**
   * An apply, undo or redo that was interrupted (killed) and not yet finished or undone: the next
   * writing command or `hagent doctor` does it. Its files may show as outside edits until then.
   */
  interrupted: { command: string; txid: string; startedAt: string; files: string[] } | null;
  /**
   * Changes of the user's main checkout seen after this session's shell commands (journal
   * OUTSIDE_CHANGED, newest last; see exec/outside.ts): reported, never undone.
   */
  outsideChanged: { time: string; command: string; message: string; hint: string }[];
}

/**
 * Status of one session: base, head, commit count, files changed against the base, and outside
 * edits pending in its worktree (modified, deleted or untracked files not yet in a commit).
 * @throws HagentError SESSION_NOT_FOUND, NOT_IN_SESSION, SESSION_AMBIGUOUS.
 */
export async function sessionStatus(ctx: RepoContext, id?: string): Promise<StatusResult> {
  const s = await resolveSession(ctx, id);
  const head = await sessionHead(ctx, s);
  const worktreeExists = await fs.stat(s.worktree).then(
    () => true,
    () => false,
  );
  const [chain, changes, outside, intent, state, drift, journal, approval] = await Promise.all([
    firstParentChain(ctx.cwd, s.base, head),
    diffTrees(ctx.cwd, s.base, head),
    worktreeExists ? outsideEdits(s.worktree) : Promise.resolve([]),
    readIntent(ctx.commonDir, s.id, { worktree: s.worktree, ref: sessionRef(s) }),
    sessionState(ctx, s, head),
    readDrift(ctx, s, head),
    readJournal(ctx.commonDir, { session: s.id, failed: true }),
    readApproval(ctx, s),
  ]);
  const interrupted =
    intent === null
      ? null
      : intent === 'damaged'
        ? { command: '?', txid: '?', startedAt: '?', files: [] }
        : {
            command: intent.record.kind,
            txid: intent.record.txid,
            startedAt: intent.record.startedAt,
            files: intent.record.worktrees.flatMap((w) => w.files.map((f) => f.rel)),
          };
  return {
    ...summaryOf(s, head, {
      commits: chain.length,
      approved: approval.approval?.head === head,
      state,
      drift,
    }),
    changed: changes.map((c) => ({ path: c.path, status: c.status })),
    outsideEdits: outside,
    worktreeExists,
    interrupted,
    outsideChanged: journal.entries
      .filter((e) => e.code === 'OUTSIDE_CHANGED')
      .map((e) => ({
        time: e.time,
        command: e.command,
        message: e.message ?? '',
        hint: e.hint ?? '',
      })),
  };
}

/** Files of a session worktree that differ from its HEAD commit (git status, no optional locks). */
export async function outsideEdits(worktree: string): Promise<ChangedFile[]> {
  const out: ChangedFile[] = [];
  for (const rec of await statusRecords(worktree, { untracked: 'all' })) {
    const xy = rec.slice(0, 2);
    // An interrupted command's temp files are its own, not an edit (recovery removes them).
    if (xy === '??' && isTempName(path.basename(rec.slice(3)))) continue;
    out.push({ path: rec.slice(3), status: xy === '??' ? 'A' : xy.includes('D') ? 'D' : 'M' });
  }
  return out;
}

/** JSON of `hagent session end`. */
export interface EndResult {
  id: string;
  removedWorktree: boolean;
  /** True when the worktree went to the pool (clean, detached) for the next session start. */
  pooled: boolean;
  deletedBranch: boolean;
  /** Head commit when the session ended. */
  head: string | null;
  /**
   * `refs/hagent/<id>/ended`, kept when the session ended with work that had not landed or with
   * uncommitted files (committed on the head); else null.
   */
  keptAs: string | null;
  /** Paths of work that had not landed (forced end): kept under `keptAs`. */
  unlanded: string[];
  /** Uncommitted files of the worktree a forced end took away: kept under `keptAs` too. */
  uncommitted: string[];
  /** Uncommitted files the path policy refuses (`.env`): never put in a git object, so not kept. */
  leftOut: { path: string; reason: string }[];
  /** Repositories nested in the worktree, removed with it: their files are kept, their `.git` is not. */
  nested: string[];
  /** Where the head came from when the branch was gone (deleted by the user): `reflog` or `journal`. */
  recoveredFrom?: string;
  /** Set when this call only finished a session end that was interrupted (killed). */
  recovered?: string;
}

/** Options of {@link endSession}. */
export interface EndOptions {
  /** End even with work that has not landed. */
  force?: boolean;
  /** Environment for configuration overrides (the pool). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Asked before a forced end drops work from the session (the paths that have not landed, the
   * uncommitted files); false refuses with CONFIRMATION_REQUIRED. Default: refuse.
   */
  confirm?: (unlanded: readonly string[], uncommitted: readonly string[]) => Promise<boolean>;
}

/**
 * How to keep uncommitted files of a session that `end` refuses to drop: hagent sync, after
 * bringing the worktree back onto the session branch when it is off it (sync refuses then).
 */
function keepHint(s: Session): string {
  const off = worktreeHeadDrift(s);
  const back = off
    ? `git -C ${s.worktree} switch hagent/${s.id}${off.kind === 'other-branch' ? ` (then git -C ${s.worktree} merge ${off.branch.replace('refs/heads/', '')} for what was committed there)` : ''}, then `
    : '';
  return `keep them with ${back}hagent sync --session ${s.id} (then review and land), or pass --force --yes to end it anyway (they are kept, committed, as refs/hagent/${s.id}/ended)`;
}

/**
 * A plain end refuses to remove repositories nested in the worktree (`git init sub`, a cloned
 * dependency): their files go into commits as ordinary files, but their own history (`.git`)
 * exists only there.
 * @throws HagentError UNLANDED_WORK naming them (details.nested).
 */
function refuseNestedRepositories(s: Session, nested: readonly string[]): never {
  const one = nested.length === 1;
  throw new HagentError(
    'UNLANDED_WORK',
    `session ${s.id}'s worktree holds ${one ? 'a repository' : `${nested.length} repositories`} of ${one ? 'its' : 'their'} own (${cappedList(nested)}), whose history exists only there`,
    { session: s.id, files: [...nested], nested: [...nested] },
    `copy what you need of ${one ? 'it' : 'them'} first (e.g. cp -r ${path.join(s.worktree, nested[0]!)} <elsewhere>, or git -C ${path.join(s.worktree, nested[0]!)} push <remote>), then end it with --force --yes (the files stay in the session's commits, kept as refs/hagent/${s.id}/ended when not landed; the nested .git is removed)`,
  );
}

/**
 * The way to land a session's unlanded work, as its approval stands (`coverage`, over the
 * unlanded paths): land what is approved, approve what is not (review's words).
 */
function landHint(s: Session, coverage: ApprovalCoverage): string {
  const land = `hagent land --session ${s.id}`;
  if (coverage.notApproved.length === 0) return `land it with ${land}`;
  const approve = coverage.current
    ? approveCommand(s.id, coverage.notApproved)
    : `hagent review --session ${s.id} --approve [PATH…]`;
  return coverage.toLand.length
    ? `land the approved part with ${land} and approve the rest with ${approve} (then land again)`
    : `approve it with ${approve}, then ${land}`;
}

/**
 * Ends a session: removes its worktree, its branch and its metadata. Refuses to drop work that
 * has not landed ({@link unlandedPaths}) or uncommitted files in its worktree unless `force`, and
 * then only once `confirm` says yes; the head then stays reachable as `refs/hagent/<id>/ended`.
 * @throws HagentError UNLANDED_WORK listing what would be lost; CONFIRMATION_REQUIRED (forced,
 *   not confirmed); USAGE (run inside the worktree); SESSION_NOT_FOUND and friends.
 */
export async function endSession(
  ctx: RepoContext,
  id: string | undefined,
  options: EndOptions = {},
): Promise<EndResult> {
  // A session end killed after its record is finished first (its metadata may be gone).
  const finished = id !== undefined ? await finishInterruptedEnds(ctx.commonDir, id) : [];
  if (finished.length) {
    const was = finished[0]!;
    return {
      id: id!,
      removedWorktree: true,
      pooled: false,
      deletedBranch: true,
      head: null,
      keptAs: null,
      uncommitted: [],
      unlanded: [],
      leftOut: [],
      nested: [],
      recovered: was.action,
    };
  }
  const s = await resolveSession(ctx, id);
  if (isInside(s.worktree, ctx.cwd)) {
    throw new HagentError(
      'USAGE',
      `you are inside session ${s.id}'s worktree, which ending it removes`,
      { session: s.id },
      `cd to your own checkout first, then: hagent session end ${s.id}`,
    );
  }
  // A branch the user deleted: its head is still known (session/recover-head.ts) and kept.
  // It is put back first (compare-and-swap on its absence), so what follows sees the session as
  // it was: the worktree's edits against that head, its unlanded work.
  let branchHead = await readRef(ctx.cwd, sessionRef(s));
  const recovered = branchHead ? null : await recoverSessionHead(ctx, s);
  if (
    recovered &&
    (await createRef(ctx.cwd, sessionRef(s), recovered.head, 'hagent: session branch restored'))
  )
    branchHead = recovered.head;
  const head = branchHead ?? recovered?.head ?? null;
  const worktreeExists = await fs.stat(s.worktree).then(
    () => true,
    () => false,
  );
  const [pending, unlanded, nested] = await Promise.all([
    worktreeExists ? outsideEdits(s.worktree) : Promise.resolve([]),
    head ? unlandedPaths(ctx, s, head) : Promise.resolve([]),
    worktreeExists ? nestedRepositories(s.worktree) : Promise.resolve([]),
  ]);
  const uncommitted = pending.map((p) => p.path);
  if (!options.force) {
    if (nested.length) refuseNestedRepositories(s, nested);
    if (uncommitted.length) {
      throw new HagentError(
        'UNLANDED_WORK',
        `session ${s.id} has ${uncommitted.length} uncommitted file${uncommitted.length === 1 ? '' : 's'} in its worktree: ${cappedList(uncommitted)}`,
        { session: s.id, files: uncommitted },
        keepHint(s),
      );
    }
    if (unlanded.length) {
      const drift = head ? await readDrift(ctx, s, head) : null;
      const coverage = approvalCoverage((await readApproval(ctx, s)).approval, head!, unlanded);
      // A path the policy protects makes a plain land refuse (LAND_DENIED): the hint says how past it.
      const policy = (await loadConfig(ctx, options.env ?? {})).policy;
      const denied = unlanded.filter((p) => deniedReason(p, policy) !== null);
      const hint =
        drift?.kind === 'rewound' && drift.pastBase
          ? `its branch was reset past its base, so these changes are not the session's work; ${drift.hint}; or pass --force --yes to end it anyway`
          : denied.length
            ? `${cappedList(denied)} ${denied.length === 1 ? 'is a path' : 'are paths'} the policy protects, so a plain land refuses it: land it with hagent land --session ${s.id} --allow-denied, or take ${denied.length === 1 ? 'that path' : 'those paths'} out first (hagent undo --session ${s.id}, or a patch that reverts ${denied.length === 1 ? 'it' : 'them'}), or pass --force --yes to end it anyway (the head stays reachable as refs/hagent/${s.id}/ended)`
            : `${landHint(s, coverage)}, or pass --force --yes to end it anyway (the head stays reachable as refs/hagent/${s.id}/ended)`;
      // Only an approval of this head has parts to tell apart (the hint says how to approve).
      const approvedPart = !coverage.current
        ? ''
        : coverage.notApproved.length
          ? coverage.toLand.length
            ? `; approved: ${cappedList(coverage.toLand, 5)}, not approved yet: ${cappedList(coverage.notApproved, 5)}`
            : `, none of it approved${coverage.landed.length ? ` (approved and landed: ${cappedList(coverage.landed, 5)})` : ''}`
          : '';
      throw new HagentError(
        'UNLANDED_WORK',
        `session ${s.id} has work that has not landed: ${cappedList(unlanded)}${approvedPart}`,
        { session: s.id, files: unlanded, coverage },
        hint,
      );
    }
  } else if (
    (unlanded.length || uncommitted.length || nested.length) &&
    !(await (options.confirm ?? (async () => false))(unlanded, [...uncommitted, ...nested]))
  ) {
    throw new HagentError(
      'CONFIRMATION_REQUIRED',
      `ending session ${s.id} takes away ${[unlanded.length ? `work that has not landed (${cappedList(unlanded)})` : '', uncommitted.length ? `uncommitted files (${cappedList(uncommitted)})` : '', nested.length ? `nested repositories (${cappedList(nested)})` : ''].filter(Boolean).join(' and ')}`,
      { session: s.id, files: [...unlanded, ...uncommitted], nested },
      `pass --yes to end it anyway (the head and any uncommitted files stay reachable as refs/hagent/${s.id}/ended), or land it first`,
    );
  }
  const checked = unlanded.length === 0 && uncommitted.length === 0;
  // Uncommitted files a forced end drops are kept too: committed on the head (unreferenced until
  // the ref transaction below keeps them as `ended`), so nothing is lost, only put away; what
  // the policy refuses is left out of every git object.
  const policy = (await loadConfig(ctx, options.env ?? {})).policy;
  const snap =
    head && uncommitted.length && worktreeExists
      ? await commitUncommitted(ctx, s, head, policy)
      : null;
  const kept = snap?.commit ?? head;
  const keptAs =
    head && (unlanded.length || kept !== head || recovered) ? `refs/hagent/${s.id}/ended` : null;
  let removedWorktree = false;
  let pooled = false;
  // One transaction, rolled forward once recorded (transaction/run.ts, `end`): the record; the
  // worktree into the pool when that loses nothing; the session's refs in one ref transaction
  // (the head kept as `ended`, when its work has not landed, in the same step as the branch
  // goes, so it is never unreachable; the redo ref, the land base and the approval go with it:
  // a later session of the same name must not start from this one's); the worktree removed;
  // the metadata removed; the record removed. A kill after the record leaves what recovery
  // finishes (`hagent doctor`, or this command again), never a session half ended.
  const redo = redoRef(s);
  const landBase = landBaseRef(s);
  const approved = approvalRef(s);
  // The head every transaction keeps beside the branch (transaction/run.ts, keptHeads): `ended`
  // keeps what did not land, the target what did.
  const keptHead = `refs/hagent/${s.id}/head`;
  await withSessionLock(ctx.commonDir, s.id, { command: 'session end' }, {}, async () => {
    const now = await readRefs(ctx.cwd, ctx.commonDir, [redo, landBase, approved, keptHead]);
    await runTransaction(
      ctx.commonDir,
      ctx.cwd,
      {
        kind: 'end',
        session: s.id,
        message: 'hagent: session end',
        worktrees: [],
        refs: [
          ...(keptAs ? [{ ref: keptAs, old: null, new: kept, unchecked: true }] : []),
          ...(branchHead ? [{ ref: sessionRef(s), old: branchHead, new: null }] : []),
          ...[redo, landBase, approved, keptHead].map((ref) => ({
            ref,
            old: now.get(ref) ?? null,
            new: null,
          })),
        ],
        note: null,
        rollForward: true,
        end: {
          worktree: s.worktree,
          sessionFile: sessionFilePath(ctx.commonDir, s.id),
          beforeRefs: async () => {
            // A nested repository's history exists only in the worktree: never into the pool.
            if (worktreeExists && head && !nested.length && !recovered)
              pooled = await poolOnEnd(ctx, s, head, checked, options.env ?? {});
          },
          afterRefs: async () => {
            if (worktreeExists && !pooled) {
              await removeWorktree(ctx.cwd, s.worktree);
              removedWorktree = true;
            } else await pruneWorktrees(ctx.cwd);
          },
        },
      },
      { cwd: ctx.cwd, commonDir: ctx.commonDir, gitDir: null, store: null },
    );
  });
  const deletedBranch = !!branchHead;
  const leftOut = snap?.skipped ?? [];
  const out = new Set(leftOut.map((k) => k.path));
  return {
    id: s.id,
    removedWorktree,
    pooled,
    deletedBranch,
    head,
    keptAs,
    unlanded,
    uncommitted: kept !== head ? uncommitted.filter((p) => !out.has(p)) : [],
    leftOut,
    nested,
    ...(recovered ? { recoveredFrom: recovered.from } : {}),
  };
}

/**
 * Commits the uncommitted files of session `s`'s worktree (tracked and untracked, not ignored)
 * on `head`, from a copy of the worktree's index: what `session end --force` keeps as `ended`.
 * @returns the commit id. @throws HagentError GIT_FAILED.
 */
async function commitUncommitted(
  ctx: RepoContext,
  s: Session,
  head: string,
  policy: Policy,
): Promise<{ commit: string; skipped: { path: string; reason: string }[] }> {
  const text = await fs.readFile(path.join(s.worktree, '.git'), 'utf8').catch(() => '');
  const gitDir = parseGitFile(s.worktree, text);
  return commitWorktreeBytes(
    ctx.commonDir,
    ctx.cwd,
    gitDir ? { worktree: s.worktree, gitDir } : { worktree: s.worktree },
    gitDir ? path.join(gitDir, 'index') : null,
    [head],
    `hagent: uncommitted files of session ${s.id} when it ended\n`,
    policy,
  );
}

/**
 * Puts an ending session's worktree into the pool when that loses nothing: the pool is on
 * (`pool` > 0), the worktree is in the repository's current worktree folder, no transaction of
 * the session is pending, its work has landed (or it is empty), and it holds no uncommitted or
 * untracked file git does not ignore (`checked`: endSession has just verified the last two).
 * Ignored files stay only where `recycleIgnored` allows. Any failure leaves the removal to the
 * caller, as before pools existed.
 */
async function poolOnEnd(
  ctx: RepoContext,
  s: Session,
  head: string,
  checked: boolean,
  env: Readonly<Record<string, string | undefined>>,
): Promise<boolean> {
  try {
    const config = await loadConfig(ctx, env);
    if (config.runtime.pool === 0) return false;
    const root = worktreeRootFor(ctx.commonDir, config.root, config.runtime.worktreeRoot, env);
    if (path.resolve(path.dirname(s.worktree)) !== path.resolve(root)) return false; // only worktrees made where sessions go now
    // The session end's own record is the only one pending (it holds the session lock).
    const pending = await readIntent(ctx.commonDir, s.id);
    if (pending !== null && (pending === 'damaged' || pending.record.kind !== 'end')) return false;
    if (
      !checked &&
      ((await unlandedPaths(ctx, s, head)).length || (await outsideEdits(s.worktree)).length)
    )
      return false;
    const top = config.root ?? ctx.location.topLevel;
    const keep = config.runtime.recycleIgnored ?? [
      ...(top ? await worktreeIncludePatterns(top) : []),
      ...DEPENDENCY_FOLDERS,
    ];
    return await enterPool(ctx.commonDir, ctx.cwd, s.worktree, root, config.runtime.pool, keep);
  } catch {
    return false;
  }
}

/** The patterns of `<top>/.worktreeinclude` (gitignore syntax; blank lines and comments left out). */
async function worktreeIncludePatterns(top: string): Promise<string[]> {
  const text = await fs.readFile(path.join(top, '.worktreeinclude'), 'utf8').catch(() => '');
  return text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
}
