/**
 * doctor: finds and mends what interrupted or outside actions can leave behind — a pending
 * transaction (finished or undone), stray hagent temp files, missing worktrees, refs and index
 * out of step, a lock whose holder died, and worktrees or branches no session owns
 * (docs/architecture.md, the transaction).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isTempName, realOrResolved } from '../fsx/index.js';
import {
  createRef,
  isAncestor,
  listWorktrees,
  mergeBase,
  readRef,
  readTreeIntoIndex,
  refNames,
  stagedPaths,
  statusRecords,
  symbolicHead,
} from '../git/index.js';
import { clearDeadTargetLocks, readLockHolder } from '../lock/index.js';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { installedHooks } from '../agents/integrate.js';
import { installedMcpServers } from '../agents/integrate-mcp.js';
import { carryWiring, missingWiring } from '../agents/worktree-wiring.js';
import { isHagentError } from '../errors.js';
import {
  corruptHint,
  discardPoolEntry,
  gitDirWorktreeRoot,
  listBrokenSessions,
  sessionBranch,
  writeSession,
  type BrokenSession,
  orphanPools,
  guardTarget,
  hagentDir,
  inspectPool,
  listSessions,
  missingWorktreeHint,
  movedSessions,
  restoreWorktree,
  readSession,
  recoverSessionHead,
  sessionRef,
  trimPool,
  worktreeRootFor,
  type RepoContext,
  type Session,
} from '../session/index.js';
import { finishInterruptedEnds, guardedWrite, type Recovery } from '../transaction/index.js';
import { landRecoveryOf, type LandRecovery } from '../land/index.js';
import { mergeInProgress } from '../update/index.js';
import { planGc, type GcItem } from '../gc/index.js';
import { sandboxSettings, sandboxStatus, type SandboxStatus } from '../sandbox/index.js';

/** One finding. `fixed` says whether doctor mended it; otherwise `hint` says how. */
export interface Finding {
  kind:
    | 'session-corrupt'
    | 'interrupted-transaction'
    | 'interrupted-land'
    | 'moved-worktree'
    | 'session-unchecked'
    | 'stray-temp-files'
    | 'missing-worktree'
    | 'missing-branch'
    | 'worktree-head'
    | 'index-out-of-step'
    | 'dead-lock'
    | 'orphan-worktree'
    | 'orphan-branch'
    | 'pooled-worktree'
    | 'hook-command'
    | 'mcp-command'
    | 'agent-wiring';
  session?: string;
  message: string;
  fixed: boolean;
  hint?: string;
  paths?: string[];
}

/** The pool of recycled worktrees after doctor's repairs: its folder, limit and entries (oldest first). */
export interface PoolReport {
  root: string;
  limit: number;
  worktrees: { name: string; path: string; commit: string }[];
}

/** JSON of `hagent doctor`. */
export interface DoctorReport {
  ok: true;
  sessions: string[];
  findings: Finding[];
  recoveries: Recovery[];
  pool: PoolReport | null;
  /**
   * What sessions left behind (gc/): refs and agent folders of sessions that are gone, worktree
   * folders of repositories that are gone, each with what `hagent gc` does with it. Null when
   * one session was checked.
   */
  leftovers: GcItem[] | null;
  /** Whether `hagent exec` runs commands in the operating-system sandbox here, and why not. */
  sandbox: SandboxStatus;
}

/** What doctor may do beyond its safe repairs, each only when the human asks. */
export interface DoctorOptions {
  /** `--restore-worktree`: check a session worktree the user removed out again from its branch. */
  restoreWorktree?: boolean;
}

/**
 * Checks one session (or every session) and the repository's hagent state; mends what it
 * safely can (under the session lock) and reports the rest with a hint.
 * @throws HagentError SESSION_NOT_FOUND for an unknown id; LOCKED when a live writer holds a session.
 */
export async function runDoctor(
  ctx: RepoContext,
  id: string | undefined,
  env: Readonly<Record<string, string | undefined>> = {},
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const config = await loadConfig(ctx, env);
  // Every session counts for the orphan check, whichever one is checked: a worktree or branch of
  // a session not named here is not an orphan.
  const findings: Finding[] = [];
  // A session end killed after its record is finished first: the session is gone after it.
  const recoveries: Recovery[] = [];
  const ended = await finishInterruptedEnds(ctx.commonDir, id);
  for (const e of ended) {
    recoveries.push(e);
    findings.push({
      kind: 'interrupted-transaction',
      session: e.session,
      message: `an interrupted session end was completed`,
      fixed: true,
      paths: [],
    });
  }
  // A broken record is rebuilt first (when its branch and worktree say what it was), so the
  // session is then checked like the others; one that cannot be rebuilt is reported.
  for (const b of await listBrokenSessions(ctx.commonDir)) {
    if (id === undefined || b.id === id) findings.push(await repairRecord(ctx, b));
  }
  const all = await listSessions(ctx.commonDir);
  const sessions =
    id === undefined ? all : ended.length ? [] : [await readSession(ctx.commonDir, id)];
  for (const moved of movedSessions(ctx.commonDir).filter((m) =>
    sessions.some((s) => s.id === m),
  )) {
    const s = sessions.find((x) => x.id === moved)!;
    findings.push({
      kind: 'moved-worktree',
      session: moved,
      message: `session ${moved}: the repository folder moved; its worktree is now ${s.worktree} (git worktree repair, session record updated)`,
      fixed: true,
    });
  }
  for (const s of sessions) {
    // One session that cannot be checked (a live writer, an interrupted transaction doctor may
    // not finish) is reported, and the others are still checked.
    try {
      await checkSession(ctx, s, config.runtime.lockTimeoutMs, findings, recoveries, options);
    } catch (error) {
      if (!isHagentError(error)) throw error;
      findings.push({
        kind: 'session-unchecked',
        session: s.id,
        message: `session ${s.id} could not be checked: [${error.code}] ${error.message}`,
        fixed: false,
        ...(error.hint ? { hint: error.hint } : {}),
      });
    }
  }
  // A land killed while it held its target's lock leaves the lock file (the next land would take
  // it over): cleared here, so nothing of the killed land stays.
  for (const file of await clearDeadTargetLocks(ctx.commonDir))
    findings.push({
      kind: 'dead-lock',
      message: `a land's target lock was held by a process that died: cleared`,
      fixed: true,
      paths: [file],
    });
  findings.push(...(await sessionWiringFindings(ctx, sessions)));
  // An agent hook whose command does not resolve fails open: in Claude Code it silently disables the gate.
  for (const h of await installedHooks(await mainCheckoutRoot(ctx), env)) {
    if (!h.resolves)
      findings.push({
        kind: 'hook-command',
        message: `${h.agent}'s hook in ${h.file} runs \`${h.command}\`, which does not resolve (${h.problem}): the agent runs without hagent's gate`,
        fixed: false,
        hint: `put hagent on PATH (npm install -g . in hagent's clone, or npm link), or run hagent integrate ${h.agent} again`,
      });
  }
  // An MCP server that cannot start leaves the agent without hagent's tools (in strict mode, without any edit tool).
  for (const m of await installedMcpServers(await mainCheckoutRoot(ctx), env)) {
    if (!m.resolves)
      findings.push({
        kind: 'mcp-command',
        message: `${m.agent}'s MCP server hagent in ${m.file} runs \`${[m.command, ...m.args].join(' ')}\`, which does not resolve (${m.problem}): the agent gets none of hagent's tools`,
        fixed: false,
        hint: `put hagent on PATH (npm install -g . in hagent's clone, or npm link), or run hagent integrate ${m.agent} --mcp again`,
      });
  }
  let root: string | null = null;
  try {
    root = worktreeRootFor(ctx.commonDir, config.root, config.runtime.worktreeRoot, env);
  } catch (e) {
    findings.push({
      kind: 'pooled-worktree',
      message: `the worktree folder is not usable: ${(e as Error).message}`,
      fixed: false,
      hint: 'fix worktreeRoot in .hagent/config.json',
    });
  }
  const pool =
    root && id === undefined ? await repairPool(ctx, root, config.runtime.pool, findings) : null;
  findings.push(...(await orphans(ctx, all, await sessionFileIds(ctx.commonDir), root)));
  const leftovers = id === undefined ? (await planGc(ctx, { env })).items : null;
  const sandbox = sandboxStatus(sandboxSettings(config.sandbox, env.HOME || undefined), env);
  return {
    ok: true,
    sessions: sessions.map((s) => s.id),
    findings,
    recoveries,
    pool,
    leftovers,
    sandbox,
  };
}

/**
 * Checks every pooled worktree as session start would and removes the ones it would not reuse
 * (what they hold that git does not ignore kept first, as `refs/hagent/pool-kept/<name>`), then
 * the oldest past the limit. Rule: README "Recycled worktrees".
 */
async function repairPool(
  ctx: RepoContext,
  root: string,
  limit: number,
  findings: Finding[],
): Promise<PoolReport> {
  const worktrees: PoolReport['worktrees'] = [];
  for (const { entry, problem, commit } of await inspectPool(ctx.commonDir, root)) {
    if (problem === null) {
      worktrees.push({ name: entry.name, path: entry.path, commit: commit! });
      continue;
    }
    const where = entry.path; // before the removal claims it under another name
    findings.push(
      discardedFinding(where, await discardPoolEntry(ctx.commonDir, ctx.cwd, root, entry, problem)),
    );
  }
  for (const d of await trimPool(ctx.commonDir, ctx.cwd, root, limit)) {
    findings.push(discardedFinding(path.join(root, '.pool', d.name), d));
    const i = worktrees.findIndex((w) => w.name === d.name);
    if (i >= 0 && d.removed) worktrees.splice(i, 1);
  }
  if (root !== gitDirWorktreeRoot(ctx.commonDir)) {
    for (const o of await orphanPools(root)) {
      findings.push({
        kind: 'pooled-worktree',
        message: `the pool ${o.pool} belongs to ${o.repository}, which no longer exists`,
        fixed: false,
        hint: `remove it if nothing in it is yours: rm -rf ${o.pool}`,
      });
    }
  }
  return { root, limit, worktrees };
}

function discardedFinding(
  where: string,
  d: { name: string; reason: string; kept: string | null; removed: boolean },
): Finding {
  if (!d.removed)
    return {
      kind: 'pooled-worktree',
      message: `pooled worktree ${where}: ${d.reason}; not removed, as what it holds could not be kept in a commit`,
      fixed: false,
      hint: `look at it, keep what you need, then remove it: rm -rf ${where} && git worktree prune`,
    };
  const kept = d.kept
    ? `; what it held is kept as refs/hagent/pool-kept/${d.name} (git show --stat ${d.kept.slice(0, 12)})`
    : '';
  return {
    kind: 'pooled-worktree',
    message: `pooled worktree ${where} removed: ${d.reason}${kept}`,
    fixed: true,
  };
}

/**
 * A session record that is not JSON or not a session: rebuilt when it is obvious what it was —
 * the branch `hagent/<id>` exists and one worktree has it checked out — with the base where the
 * branch left the target (the branch checked out in the main checkout; the recorded base and
 * target are kept when the damaged file still has them). The damaged file is kept beside it as
 * `<id>.json.damaged`, never deleted. Otherwise reported with the hint of SESSION_CORRUPT.
 */
async function repairRecord(ctx: RepoContext, b: BrokenSession): Promise<Finding> {
  const unfixed = (why: string): Finding => ({
    kind: 'session-corrupt',
    session: b.id,
    message: `session ${b.id}: its record ${b.file} is damaged (${b.problem}); ${why}`,
    fixed: false,
    hint: corruptHint(b),
    paths: [b.file],
  });
  const branch = sessionBranch(b.id);
  const head = await readRef(ctx.cwd, `refs/heads/${branch}`);
  if (!head) return unfixed(`not rebuilt: branch ${branch} does not exist`);
  const worktree = (await listWorktrees(ctx.cwd)).find((w) => w.branch === `refs/heads/${branch}`);
  if (!worktree) return unfixed(`not rebuilt: no worktree has branch ${branch} checked out`);
  const old = await fs
    .readFile(b.file, 'utf8')
    .then((t) => JSON.parse(t) as unknown)
    .catch(() => null)
    .then((v) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}));
  const oldTarget =
    typeof old.target === 'string' && old.target.startsWith('refs/heads/') ? old.target : null;
  const main = await mainCheckoutRoot(ctx);
  const target = oldTarget ?? (main ? await symbolicHead(main) : null);
  const oid = (v: unknown): string | null =>
    typeof v === 'string' && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(v) ? v : null;
  let base = oid(old.base);
  if (base && !(await isAncestor(ctx.cwd, base, head))) base = null;
  if (!base && target) base = await mergeBase(ctx.cwd, head, target);
  if (!base)
    return unfixed(
      `not rebuilt: where branch ${branch} started is not known (no target branch to measure it from)`,
    );
  const createdAt =
    typeof old.createdAt === 'string' ? old.createdAt : (await fs.stat(b.file)).mtime.toISOString();
  await fs.rename(b.file, `${b.file}.damaged`);
  await writeSession(ctx.commonDir, {
    version: 1,
    id: b.id,
    worktree: worktree.path,
    branch,
    base,
    target,
    createdAt,
    approval: null,
    lands: [],
  });
  return {
    kind: 'session-corrupt',
    session: b.id,
    message: `session ${b.id}: its damaged record (${b.problem}) was rebuilt from branch ${branch} and its worktree ${worktree.path} (base ${base.slice(0, 12)}${target ? `, lands on ${target.replace('refs/heads/', '')}` : ''}); the damaged file is kept as ${b.file}.damaged`,
    fixed: true,
    paths: [b.file],
  };
}

/** Ids of every session metadata file, readable or not (a damaged one still owns its worktree and branch). */
async function sessionFileIds(commonDir: string): Promise<Set<string>> {
  const names = await fs
    .readdir(path.join(hagentDir(commonDir), 'sessions'))
    .catch(() => [] as string[]);
  return new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)));
}

/** The checks and repairs of one session, appended to `findings` and `recoveries`. @throws HagentError LOCKED and the recovery's refusals. */
async function checkSession(
  ctx: RepoContext,
  s: Session,
  timeoutMs: number,
  findings: Finding[],
  recoveries: Recovery[],
  options: DoctorOptions,
): Promise<void> {
  const lock = await readLockHolder(ctx.commonDir, s.id);
  if (lock?.state === 'dead')
    findings.push({
      kind: 'dead-lock',
      session: s.id,
      message: `the lock of session ${s.id} is held by a process that died (pid ${lock.holder?.pid ?? '?'})`,
      fixed: true,
      hint: 'taken over now',
    });
  const exists = await fs.stat(s.worktree).then(
    (st) => st.isDirectory(),
    () => false,
  );
  if (!exists) {
    const branchHead = await readRef(ctx.cwd, sessionRef(s));
    if (options.restoreWorktree && branchHead) {
      const r = await restoreWorktree(ctx, s);
      findings.push({
        kind: 'missing-worktree',
        session: s.id,
        message: `session ${s.id}: its worktree ${s.worktree} was missing; checked out again at ${r.head.slice(0, 12)}`,
        fixed: true,
      });
    } else {
      findings.push({
        kind: 'missing-worktree',
        session: s.id,
        message: `session ${s.id}: its worktree ${s.worktree} is missing${branchHead ? '' : `, and its branch ${s.branch} is gone`}`,
        fixed: false,
        hint: branchHead
          ? missingWorktreeHint(s.id)
          : `end it with: hagent session end ${s.id} --force`,
      });
      return;
    }
  }
  if (!(await readRef(ctx.cwd, sessionRef(s)))) {
    const restored = await restoreBranch(ctx, s);
    findings.push(restored);
    if (!restored.fixed) return;
  }
  const { value } = await guardedWrite(
    guardTarget(ctx, s),
    'doctor',
    { timeoutMs, journal: false, allowBlocked: true },
    async (recovery) => {
      if (recovery && recovery.command !== 'land') {
        recoveries.push(recovery);
        findings.push({
          kind: 'interrupted-transaction',
          session: s.id,
          message: `an interrupted ${recovery.command} was ${recovery.action}`,
          fixed: true,
          paths: recovery.files,
          ...(recovery.outside.length
            ? { hint: `left alone, changed by someone else: ${recovery.outside.join(', ')}` }
            : {}),
        });
      }
      const land = recovery?.command === 'land' ? landRecoveryOf(recovery) : null;
      const landFinding: Finding[] = land ? [landFindingOf(s.id, land)] : [];
      return { value: [...landFinding, ...(await checkSessionWorktree(s))] };
    },
  );
  findings.push(...value);
}

/**
 * A session branch the user deleted comes back at the newest head hagent knows of it (the
 * worktree's reflog, the journal: session/recover-head.ts), created only where no branch of
 * that name exists again (compare-and-swap). Unfixed, with the way to end it, when none is known.
 */
async function restoreBranch(ctx: RepoContext, s: Session): Promise<Finding> {
  const found = await recoverSessionHead(ctx, s);
  const gone = `session ${s.id}: its branch ${s.branch} is gone`;
  if (
    found &&
    (await createRef(ctx.cwd, sessionRef(s), found.head, 'hagent doctor: session branch restored'))
  )
    return {
      kind: 'missing-branch',
      session: s.id,
      message: `${gone}: restored at ${found.head.slice(0, 12)}, its last head (from the ${found.from})`,
      fixed: true,
    };
  return {
    kind: 'missing-branch',
    session: s.id,
    message: `${gone}, and hagent knows no head of it`,
    fixed: false,
    hint: `end it with: hagent session end ${s.id} --force --yes`,
  };
}

/** The finding of an interrupted land that doctor met (land/recover.ts). */
function landFindingOf(session: string, land: LandRecovery): Finding {
  const where = land.worktree ?? 'the checkout';
  switch (land.action) {
    case 'restored':
      return {
        kind: 'interrupted-land',
        session,
        message: `an interrupted land had changed ${where}; ${land.files.length} file${land.files.length === 1 ? '' : 's'} put back to ${land.target ?? 'the target'}`,
        fixed: true,
        paths: land.files,
        ...(land.outside.length
          ? { hint: `left alone, changed since: ${land.outside.join(', ')}` }
          : {}),
      };
    case 'blocked':
      return {
        kind: 'interrupted-land',
        session,
        message: `an interrupted land left ${where} half updated, and its index is locked`,
        fixed: false,
        hint: `if no git command is running there, remove ${land.indexLock ?? 'its index.lock'}, then run hagent doctor again`,
      };
    case 'kept':
      return {
        kind: 'interrupted-land',
        session,
        message: `an interrupted land had already moved ${land.target ?? 'the target'}; nothing to put back`,
        fixed: true,
      };
    default:
      return {
        kind: 'interrupted-land',
        session,
        message: 'an unreadable land record was removed',
        fixed: true,
      };
  }
}

async function checkSessionWorktree(s: Session): Promise<Finding[]> {
  const found: Finding[] = [];
  const head = await symbolicHead(s.worktree);
  if (head !== sessionRef(s)) {
    found.push({
      kind: 'worktree-head',
      session: s.id,
      message: `session ${s.id}: its worktree has ${head ?? 'a detached HEAD'} checked out instead of ${sessionRef(s)}`,
      fixed: false,
      hint: `in ${s.worktree}: git switch ${s.branch} (after keeping any work there)`,
    });
    return found;
  }
  const listed = await statusRecords(s.worktree, { untracked: 'all', ignored: true });
  const temps: string[] = [];
  for (const rec of listed) {
    const rel = rec.slice(3);
    if ((rec.startsWith('??') || rec.startsWith('!!')) && isTempName(path.basename(rel)))
      temps.push(rel);
  }
  if (temps.length) {
    for (const t of temps) await fs.rm(path.join(s.worktree, t), { force: true });
    found.push({
      kind: 'stray-temp-files',
      session: s.id,
      message: `removed ${temps.length} stray hagent temp file${temps.length === 1 ? '' : 's'}`,
      fixed: true,
      paths: temps,
    });
  }
  // While a merge is in progress (a conflicted `session update`), the index holds the merge:
  // its unmerged entries and what the user has `git add`ed of the resolution. Not out of step.
  if (mergeInProgress(s.worktree)) return found;
  const out = (await stagedPaths(s.worktree)) ?? [];
  if (out.length) {
    await readTreeIntoIndex(s.worktree, 'HEAD');
    found.push({
      kind: 'index-out-of-step',
      session: s.id,
      message: `the index of session ${s.id} differed from its head on ${out.length} path${out.length === 1 ? '' : 's'}; reset to the head (files untouched)`,
      fixed: true,
      paths: out,
    });
  }
  return found;
}

/** Worktrees and branches of hagent's that no session owns. `ids`: every session file, damaged ones too. */
async function orphans(
  ctx: RepoContext,
  sessions: readonly Session[],
  ids: ReadonlySet<string>,
  current: string | null,
): Promise<Finding[]> {
  const found: Finding[] = [];
  const real = realOrResolved;
  const roots = [gitDirWorktreeRoot(ctx.commonDir), ...(current ? [current] : [])].map(real);
  const known = new Set(sessions.map((s) => path.resolve(s.worktree)));
  for (const w of await listWorktrees(ctx.cwd)) {
    const p = path.resolve(w.path);
    if (
      roots.some(
        (r) =>
          p.startsWith(r + path.sep) &&
          !p.startsWith(path.join(r, '.pool') + path.sep) &&
          // the land gate's scratch worktrees (gate/index.ts)
          !p.startsWith(path.join(r, '.gate') + path.sep),
      ) &&
      !known.has(p) &&
      !ids.has(path.basename(w.path))
    ) {
      found.push({
        kind: 'orphan-worktree',
        message: `worktree ${w.path} belongs to no session`,
        fixed: false,
        hint: `inspect it, then: git worktree remove ${w.path}`,
      });
    }
  }
  const branches = await refNames(ctx.cwd, 'refs/heads/hagent/');
  const owned = new Set(sessions.map((s) => sessionRef(s)));
  for (const ref of branches) {
    if (!owned.has(ref) && !ids.has(ref.slice('refs/heads/hagent/'.length)))
      found.push({
        kind: 'orphan-branch',
        message: `branch ${ref.replace('refs/heads/', '')} belongs to no session`,
        fixed: false,
        hint: `keep it, or delete it: git branch -D ${ref.replace('refs/heads/', '')}`,
      });
  }
  return found;
}

/**
 * Each session worktree must carry the agent wiring the main checkout has (hagent's hooks, its
 * MCP server), or an agent started there runs unguarded: what can be copied is (fixed), what
 * cannot is reported with how to mend it (agents/worktree-wiring.ts).
 */
async function sessionWiringFindings(
  ctx: RepoContext,
  sessions: readonly Session[],
): Promise<Finding[]> {
  const main = await mainCheckoutRoot(ctx).catch(() => null);
  if (!main) return [];
  const out: Finding[] = [];
  for (const s of sessions) {
    if (
      !(await fs.stat(s.worktree).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const { carried } = await carryWiring(main, s.worktree);
    if (carried.length)
      out.push({
        kind: 'agent-wiring',
        session: s.id,
        message: `session ${s.id}: its worktree lacked the agent wiring of your checkout; copied (hidden from git): ${carried.join(', ')}`,
        fixed: true,
        paths: carried,
      });
    for (const m of await missingWiring(main, s.worktree))
      out.push({
        kind: 'agent-wiring',
        session: s.id,
        message: `session ${s.id}: ${m.agent} started in its worktree runs without hagent's ${m.kind === 'hooks' ? 'hooks' : 'MCP server'}: its ${m.file} lacks them (yours is not committed, or differs)`,
        fixed: false,
        hint: `commit ${m.file} (git add ${m.file} && git commit), or run hagent integrate ${m.agent}${m.kind === 'mcp' ? ' --mcp' : ''} --user; then start a new session`,
        paths: [m.file],
      });
  }
  return out;
}
