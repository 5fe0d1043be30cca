/**
 * transaction: what makes a write crash-safe and outside-edit-safe — the intent record written
 * before the first file changes, recovery of an interrupted transaction, and the watcher on the
 * targets. The staging and publishing of bytes live in fsx/.
 */
export * from './intent.js';
export * from './recover.js';
export * from './watch.js';
export * from './guard.js';
export * from './note.js';
