/**
 * The envelope every writing command runs in (issue: safety envelope §3, §6, §8): the session
 * lock, recovery of an interrupted transaction, and one journal line per attempt — applied or
 * refused — whatever the command.
 */
import { toHagentError } from '../errors.js';
import { appendJournal, type JournalInput } from '../journal/index.js';
import { withSessionLock } from '../lock/index.js';
import { recoverTransaction, type Recovery } from './recover.js';

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
}

/**
 * Runs `body` holding the session lock, after recovering an interrupted transaction, and
 * journals the attempt. `journal: false` (dry runs, read-only calls) skips the journal line of
 * a success.
 * @returns the body's value and what recovery did (null when nothing was pending).
 * @throws whatever the body throws (journaled first), or HagentError LOCKED.
 */
export async function guardedWrite<T>(
  target: GuardTarget,
  command: string,
  options: { timeoutMs: number; patch?: string; journal?: boolean },
  body: (recovery: Recovery | null) => Promise<GuardedOutcome<T>>,
): Promise<{ value: T; recovery: Recovery | null }> {
  const started = performance.now();
  const base: JournalInput = { session: target.session, command, ok: true, base: target.base, ...(options.patch !== undefined ? { patch: options.patch } : {}) };
  try {
    const out = await withSessionLock(target.commonDir, target.session, { command }, { timeoutMs: options.timeoutMs }, async () => {
      const recovery = await recoverTransaction(target.commonDir, target.session, target.worktree, target.ref);
      if (recovery) {
        await appendJournal(target.commonDir, { session: target.session, command: `recover ${recovery.command}`, ok: true, files: recovery.files, message: `${recovery.action}${recovery.outside.length ? `; left alone: ${recovery.outside.join(', ')}` : ''}` }).catch(() => undefined);
      }
      return { ...(await body(recovery)), recovery };
    });
    if (options.journal !== false) {
      await appendJournal(target.commonDir, { ...base, ...(out.files ? { files: out.files } : {}), ...(out.head ? { head: out.head } : {}), ...(out.patch !== undefined ? { patch: out.patch } : {}), durationMs: performance.now() - started }).catch(() => undefined);
    }
    return { value: out.value, recovery: out.recovery };
  } catch (error) {
    const e = toHagentError(error);
    await appendJournal(target.commonDir, { ...base, ok: false, code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}), ...(Array.isArray(e.details.files) ? { files: e.details.files } : e.details.path ? { files: [String(e.details.path)] } : {}), durationMs: performance.now() - started }).catch(() => undefined);
    throw error;
  }
}
