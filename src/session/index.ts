/**
 * session: a worktree + branch per agent session, its metadata, and finding the session a
 * command acts on. Uses git/ and fsx/; knows nothing of patches.
 */
export * from './context.js';
export * from './store.js';
export * from './lifecycle.js';
export * from './summary.js';
export * from './landed.js';
export * from './approval.js';
export * from './drift.js';
export * from './where.js';
export * from './restore.js';
export * from './orphans.js';
export { nestedRepositories, stageWorktree, type StagedWorktree } from './snapshot.js';
export { recoverSessionHead, type RecoveredHead } from './recover-head.js';
export {
  discardPoolEntry,
  inspectPool,
  listPool,
  orphanPools,
  trimPool,
  type Discarded,
  type PoolEntry,
} from './pool.js';
