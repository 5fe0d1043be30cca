/**
 * Watching the targets of an apply for outside writes, from before the staleness check until
 * after the commit (issue: safety envelope §5). chokidar watches only the target paths and the
 * folders where files are added or removed (design.md: watching the whole tree costs 1.5 s and
 * 185 MB on 20k files). hagent's own temp files are ignored by name; events on targets are
 * judged by content afterwards (an event whose bytes equal what hagent wrote is its own).
 * A watcher error fails closed.
 */
import path from 'node:path';
import { HagentError } from '../errors.js';
import { isTempName } from '../fsx/index.js';

/** A running watch. `events` are worktree-relative paths seen changing, in order. */
export interface TargetWatch {
  events: string[];
  /** Throws WATCH_FAILED if the watcher reported an error. */
  assertHealthy(): void;
  close(): Promise<void>;
}

/**
 * Starts watching `targets` (relative paths) under `root`; resolves once chokidar is ready.
 * chokidar is imported lazily: only the apply path pays for it (design.md). With no targets there
 * is nothing to watch (chokidar would never report ready).
 * @throws HagentError WATCH_FAILED when the watcher cannot start (e.g. inotify limit).
 */
export async function watchTargets(root: string, targets: readonly string[]): Promise<TargetWatch> {
  if (targets.length === 0) return { events: [], assertHealthy() {}, close: async () => {} };
  const { watch } = await import('chokidar');
  const events: string[] = [];
  let failure: Error | null = null;
  const wanted = new Set(targets);
  const paths = new Set<string>();
  for (const t of targets) {
    paths.add(path.join(root, t));
    // The nearest folder, so adds and removes there are seen too.
    paths.add(path.join(root, path.dirname(t)));
  }
  const watcher = watch([...paths], {
    ignoreInitial: true,
    persistent: true,
    depth: 0,
    ignored: (p: string) => isTempName(path.basename(p)),
  });
  watcher.on('all', (_event: string, p: string) => {
    const rel = path.relative(root, p).split(path.sep).join('/');
    if (wanted.has(rel)) events.push(rel);
  });
  watcher.on('error', (e: unknown) => {
    failure = e instanceof Error ? e : new Error(String(e));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      watcher.once('ready', () => resolve());
      watcher.once('error', reject);
    });
  } catch (e) {
    await watcher.close().catch(() => undefined);
    throw watchFailed(e);
  }
  return {
    events,
    assertHealthy() {
      if (failure) throw watchFailed(failure);
    },
    close: () => watcher.close(),
  };
}

function watchFailed(e: unknown): HagentError {
  const message = e instanceof Error ? e.message : String(e);
  return new HagentError('WATCH_FAILED', `cannot watch the patch's files for outside writes: ${message}`, {}, /ENOSPC|inotify/i.test(message)
    ? 'the inotify watch limit is reached (raise fs.inotify.max_user_watches), or pass --no-watch to apply without watching (recorded in the result)'
    : 'pass --no-watch to apply without watching (recorded in the result)');
}
