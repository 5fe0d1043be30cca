/**
 * radar: which unlanded sessions change the same files and lines, what the target changed under
 * them since their land base, and what landing each one now would give.
 *
 * Owns: reading each session's change since its land base as line ranges (`git diff -U0`, parsed
 * by ranges.ts), the overlaps between sessions and with the target, the land prediction (land's
 * own merge: `landOutlook` of src/land), and the check an edit goes through before it is written
 * (`"overlap"` of `.hagent/config.json`). Writes nothing but its cache file
 * (`<git-common-dir>/hagent/radar-cache.json`) and the objects merge-tree leaves.
 * Must not import: commands/, output/, agents/, mcp/ (they import it).
 *
 * Coordinates: each session's ranges are lines of **its own land base** (the old side of its
 * diff). Two sessions started from the same target commit share it, so their ranges compare
 * exactly; for sessions whose land bases hold different versions of a file, the comparison is
 * an estimate (the prediction, computed by git, is exact).
 *
 * Cost: a session's ranges are kept in the cache under a key of everything its land base and
 * head depend on (base, head, land-base ref, target, number of lands); a check on the hot path
 * (hook, MCP) reads the session records, the refs (in-process) and the cache, and asks git only
 * for a session whose key changed.
 */
import path from 'node:path';
import { HagentError } from '../errors.js';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { commitsTouching, diffTrees, diffZeroContext, Repo } from '../git/index.js';
import {
  approvalRef,
  hagentDir,
  landBaseRef,
  listSessions,
  readLandBase,
  sessionRef,
  summaryRefNames,
  type RepoContext,
  type Session,
} from '../session/index.js';
import {
  anyMeet,
  formatRanges,
  hunkRange,
  parseZeroContextDiff,
  toOldSide,
  touchedLines,
  type Hunk,
  type LineRange,
} from './ranges.js';

export {
  anyMeet,
  formatRange,
  formatRanges,
  hunkRange,
  parseZeroContextDiff,
  rangesMeet,
  toOldSide,
  touchedLines,
  unquoteGitPath,
  type FileHunks,
  type Hunk,
  type LineRange,
} from './ranges.js';

/** A file two unlanded sessions both change. */
export interface Overlap {
  /** The other session's id. */
  session: string;
  path: string;
  /** This session's changed ranges in the file (its land base's lines); `[]`: the whole file (binary, mode). */
  lines: LineRange[];
  /** The other session's changed ranges in the file (its land base's lines). */
  otherLines: LineRange[];
  /** Whether some range of each meets (intersects or touches: ranges.ts): git would most likely conflict. */
  linesOverlap: boolean;
}

/** A file this session changes that the target also changed since the session's land base. */
export interface TargetOverlap {
  path: string;
  lines: LineRange[];
  /** What the target changed in the file since the land base (the land base's lines). */
  targetLines: LineRange[];
  linesOverlap: boolean;
  /** The target's commits since the land base that touch the file, newest first (at most 20). */
  commits: string[];
}

/** The predicted outcome of landing the session now (land's own merge, nothing written). */
export interface Prediction {
  outcome: 'clean' | 'conflict';
  /** The conflicting paths; empty when clean. */
  paths: string[];
}

/** What the radar says of one session. */
export interface SessionRadar {
  session: string;
  /** Whether the session has changes since its land base (only those take part). */
  unlanded: boolean;
  overlaps: Overlap[];
  targetOverlaps: TargetOverlap[];
  /** Null when there is nothing to land, or no target branch. */
  prediction: Prediction | null;
}

/** One session's change since its land base: path → hunks (null: no hunk, the whole file). */
interface Change {
  key: string;
  landBase: string;
  files: Record<string, Hunk[] | null>;
}

/** The target side of a session's radar, kept with the key it was computed for. */
interface TargetSide {
  key: string;
  targetOverlaps: TargetOverlap[];
  prediction: Prediction | null;
}

interface CacheFile {
  version: 1;
  changes: Record<string, Change>;
  target: Record<string, TargetSide>;
}

/** The refs a session's radar depends on. */
interface SessionRefs {
  head: string | null;
  target: string | null;
  /** Key of the change: base, head, land-base ref, target, lands. */
  key: string;
  /** Key of the target side: the change's key and the approval ref. */
  targetKey: string;
  /** Whether an approval ref exists (of any head). */
  approvalRef: boolean;
}

/** In-process copy of the cache (a long-lived MCP server or hook server reads the file once). */
const memory = new Map<string, CacheFile>();

function cacheFile(commonDir: string): string {
  return path.join(hagentDir(commonDir), 'radar-cache.json');
}

async function readCache(commonDir: string): Promise<CacheFile> {
  const raw = (await readJsonFile(cacheFile(commonDir)).catch(() => null)) as CacheFile | null;
  if (raw && raw.version === 1 && raw.changes && raw.target) return raw;
  return memory.get(commonDir) ?? { version: 1, changes: {}, target: {} };
}

async function writeCache(
  commonDir: string,
  cache: CacheFile,
  live: readonly string[],
): Promise<void> {
  // Ended sessions leave the cache.
  const keep = new Set(live);
  for (const id of Object.keys(cache.changes)) if (!keep.has(id)) delete cache.changes[id];
  for (const id of Object.keys(cache.target)) if (!keep.has(id)) delete cache.target[id];
  memory.set(commonDir, cache);
  await writeJsonFile(cacheFile(commonDir), cache, { durable: false }).catch(() => undefined);
}

/** Every ref the radar of `sessions` depends on, read in one go (in-process where git's files allow). */
async function readSessionRefs(
  ctx: RepoContext,
  sessions: readonly Session[],
): Promise<Map<string, SessionRefs>> {
  const refs = await Repo.of(ctx).readRefs(summaryRefNames(sessions));
  const out = new Map<string, SessionRefs>();
  for (const s of sessions) {
    const head = refs.get(sessionRef(s)) ?? null;
    const target = s.target ? (refs.get(s.target) ?? null) : null;
    const key = [s.base, head, refs.get(landBaseRef(s)) ?? '-', target ?? '-', s.lands.length].join(
      ' ',
    );
    const approval = refs.get(approvalRef(s)) ?? null;
    out.set(s.id, {
      head,
      target,
      key,
      targetKey: `${key} ${approval ?? '-'}`,
      approvalRef: approval !== null,
    });
  }
  return out;
}

/** A session's change since its land base, from git (two calls side by side). */
async function computeChange(
  ctx: RepoContext,
  s: Session,
  head: string,
  key: string,
): Promise<Change> {
  const landBase = await readLandBase(ctx, s, head);
  const [raw, text] = await Promise.all([
    diffTrees(ctx.cwd, landBase.treeish, head),
    diffZeroContext(ctx.cwd, landBase.treeish, head),
  ]);
  const hunks = parseZeroContextDiff(text);
  const files: Record<string, Hunk[] | null> = {};
  for (const c of raw) files[c.path] = hunks.get(c.path) ?? null;
  return { key, landBase: landBase.treeish, files };
}

/**
 * The changes of `sessions` (those with a head), from the cache where the key still holds,
 * else from git; `dirty` is set when any was computed.
 */
async function changesOf(
  ctx: RepoContext,
  sessions: readonly Session[],
  refs: Map<string, SessionRefs>,
  cache: CacheFile,
): Promise<{ changes: Map<string, Change>; dirty: boolean }> {
  let dirty = false;
  const changes = new Map<string, Change>();
  await Promise.all(
    sessions.map(async (s) => {
      const r = refs.get(s.id)!;
      if (!r.head) return;
      let c = cache.changes[s.id];
      if (!c || c.key !== r.key) {
        // A session git cannot read (a damaged land base) takes no part; its own commands say why.
        const computed = await computeChange(ctx, s, r.head, r.key).catch(() => null);
        if (!computed) return;
        c = computed;
        cache.changes[s.id] = c;
        dirty = true;
      }
      changes.set(s.id, c);
    }),
  );
  return { changes, dirty };
}

const rangesOf = (h: Hunk[] | null): LineRange[] => (h ? h.map(hunkRange) : []);

/** The overlaps of session `id`'s change with every other change of `changes`. Pure. */
function overlapsOf(id: string, changes: Map<string, Change>): Overlap[] {
  const mine = changes.get(id);
  if (!mine) return [];
  const out: Overlap[] = [];
  for (const [other, theirs] of changes) {
    if (other === id) continue;
    for (const [p, h] of Object.entries(mine.files)) {
      if (!(p in theirs.files)) continue;
      const lines = rangesOf(h);
      const otherLines = rangesOf(theirs.files[p]!);
      out.push({
        session: other,
        path: p,
        lines,
        otherLines,
        linesOverlap: anyMeet(lines, otherLines),
      });
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path) || a.session.localeCompare(b.session));
}

/** The target side of one session: what the target changed under it, and the land prediction. */
async function computeTargetSide(
  ctx: RepoContext,
  s: Session,
  r: SessionRefs,
  change: Change,
): Promise<TargetSide> {
  // The target still at the land base and nothing approved (the usual state while agents work):
  // the target changed nothing under the session, and land's merge of the whole head onto its
  // own land base is clean — what landOutlook would answer, without its git calls.
  if (r.target === change.landBase && !r.approvalRef && !s.approval)
    return { key: r.targetKey, targetOverlaps: [], prediction: { outcome: 'clean', paths: [] } };
  // Land is loaded only here: the hot path (checkOverlap) never predicts.
  const { landOutlook } = await import('../land/index.js');
  const paths = Object.keys(change.files);
  const [text, predicted] = await Promise.all([
    r.target && paths.length
      ? diffZeroContext(ctx.cwd, change.landBase, r.target, paths)
      : Promise.resolve(''),
    landOutlook(ctx, s, r.head!),
  ]);
  const onTarget = parseZeroContextDiff(text);
  const touched =
    r.target && paths.length ? await diffTrees(ctx.cwd, change.landBase, r.target, paths) : [];
  const targetOverlaps: TargetOverlap[] = [];
  for (const t of touched) {
    const lines = rangesOf(change.files[t.path] ?? null);
    const targetLines = rangesOf(onTarget.get(t.path) ?? null);
    targetOverlaps.push({
      path: t.path,
      lines,
      targetLines,
      linesOverlap: anyMeet(lines, targetLines),
      commits: (await commitsTouching(ctx.cwd, `${change.landBase}..${r.target}`, [t.path])).slice(
        0,
        20,
      ),
    });
  }
  return {
    key: r.targetKey,
    targetOverlaps,
    prediction: predicted ? { outcome: predicted.outcome, paths: predicted.paths } : null,
  };
}

/**
 * The radar of every session of the repository (or of `only`, the ids asked for; the overlaps
 * are still computed against every unlanded session): per session, its overlaps with every other
 * unlanded session, with the target since its land base, and the predicted outcome of landing it
 * now. A session whose branch is gone, or with nothing since its land base, gets empty lists and
 * a null prediction. Results are cached per session under the refs they depend on.
 * @returns session id → its radar, for the sessions asked for.
 * @throws HagentError GIT_FAILED.
 */
export async function radarOf(
  ctx: RepoContext,
  only?: readonly string[],
): Promise<Map<string, SessionRadar>> {
  const sessions = await listSessions(ctx.commonDir);
  const [refs, cache] = await Promise.all([
    readSessionRefs(ctx, sessions),
    readCache(ctx.commonDir),
  ]);
  const { changes, dirty: changed } = await changesOf(ctx, sessions, refs, cache);
  for (const [id, c] of changes) if (Object.keys(c.files).length === 0) changes.delete(id);
  const wanted = only ? sessions.filter((s) => only.includes(s.id)) : sessions;
  let dirty = changed;
  const out = new Map<string, SessionRadar>();
  await Promise.all(
    wanted.map(async (s) => {
      const change = changes.get(s.id);
      const r = refs.get(s.id)!;
      if (!change) {
        out.set(s.id, {
          session: s.id,
          unlanded: false,
          overlaps: [],
          targetOverlaps: [],
          prediction: null,
        });
        return;
      }
      let side = cache.target[s.id];
      if (!side || side.key !== r.targetKey) {
        side = await computeTargetSide(ctx, s, r, change);
        cache.target[s.id] = side;
        dirty = true;
      }
      out.set(s.id, {
        session: s.id,
        unlanded: true,
        overlaps: overlapsOf(s.id, changes),
        targetOverlaps: side.targetOverlaps,
        prediction: side.prediction,
      });
    }),
  );
  if (dirty)
    await writeCache(
      ctx.commonDir,
      cache,
      sessions.map((s) => s.id),
    );
  return out;
}

/** One file an edit is about to change: its text before and after (null: absent / deleted). */
export interface EditedFile {
  /** Repository-relative, `/`-separated. */
  path: string;
  before: string | null;
  after: string | null;
}

/** What {@link checkOverlap} finds: one entry per other session and path whose lines meet the edit's. */
export interface EditOverlap {
  session: string;
  path: string;
  /** The edit's lines, in the edited session's land-base lines. */
  lines: LineRange[];
  otherLines: LineRange[];
  message: string;
}

/**
 * The lines an edit of one file touches, in the session head's lines ({@link touchedLines});
 * `[]` (the whole file) for an added or deleted file.
 */
export function editedLines(e: EditedFile): LineRange[] {
  if (e.before === null || e.after === null) return [];
  return touchedLines(e.before, e.after);
}

/**
 * The check an edit goes through before it is written (`"overlap"` of `.hagent/config.json`):
 * the lines it touches (head lines, mapped to the session's land base through its own change)
 * against every other unlanded session's changed lines in the same file; lines meet when they
 * intersect or touch (ranges.ts). Cheap on the hot path: session records, refs and the radar
 * cache; git only for a session whose head, land base or target moved since the cache.
 * @param mode `off` returns `[]` at once; `warn` returns one warning per overlap; `refuse` throws.
 * @returns the warnings, e.g. "session s2 also changed src/a.ts lines 10–20: landing both will conflict".
 * @throws HagentError OVERLAP (`refuse`: path, line, the other session, both ranges; nothing was
 *   written), GIT_FAILED.
 */
export async function checkOverlap(
  ctx: RepoContext,
  session: Session,
  edits: readonly EditedFile[],
  mode: 'warn' | 'refuse' | 'off',
): Promise<string[]> {
  if (mode === 'off' || edits.length === 0) return [];
  const found = await findEditOverlaps(ctx, session, edits);
  if (found.length === 0) return [];
  if (mode === 'refuse') {
    const first = found[0]!;
    throw new HagentError(
      'OVERLAP',
      `${first.message}${found.length > 1 ? ` (and ${found.length - 1} more overlap${found.length > 2 ? 's' : ''})` : ''}`,
      {
        path: first.path,
        line: first.otherLines[0]?.[0] ?? first.lines[0]?.[0] ?? 1,
        session: first.session,
        lines: first.lines,
        otherLines: first.otherLines,
        overlaps: found.map(({ message: _m, ...o }) => o),
      },
      `nothing was written; session ${first.session} changed those lines of ${first.path} first: change other lines, or ask the human to land session ${first.session} first (hagent land --session ${first.session}), then run hagent session update --session ${session.id} and edit again; hagent session list shows every overlap`,
    );
  }
  return found.map((f) => f.message);
}

/** The overlaps of an edit with the other unlanded sessions (see {@link checkOverlap}). */
async function findEditOverlaps(
  ctx: RepoContext,
  session: Session,
  edits: readonly EditedFile[],
): Promise<EditOverlap[]> {
  const sessions = await listSessions(ctx.commonDir);
  if (!sessions.some((s) => s.id !== session.id)) return [];
  const self = sessions.find((s) => s.id === session.id) ?? session;
  const all = sessions.some((s) => s.id === session.id) ? sessions : [...sessions, session];
  const [refs, cache] = await Promise.all([readSessionRefs(ctx, all), readCache(ctx.commonDir)]);
  const others = all.filter((s) => s.id !== self.id);
  const { changes, dirty } = await changesOf(ctx, others, refs, cache);
  // The session's own change (its head moves with every edit, so it is rarely cached) is read
  // only when another session changes a file of the edit: it maps the edit's lines to the land base.
  const shared = edits.some((e) => [...changes.values()].some((c) => e.path in c.files));
  const mine = shared ? await changesOf(ctx, [self], refs, cache) : null;
  if (dirty || mine?.dirty)
    await writeCache(
      ctx.commonDir,
      cache,
      all.map((s) => s.id),
    );
  if (!shared) return [];
  const own = mine!.changes.get(self.id);
  const out: EditOverlap[] = [];
  for (const e of edits) {
    const ownHunks = own?.files[e.path] ?? [];
    const lines = editedLines(e).map((r) => toOldSide(r, ownHunks));
    for (const [other, theirs] of changes) {
      if (other === self.id || !(e.path in theirs.files)) continue;
      const otherLines = rangesOf(theirs.files[e.path]!);
      if (!anyMeet(lines, otherLines)) continue;
      out.push({
        session: other,
        path: e.path,
        lines,
        otherLines,
        message: `session ${other} also changed ${e.path} ${formatRanges(otherLines)}: landing both will conflict`,
      });
    }
  }
  return out;
}
