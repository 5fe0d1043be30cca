/**
 * Where a path a command names really is, seen from the session: inside the worktree, the
 * worktree's own `.git` link, a scratch place (devices, the system temp folder), or outside.
 * Symlinks already on disk are followed (the deepest existing folder is resolved), so a link in
 * the worktree that points at the home folder is seen as the home folder.
 */
import { existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Paths a command may write although they are outside the worktree: output devices. */
const DEVICES =
  /^\/dev\/(null|zero|stdout|stderr|stdin|tty|fd\/\d+|random|urandom)$|^\/proc\/self\/fd\/\d+$/;

/**
 * The package caches of the everyday tools, below the home folder: clearing or filling one
 * (`rm -rf ~/.npm/_cacache` after a broken install) is scratch work, not the user's files.
 */
const TOOL_CACHES = [
  '.npm',
  '.yarn/berry/cache',
  '.cache/yarn',
  '.cache/pnpm',
  '.local/share/pnpm/store',
  '.pnpm-store',
  '.cache/pip',
  '.cache/uv',
  '.cache/pypoetry',
  '.cache/go-build',
  'go/pkg/mod',
  '.cargo/registry',
  '.cargo/git',
  '.m2/repository',
  '.gradle/caches',
  '.cache/node-gyp',
  '.cache/ms-playwright',
];

/** Folders where scratch files belong; writes there are allowed unless they reach a checkout. */
function tempRoots(): string[] {
  const roots = new Set<string>();
  for (const t of [os.tmpdir(), '/tmp', '/var/tmp']) roots.add(realish(t));
  return [...roots];
}

/**
 * The path with every symlink of its existing part resolved (`realpath` of the deepest folder
 * that exists, the rest appended), so `/tmp` → `/private/tmp` style links and links inside the
 * worktree are seen for what they are. `followLast` false keeps the last component itself
 * (rm of a link removes the link, not what it points at).
 */
export function realish(p: string, followLast = true): string {
  const abs = path.resolve(p);
  if (!followLast) {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(realish(parent, true), path.basename(abs));
  }
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(head);
      return tail.length ? path.join(real, ...tail.reverse()) : real;
    } catch {
      const up = path.dirname(head);
      if (up === head) return abs;
      tail.push(path.basename(head));
      head = up;
    }
  }
}

/** `a` equals `b` or lies below it. */
export function within(a: string, b: string): boolean {
  if (a === b) return true;
  const rel = path.relative(b, a);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Where a resolved path lies, for the rules. */
export type Place =
  | 'worktree-root' // the worktree folder itself
  | 'worktree-git' // its `.git` link (or anything below it)
  | 'inside' // a file or folder inside the worktree
  | 'device' // /dev/null and friends
  | 'scratch' // below the system temp folder (not inside any git checkout), or in a tool's package cache
  | 'temp-root' // a temp folder itself (rm -rf /tmp/* is not scratch)
  | 'home-or-root' // '/', the home folder, or a folder holding the worktree or the home folder
  | 'outside';

/** The session's fixed paths, resolved once per guard call. */
export interface Frame {
  worktree: string;
  home: string;
  temps: string[];
  /** The user's main checkout, when known. */
  checkout?: string;
  /** The repository's git common folder (config, hooks, refs, objects), when known. */
  gitDir?: string;
}

export function makeFrame(
  worktree: string,
  home: string,
  repo: { checkout?: string; gitDir?: string } = {},
): Frame {
  return {
    worktree: realish(worktree),
    home: realish(home),
    temps: tempRoots(),
    ...(repo.checkout ? { checkout: realish(repo.checkout) } : {}),
    ...(repo.gitDir ? { gitDir: realish(repo.gitDir) } : {}),
  };
}

/**
 * Whose a path outside the worktree is, said so the agent knows why it may not change it: the
 * repository's git folder, the user's checkout, another session's worktree, the home folder.
 * '' when it is none of these.
 */
export function whose(frame: Frame, p: string): string {
  const real = realish(p);
  if (frame.gitDir && within(real, frame.gitDir))
    return "the repository's git folder, shared with the user's checkout: only hagent changes it";
  if (frame.checkout && within(real, frame.checkout))
    return "the user's checkout: it changes only through hagent land";
  const sessions = sessionsFolder(frame);
  if (sessions && within(real, sessions) && real !== sessions)
    return "the folder of the repository's session worktrees: each session changes only its own";
  if (real === frame.home || within(frame.home, real))
    return 'the home folder or a folder holding it';
  return '';
}

/**
 * True when git may run in `p` although it is outside the worktree: a scratch clone in the temp
 * folder (`git clone … /tmp/x && cd /tmp/x && git log`), not the user's checkout, its git folder
 * or a session's worktree.
 */
export function scratchRepo(frame: Frame, p: string): boolean {
  const real = realish(p);
  if (!frame.temps.some((t) => within(real, t))) return false;
  if (within(frame.worktree, real) || within(frame.home, real)) return false;
  if (frame.checkout && (within(real, frame.checkout) || within(frame.checkout, real)))
    return false;
  if (frame.gitDir && (within(real, frame.gitDir) || within(frame.gitDir, real))) return false;
  const sessions = sessionsFolder(frame);
  return !sessions || !within(real, sessions);
}

/**
 * The folder holding the session worktrees of the repository (the worktree's parent), or null when
 * that parent is a folder of everything (the temp folder, the home folder, /).
 */
function sessionsFolder(frame: Frame): string | null {
  const parent = path.dirname(frame.worktree);
  if (parent === '/' || within(frame.home, parent) || frame.temps.includes(parent)) return null;
  return parent;
}

/** True when some folder from `p` up to (not including) `stop` holds a `.git`: a checkout. */
function inCheckout(p: string, stop: string): boolean {
  for (let d = p; within(d, stop) && d !== stop; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return true;
  }
  return false;
}

/**
 * Classifies an absolute path (already free of `~` and variables).
 * `followLast` false for deletions (rm of a symlink removes the link itself).
 */
export function placeOf(frame: Frame, p: string, followLast: boolean): Place {
  if (DEVICES.test(p)) return 'device';
  const real = realish(p, followLast);
  const { worktree, home } = frame;
  if (real === worktree) return 'worktree-root';
  if (within(real, worktree)) {
    return within(real, path.join(worktree, '.git')) ? 'worktree-git' : 'inside';
  }
  if (real === '/' || real === home || within(worktree, real) || within(home, real))
    return 'home-or-root';
  // The home folder's files are never scratch, even with a temp folder inside it; its tools'
  // package caches are.
  if (within(real, home))
    return TOOL_CACHES.some((c) => within(real, path.join(home, c))) ? 'scratch' : 'outside';
  for (const t of frame.temps) {
    if (real === t) return 'temp-root';
    if (within(real, t)) return inCheckout(real, t) ? 'outside' : 'scratch';
  }
  return 'outside';
}

/**
 * A shell pattern (`*`, `?`, `[...]`, `[!...]`) as a RegExp source. `anyChar` is what `*` and `?`
 * may match: not `/` for a path component, anything for `${x%pat}`.
 */
export function patternSource(pattern: string, anyChar = '[^/]'): string {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += `${anyChar}*`;
    else if (c === '?') re += anyChar;
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, close);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return re;
}

/** Converts one glob component into a RegExp; a leading dot must be literal, as in bash. */
export function globRegExp(component: string): RegExp {
  const re = patternSource(component);
  return new RegExp(`^${component.startsWith('.') ? '' : '(?!\\.)'}${re}$`);
}

/** The characters that make a word a glob pattern. */
export const GLOB_CHARS = /[*?[]/;

/**
 * Splits a glob path into its literal folder (where matching starts) and the first pattern
 * component: `/home/u/*` → `/home/u` + `*`.
 */
export function globBase(p: string): { base: string; pattern: string } {
  const parts = p.split('/');
  const i = parts.findIndex((c) => GLOB_CHARS.test(c));
  if (i < 0) return { base: p, pattern: '' };
  const base = parts.slice(0, i).join('/') || (p.startsWith('/') ? '/' : '.');
  return { base, pattern: parts[i]! };
}
