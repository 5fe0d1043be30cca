/**
 * Moving one branch ref by compare-and-swap without spawning git, for the last step of apply
 * (a `git update-ref` spawn costs ~20 ms there, on the critical path). It follows git's "files"
 * ref backend (git 2.39 refs/files-backend.c, lockfile.c; gitrepository-layout(5)):
 *
 * 1. lock the ref: create `<common-dir>/<ref>.lock` exclusively, retrying for 100 ms as git does
 *    (`core.filesRefLockTimeout`'s default); a lock still held means someone is moving the ref;
 * 2. under the lock, read the ref (loose file, else `packed-refs`) and compare it with the old id;
 * 3. when `HEAD` of the worktree doing the update is a symbolic ref to this ref, lock `HEAD` too,
 *    as git does to log the update in `HEAD`'s reflog;
 * 4. write `<new-id>\n` into the lock; append the reflog line (`<old> <new> <committer>\t<msg>`)
 *    to `logs/<ref>` (created: `--create-reflog`) and to the worktree's `logs/HEAD` when step 3
 *    applies; rename the lock over the ref; remove `HEAD.lock`.
 *
 * Anything beyond that plain case answers "ask git" before a byte is written: a reftable
 * repository, a `reference-transaction` hook, any configuration that changes the steps above
 * (`core.hooksPath`, `core.logAllRefUpdates`, `core.fsync`, `core.filesRefLockTimeout`,
 * `core.sharedRepository`, an include) in the repository's, the user's or the system's file, or
 * configuration given in the environment (`git -c`, `GIT_CONFIG_COUNT`).
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { readRefsDirect } from './refs-direct.js';

/** One compare-and-swap move of a branch ref, for {@link updateRefDirect}. */
export interface DirectRefUpdate {
  /** Absolute git common dir (where `refs/` and `logs/` live). */
  commonDir: string;
  /** Absolute git dir of the worktree making the update (its `HEAD` and `logs/HEAD`). */
  gitDir: string;
  /** Full ref name under `refs/heads/` or `refs/notes/`. */
  ref: string;
  newOid: string;
  /** The id the ref must hold now; null: the ref must not exist. */
  oldOid: string | null;
  /** The committer identity with its time, `Name <email> <seconds> <±hhmm>`, as git writes it. */
  committer: string;
  /** The reflog message (collapsed to one line as git does). */
  message: string;
}

const ENV_ASK_GIT = ['GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_DIR', 'GIT_COMMON_DIR', 'GIT_WORK_TREE'];
const CONFIG_ASK_GIT = /hookspath|fsync|filesreflocktimeout|sharedrepository|\[\s*include/i;
/** `core.logAllRefUpdates` lines; `git init` writes `= true`, the default, which changes nothing. */
const LOG_ALL_REF_UPDATES = /(?:^|\])[ \t]*logallrefupdates\b(?:[ \t]*=[ \t]*"?([^\s#;"]*))?/gim;
const OID = /^[0-9a-f]{40}$/;

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The configuration files git may read besides the repository's own (git-config(1) "FILES",
 * `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`). Reading one too many only makes the check stricter,
 * so the system file is read even under `GIT_CONFIG_NOSYSTEM`, at each usual install prefix.
 */
function userConfigFiles(): string[] {
  const home = process.env.HOME ?? os.homedir();
  const xdg = process.env.XDG_CONFIG_HOME || path.join(home, '.config');
  const global = process.env.GIT_CONFIG_GLOBAL !== undefined ? [process.env.GIT_CONFIG_GLOBAL] : [path.join(home, '.gitconfig'), path.join(xdg, 'git', 'config')];
  const system = process.env.GIT_CONFIG_SYSTEM !== undefined ? [process.env.GIT_CONFIG_SYSTEM] : ['/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig'];
  return [...global, ...system].filter((f) => f !== '');
}

/** True when nothing in the environment, the configuration or the hooks changes git's steps. */
function plainCase(commonDir: string, ref: string): boolean {
  if (ENV_ASK_GIT.some((k) => process.env[k] !== undefined)) return false;
  if (!/^refs\/(heads|notes)\//.test(ref) || ref.split('/').some((p) => p === '' || p === '.' || p === '..' || p.endsWith('.lock'))) return false;
  if (statSync(path.join(commonDir, 'reftable'), { throwIfNoEntry: false })) return false;
  if (statSync(path.join(commonDir, 'hooks', 'reference-transaction'), { throwIfNoEntry: false })) return false;
  for (const file of [path.join(commonDir, 'config'), ...userConfigFiles()]) {
    const text = readText(file);
    if (CONFIG_ASK_GIT.test(text)) return false;
    for (const m of text.matchAll(LOG_ALL_REF_UPDATES)) if (!/^(true|yes|on|1|always|)$/i.test(m[1] ?? '')) return false;
  }
  return true;
}

/** git's copy_reflog_msg: whitespace runs become one space, none at the start or the end. */
export function reflogMessage(message: string): string {
  return message.replace(/[ \t\n\v\f\r]+/g, ' ').trim();
}

/** Creates `file` exclusively, retrying for `timeoutMs` while it exists. @returns the fd, or null on timeout. */
async function lockExclusive(file: string, timeoutMs: number): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 1; ; wait = Math.min(wait * 2, 25)) {
    try {
      return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (Date.now() >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function appendLine(file: string, line: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 0o666);
  try {
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
}

function movedError(u: DirectRefUpdate, detail: string): HagentError {
  return new HagentError('TARGET_MOVED', `${u.ref} moved while hagent was working (expected ${u.oldOid?.slice(0, 12) ?? 'no ref'})`, { ref: u.ref, expected: u.oldOid, stderr: detail }, 'someone else updated it at the same moment; run the command again');
}

/**
 * Moves `u.ref` from `u.oldOid` to `u.newOid` as `git update-ref --create-reflog -m <message>
 * <ref> <new> <old>` run in the worktree of `u.gitDir` would (steps in the module header).
 * @returns true when the ref moved; false when this is not the plain case and nothing was
 *   written: the caller runs git.
 * @throws HagentError TARGET_MOVED when the ref does not hold `u.oldOid` or its lock (or
 *   `HEAD`'s) stays taken for 100 ms; nothing moved. The file system's error otherwise, with
 *   both locks removed and the ref unmoved.
 */
export async function updateRefDirect(u: DirectRefUpdate): Promise<boolean> {
  if (!OID.test(u.newOid) || (u.oldOid !== null && !OID.test(u.oldOid)) || !plainCase(u.commonDir, u.ref)) return false;
  const refFile = path.join(u.commonDir, ...u.ref.split('/'));
  const refLock = `${refFile}.lock`;
  mkdirSync(path.dirname(refFile), { recursive: true });
  const fd = await lockExclusive(refLock, 100);
  if (fd === null) throw movedError(u, `cannot lock ref '${u.ref}': '${refLock}' exists`);
  let fdOpen = true;
  let headLock: string | null = null;
  let renamed = false;
  try {
    const current = await readRefsDirect(u.commonDir, [u.ref]);
    if (current === null) return false;
    if ((current.get(u.ref) ?? null) !== u.oldOid) throw movedError(u, `cannot lock ref '${u.ref}': is at ${current.get(u.ref) ?? 'nothing'} but expected ${u.oldOid}`);
    if (readText(path.join(u.gitDir, 'HEAD')).trim() === `ref: ${u.ref}`) {
      const headFd = await lockExclusive(path.join(u.gitDir, 'HEAD.lock'), 100);
      if (headFd === null) throw movedError(u, `cannot lock ref 'HEAD': '${path.join(u.gitDir, 'HEAD.lock')}' exists`);
      closeSync(headFd);
      headLock = path.join(u.gitDir, 'HEAD.lock');
    }
    writeSync(fd, `${u.newOid}\n`);
    fdOpen = false;
    closeSync(fd);
    const line = `${u.oldOid ?? '0'.repeat(40)} ${u.newOid} ${u.committer}\t${reflogMessage(u.message)}\n`;
    appendLine(path.join(u.commonDir, 'logs', ...u.ref.split('/')), line);
    if (headLock) appendLine(path.join(u.gitDir, 'logs', 'HEAD'), line);
    renameSync(refLock, refFile);
    renamed = true;
    return true;
  } finally {
    if (fdOpen) closeSync(fd);
    if (!renamed) {
      try {
        unlinkSync(refLock);
      } catch {
        // gone already
      }
    }
    if (headLock) {
      try {
        unlinkSync(headLock);
      } catch {
        // gone already
      }
    }
  }
}

/**
 * The author or committer of a commit object's content, `Name <email> <seconds> <±hhmm>`, for
 * a reflog line or another commit made by the same process environment: its time replaced by
 * now (seconds) unless `GIT_AUTHOR_DATE` / `GIT_COMMITTER_DATE` fixes it, as git's ident code
 * would give it. Null when the object has no such line. Pure but for the clock and the environment.
 */
export function commitIdent(commitContent: Uint8Array, role: 'author' | 'committer'): string | null {
  const text = Buffer.from(commitContent).toString('utf8');
  const end = text.indexOf('\n\n');
  const m = new RegExp(`^${role} (.+ \\d+ [+-]\\d{4})$`, 'm').exec(end < 0 ? text : text.slice(0, end));
  if (!m) return null;
  if (process.env[role === 'author' ? 'GIT_AUTHOR_DATE' : 'GIT_COMMITTER_DATE'] !== undefined) return m[1]!;
  return m[1]!.replace(/ \d+ ([+-]\d{4})$/, ` ${Math.floor(Date.now() / 1000)} $1`);
}

/** The committer for the reflog line of the ref update publishing a commit: {@link commitIdent}. */
export function reflogCommitter(commitContent: Uint8Array): string | null {
  return commitIdent(commitContent, 'committer');
}
