/**
 * Whether an operating-system sandbox can start on this machine, and why not: bubblewrap on
 * `PATH` (or `HAGENT_BWRAP`), started once with the options every sandboxed command uses, so a
 * kernel without user namespaces or a locked-down container is found before an agent depends on
 * it. The answer is cached per process and bwrap path.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** What {@link probeSandbox} found. */
export type SandboxProbe =
  { available: true; bwrap: string } | { available: false; reason: string; hint: string };

/**
 * Options of every bwrap start: a new user namespace without capabilities (root would otherwise
 * keep CAP_SYS_ADMIN and remount `/` writable) and no nested one, a private pid namespace (no
 * ptrace or signals to processes outside), and the sandbox dies with hagent.
 */
export const BWRAP_BASE = [
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  '--unshare-pid',
  '--unshare-ipc',
  '--die-with-parent',
] as const;

const cache = new Map<string, SandboxProbe>();

/** The bwrap executable: `HAGENT_BWRAP` when set (empty: none), else the first on `PATH`. */
function findBwrap(env: Readonly<Record<string, string | undefined>>): string | null {
  const forced = env.HAGENT_BWRAP;
  if (forced !== undefined) return forced === '' ? null : forced;
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'bwrap');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Whether a sandbox can start here: bwrap is found and runs `true` with {@link BWRAP_BASE} and a
 * read-only root. Costs one bwrap start (~10 ms) the first time per process. Never throws.
 * @param env the caller's environment (`PATH`, `HAGENT_BWRAP`).
 */
export function probeSandbox(env: Readonly<Record<string, string | undefined>>): SandboxProbe {
  if (process.platform !== 'linux')
    return {
      available: false,
      reason: `no sandbox on ${process.platform}: hagent's sandbox is bubblewrap, Linux only`,
      hint: 'the shell guard alone checks commands here; run agents on Linux for the sandbox',
    };
  const bwrap = findBwrap(env);
  if (!bwrap)
    return {
      available: false,
      reason: 'no sandbox: bubblewrap (bwrap) is not installed',
      hint: 'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)',
    };
  const known = cache.get(bwrap);
  if (known) return known;
  const r = spawnSync(bwrap, [...BWRAP_BASE, '--ro-bind', '/', '/', '--', '/bin/sh', '-c', ':'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
  });
  const answer: SandboxProbe =
    r.status === 0
      ? { available: true, bwrap }
      : {
          available: false,
          reason: `no sandbox: ${bwrap} cannot start here (${
            (r.error?.message ?? r.stderr?.toString().trim()) || `exit ${r.status}`
          })`,
          hint: 'user namespaces are off or blocked (a container without them, or sysctl kernel.unprivileged_userns_clone=0 / user.max_user_namespaces=0): allow them, or run hagent outside this container',
        };
  cache.set(bwrap, answer);
  return answer;
}
