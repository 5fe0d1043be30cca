/**
 * The sandbox's settings of one repository (`.hagent/config.json` `"sandbox"`, read from the
 * user's checkout only) and the caches an agent's tools write, writable by default.
 */
import os from 'node:os';
import path from 'node:path';
import type { SandboxConfig } from '../policy/index.js';

/**
 * `auto`: a sandbox where one can start, else the guard alone (said once, loudly); `required`:
 * refuse to run a command where none can start; `off`: the guard alone.
 */
export type SandboxMode = 'auto' | 'required' | 'off';

export type { SandboxConfig };

/** The settings a sandbox is built from. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** Folders writable besides the session's own, absolute (`~/` expanded); the default caches first. */
  writable: string[];
  /** Whether the network stays reachable (default true). */
  network: boolean;
}

/**
 * Package and build caches, relative to the home folder: writable by default so that installs
 * and builds work in the sandbox. Only those that exist are bound. The agents' own config folders
 * are not here: they hold hooks and settings that run outside the sandbox (see docs/sandbox.md).
 */
export const DEFAULT_CACHES: readonly string[] = [
  '.npm',
  '.cache/npm',
  '.cache/yarn',
  '.yarn/berry/cache',
  '.local/share/pnpm',
  '.cache/pnpm',
  '.bun/install/cache',
  '.cache/node-gyp',
  '.cache/pip',
  '.cache/uv',
  '.cache/pypoetry',
  '.cargo/registry',
  '.cargo/git',
  '.cache/go-build',
  'go/pkg/mod',
  '.m2/repository',
  '.gradle/caches',
  '.cache/ccache',
];

/** `~/x` as a folder of `home`; an absolute path as it is. Pure. */
export function expandHome(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return path.resolve(p);
}

/**
 * The effective settings from the config file's `"sandbox"` value (undefined: defaults).
 * @param home the user's home folder (default `os.homedir()`).
 */
export function sandboxSettings(
  config: SandboxConfig | null | undefined,
  home: string = os.homedir(),
): SandboxSettings {
  const obj = typeof config === 'object' && config !== null ? config : {};
  const mode: SandboxMode = typeof config === 'string' ? config : (obj.mode ?? 'auto');
  const writable = [
    ...DEFAULT_CACHES.map((c) => path.join(home, c)),
    ...(obj.writable ?? []).map((p) => expandHome(p, home)),
  ];
  return { mode, writable, network: obj.network ?? true };
}
