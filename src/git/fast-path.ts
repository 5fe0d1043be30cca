/**
 * The answer of every in-process fast path of src/git: either it did the work, or it says why git
 * must (a repository shape it does not handle, a setting it does not reproduce). The caller then
 * runs git; `HAGENT_TRACE=1` prints which path ran and why ({@link traceFastPath}).
 */
import { trace } from '../trace/index.js';

/** `done` with the path's result, or `askGit` with the reason the caller runs git instead. */
export type FastPath<T> = ({ kind: 'done' } & T) | { kind: 'askGit'; reason: string };

/** The `askGit` answer with `reason`. */
export function askGit(reason: string): { kind: 'askGit'; reason: string } {
  return { kind: 'askGit', reason };
}

/** Traces `name: in-process`, or `name: git (<reason>)`, and gives `result` back. */
export function traceFastPath<T>(name: string, result: FastPath<T>): FastPath<T> {
  trace(result.kind === 'done' ? `${name}: in-process` : `${name}: git (${result.reason})`);
  return result;
}
