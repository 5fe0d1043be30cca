/**
 * doctor: finds and mends what interrupted or outside actions can leave behind — a pending
 * transaction (finished or undone), stray hagent temp files, missing worktrees, refs and index
 * out of step, a lock whose holder died, and worktrees or branches no session owns
 * (issue: safety envelope §3).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isTempName } from '../fsx/index.js';
import { listWorktrees, readRef, runGit, symbolicHead } from '../git/index.js';
import { readLockHolder } from '../lock/index.js';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { installedHooks } from '../agents/integrate.js';
import { guardTarget, hagentDir, listSessions, readSession, sessionRef, type RepoContext, type Session } from '../session/index.js';
import { guardedWrite, type Recovery } from '../transaction/index.js';
import { recoverLand, type LandRecovery } from '../land/index.js';

/** One finding. `fixed` says whether doctor mended it; otherwise `hint` says how. */
export interface Finding {
  kind: 'interrupted-transaction' | 'interrupted-land' | 'stray-temp-files' | 'missing-worktree' | 'missing-branch' | 'worktree-head' | 'index-out-of-step' | 'dead-lock' | 'orphan-worktree' | 'orphan-branch' | 'hook-command';
  session?: string;
  message: string;
  fixed: boolean;
  hint?: string;
  paths?: string[];
}

/** JSON of `hagent doctor`. */
export interface DoctorReport {
  ok: true;
  sessions: string[];
  findings: Finding[];
  recoveries: Recovery[];
}

/**
 * Checks one session (or every session) and the repository's hagent state; mends what it
 * safely can (under the session lock) and reports the rest with a hint.
 * @throws HagentError SESSION_NOT_FOUND for an unknown id; LOCKED when a live writer holds a session.
 */
export async function runDoctor(ctx: RepoContext, id: string | undefined, env: Readonly<Record<string, string | undefined>> = {}): Promise<DoctorReport> {
  const config = await loadConfig(ctx, env);
  const sessions = id !== undefined ? [await readSession(ctx.commonDir, id)] : await listSessions(ctx.commonDir);
  const findings: Finding[] = [];
  const recoveries: Recovery[] = [];
  for (const s of sessions) {
    const lock = await readLockHolder(ctx.commonDir, s.id);
    if (lock?.state === 'dead') findings.push({ kind: 'dead-lock', session: s.id, message: `the lock of session ${s.id} is held by a process that died (pid ${lock.holder?.pid ?? '?'})`, fixed: true, hint: 'taken over now' });
    const exists = await fs.stat(s.worktree).then((st) => st.isDirectory(), () => false);
    if (!exists) {
      findings.push({ kind: 'missing-worktree', session: s.id, message: `session ${s.id}: its worktree ${s.worktree} is missing`, fixed: false, hint: `end it with: hagent session end ${s.id} --force (its branch stays reachable)` });
      continue;
    }
    if (!(await readRef(ctx.cwd, sessionRef(s)))) {
      findings.push({ kind: 'missing-branch', session: s.id, message: `session ${s.id}: its branch ${s.branch} is gone`, fixed: false, hint: `end it with: hagent session end ${s.id} --force` });
      continue;
    }
    const { value } = await guardedWrite(guardTarget(ctx, s), 'doctor', { timeoutMs: config.runtime.lockTimeoutMs, journal: false }, async (recovery) => {
      if (recovery) {
        recoveries.push(recovery);
        findings.push({ kind: 'interrupted-transaction', session: s.id, message: `an interrupted ${recovery.command} was ${recovery.action}`, fixed: true, paths: recovery.files, ...(recovery.outside.length ? { hint: `left alone, changed by someone else: ${recovery.outside.join(', ')}` } : {}) });
      }
      const land = await recoverLand(ctx.cwd, ctx.commonDir, s.id);
      const landFinding: Finding[] = land ? [landFindingOf(s.id, land)] : [];
      return { value: [...landFinding, ...(await checkSessionWorktree(s))] };
    });
    findings.push(...value);
  }
  findings.push(...(await orphans(ctx, sessions)));
  // An agent hook whose command does not resolve fails open: in Claude Code it silently disables the gate.
  for (const h of await installedHooks(await mainCheckoutRoot(ctx), env)) {
    if (!h.resolves) findings.push({ kind: 'hook-command', message: `${h.agent}'s hook in ${h.file} runs \`${h.command}\`, which does not resolve (${h.problem}): the agent runs without hagent's gate`, fixed: false, hint: `put hagent on PATH (npm install -g . in hagent's clone, or npm link), or run hagent integrate ${h.agent} again` });
  }
  return { ok: true, sessions: sessions.map((s) => s.id), findings, recoveries };
}

/** The finding of an interrupted land that doctor met (land/recover.ts). */
function landFindingOf(session: string, land: LandRecovery): Finding {
  const where = land.worktree ?? 'the checkout';
  switch (land.action) {
    case 'restored':
      return { kind: 'interrupted-land', session, message: `an interrupted land had changed ${where}; ${land.files.length} file${land.files.length === 1 ? '' : 's'} put back to ${land.target ?? 'the target'}`, fixed: true, paths: land.files, ...(land.outside.length ? { hint: `left alone, changed since: ${land.outside.join(', ')}` } : {}) };
    case 'blocked':
      return { kind: 'interrupted-land', session, message: `an interrupted land left ${where} half updated, and its index is locked`, fixed: false, hint: `if no git command is running there, remove ${land.indexLock ?? 'its index.lock'}, then run hagent doctor again` };
    case 'kept':
      return { kind: 'interrupted-land', session, message: `an interrupted land had already moved ${land.target ?? 'the target'}; nothing to put back`, fixed: true };
    default:
      return { kind: 'interrupted-land', session, message: 'an unreadable land record was removed', fixed: true };
  }
}

async function checkSessionWorktree(s: Session): Promise<Finding[]> {
  const found: Finding[] = [];
  const head = await symbolicHead(s.worktree);
  if (head !== sessionRef(s)) {
    found.push({ kind: 'worktree-head', session: s.id, message: `session ${s.id}: its worktree has ${head ?? 'a detached HEAD'} checked out instead of ${sessionRef(s)}`, fixed: false, hint: `in ${s.worktree}: git switch ${s.branch} (after keeping any work there)` });
    return found;
  }
  const listed = await runGit(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames'], { cwd: s.worktree, noOptionalLocks: true });
  const temps: string[] = [];
  for (const rec of listed.stdout.toString('utf8').split('\0')) {
    if (rec.length < 4) continue;
    const rel = rec.slice(3);
    if ((rec.startsWith('??') || rec.startsWith('!!')) && isTempName(path.basename(rel))) temps.push(rel);
  }
  if (temps.length) {
    for (const t of temps) await fs.rm(path.join(s.worktree, t), { force: true });
    found.push({ kind: 'stray-temp-files', session: s.id, message: `removed ${temps.length} stray hagent temp file${temps.length === 1 ? '' : 's'}`, fixed: true, paths: temps });
  }
  const staged = await runGit(['diff-index', '--cached', '--name-only', '-z', 'HEAD'], { cwd: s.worktree });
  const out = staged.stdout.toString('utf8').split('\0').filter(Boolean);
  if (out.length) {
    await runGit(['read-tree', 'HEAD'], { cwd: s.worktree });
    found.push({ kind: 'index-out-of-step', session: s.id, message: `the index of session ${s.id} differed from its head on ${out.length} path${out.length === 1 ? '' : 's'}; reset to the head (files untouched)`, fixed: true, paths: out });
  }
  return found;
}

async function orphans(ctx: RepoContext, sessions: readonly Session[]): Promise<Finding[]> {
  const found: Finding[] = [];
  const root = path.join(hagentDir(ctx.commonDir), 'worktrees');
  const known = new Set(sessions.map((s) => path.resolve(s.worktree)));
  for (const w of await listWorktrees(ctx.cwd)) {
    if (path.resolve(w.path).startsWith(root + path.sep) && !known.has(path.resolve(w.path))) {
      found.push({ kind: 'orphan-worktree', message: `worktree ${w.path} belongs to no session`, fixed: false, hint: `inspect it, then: git worktree remove ${w.path}` });
    }
  }
  const branches = await runGit(['for-each-ref', '--format=%(refname)', 'refs/heads/hagent/'], { cwd: ctx.cwd });
  const owned = new Set(sessions.map((s) => sessionRef(s)));
  for (const ref of branches.stdout.toString('utf8').split('\n').filter(Boolean)) {
    if (!owned.has(ref)) found.push({ kind: 'orphan-branch', message: `branch ${ref.replace('refs/heads/', '')} belongs to no session`, fixed: false, hint: `keep it, or delete it: git branch -D ${ref.replace('refs/heads/', '')}` });
  }
  return found;
}
