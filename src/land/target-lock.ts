/**
 * The lock every land and land undo takes on its target branch, before the session lock
 * (lock/index.ts {@link withTargetLock}): lands of different sessions onto one branch share
 * its checkout and that checkout's index, so they run one at a time.
 */
import { withTargetLock } from '../lock/index.js';
import type { Session } from '../session/index.js';

/**
 * Runs `fn` holding the lock of `session.target` (no lock for a session without a target:
 * its land refuses `DETACHED_TARGET` before reading any branch).
 * @throws HagentError LOCKED when another land holds the target past `timeoutMs`; whatever `fn` throws.
 */
export function withLandTarget<T>(
  commonDir: string,
  session: Pick<Session, 'id' | 'target'>,
  command: string,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  if (!session.target) return fn();
  return withTargetLock(
    commonDir,
    session.target,
    { command: `${command} ${session.id}` },
    { timeoutMs },
    fn,
  );
}
