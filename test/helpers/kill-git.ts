/**
 * A `git` on PATH that kills its parent (hagent) with SIGKILL at an exact step: when hagent sends
 * its ref transaction (the first byte on the stdin of `git update-ref --stdin`), before any ref
 * moves, the crash window between a transaction's files and its refs; or at its index write.
 * Every other git call goes to the real git.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './index.js';

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/**
 * The environment whose `git` runs `action` (sh) when its arguments match the case pattern
 * `pattern`, and is the real git otherwise.
 */
export function gitOnPath(pattern: string, action: string): Record<string, string> {
  const bin = tempDir('hagent-killgit-');
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  ${pattern}) ${action} ;;
esac
exec "${REAL_GIT}" "$@"
`,
    { mode: 0o755 },
  );
  return { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}

/** The environment whose git kills hagent at its ref transaction (module header). */
export function killAtRefTransaction(): Record<string, string> {
  return gitOnPath('*" update-ref "*" --stdin "*', 'head -c 1 >/dev/null; kill -9 $PPID; exit 0');
}

/**
 * The environment whose `update-index` (the index write of a transaction, started early and fed
 * its entries once the files are published) takes the worktree's index.lock when its first entry
 * arrives, then is killed with hagent: the lock stays, with no owner alive.
 */
export function killAtIndexWrite(): Record<string, string> {
  return gitOnPath(
    '*" update-index "*',
    `head -c 1 >/dev/null; : > "$("${REAL_GIT}" rev-parse --absolute-git-dir)/index.lock"; ` +
      'kill -9 $PPID; exit 0',
  );
}
