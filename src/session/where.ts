/**
 * Where session worktrees live: one folder per repository under a root — by default the user's
 * cache folder, configurable with `worktreeRoot` (docs/worktrees.md).
 * Existing sessions are never moved: each session record names its own worktree.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { hagentDir } from './store.js';
import { realOrResolved } from '../fsx/index.js';

/** `<git-common-dir>/hagent/worktrees`: where sessions were put before `worktreeRoot`, and `worktreeRoot: "git-dir"`. */
export function gitDirWorktreeRoot(commonDir: string): string {
  return path.join(hagentDir(commonDir), 'worktrees');
}

const real = realOrResolved;

/** True when `child` is `parent` or inside it (after resolving symlinks). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(real(parent), real(child));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The repository's folder name under a shared root: the main checkout's name (readable) and 12
 * hex digits of the SHA-256 of the git common dir's real path, so that two repositories of the
 * same name never share a folder, and every worktree of one repository maps to the same one.
 */
export function repoKey(commonDir: string): string {
  const common = real(commonDir);
  const named =
    path.basename(common) === '.git'
      ? path.basename(path.dirname(common))
      : path.basename(common).replace(/\.git$/, '');
  const name =
    named
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^[.-]+/, '')
      .slice(0, 40) || 'repo';
  return `${name}-${createHash('sha256').update(common).digest('hex').slice(0, 12)}`;
}

/** The user's cache folder: `$XDG_CACHE_HOME` when absolute (XDG base directory rules), else `~/.cache`. */
export function userCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return xdg;
  return path.join(env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir(), '.cache');
}

/**
 * The folder that holds this repository's session worktrees (`<folder>/<id>`) and its pool
 * (`<folder>/.pool`):
 * - default (`configured` null): `<user cache>/hagent/worktrees/<repo-key>`;
 * - `git-dir`: `<git-common-dir>/hagent/worktrees` (the place of earlier versions);
 * - a folder (`~/…` expanded, relative to the main checkout `mainRoot`): `<folder>/<repo-key>`.
 * Rule: never inside the user's checkout (their `git status`, editors and `land` would meet it),
 * except inside its git folder.
 * @throws HagentError CONFIG_INVALID for a folder inside the main checkout.
 */
export function worktreeRootFor(
  commonDir: string,
  mainRoot: string | null,
  configured: string | null,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (configured === 'git-dir') return gitDirWorktreeRoot(commonDir);
  let base: string;
  if (configured === null) base = path.join(userCacheDir(env), 'hagent', 'worktrees');
  else if (configured === '~' || configured.startsWith('~/'))
    base = path.join(
      env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir(),
      configured.slice(1),
    );
  else base = path.resolve(mainRoot ?? path.dirname(commonDir), configured);
  const root = path.join(base, repoKey(commonDir));
  if (mainRoot && isInside(mainRoot, root) && !isInside(commonDir, root)) {
    throw new HagentError(
      'CONFIG_INVALID',
      `worktreeRoot ${JSON.stringify(configured)} is inside your checkout ${mainRoot}`,
      { key: 'worktreeRoot', path: root },
      'pick a folder outside the checkout (e.g. "../worktrees"), or remove the key for the default',
    );
  }
  return root;
}
