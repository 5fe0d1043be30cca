/** Builders for the patch engine's unit tests (real shapes, no mocks: the engine is pure). */
import type { Callback, Test } from 'uvu';
import { isHagentError, type HagentError } from '../../../src/errors.js';
import {
  parsePatch,
  pathsToRead,
  planPatch,
  type FileState,
  type Plan,
  type Snapshot,
} from '../../../src/patch/index.js';

export type Entry =
  | string
  | Uint8Array
  | { text: string; mode: '100644' | '100755' }
  | 'missing'
  | 'directory'
  | 'other';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { ignoreBOM: true });

/** A snapshot from path → text (UTF-8), raw bytes, or a state name; unknown paths are missing. */
export function snapshotOf(
  entries: Record<string, Entry>,
  paths: readonly string[] = [],
): Snapshot {
  const map = new Map<string, FileState>();
  for (const p of paths) map.set(p, { kind: 'missing' });
  for (const [path, e] of Object.entries(entries)) {
    if (e === 'missing') map.set(path, { kind: 'missing' });
    else if (e === 'directory') map.set(path, { kind: 'directory' });
    else if (e === 'other') map.set(path, { kind: 'other' });
    else if (typeof e === 'string')
      map.set(path, { kind: 'file', bytes: enc.encode(e), mode: '100644' });
    else if (e instanceof Uint8Array) map.set(path, { kind: 'file', bytes: e, mode: '100644' });
    else map.set(path, { kind: 'file', bytes: enc.encode(e.text), mode: e.mode });
  }
  return map;
}

/** Parses and plans `patch` against `files`; returns the plan and each written file as text. */
export function run(
  patch: string,
  files: Record<string, Entry> = {},
): { plan: Plan; out: Record<string, string> } {
  const parsed = parsePatch(patch);
  const plan = planPatch(parsed, snapshotOf(files, pathsToRead(parsed)));
  const out: Record<string, string> = {};
  for (const f of plan.files) if (f.bytes) out[f.path] = dec.decode(f.bytes);
  return { plan, out };
}

/** The HagentError `fn` throws (fails when it throws nothing or something else). */
export function errorOf(fn: () => unknown): HagentError {
  try {
    fn();
  } catch (e) {
    if (isHagentError(e)) return e;
    throw e;
  }
  throw new Error('expected a HagentError, nothing was thrown');
}

/** Wraps ops into a Codex patch. */
export function codex(...lines: string[]): string {
  return ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
}

/**
 * uvu's reporter reads `err.details` as an assertion diff string: a HagentError escaping a test
 * (its `details` is an object) would crash the reporter and the failure would go unreported.
 * Wrap each suite with this so such errors surface as plain failures.
 */
export function guarded(s: Test): Test {
  const wrap =
    (fn: Callback): Callback =>
    async (ctx) => {
      try {
        await fn(ctx);
      } catch (e) {
        if (isHagentError(e))
          throw new Error(`unexpected ${e.code}: ${e.message} (hint: ${e.hint})`, { cause: e });
        throw e;
      }
    };
  const t = ((name: string, fn: Callback) => s(name, wrap(fn))) as Test;
  t.only = (name: string, fn: Callback) => s.only(name, wrap(fn));
  t.skip = s.skip;
  t.before = s.before;
  t.after = s.after;
  t.run = () => s.run();
  return t;
}
