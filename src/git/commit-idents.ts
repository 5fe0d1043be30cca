/**
 * What commit-direct.ts needs to know of git's environment and of the commits git made: the
 * configuration files git reads besides the repository's own, and the identity lines of a
 * commit (for the next commits made in-process with the same identity).
 */
import os from 'node:os';
import path from 'node:path';
import { readLooseObject, type LooseObjectStore } from './loose.js';

/**
 * The configuration files git may read besides the repository's own (git-config(1) "FILES",
 * `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`). Reading one too many only makes the check stricter,
 * so the system file is read even under `GIT_CONFIG_NOSYSTEM`, at each usual install prefix.
 */
export function userConfigFiles(): string[] {
  const home = process.env.HOME ?? os.homedir();
  // git joins with "%s/…": an empty HOME means the root folder.
  const under = (dir: string, rel: string) => (dir === '' ? `/${rel}` : path.join(dir, rel));
  const xdg = process.env.XDG_CONFIG_HOME || under(home, '.config');
  const global =
    process.env.GIT_CONFIG_GLOBAL !== undefined
      ? [process.env.GIT_CONFIG_GLOBAL]
      : [under(home, '.gitconfig'), path.join(xdg, 'git', 'config')];
  const system =
    process.env.GIT_CONFIG_SYSTEM !== undefined
      ? [process.env.GIT_CONFIG_SYSTEM]
      : ['/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig'];
  return [...global, ...system].filter((f) => f !== '');
}

/**
 * The author or committer of a commit object's content, `Name <email> <seconds> <±hhmm>`, for
 * a reflog line or another commit made by the same process environment: its time replaced by
 * now (seconds) unless `GIT_AUTHOR_DATE` / `GIT_COMMITTER_DATE` fixes it, as git's ident code
 * would give it. Null when the object has no such line. Pure but for the clock and the environment.
 */
export function commitIdent(
  commitContent: Uint8Array,
  role: 'author' | 'committer',
): string | null {
  const text = Buffer.from(commitContent).toString('utf8');
  const end = text.indexOf('\n\n');
  const m = new RegExp(`^${role} (.+ \\d+ [+-]\\d{4})$`, 'm').exec(
    end < 0 ? text : text.slice(0, end),
  );
  if (!m) return null;
  if (process.env[role === 'author' ? 'GIT_AUTHOR_DATE' : 'GIT_COMMITTER_DATE'] !== undefined)
    return m[1]!;
  return m[1]!.replace(/ \d+ ([+-]\d{4})$/, ` ${Math.floor(Date.now() / 1000)} $1`);
}

/**
 * The author and committer ({@link commitIdent}) of `commit`, read from its loose object: for
 * writes made in-process after git made that commit (its reflog line, a notes commit). Null when
 * the commit is not a readable loose object or lacks either line. Never throws.
 */
export function looseCommitIdents(
  store: LooseObjectStore,
  commit: string,
): { author: string; committer: string } | null {
  try {
    const object = readLooseObject(store, commit);
    if (object?.type !== 'commit') return null;
    const author = commitIdent(object.content, 'author');
    const committer = commitIdent(object.content, 'committer');
    return author && committer ? { author, committer } : null;
  } catch {
    return null;
  }
}
