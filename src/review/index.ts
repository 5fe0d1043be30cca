/**
 * review: what a session changed against its base — stat, unified diff, applied patches — and
 * approval of its current head (all paths or some).
 */
import { HagentError } from '../errors.js';
import { cappedList } from '../output/index.js';
import {
  diffNumstat,
  diffText,
  diffRenames,
  diffTrees,
  firstParentLogWithNames,
  looseObjectStore,
  moveRefs,
  readSessionNote,
  readRef,
  type Rename,
} from '../git/index.js';
import { assertReviewedHead, type ReviewedFrom } from './moved.js';
import { withSessionLock } from '../lock/index.js';
import {
  approvalCoverage,
  approvalMove,
  approveCommand,
  widenApproval,
  patchesFrom,
  readApproval,
  readDrift,
  readLandBase,
  sessionHead,
  type Approval,
  type ApprovalCoverage,
  type ApprovalState,
  type Drift,
  type LandBase,
  type RepoContext,
  type Session,
} from '../session/index.js';

/** One file of a review stat. `added`/`removed` are line counts; null for binary files. */
export interface ReviewFile {
  path: string;
  status: string;
  added: number | null;
  removed: number | null;
}

/** One applied patch of a session (a commit on its branch), newest first. `time` is ISO 8601. */
export interface ReviewPatch {
  commit: string;
  time: string;
  subject: string;
  files: { path: string; status: string }[];
  /** True for a commit hagent did not make from a patch (the agent's own git commit, or adopted outside edits). */
  outside: boolean;
  patch?: string;
}

/** JSON of `hagent review`. */
export interface ReviewResult {
  ok: true;
  session: string;
  base: string;
  /** What `files` and the diff are against: the base, what has landed, or a target commit merged in (session/landed.ts). */
  since: LandBase['since'];
  head: string;
  target: string | null;
  files: ReviewFile[];
  patches: ReviewPatch[];
  /** How the session moved without hagent (session/drift.ts), or null. */
  drift: Drift | null;
  diff?: string;
  approval: Approval | null;
  approvedNow: boolean;
  /** What the approval covers of `files`: to land, landed already, not approved yet. */
  coverage: ApprovalCoverage;
  /** Files moved (git's rename detection): each is a `D` and an `A` entry of `files` too. */
  renames: Rename[];
  /** Renames of which this approval named one side: both sides were approved, as one move. */
  movedWith?: Rename[];
}

/**
 * Options of {@link reviewSession}. `approve`: true = every path; a list = those paths,
 * repository-relative, each a changed file or a folder holding some ('' or '.': the root).
 */
export interface ReviewOptions {
  diff?: boolean;
  color?: boolean;
  withPatchText?: boolean;
  approve?: true | string[];
  /** The paths as the user typed them (named in a refusal beside the resolved ones). */
  given?: string[];
  /**
   * The head the human reviewed: an approval is refused (HEAD_MOVED) when the session moved since
   * in a way the approval would cover. Absent: the current head is approved as it is.
   */
  reviewedHead?: string;
  /** Where {@link reviewedHead} came from, for the refusal's words. */
  reviewedFrom?: ReviewedFrom;
}

/** Parses `git diff --numstat -z` (no renames). Pure. */
export function parseNumstat(
  out: Buffer,
): Map<string, { added: number | null; removed: number | null }> {
  const map = new Map<string, { added: number | null; removed: number | null }>();
  for (const rec of out.toString('utf8').split('\0')) {
    if (!rec) continue;
    const [a = '-', r = '-', ...rest] = rec.split('\t');
    map.set(rest.join('\t'), {
      added: a === '-' ? null : Number(a),
      removed: r === '-' ? null : Number(r),
    });
  }
  return map;
}

/** The `git log` format of a session's patches, read by {@link parseLogNameStatus}. */
export const PATCH_LOG_FORMAT =
  '%x01%H%x00%cI%x00%s%x00%(trailers:key=Hagent-Op,valueonly,separator=%x02)';

/** Parses `git log -z --format=PATCH_LOG_FORMAT --name-status`. Pure. */
export function parseLogNameStatus(out: Buffer): ReviewPatch[] {
  const patches: ReviewPatch[] = [];
  for (const rec of out.toString('utf8').split('\x01')) {
    if (!rec) continue;
    const fields = rec.split('\0');
    const [commit = '', time = '', subject = '', op = '', ...rest] = fields;
    const files: { path: string; status: string }[] = [];
    for (let i = 0; i + 1 < rest.length; i += 2) {
      const status = rest[i]!.trim();
      if (!status) {
        i -= 1;
        continue;
      }
      files.push({ status: status.charAt(0), path: rest[i + 1]! });
    }
    patches.push({
      commit,
      time,
      subject,
      files,
      outside: op.trim() === '' || op.trim() === 'sync',
    });
  }
  return patches;
}

/**
 * The commits of a session since its last land (or its base), first-parent, leaving out what its
 * target holds (commits the agent brought in from the target by merge or rebase are the user's).
 * A revision range for `git log`.
 */
export async function sessionPatchRange(
  ctx: RepoContext,
  session: Session,
  head: string,
): Promise<string[]> {
  const [from, target] = await Promise.all([
    patchesFrom(ctx, session, head),
    session.target ? readRef(ctx.cwd, session.target) : null,
  ]);
  return [`${from}..${head}`, ...(target ? [`^${target}`] : [])];
}

/**
 * The changed files each of `specs` names, as a git pathspec without wildcards does: the file
 * itself, or every changed file under a folder (`''` and `.` are the whole repository). `specs`
 * are repository-relative, `/`-separated, normalised (no `./`, no trailing `/`). Pure.
 * @returns the matched files (sorted, once each) and the specs that match none.
 */
export function matchChangedPaths(
  changed: readonly string[],
  specs: readonly string[],
): { paths: string[]; unmatched: string[] } {
  const paths = new Set<string>();
  const unmatched: string[] = [];
  for (const spec of specs) {
    const root = spec === '' || spec === '.';
    const hits = changed.filter((c) => root || c === spec || c.startsWith(`${spec}/`));
    if (hits.length === 0) unmatched.push(spec);
    for (const h of hits) paths.add(h);
  }
  return { paths: [...paths].sort(), unmatched };
}

/**
 * Moves the session's approval ref to `approval` (session/approval.ts), in one ref transaction
 * under the session lock, the ref's compare-and-swap against the value read before: an approval
 * or land made meanwhile refuses this one (TARGET_MOVED) instead of being overwritten.
 * @throws HagentError TARGET_MOVED, LOCKED, GIT_FAILED.
 */
async function recordApproval(
  ctx: RepoContext,
  session: Session,
  stored: ApprovalState,
  approval: Approval,
): Promise<void> {
  const store = await looseObjectStore(ctx.commonDir, approval.head);
  const move = await approvalMove(ctx, store, session, stored, approval);
  await withSessionLock(ctx.commonDir, session.id, { command: 'review --approve' }, {}, () =>
    moveRefs(ctx.cwd, [move], `hagent review --approve ${session.id}`),
  );
}

/**
 * Reviews a session: what it would land — the per-file stat and the unified diff of its changes
 * since its land base (its base, or what it has landed: session/landed.ts) — and its patches since
 * the last land (commits, newest first, with the patch text from the session's note (git/notes.ts) when
 * asked); records approval of the current head when asked.
 * @throws HagentError USAGE when an approved path is not among the changes to land;
 *   NOTHING_TO_LAND when approving a session with nothing to land.
 */
export async function reviewSession(
  ctx: RepoContext,
  session: Session,
  options: ReviewOptions = {},
): Promise<ReviewResult> {
  const head = await sessionHead(ctx, session);
  const cwd = ctx.cwd;
  const [landBase, range, drift] = await Promise.all([
    readLandBase(ctx, session, head),
    sessionPatchRange(ctx, session, head),
    readDrift(ctx, session, head),
  ]);
  const from = landBase.treeish;
  const [changes, numstat, log, diff, renames] = await Promise.all([
    diffTrees(cwd, from, head),
    diffNumstat(cwd, from, head),
    firstParentLogWithNames(cwd, PATCH_LOG_FORMAT, range),
    options.diff ? diffText(cwd, from, head, !!options.color) : Promise.resolve(null),
    diffRenames(cwd, from, head),
  ]);
  const stats = parseNumstat(numstat);
  const files = changes.map((c) => ({
    path: c.path,
    status: c.status,
    ...(stats.get(c.path) ?? { added: null, removed: null }),
  }));
  const patches = parseLogNameStatus(log);
  if (options.withPatchText) {
    await Promise.all(
      patches.map(async (p) => {
        const note = await readSessionNote(cwd, session.id, p.commit);
        if (note !== null) p.patch = note;
      }),
    );
  }
  const stored = await readApproval(ctx, session);
  let approval = stored.approval;
  let approvedNow = false;
  let movedWith: Rename[] = [];
  if (options.approve !== undefined) {
    if (files.length === 0) {
      throw new HagentError(
        'NOTHING_TO_LAND',
        `session ${session.id} has no changes to approve${landBase.since === 'base' ? '' : ' (everything it changed has landed)'}`,
        { session: session.id },
        landBase.since === 'base'
          ? 'apply a patch first'
          : `nothing to do; end the session with hagent session end ${session.id}`,
      );
    }
    let paths: string[] | null = null;
    if (options.approve !== true) {
      const specs = options.approve;
      const known = files.map((f) => f.path);
      const matched = matchChangedPaths(known, specs);
      if (matched.unmatched.length) {
        const unknown = matched.unmatched;
        const landed = new Set(
          (await diffTrees(cwd, session.base, head, unknown)).map((c) => c.path),
        );
        const wasLanded = (p: string) =>
          [...landed].some((l) => l === p || l.startsWith(`${p}/`) || p === '' || p === '.');
        const asGiven = (p: string) => options.given?.[specs.indexOf(p)] ?? p;
        const what = unknown.map((p) => {
          const why = wasLanded(p) ? 'landed already' : 'not changed by this session';
          const named = p === '' ? '.' : p;
          return asGiven(p) === named ? `${named} (${why})` : `${asGiven(p)} (${named}: ${why})`;
        });
        throw new HagentError(
          'USAGE',
          `not among the changes to land: ${what.join(', ')}`,
          { session: session.id, files: unknown.map(asGiven), paths: unknown, changed: known },
          `approve paths among: ${cappedList(known, 10)} (${approveCommand(session.id, known)})`,
        );
      }
      ({ paths, movedWith } = withRenamePartners(matched.paths, renames));
    }
    if (options.reviewedHead !== undefined)
      await assertReviewedHead(
        cwd,
        session.id,
        options.reviewedHead,
        head,
        paths,
        options.reviewedFrom ?? 'named',
      );
    approval = widenApproval(stored.approval, head, paths, new Date().toISOString());
    await recordApproval(ctx, session, stored, approval);
    approvedNow = true;
  }
  const result: ReviewResult = {
    ok: true,
    session: session.id,
    base: session.base,
    since: landBase.since,
    head,
    target: session.target,
    files,
    patches,
    drift,
    approval,
    approvedNow,
    coverage: approvalCoverage(
      approval,
      head,
      files.map((f) => f.path),
    ),
    renames,
    ...(movedWith.length ? { movedWith } : {}),
  };
  if (diff !== null) result.diff = diff;
  return result;
}

/**
 * `paths` with the other side of every rename of which they name one side: a move is approved
 * as a whole (approving only its delete would land the delete alone). Pure.
 * @returns the paths (sorted, once each) and the renames that were completed.
 */
export function withRenamePartners(
  paths: readonly string[],
  renames: readonly Rename[],
): { paths: string[]; movedWith: Rename[] } {
  const named = new Set(paths);
  const movedWith = renames.filter((r) => named.has(r.from) !== named.has(r.to));
  for (const r of movedWith) named.add(named.has(r.from) ? r.to : r.from);
  return { paths: [...named].sort(), movedWith };
}
