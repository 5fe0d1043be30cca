/**
 * The envelope every writing command runs in: the session
 * lock, recovery of an interrupted transaction, and one journal line per attempt — applied or
 * refused — whatever the command.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError, toHagentError } from '../errors.js';
import { parseGitFile, revParseLines } from '../git/index.js';
import { appendJournal, type JournalInput } from '../journal/index.js';
import { withSessionLock } from '../lock/index.js';
import { trace } from '../trace/index.js';
import { clearLocksOfDeadHolder, recoverTransaction, type Recovery } from './recover.js';
import { clearStaleWorktreeLocks } from './stale-locks.js';
import { realOrResolved } from '../fsx/index.js';

/** What the envelope needs to know of a session. `ref` is its branch's full ref. */
export interface GuardTarget {
  commonDir: string;
  session: string;
  worktree: string;
  ref: string;
  base: string;
}

/** What a guarded body returns for the journal, beside its value. */
export interface GuardedOutcome<T> {
  value: T;
  files?: string[];
  head?: string;
  patch?: string;
  /** False when the body found nothing to do and wrote nothing: no journal line for it. */
  journal?: boolean;
}

/**
 * Runs `body` holding the session lock, after recovering an interrupted transaction, and
 * journals the attempt. `journal: false` (dry runs, read-only calls), or an outcome saying it
 * did nothing (`journal: false` there), skips the journal line of
 * a success.
 * @returns the body's value and what recovery did (null when nothing was pending).
 * @throws whatever the body throws (journaled first), or HagentError LOCKED.
 */
export async function guardedWrite<T>(
  target: GuardTarget,
  command: string,
  options: {
    timeoutMs: number;
    patch?: string;
    /** The message of the entry when the write goes (a refusal's is its error's). */
    message?: string;
    journal?: boolean;
    allowBlocked?: boolean;
    /**
     * The command writes nothing in the session worktree (land, land --undo): a worktree the
     * user removed does not stop it. A worktree present but broken still does.
     */
    withoutWorktree?: boolean;
  },
  body: (recovery: Recovery | null) => Promise<GuardedOutcome<T>>,
): Promise<{ value: T; recovery: Recovery | null }> {
  const started = performance.now();
  const base: JournalInput = {
    session: target.session,
    command,
    ok: true,
    base: target.base,
    ...(options.patch !== undefined ? { patch: options.patch } : {}),
  };
  try {
    const out = await withSessionLock(
      target.commonDir,
      target.session,
      { command },
      { timeoutMs: options.timeoutMs },
      async (taken) => {
        if (taken.deadSince !== null)
          await clearLocksOfDeadHolder(
            target.commonDir,
            target.session,
            target.worktree,
            taken.deadSince,
          );
        if (!options.withoutWorktree || (await worktreeFolderExists(target.worktree)))
          await assertWorktreeIntact(target);
        const recovery = await recoverTransaction(
          target.commonDir,
          target.session,
          target.worktree,
          target.ref,
        );
        if (recovery?.action === 'blocked' && !options.allowBlocked) throw blockedError(recovery);
        // After recovery, which handles the locks its own transaction left.
        await clearStaleWorktreeLocks(target.session, target.worktree);
        if (recovery?.command === 'end')
          throw new HagentError(
            'SESSION_NOT_FOUND',
            `session ${target.session} was ended: an interrupted session end was finished now`,
            { session: target.session },
            'start a new session with hagent session start',
          );
        if (recovery) {
          await appendJournal(target.commonDir, {
            session: target.session,
            command: `recover ${recovery.command}`,
            ok: true,
            files: recovery.files,
            message: `${recovery.action}${recovery.outside.length ? `; left alone: ${recovery.outside.join(', ')}` : ''}`,
          }).catch(() => undefined);
        }
        return { ...(await body(recovery)), recovery };
      },
    );
    trace('guard: unlocked');
    if (options.journal !== false && out.journal !== false) {
      await appendJournal(target.commonDir, {
        ...base,
        ...(options.message !== undefined ? { message: options.message } : {}),
        ...(out.files ? { files: out.files } : {}),
        ...(out.head ? { head: out.head } : {}),
        ...(out.patch !== undefined ? { patch: out.patch } : {}),
        durationMs: performance.now() - started,
      }).catch(() => undefined);
    }
    trace('guard: journaled');
    return { value: out.value, recovery: out.recovery };
  } catch (error) {
    const e = toHagentError(error);
    await appendJournal(target.commonDir, {
      ...base,
      ok: false,
      code: e.code,
      message: e.message,
      ...(e.hint ? { hint: e.hint } : {}),
      ...(Array.isArray(e.details.files)
        ? { files: e.details.files }
        : e.details.path
          ? { files: [String(e.details.path)] }
          : {}),
      durationMs: performance.now() - started,
    }).catch(() => undefined);
    throw error;
  }
}

/**
 * The refusal while an interrupted transaction cannot be recovered because a user's checkout
 * is locked (its `index.lock`): nothing may write before it is put back.
 */
function blockedError(r: Recovery): HagentError {
  return new HagentError(
    'DIRTY_TARGET',
    `an interrupted ${r.command} left ${r.worktree} half updated, and its index is locked (index.lock)`,
    { files: [], worktree: r.worktree },
    `if no git command is running there, remove ${r.indexLock ?? 'its index.lock'}, then run the command again: hagent puts the checkout back first`,
  );
}

/** Whether anything is at `worktree` (a missing folder is the user's removal of it). */
function worktreeFolderExists(worktree: string): Promise<boolean> {
  return fs.lstat(worktree).then(
    () => true,
    () => false,
  );
}

const real = realOrResolved;

/**
 * The check of {@link assertWorktreeIntact} without a spawn, from the files `git worktree`
 * keeps: `<worktree>/.git` names the worktree's git dir; there `HEAD` holds `ref: <target.ref>`,
 * `commondir` leads to this repository and `gitdir` back to this worktree. True only when all
 * of that holds; anything else (including an unreadable file) is left to git to judge.
 */
async function worktreeLinksIntact(target: GuardTarget): Promise<boolean> {
  try {
    const gitDir = parseGitFile(
      target.worktree,
      await fs.readFile(path.join(target.worktree, '.git'), 'utf8'),
    );
    if (!gitDir) return false;
    const [head, commonDir, back] = await Promise.all(
      ['HEAD', 'commondir', 'gitdir'].map((f) => fs.readFile(path.join(gitDir, f), 'utf8')),
    );
    if (head!.trim() !== `ref: ${target.ref}`) return false;
    if (real(path.resolve(gitDir, commonDir!.trim())) !== real(target.commonDir)) return false;
    return real(path.dirname(path.resolve(gitDir, back!.trim()))) === real(target.worktree);
  } catch {
    return false;
  }
}

/**
 * Before any write: the session worktree exists, is its own git worktree (not a folder that
 * lost its `.git` file, where git would find the user's repository and index), and has the
 * session branch checked out. Read from git's worktree files when they all agree, else one
 * `git rev-parse` (which also words the error).
 * @throws HagentError WORKTREE_BROKEN naming what is wrong, with a hint.
 */
export async function assertWorktreeIntact(target: GuardTarget): Promise<void> {
  const broken = (what: string, hint: string) =>
    new HagentError(
      'WORKTREE_BROKEN',
      `session ${target.session}: ${what}`,
      { session: target.session, worktree: target.worktree },
      hint,
    );
  const st = await fs.stat(target.worktree).catch(() => null);
  if (!st?.isDirectory())
    throw broken(
      `its worktree ${target.worktree} is missing`,
      `nothing was written; recreate it from the session branch with: hagent doctor --session ${target.session} --restore-worktree (or land the session without it, or end it: hagent session end ${target.session})`,
    );
  if (await worktreeLinksIntact(target)) return;
  const r = await revParseLines(target.worktree, [
    '--path-format=absolute',
    '--show-toplevel',
    '--git-common-dir',
    '--symbolic-full-name',
    'HEAD',
  ]);
  const [top = '', common = '', head = ''] = r.lines;
  if (!r.ok || real(top) !== real(target.worktree) || real(common) !== real(target.commonDir)) {
    throw broken(
      `${target.worktree} is no longer a git worktree of this repository (its .git file is missing or points elsewhere)`,
      `nothing was written; run hagent doctor, or end the session with: hagent session end ${target.session} --force`,
    );
  }
  if (head !== target.ref) {
    throw broken(
      `its worktree has ${head === 'HEAD' ? 'a detached HEAD' : head} checked out instead of ${target.ref}`,
      `nothing was written; in ${target.worktree}: git switch ${target.ref.replace('refs/heads/', '')} (keep any work made there first)`,
    );
  }
}
