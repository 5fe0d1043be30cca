/**
 * A `git` on PATH that kills its parent (hagent) with SIGKILL when hagent sends its ref
 * transaction (the first byte on the stdin of `git update-ref --stdin`), before any ref moves:
 * the exact crash window between a transaction's files and its refs. Every other git call goes
 * to the real git.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './index.js';

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/** The environment whose git kills hagent at its ref transaction (module header). */
export function killAtRefTransaction(): Record<string, string> {
  const bin = tempDir('hagent-killgit-');
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" update-ref "*" --stdin "*) head -c 1 >/dev/null; kill -9 $PPID; exit 0 ;;
esac
exec "${REAL_GIT}" "$@"
`,
    { mode: 0o755 },
  );
  return { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}
