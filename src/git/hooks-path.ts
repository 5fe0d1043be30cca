/**
 * Where the user's own git hooks are: `core.hooksPath` as the user's configuration sets it (every
 * internal git call overrides it with the null device, run.ts, so that override is left out),
 * else `<git common dir>/hooks`. For the land commit, which runs the hooks git would run.
 */
import path from 'node:path';
import { runGit } from './run.js';

/** Parses `git config --show-origin -z --get-all core.hooksPath`: the user's last value, or null. Pure. */
export function parseHooksPath(out: Buffer, nullDevice: string): string | null {
  const parts = out.toString('utf8').split('\0');
  let value: string | null = null;
  for (let i = 0; i + 1 < parts.length; i += 2) {
    // hagent's own `-c core.hooksPath=<null device>` shows as the command line's.
    if (parts[i] === 'command line:' && parts[i + 1] === nullDevice) continue;
    value = parts[i + 1]!;
  }
  return value;
}

/**
 * The absolute folder of the user's git hooks for a worktree whose top is `top`: `core.hooksPath`
 * (a relative one is relative to the worktree's top, where git runs hooks; `~` expanded by git),
 * else `<commonDir>/hooks`. @throws HagentError GIT_FAILED.
 */
export async function userHooksFolder(top: string, commonDir: string): Promise<string> {
  const r = await runGit(
    ['config', '--show-origin', '-z', '--type=path', '--get-all', 'core.hooksPath'],
    { cwd: top, allowFailure: true },
  );
  const nullDevice = process.platform === 'win32' ? 'NUL' : '/dev/null';
  const value = r.exitCode === 0 ? parseHooksPath(r.stdout, nullDevice) : null;
  return value ? path.resolve(top, value) : path.join(commonDir, 'hooks');
}

/**
 * A worktree of `commit` with nothing checked out (`git worktree add --detach --no-checkout`),
 * where the user's commit hooks run for a land whose target is checked out nowhere: its HEAD is
 * the target's commit, as in a checkout of the target. @throws HagentError GIT_FAILED.
 */
export async function addHooksWorktree(cwd: string, dir: string, commit: string): Promise<void> {
  await runGit(['worktree', 'add', '--quiet', '--detach', '--no-checkout', dir, commit], { cwd });
}
