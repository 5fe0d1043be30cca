/**
 * git: the plumbing hagent drives. `run.ts` is the only place that spawns git; each verb sits
 * beside a pure parser of its output. Imports nothing from the other folders but errors.ts.
 */
export { runGit, gitText, REPOSITORY_ENV, type GitResult, type RunGitOptions } from './run.js';
export * from './plumbing.js';
export * from './objects.js';
export * from './tree.js';
export {
  readHeadDirectSync,
  readRefPreferDirect,
  readRefsDirect,
  readRefsDirectSync,
  type DirectHead,
} from './refs-direct.js';
export * from './loose.js';
export { CatFileBatch } from './batch.js';
export { askGit, traceFastPath, type FastPath } from './fast-path.js';
export { firstParentSubjectsDirect } from './commits-direct.js';
export {
  writeCommit,
  writeCommitDirect,
  gitIdentity,
  looseCommitIdentities,
  timezoneOffset,
  type DirectCommit,
  type MadeCommit,
} from './commit-direct.js';
export { Repo, forgetRepoMemos } from './repo.js';
export * from './merge.js';
export * from './history.js';
export * from './worktrees.js';
export { pathsInTheWay } from './in-the-way.js';
export {
  formatOfOid,
  hashObject,
  isOid,
  objectFormat,
  oidByteLength,
  oidHexLength,
  zeroOid,
  type ObjectFormat,
} from './object-format.js';
export * from './filters.js';
export {
  moveRefs,
  openRefTransaction,
  type OpenRefTransaction,
  RefTransactionProcess,
  readRefs,
  refTransactionInput,
  failedRefOf,
  type RefMove,
} from './ref-transaction.js';
export {
  GLOBAL_NOTES_REF,
  readSessionNote,
  sessionNotesRef,
  writeNoteCommit,
  type NoteWriter,
} from './notes.js';
export { restorePathsFrom, unstagePathsHolding } from './restore.js';
export { pruneWorktrees, removeWorktree } from './worktree-remove.js';
export * from './index-ops.js';
export * from './merge-state.js';
export { removeGitLock, removeLockMadeSince } from './locks.js';
export * from './renames.js';
export * from './hooks-path.js';
export {
  changedPathsOfPairs,
  listRefs,
  parseDiffTreeStdin,
  parseRefListing,
  type CommitPair,
  type ListedRef,
} from './ref-listing.js';
export {
  firstParentChains,
  parseCommitParents,
  splitBatchCommits,
  type ChainRange,
  type ChainSummary,
} from './first-parents.js';
