/**
 * The hook handler: one agent event in, the agent's answer out. Gate + record for native edit
 * tools (pre: worktree, path policy, symlinks, staleness; post: one commit of exactly that
 * write), hagent applies and the native call is blocked for patch tools (Codex `apply_patch`),
 * guard before and a commit after shell commands, a sync at the end of a turn, and Claude Code's
 * worktree provider. Rules: design.md "Agents"; agents.md §1.2, §2.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError, isHagentError, toHagentError } from '../errors.js';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { readEntry, readJsonFile, writeJsonFile } from '../fsx/index.js';
import {
  blobId,
  formatOfOid,
  entriesAt,
  looseObjectStore,
  lsTree,
  readCommitTrees,
  checkoutPaths,
  newestCommitMentioning,
} from '../git/index.js';
import { appendJournal } from '../journal/index.js';
import { trace } from '../trace/index.js';
import { checkPath } from '../policy/index.js';
import {
  endSession,
  hagentDir,
  isInside,
  listSessions,
  openRepo,
  sessionHead,
  startSession,
  unlandedPaths,
  worktreeHeadDrift,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { ADOPT_OUTSIDE, adoptPendingOutside, syncSession } from '../sync/index.js';
import { normalizeEvent, type AgentEvent, type AgentName } from './normalize.js';
import {
  block,
  noEffect,
  warnAfterTool,
  warnAtStart,
  warnBeforeTool,
  withContext,
  type HookAnswer,
} from './respond.js';

/**
 * Set by `hagent run` for the agent it launches: the run installed hooks of its own, marked by
 * {@link RUN_HOOK_SOURCE}; any other hagent hook of the agent (a committed project file) has no
 * effect then, or each event would be handled twice (one refusal counted as two).
 */
export const RUN_HOOKS_ENV = 'HAGENT_RUN_HOOKS';
/** The prefix of the run's own hook command (a shell assignment, as agents run hooks through one). */
export const RUN_HOOK_SOURCE = 'HAGENT_HOOK_SOURCE=run';

/** How long a hook waits for its session's lock: concurrent tool calls queue, they never fail on it. */
export const HOOK_LOCK_TIMEOUT_MS = 120_000;

/** Where the hook runs and what it may read of the environment. */
export interface HookContext {
  /** The hook process's working folder (the agent's, usually). */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** The session an event belongs to, with its repository. */
interface Bound {
  ctx: RepoContext;
  session: Session;
}

/**
 * Handles one hook call of `agent`: `input` is the JSON the agent wrote on stdin, `eventArg` the
 * event named on the command line (Copilot's payload lacks it). Outside a hagent session it has
 * no effect. Never throws: a failure of hagent itself is reported on stderr with exit 1, which
 * every agent treats as "hook failed, go on" (the next sync adopts what it missed).
 */
export async function handleHook(
  agent: AgentName,
  eventArg: string | undefined,
  input: string,
  hc: HookContext,
): Promise<HookAnswer> {
  let payload: unknown;
  try {
    payload = input.trim() ? JSON.parse(input) : {};
  } catch {
    return {
      ...noEffect(agent),
      exitCode: 1,
      stderr: 'hagent hook: the event on stdin is not JSON; nothing was checked\n',
    };
  }
  const event = normalizeEvent(agent, eventArg, payload);
  trace('hook: event read');
  if (hc.env[RUN_HOOKS_ENV] === '1' && hc.env.HAGENT_HOOK_SOURCE !== 'run') return noEffect(agent);
  let bound: Bound | null = null;
  try {
    if (event.kind === 'worktree-create') return await worktreeCreate(event, hc);
    if (event.kind === 'worktree-remove') return await worktreeRemove(event, hc);
    bound = await findSession(event, hc);
    trace('hook: session found');
    if (!bound) return await outsideSession(event, hc);
    switch (event.kind) {
      case 'pre-tool':
        return await preTool(event, bound, hc);
      case 'post-tool':
        return await postTool(event, bound, hc);
      case 'stop':
      case 'session-end':
        return await endOfTurn(event, bound, hc);
      case 'session-start':
        return withContext(agent, event, sessionContext(bound.session));
      default:
        return noEffect(agent);
    }
  } catch (error) {
    const e = toHagentError(error);
    // A refusal in pre-tool is the tool's result; anything else is a hook failure (fails open).
    if (event.kind === 'pre-tool' && isHagentError(error)) {
      // Refusals that apply/sync did not journal themselves (worktree, policy, guard) are journaled here.
      if (
        bound &&
        (e.code === 'OUTSIDE_WORKTREE' ||
          e.code === 'GUARD_BLOCKED' ||
          (e.code === 'PATH_DENIED' && event.action !== 'patch') ||
          (e.code === 'WORKTREE_BROKEN' && e.details.drift !== undefined))
      ) {
        await appendJournal(bound.ctx.commonDir, {
          session: bound.session.id,
          command: `hook ${agent} ${event.tool}`,
          ok: false,
          code: e.code,
          message: e.message,
          ...(e.hint ? { hint: e.hint } : {}),
          ...(event.paths.length ? { files: event.paths } : {}),
        }).catch(() => undefined);
      }
      return block(agent, event, teach(e));
    }
    return {
      ...noEffect(agent),
      exitCode: 1,
      stderr: `hagent hook: error[${e.code}]: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ''}\n`,
    };
  }
}

/**
 * An event outside any session: in a checkout of a repository wired by `hagent integrate`, writes
 * and destructive git are refused and the agent session is told it is not protected
 * (main-checkout.ts); elsewhere nothing happens.
 * @throws HagentError MAIN_CHECKOUT.
 */
async function outsideSession(event: AgentEvent, hc: HookContext): Promise<HookAnswer> {
  if (event.kind !== 'pre-tool' && event.kind !== 'session-start') return noEffect(event.agent);
  const { checkoutWarning, refuseInCheckout } = await import('./main-checkout.js');
  if (event.kind === 'pre-tool') {
    await refuseInCheckout(event, hc.cwd, hc.env);
    return noEffect(event.agent);
  }
  const warning = await checkoutWarning(
    event.agent,
    path.resolve(hc.cwd, event.cwd ?? '.'),
    hc.env,
  );
  return warning
    ? warnAtStart(event.agent, event, warning.agentText, warning.humanText)
    : noEffect(event.agent);
}

/** hagent's refusal as the model reads it: the code, the one-line message, the details that help, the hint. */
export function teach(e: HagentError): string {
  const lines = [`hagent refused this: error[${e.code}]: ${e.message}`];
  const d = e.details;
  if (Array.isArray(d.candidates) && d.candidates.length)
    lines.push(`  candidates (lines): ${d.candidates.join(', ')}`);
  if (Array.isArray(d.suggestedAnchors) && d.suggestedAnchors.length)
    lines.push(
      `  suggested anchors: ${d.suggestedAnchors.map((a) => JSON.stringify(a)).join(', ')}`,
    );
  if (typeof d.closest === 'string') lines.push(`  closest text: ${JSON.stringify(d.closest)}`);
  if (e.hint) lines.push(`  hint: ${e.hint}`);
  lines.push('Nothing was written.');
  return lines.join('\n');
}

/**
 * The session of an event: the one whose worktree holds the event's folder (or the hook's), else
 * the one `hagent run` named in HAGENT_SESSION / HAGENT_WORKTREE. Null outside any session.
 */
async function findSession(event: AgentEvent, hc: HookContext): Promise<Bound | null> {
  const dirs = [event.cwd, hc.cwd, hc.env.HAGENT_WORKTREE].filter(
    (d): d is string => typeof d === 'string' && d.length > 0,
  );
  for (const dir of dirs) {
    let ctx: RepoContext;
    try {
      ctx = await openRepo(path.resolve(hc.cwd, dir));
    } catch {
      continue;
    }
    const sessions = await listSessions(ctx.commonDir);
    const here =
      sessions.find((s) => isInside(s.worktree, ctx.cwd)) ??
      sessions.find(
        (s) =>
          s.id === hc.env.HAGENT_SESSION &&
          hc.env.HAGENT_WORKTREE !== undefined &&
          isInside(s.worktree, hc.env.HAGENT_WORKTREE),
      );
    if (!here) continue;
    // The folder is usually the worktree's root: its repository is the one just found.
    const top = ctx.location.topLevel;
    const same =
      top !== null && (top === here.worktree || path.resolve(top) === path.resolve(here.worktree));
    return {
      ctx: same
        ? { cwd: here.worktree, location: ctx.location, commonDir: ctx.commonDir }
        : await openRepo(here.worktree),
      session: here,
    };
  }
  return null;
}

const posix = (p: string) => p.split(path.sep).join('/');

/**
 * The worktree-relative paths of an edit, checked: inside the session worktree (the user's main
 * checkout is named as such), allowed by the path policy, no symlink on the way.
 * @throws HagentError OUTSIDE_WORKTREE, PATH_DENIED.
 */
async function checkedPaths(
  event: AgentEvent,
  bound: Bound,
  hc: HookContext,
  loaded?: Awaited<ReturnType<typeof loadConfig>>,
): Promise<string[]> {
  const { ctx, session } = bound;
  const config = loaded ?? (await loadConfig(ctx, hc.env));
  const base = event.cwd ?? session.worktree;
  const out: string[] = [];
  for (const raw of event.paths) {
    const abs = path.resolve(base, raw);
    if (!isInside(session.worktree, abs)) {
      const main = await mainCheckoutRoot(ctx).catch(() => null);
      if (main && isInside(main, abs)) {
        const rel = path.relative(main, abs);
        throw new HagentError(
          'OUTSIDE_WORKTREE',
          `${abs} is in the user's main checkout, not in this session's worktree`,
          { path: abs, worktree: session.worktree },
          `you work in a hagent session: edit ${path.join(session.worktree, rel)} instead (same file, in your worktree)`,
        );
      }
      throw new HagentError(
        'OUTSIDE_WORKTREE',
        `${abs} is outside this session's worktree ${session.worktree}`,
        { path: abs, worktree: session.worktree },
        `edit files under ${session.worktree} only`,
      );
    }
    const rel = checkPath(posix(path.relative(session.worktree, abs)), config.policy);
    const entry = await readEntry(session.worktree, rel);
    if (entry.kind === 'symlink') {
      throw new HagentError(
        'PATH_DENIED',
        `${rel}: ${entry.component} is a symbolic link`,
        { path: rel, component: entry.component },
        'hagent never writes through a symlink; name the real file inside the worktree',
      );
    }
    out.push(rel);
  }
  return out;
}

/** The paths whose bytes on disk differ from the session head (changed outside the session). */
async function stalePaths(bound: Bound, rels: readonly string[]): Promise<string[]> {
  if (rels.length === 0) return [];
  const head = await sessionHead(bound.ctx, bound.session);
  const trees = await readCommitTrees(
    bound.session.worktree,
    head,
    rels,
    await looseObjectStore(bound.ctx.commonDir, head),
  );
  const inHead = entriesAt(trees, rels);
  const stale: string[] = [];
  for (const rel of rels) {
    const entry = await readEntry(bound.session.worktree, rel);
    const disk = entry.kind === 'file' ? blobId(entry.bytes, formatOfOid(head)) : null;
    const want = inHead.get(rel)?.oid ?? null;
    if (disk !== want) stale.push(rel);
  }
  return stale;
}

/**
 * A native edit while the worktree is off the session branch (the agent ran `git checkout -b`
 * or `git switch --detach`) would be written where hagent cannot record it (every sync refuses
 * until the worktree is back): refused before the write, with the drift's way back.
 * @throws HagentError WORKTREE_BROKEN (details.drift: the drift's kind).
 */
function refuseWhileOffBranch(bound: Bound): void {
  const { session } = bound;
  const off = worktreeHeadDrift(session);
  if (!off) return;
  const what =
    off.kind === 'other-branch'
      ? `${off.branch.replace('refs/heads/', '')} checked out`
      : 'a detached HEAD';
  throw new HagentError(
    'WORKTREE_BROKEN',
    `session ${session.id}: its worktree has ${what} instead of hagent/${session.id}, where hagent cannot record an edit`,
    { session: session.id, worktree: session.worktree, drift: off.kind },
    `nothing was written; ${off.hint}`,
  );
}

async function preTool(event: AgentEvent, bound: Bound, hc: HookContext): Promise<HookAnswer> {
  const { agent } = event;
  if (event.action === 'edit') {
    refuseWhileOffBranch(bound);
    const config = await loadConfig(bound.ctx, hc.env);
    const rels = await checkedPaths(event, bound, hc, config);
    trace('hook: paths checked');
    // A target changed outside the session is adopted first (its own outside commit), so the
    // agent's commit holds only the agent's edit.
    const stale = await stalePaths(bound, rels);
    if (stale.length)
      await syncSession(bound.ctx, bound.session, hc.env, {
        ...ADOPT_OUTSIDE,
        paths: stale,
        lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
        attribute: claimedEdits(bound, event.toolUseId),
      });
    if (event.toolUseId)
      await writeJsonFile(
        claimFile(bound, event.toolUseId),
        {
          agent,
          tool: event.tool,
          toolUseId: event.toolUseId,
          paths: rels,
          input: event.input,
          at: Date.now(),
        } satisfies Claim,
        { durable: false },
      ).catch(() => undefined);
    // The overlap radar (src/radar/): told before the write, refused with OVERLAP in `refuse`.
    const overlap = config.runtime.overlap;
    if (overlap !== 'off' && rels.length === 1) {
      const warnings = await nativeEditOverlap(bound, rels[0]!, event.input, overlap);
      trace('hook: overlap checked');
      if (warnings.length)
        return warnBeforeTool(agent, event, `hagent: ${warnings.join('\nhagent: ')}`);
    }
    return noEffect(agent);
  }
  if (event.action === 'patch' && event.patch) return applyForAgent(event, bound, hc);
  if (event.action === 'shell' && event.command) {
    // Loaded only for shell calls: the parser and the patch engine are most of a hook's start-up.
    const { guardCommand, sessionGuardContext } = await import('../guard/index.js');
    const gc = await sessionGuardContext(bound.ctx, bound.session, hc.env);
    const verdict = guardCommand(event.command, {
      ...gc,
      ...(hc.env.HOME ? { home: hc.env.HOME } : {}),
    });
    if (!verdict.allowed)
      throw new HagentError(
        'GUARD_BLOCKED',
        verdict.reason,
        { rule: verdict.rule, command: verdict.command },
        verdict.hint,
      );
    // Edits pending before the command (the human's) get their own outside commit first, as
    // `hagent exec` does, so the post-tool commit holds only what the command changed.
    // Off the session branch nothing can be committed (the command may be the way back), and a
    // failure here must not block the command: the post-tool hook still records what it can.
    // What the text cannot show (a script it runs, a program's own writes) is seen afterwards:
    // the user's main checkout as it is now, for the post-tool hook to compare. Taken while the
    // adoption runs: the snapshot leaves the session's own refs out, and the adoption writes
    // nothing else it reads.
    const { snapshotOutside } = await import('../exec/outside.js');
    const [, snap] = await Promise.all([
      worktreeHeadDrift(bound.session)
        ? null
        : adoptPendingOutside(bound.ctx, bound.session, hc.env, {
            lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
            attribute: claimedEdits(bound, event.toolUseId),
          }).catch(() => null),
      snapshotOutside(bound.ctx, bound.session),
    ]);
    if (snap)
      await writeJsonFile(watchFile(bound, event.toolUseId), snap, { durable: false }).catch(
        () => undefined,
      );
    // The wall behind the guard: the command itself runs inside the session's sandbox.
    const { rewriteIntoSandbox } = await import('./sandbox-shell.js');
    const rewritten = await rewriteIntoSandbox(event, bound, hc.env);
    if (rewritten) return rewritten;
  }
  return noEffect(agent);
}

/**
 * The overlap check of a native edit of `rel`: its text now (the session head's, once stale
 * edits are adopted) and after the tool's input ({@link nativeEditResult}).
 * @throws HagentError OVERLAP in `refuse`.
 */
async function nativeEditOverlap(
  bound: Bound,
  rel: string,
  input: unknown,
  mode: 'warn' | 'refuse',
): Promise<string[]> {
  const entry = await readEntry(bound.session.worktree, rel);
  const before = entry.kind === 'file' ? Buffer.from(entry.bytes).toString('utf8') : null;
  const { checkOverlap } = await import('../radar/index.js');
  return checkOverlap(
    bound.ctx,
    bound.session,
    [{ path: rel, before, after: nativeEditResult(before, input) }],
    mode,
  );
}

/**
 * A native edit's result on `before`, from the tool's input: `content` (a whole-file write),
 * `old_string`/`new_string` (with `replace_all`), or `edits` (a list of those, applied in turn).
 * An input of another shape, or an `old_string` not found, gives null: the edit's lines are
 * unknown, and the check treats the whole file as touched. PURE.
 */
export function nativeEditResult(before: string | null, input: unknown): string | null {
  const args = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  if (typeof args.content === 'string') return args.content;
  const edits = Array.isArray(args.edits) ? (args.edits as unknown[]) : [args];
  let text = before ?? '';
  for (const raw of edits) {
    const e = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const from = e.old_string ?? e.oldString;
    const to = e.new_string ?? e.newString;
    if (typeof from !== 'string' || typeof to !== 'string') return null;
    if (from === '') return to;
    if (!text.includes(from)) return null;
    text = e.replace_all === true ? text.split(from).join(to) : text.replace(from, () => to);
  }
  return text;
}

/**
 * Codex resolves a patch's paths against the turn's folder, hagent against the worktree root:
 * relative paths from a subfolder get that subfolder in front, absolute paths inside the worktree
 * become relative. Anything else is left for the path policy to refuse. Pure.
 */
export function rebasePatchPaths(patch: string, cwd: string, worktree: string): string {
  const sub = path.relative(worktree, cwd);
  const inside = sub === '' || (!sub.startsWith('..') && !path.isAbsolute(sub));
  return patch.replace(
    /^(\*\*\* (?:Add File|Update File|Delete File|Move to): )(.+?)(\s*)$/gm,
    (_m, head: string, p: string, tail: string) => {
      if (path.isAbsolute(p)) {
        const rel = path.relative(worktree, p);
        return rel && !rel.startsWith('..') && !path.isAbsolute(rel)
          ? `${head}${posix(rel)}${tail}`
          : `${head}${p}${tail}`;
      }
      return inside && sub ? `${head}${posix(path.join(sub, p))}${tail}` : `${head}${p}${tail}`;
    },
  );
}

/**
 * A native edit between its two hooks: the pre-tool hook leaves it, the post-tool hook takes it
 * away. A commit made meanwhile by another call (Claude and Codex run tool calls in parallel: a
 * shell command's commit, a stale adoption) that takes in one of its paths names the call, so
 * the edit keeps its tool although its own post-tool hook finds nothing left to commit.
 */
interface Claim {
  agent: AgentName;
  tool: string;
  toolUseId: string;
  paths: string[];
  input: unknown;
  /** When the pre-tool hook passed (ms since the epoch). */
  at: number;
}

/** A claim older than this is of a call whose post-tool hook never came (blocked, denied): ignored. */
const CLAIM_MAX_AGE_MS = 10 * 60_000;

/** Where the pre-tool hook of a shell call keeps the main checkout's snapshot (exec/outside.ts) for its post-tool hook. */
const watchFile = (bound: Bound, toolUseId: string | null | undefined) =>
  path.join(
    hagentDir(bound.ctx.commonDir),
    'agents',
    bound.session.id,
    `watch-${(toolUseId ?? 'shell').replace(/[^A-Za-z0-9._-]/g, '_')}.json`,
  );

/** Removes the snapshots of shell calls whose post-tool hook never came (refused by the agent, interrupted). */
async function removeWatchFiles(bound: Bound): Promise<void> {
  const dir = path.dirname(watchFile(bound, null));
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((n) => n.startsWith('watch-') && n.endsWith('.json'))
      .map((n) => fs.rm(path.join(dir, n), { force: true }).catch(() => undefined)),
  );
}

/**
 * What changed in the user's main checkout since the pre-tool hook of this shell call took its
 * snapshot, journaled (OUTSIDE_CHANGED) and worded for the agent; '' when nothing did.
 */
async function outsideReport(event: AgentEvent, bound: Bound): Promise<string> {
  const file = watchFile(bound, event.toolUseId);
  const before = await readJsonFile(file).catch(() => null);
  if (!before) return '';
  await fs.rm(file, { force: true }).catch(() => undefined);
  const { journalOutsideChange, outsideChangeSince } = await import('../exec/outside.js');
  const change = await outsideChangeSince(bound.ctx, bound.session, before as never);
  if (!change) return '';
  await journalOutsideChange(
    bound.ctx,
    bound.session,
    `hook ${event.agent} ${event.tool}`,
    change,
    event.command ?? '',
  );
  return `WARNING from hagent: ${change.message}. This is outside your session: do not touch the user's checkout or branches (no git -C, no scripts that write there). ${change.hint}`;
}

const claimsDir = (bound: Bound) =>
  path.join(hagentDir(bound.ctx.commonDir), 'agents', bound.session.id, 'claims');
const claimFile = (bound: Bound, toolUseId: string) =>
  path.join(claimsDir(bound), `${toolUseId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);

/**
 * The `attribute` of a commit made by a hook (sync/index.ts): the claims of other tool calls on
 * the files it commits, as `Hagent-Includes-Tool-Use-Id` trailers and their tool inputs in the note.
 */
function claimedEdits(bound: Bound, ownToolUseId?: string | null) {
  return async (
    files: readonly { path: string }[],
  ): Promise<{ trailers: string[]; note: string } | null> => {
    const names = await fs.readdir(claimsDir(bound)).catch(() => [] as string[]);
    if (names.length === 0) return null;
    const changed = new Set(files.map((f) => f.path));
    const taken: Claim[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const c = (await readJsonFile(path.join(claimsDir(bound), name)).catch(
        () => null,
      )) as Claim | null;
      if (
        !c ||
        c.toolUseId === ownToolUseId ||
        Date.now() - c.at > CLAIM_MAX_AGE_MS ||
        !c.paths.some((p) => changed.has(p))
      )
        continue;
      taken.push(c);
    }
    if (taken.length === 0) return null;
    const calls = taken.map(({ agent, tool, toolUseId, input }) => ({
      agent,
      tool,
      toolUseId,
      input,
    }));
    return {
      trailers: taken.map((c) => `Hagent-Includes-Tool-Use-Id: ${c.toolUseId}`),
      note: `\n\nThis commit also holds the native edits of these tool calls, written before it was made:\n${JSON.stringify(calls, null, 2)}\n`,
    };
  };
}

/** The session commit that took in the edit of `toolUseId` (its trailer names it), or null. */
async function commitNaming(bound: Bound, toolUseId: string): Promise<string | null> {
  const head = await sessionHead(bound.ctx, bound.session);
  return newestCommitMentioning(
    bound.session.worktree,
    `${bound.session.base}..${head}`,
    `Hagent-Includes-Tool-Use-Id: ${toolUseId}`,
  );
}

/** Where a patch hagent applied for a tool call is remembered, for the post-tool safety net. */
function appliedMarker(bound: Bound, toolUseId: string): string {
  return path.join(
    hagentDir(bound.ctx.commonDir),
    'agents',
    bound.session.id,
    `${toolUseId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`,
  );
}

/**
 * hagent applies the agent's patch with its own engine (atomic, unique match, byte fidelity)
 * and blocks the native call with a reason that reads as the tool's success, Codex-shaped
 * ("Success. Updated the following files:"), since the model sees it after Codex's own
 * "blocked by hook" prefix. A refusal blocks with hagent's teaching error instead.
 */
async function applyForAgent(
  event: AgentEvent,
  bound: Bound,
  hc: HookContext,
): Promise<HookAnswer> {
  const { applyPatch } = await import('../apply/index.js');
  // No human can be asked inside a tool call, and every commit is undoable: the confirmation
  // thresholds (a delete, many files or lines) do not apply here; the hard limits still do.
  const patchText = rebasePatchPaths(
    event.patch!,
    event.cwd ?? bound.session.worktree,
    bound.session.worktree,
  );
  const r = await applyPatch(bound.ctx, bound.session, {
    patchText,
    env: hc.env,
    yes: true,
    lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
  });
  if (event.toolUseId)
    await writeJsonFile(appliedMarker(bound, event.toolUseId), {
      commit: r.commit,
      files: r.files.map((f) => f.path).concat(r.files.flatMap((f) => (f.from ? [f.from] : []))),
    });
  const letters = r.files.map(
    (f) => `${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : 'M'} ${f.path}`,
  );
  const reason = [
    'Success. Updated the following files:',
    ...letters,
    `(hagent applied this patch atomically as commit ${r.commit?.slice(0, 12)} on hagent/${r.session}; the files are on disk; do not send this patch again.)`,
  ].join('\n');
  return block(event.agent, event, reason);
}

/**
 * What the agent is told after a tool call while its worktree is off the session branch: the
 * call's effect is not recorded (a sync would refuse), and how to get back; '' when it is on it.
 */
function offBranchNote(bound: Bound, what: string): string {
  const off = worktreeHeadDrift(bound.session);
  if (!off) return '';
  const where =
    off.kind === 'other-branch'
      ? `${off.branch.replace('refs/heads/', '')} checked out`
      : 'a detached HEAD';
  return `hagent: ${what} NOT recorded: the session worktree has ${where} instead of hagent/${bound.session.id}, and hagent refuses native edits until it is back; ${off.hint}, then hagent sync --session ${bound.session.id}`;
}

async function postTool(event: AgentEvent, bound: Bound, hc: HookContext): Promise<HookAnswer> {
  const { agent } = event;
  if (event.action === 'edit' || event.action === 'shell') {
    const note = offBranchNote(
      bound,
      event.action === 'edit' ? 'this edit was written but is' : "this command's changes are",
    );
    if (note) {
      const outside = event.action === 'shell' ? await outsideReport(event, bound) : '';
      return outside
        ? warnAfterTool(agent, event, `${outside}\n${note}`)
        : warnAfterTool(agent, event, note);
    }
  }
  const trailers = [
    `Hagent-Agent: ${agent}`,
    `Hagent-Tool: ${event.tool || 'unknown'}`,
    ...(event.toolUseId ? [`Hagent-Tool-Use-Id: ${event.toolUseId}`] : []),
  ];
  if (
    event.action === 'edit' ||
    (event.action === 'patch' &&
      !(event.toolUseId && (await readJsonFile(appliedMarker(bound, event.toolUseId)))))
  ) {
    // Gate + record, or a patch tool whose pre-tool hook failed open: the native write is the edit.
    let rels: string[];
    try {
      rels = await checkedPaths(event, bound, hc);
    } catch {
      return noEffect(
        agent,
        'hagent: the edit named a path hagent does not record; the next sync reports it',
      );
    }
    const note = JSON.stringify(
      { agent, tool: event.tool, toolUseId: event.toolUseId, input: event.input },
      null,
      2,
    );
    const r = await syncSession(bound.ctx, bound.session, hc.env, {
      op: 'edit',
      title: event.tool,
      subject: `hagent: ${event.tool} ${rels.join(', ')}`,
      intro: `Written by ${agent}'s ${event.tool} tool (the tool input is in the note):`,
      paths: rels,
      trailers,
      note,
      lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
    });
    if (event.toolUseId)
      await fs.rm(claimFile(bound, event.toolUseId), { force: true }).catch(() => undefined);
    if (r.commit)
      return withContext(
        agent,
        event,
        `hagent recorded this edit as commit ${r.commit.slice(0, 12)} (undo with: hagent undo)`,
      );
    // Nothing left to commit: a parallel call's commit (a shell command's) may have taken the write in, naming this call.
    const took = event.toolUseId ? await commitNaming(bound, event.toolUseId) : null;
    return took
      ? withContext(
          agent,
          event,
          `hagent recorded this edit in commit ${took.slice(0, 12)}, made for a parallel tool call that committed the file first (undo with: hagent undo)`,
        )
      : noEffect(agent);
  }
  if (event.action === 'patch' && event.toolUseId) return patchSafetyNet(event, bound);
  if (event.action === 'shell') {
    const command = event.command ?? '';
    trailers.push(`Hagent-Command: ${command}`);
    // The commits the command made inside the sandbox first, and what the sandbox stopped.
    const { settleAfterShell } = await import('./sandbox-shell.js');
    const walled = (await settleAfterShell(event, bound, event.output)).join('\n');
    // The commit and the comparison with the user's checkout go side by side (neither reads
    // what the other writes: see the pre-tool hook).
    const syncing = syncSession(bound.ctx, bound.session, hc.env, {
      op: 'exec',
      title: 'exec',
      subject: `hagent: exec ${command.split('\n')[0]}`,
      intro: `Files changed by a shell command of ${agent} (${event.tool}):`,
      detail: `Command:\n${command
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n')}`,
      trailers,
      note: command,
      lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
      attribute: claimedEdits(bound, event.toolUseId),
    }).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    const outside = [await outsideReport(event, bound).finally(() => syncing), walled]
      .filter(Boolean)
      .join('\n');
    const synced = await syncing;
    if ('error' in synced) {
      const error = synced.error;
      if (outside)
        return warnAfterTool(
          agent,
          event,
          `${outside}\n(hagent could not record the files this command changed: ${toHagentError(error).message})`,
        );
      throw error;
    }
    const r = synced.result;
    const recorded = r.commit
      ? `hagent recorded the files this command changed as commit ${r.commit.slice(0, 12)} (${r.files.map((f) => f.path).join(', ')})`
      : '';
    const text = [outside, recorded].filter(Boolean).join('\n');
    if (outside) return warnAfterTool(agent, event, text);
    return text ? withContext(agent, event, text) : noEffect(agent);
  }
  return noEffect(agent);
}

/**
 * The native apply ran although hagent had applied the patch and blocked it (a block not
 * honoured): the touched files are put back to the session head's bytes, so the patch counts once.
 */
async function patchSafetyNet(event: AgentEvent, bound: Bound): Promise<HookAnswer> {
  const marker = appliedMarker(bound, event.toolUseId!);
  const applied = (await readJsonFile(marker)) as { commit: string | null; files: string[] } | null;
  if (!applied) return noEffect(event.agent);
  const head = await sessionHead(bound.ctx, bound.session);
  const stale = await stalePaths(bound, applied.files);
  if (stale.length) {
    const inHead = await lsTree(bound.session.worktree, head, stale);
    const present = stale.filter((p) => inHead.has(p));
    await checkoutPaths(bound.session.worktree, head, present);
    for (const p of stale.filter((q) => !inHead.has(q)))
      await fs.rm(path.join(bound.session.worktree, p), { force: true });
  }
  await fs.rm(marker, { force: true });
  return noEffect(
    event.agent,
    stale.length
      ? `hagent: the patch had been applied already; ${stale.join(', ')} put back to hagent's bytes`
      : '',
  );
}

/** End of a turn or of the agent's session: leftovers are adopted; the summary names the next step. */
async function endOfTurn(event: AgentEvent, bound: Bound, hc: HookContext): Promise<HookAnswer> {
  const off = worktreeHeadDrift(bound.session);
  if (off) {
    // Not a failure of the hook: the sync would refuse (WORKTREE_BROKEN) until the worktree is back.
    const where =
      off.kind === 'other-branch'
        ? `${off.branch.replace('refs/heads/', '')} is checked out`
        : 'its HEAD is detached';
    return noEffect(
      event.agent,
      `hagent: session ${bound.session.id}'s worktree is off its branch (${where}): what was done there is not recorded yet; ${off.hint}, then hagent sync --session ${bound.session.id}`,
    );
  }
  const r = await syncSession(bound.ctx, bound.session, hc.env, {
    ...ADOPT_OUTSIDE,
    lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
    attribute: claimedEdits(bound),
  });
  // No tool call is in flight at the end of a turn: claims and checkout snapshots left are of calls that never ran.
  await fs.rm(claimsDir(bound), { recursive: true, force: true }).catch(() => undefined);
  await removeWatchFiles(bound);
  const note = r.commit
    ? `hagent: adopted ${r.files.length} leftover edit(s) as commit ${r.commit.slice(0, 12)}; `
    : 'hagent: ';
  return noEffect(
    event.agent,
    `${note}review the session with: hagent review --session ${bound.session.id}`,
  );
}

/** What the agent is told at the start of its session. */
export function sessionContext(session: Session): string {
  return `You work in hagent session ${session.id}: worktree ${session.worktree}, branch ${session.branch}. Every edit you make becomes a hagent commit the user reviews and lands; edit files only inside this worktree. When a tool call is refused with "hagent refused this: error[CODE]", read the hint, fix the call and try again; do not work around it.`;
}

/**
 * Claude Code's `WorktreeCreate`: a hagent session named after the requested worktree; its path is
 * the last line on stdout, progress on stderr (Claude reads the path; any non-zero exit aborts).
 */
async function worktreeCreate(event: AgentEvent, hc: HookContext): Promise<HookAnswer> {
  const ctx = await openRepo(path.resolve(hc.cwd, event.cwd ?? '.'));
  const name =
    (event.worktreeName ?? '')
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 64) || undefined;
  const started = await startSession(ctx, { ...(name ? { name } : {}), env: hc.env });
  // The hook file that made this call may be uncommitted: the worktree gets hagent's wiring.
  const { carrySessionWiring, notCarriedWarning } = await import('./worktree-wiring.js');
  const wiring = await carrySessionWiring(ctx, started.worktree);
  const warn = wiring.notCarried.length
    ? `${notCarriedWarning(started.id, wiring.notCarried)}\n`
    : '';
  return {
    exitCode: 0,
    stdout: `${started.worktree}\n`,
    stderr: `hagent: session ${started.id} on ${started.branch}\n${warn}`,
  };
}

/**
 * Claude Code's `WorktreeRemove` (it cannot refuse, so nothing may be lost): leftovers are synced;
 * a session whose work has landed is ended; one with unlanded work is kept, and stderr says so.
 */
async function worktreeRemove(event: AgentEvent, hc: HookContext): Promise<HookAnswer> {
  if (!event.worktreePath) return noEffect(event.agent);
  let ctx: RepoContext;
  try {
    ctx = await openRepo(path.resolve(hc.cwd, event.cwd ?? '.'));
  } catch {
    return noEffect(event.agent);
  }
  const session = (await listSessions(ctx.commonDir)).find(
    (s) => isInside(s.worktree, event.worktreePath!) && isInside(event.worktreePath!, s.worktree),
  );
  if (!session) return noEffect(event.agent);
  await syncSession(ctx, session, hc.env, {
    ...ADOPT_OUTSIDE,
    lockTimeoutMs: HOOK_LOCK_TIMEOUT_MS,
  });
  const top =
    ctx.location.topLevel && !isInside(session.worktree, ctx.location.topLevel)
      ? ctx
      : await openRepo(path.dirname(ctx.commonDir));
  if ((await unlandedPaths(top, session, await sessionHead(top, session))).length === 0) {
    await endSession(top, session.id, { env: hc.env });
    return noEffect(event.agent, `hagent: session ${session.id} ended (its work had landed)`);
  }
  return noEffect(
    event.agent,
    `hagent: session ${session.id} keeps its worktree: it has work that has not landed (hagent review --session ${session.id}, then hagent review --session ${session.id} --approve, then hagent land --session ${session.id})`,
  );
}
