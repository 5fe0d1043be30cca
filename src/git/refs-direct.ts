/**
 * Reading refs without spawning git, from the files git keeps them in (the "files" ref backend:
 * a loose file `<common-dir>/<ref>` holding the object id, else a line of `packed-refs`), for
 * the hot path of apply, where a spawn costs ~10 ms. Answers null — "ask git" — whenever the
 * repository does not look like that: a reftable repository, a symbolic ref, unreadable content.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { readRef } from './plumbing.js';

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Why a direct read gave up: the caller runs git instead. */
class AskGit extends Error {}

function readLoose(commonDir: string, ref: string): string | null | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(commonDir, ...ref.split('/')), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined; // not loose
    throw new AskGit();
  }
  const oid = text.trim();
  if (!OID.test(oid)) throw new AskGit(); // symbolic ("ref: …") or damaged: git knows
  return oid;
}

function readPacked(commonDir: string): Map<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(path.join(commonDir, 'packed-refs'), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw new AskGit();
  }
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const oid = line.slice(0, space);
    if (space < 0 || !OID.test(oid)) throw new AskGit();
    out.set(line.slice(space + 1), oid);
  }
  return out;
}

/**
 * The object ids of `refs` (full names under `refs/`, shared by all worktrees), read as git's
 * files backend does: the loose file first, then `packed-refs`.
 * @param commonDir absolute git common dir.
 * @returns ref → object id, or null for a ref that does not exist; or null for the whole answer
 *   when the refs cannot be read this way (reftable, a symbolic ref, unexpected content): the
 *   caller must ask git. Never throws.
 */
export async function readRefsDirect(
  commonDir: string,
  refs: readonly string[],
): Promise<Map<string, string | null> | null> {
  return readRefsDirectSync(commonDir, refs);
}

/**
 * {@link readRefsDirect} with synchronous reads (a few small files), for callers that hold a
 * lock file meanwhile and must not yield while they do. Never throws.
 */
export function readRefsDirectSync(
  commonDir: string,
  refs: readonly string[],
): Map<string, string | null> | null {
  try {
    if (statSync(path.join(commonDir, 'reftable'), { throwIfNoEntry: false })) return null;
    const out = new Map<string, string | null>();
    let packed: Map<string, string> | null = null;
    for (const ref of refs) {
      if (
        !ref.startsWith('refs/') ||
        ref.split('/').some((p) => p === '' || p === '.' || p === '..')
      )
        return null;
      const loose = readLoose(commonDir, ref);
      if (loose !== undefined) {
        out.set(ref, loose);
        continue;
      }
      packed ??= readPacked(commonDir);
      out.set(ref, packed.get(ref) ?? null);
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * One ref's object id: from git's files ({@link readRefsDirect}) when they can be read that way,
 * else `git rev-parse --verify` in `cwd`.
 * @returns the id, or null when the ref does not exist. @throws HagentError GIT_FAILED (git path only).
 */
export async function readRefPreferDirect(
  cwd: string,
  commonDir: string,
  ref: string,
): Promise<string | null> {
  const direct = await readRefsDirect(commonDir, [ref]);
  return direct ? (direct.get(ref) ?? null) : readRef(cwd, ref);
}

/** What a worktree's HEAD names: the branch it is on and that branch's commit. */
export interface DirectHead {
  /** Full branch ref, e.g. `refs/heads/main`. */
  branch: string;
  /** The branch's object id, or null while the branch is unborn (no commit yet). */
  oid: string | null;
}

/**
 * A worktree's HEAD read from git's files, without spawning git: `<gitDir>/HEAD` holding
 * `ref: refs/heads/<name>`, and that branch read as {@link readRefsDirect} does.
 * @param gitDir absolute git dir of the worktree (its own, for a linked worktree).
 * @param commonDir absolute git common dir.
 * @returns the branch and its id; or null — "ask git" — for a detached HEAD, a HEAD naming
 *   anything but a branch or a name git would refuse as one, a reftable repository or
 *   unreadable content. Never throws.
 */
export function readHeadDirectSync(gitDir: string, commonDir: string): DirectHead | null {
  let text: string;
  try {
    text = readFileSync(path.join(gitDir, 'HEAD'), 'utf8');
  } catch {
    return null;
  }
  const m = /^ref: (refs\/heads\/[^\s]+)\n?$/.exec(text);
  if (!m) return null;
  const branch = m[1]!;
  // A name git would not accept as a branch (git check-ref-format): git says what it makes of it.
  if (/\.\.|@\{|[\x00-\x20\x7f~^:?*[\\]|\/\.|\.lock(\/|$)|\/$|\.$|\/\//.test(branch)) return null;
  const refs = readRefsDirectSync(commonDir, [branch]);
  return refs ? { branch, oid: refs.get(branch) ?? null } : null;
}
