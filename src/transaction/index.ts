/**
 * transaction: the one transaction every writing command runs — a pure plan (plan.ts), its run
 * (run.ts: objects, record, files, index, one ref transaction), its record (record.ts) and the
 * one recovery of every kind (recover.ts) — plus the writing envelope (guard.ts: lock,
 * recovery, journal) and the watcher on the targets. The staging and publishing of bytes live
 * in fsx/.
 */
export * from './plan.js';
export * from './record.js';
export * from './run.js';
export * from './recover.js';
export * from './watch.js';
export * from './guard.js';
