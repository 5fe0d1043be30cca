/**
 * hagent's library face. The patch engine is pure (text in, plan out; no fs, no git); the
 * session functions drive git in a repository.
 *
 * @example
 * import { parsePatch, planPatch } from 'hagent';
 * const parsed = parsePatch('*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n');
 * const plan = planPatch(parsed, new Map([['a.txt', { kind: 'missing' }]]));
 */
export { parsePatch, pathsToRead, planPatch, formatResult } from './patch/index.js';
export type * from './patch/types.js';
export {
  HagentError,
  isHagentError,
  EXIT_STATUS,
  type ErrorCode,
  type ErrorJson,
} from './errors.js';
export { applyPatch, type ApplyOptions, type ApplyResult } from './apply/index.js';
export {
  openRepo,
  readSession,
  resolveSession,
  startSession,
  listSessionSummaries,
  sessionStatus,
  endSession,
} from './session/index.js';
export { reviewSession, type ReviewResult } from './review/index.js';
export { checkPatch, type CheckResult } from './check/index.js';
export { landSession, type LandResult } from './land/index.js';
export { undo, redo, type UndoResult } from './undo/index.js';
export { guardCommand, type GuardContext, type GuardVerdict, GUARD_RULES } from './guard/index.js';
export {
  execInSession,
  commitCommandChanges,
  type ExecOptions,
  type ExecResult,
} from './exec/index.js';
