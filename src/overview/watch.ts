/**
 * `hagent status --watch`: the overview read again whenever what it shows may have changed.
 *
 * A cheap poll, not `fs.watch`: every `intervalMs` (500 ms) it stats the files that hold the
 * overview's inputs — the session records, the refs under `refs/hagent/` and
 * `refs/heads/hagent/` (loose files, and `packed-refs` / `reftable/`), the target branches' ref
 * files, each session worktree's `HEAD` and `MERGE_HEAD`, and the session branches' reflogs (drift).
 * git moves a ref by renaming a lock file over it and hagent writes its records the same way, so
 * every change gives a new inode or mtime. A stat is ~µs: forty sessions cost well under a
 * millisecond a poll, where `fs.watch` would need a watcher per folder, re-armed as refs come and
 * go. Only a changed fingerprint costs a read of the overview, and only a changed frame is shown.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { worktreeGitDirSync } from '../git/index.js';
import { hagentDir, listSessions, type RepoContext } from '../session/index.js';
import { readOverview, type Overview } from './read.js';

/** Every file below `dir` (recursively), its own entry first; nothing when it does not exist. */
function walk(dir: string, out: string[]): void {
  out.push(dir);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, out);
    else out.push(full);
  }
}

/**
 * The paths whose stat decides whether the overview may have changed, for the sessions of
 * `sessions` (ids, worktrees, targets). Reads folders only.
 */
export function watchedPaths(
  commonDir: string,
  sessions: readonly { id: string; worktree: string; target: string | null }[],
): string[] {
  const out: string[] = [path.join(commonDir, 'packed-refs')];
  walk(path.join(commonDir, 'reftable'), out);
  walk(path.join(commonDir, 'refs', 'hagent'), out);
  walk(path.join(commonDir, 'refs', 'heads', 'hagent'), out);
  walk(path.join(hagentDir(commonDir), 'sessions'), out);
  for (const target of new Set(sessions.flatMap((s) => (s.target ? [s.target] : []))))
    out.push(path.join(commonDir, ...target.split('/')));
  for (const s of sessions) {
    out.push(path.join(commonDir, 'logs', 'refs', 'heads', 'hagent', ...s.id.split('/')));
    const gitDir = worktreeGitDirSync(s.worktree);
    if (gitDir) out.push(path.join(gitDir, 'HEAD'), path.join(gitDir, 'MERGE_HEAD'));
    else out.push(s.worktree);
  }
  return out;
}

/** One line per path: its inode, size and mtime in ns, or `-` when it does not exist. */
export function fingerprint(paths: readonly string[]): string {
  return paths
    .map((p) => {
      const st = statSync(p, { throwIfNoEntry: false, bigint: true });
      return `${p}\t${st ? `${st.ino}:${st.size}:${st.mtimeNs}` : '-'}`;
    })
    .join('\n');
}

/** Options of {@link watchOverview}. */
export interface WatchOptions {
  /** Turns an overview into the frame shown (text, or a line of JSON). */
  render(overview: Overview): string;
  /** Shows a frame; called for the first and then for each frame that differs from the last. */
  show(frame: string): void;
  /** Ends the watch (Ctrl-C); the promise then resolves. */
  signal: AbortSignal;
  /** Time between two polls, in ms (default 500). */
  intervalMs?: number;
}

/**
 * Shows the overview, then again each time it changes, until `signal` aborts.
 * @throws HagentError GIT_FAILED from a read of the overview.
 */
export async function watchOverview(ctx: RepoContext, options: WatchOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  let last: string | null = null;
  let seen: string | null = null;
  while (!options.signal.aborted) {
    const sessions = await listSessions(ctx.commonDir);
    const now = fingerprint(watchedPaths(ctx.commonDir, sessions));
    if (now !== seen) {
      seen = now;
      const frame = options.render(await readOverview(ctx));
      if (options.signal.aborted) break;
      if (frame !== last) {
        last = frame;
        options.show(frame);
      }
      // A change made while the overview was read shows at the next poll: its fingerprint differs.
      continue;
    }
    await sleep(interval, options.signal);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
