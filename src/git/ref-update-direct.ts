/**
 * Moving refs by compare-and-swap without spawning git, for the last step of apply and land
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
 * `core.sharedRepository`, an include) in the repository's, the worktree's (`config.worktree`),
 * the user's or the system's file, or
 * configuration given in the environment (`git -c`, `GIT_CONFIG_COUNT`).
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  constants,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { readRefsDirectSync } from './refs-direct.js';
import { readLooseObject, type LooseObjectStore } from './loose.js';
import { formatOfOid, zeroOid } from './object-format.js';

/** One compare-and-swap move of a branch ref, for {@link updateRefDirect}. */
export interface DirectRefUpdate {
  /** Absolute git common dir (where `refs/` and `logs/` live). */
  commonDir: string;
  /** Absolute git dir of the worktree making the update (its `HEAD` and `logs/HEAD`). */
  gitDir: string;
  /** Full ref name under `refs/heads/`, `refs/notes/` or `refs/hagent/`. */
  ref: string;
  newOid: string;
  /** The id the ref must hold now; null: the ref must not exist. */
  oldOid: string | null;
  /** The committer identity with its time, `Name <email> <seconds> <±hhmm>`, as git writes it. */
  committer: string;
  /** The reflog message (collapsed to one line as git does). */
  message: string;
}

const ENV_ASK_GIT = [
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_DIR',
  'GIT_COMMON_DIR',
  'GIT_WORK_TREE',
];
const CONFIG_ASK_GIT = /hookspath|fsync|filesreflocktimeout|sharedrepository|\[\s*include/i;
/** `core.logAllRefUpdates` lines; `git init` writes `= true`, the default, which changes nothing. */
const LOG_ALL_REF_UPDATES = /(?:^|\])[ \t]*logallrefupdates\b(?:[ \t]*=[ \t]*"?([^\s#;"]*))?/gim;
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

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

/** True when nothing in the environment, the configuration or the hooks changes git's steps. */
function plainCase(commonDir: string, gitDir: string, ref: string): boolean {
  if (ENV_ASK_GIT.some((k) => process.env[k] !== undefined)) return false;
  if (
    !/^refs\/(heads|notes|hagent)\//.test(ref) ||
    ref.split('/').some((p) => p === '' || p === '.' || p === '..' || p.endsWith('.lock'))
  )
    return false;
  if (statSync(path.join(commonDir, 'reftable'), { throwIfNoEntry: false })) return false;
  if (statSync(path.join(commonDir, 'hooks', 'reference-transaction'), { throwIfNoEntry: false }))
    return false;
  for (const file of [
    path.join(commonDir, 'config'),
    path.join(gitDir, 'config.worktree'),
    ...userConfigFiles(),
  ]) {
    const text = readText(file);
    if (CONFIG_ASK_GIT.test(text)) return false;
    for (const m of text.matchAll(LOG_ALL_REF_UPDATES))
      if (!/^(true|yes|on|1|always|)$/i.test(m[1] ?? '')) return false;
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

function movedError(ref: string, expected: string | null, detail: string): HagentError {
  return new HagentError(
    'TARGET_MOVED',
    `${ref} moved while hagent was working (expected ${expected?.slice(0, 12) ?? 'no ref'})`,
    { ref, expected, stderr: detail },
    'someone else updated it at the same moment; run the command again',
  );
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

/** One ref of {@link updateRefsDirect}: `oldOid` an id (compare-and-swap), null (must not exist) or undefined (no check). */
export interface DirectRefMove {
  ref: string;
  newOid: string;
  oldOid?: string | null;
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
  return updateRefsDirect(
    u.commonDir,
    u.gitDir,
    [{ ref: u.ref, newOid: u.newOid, oldOid: u.oldOid }],
    u.committer,
    u.message,
  );
}

/**
 * Moves several refs as one `git update-ref --create-reflog -m <message> --stdin` transaction run
 * in the worktree of `gitDir` would: every ref locked and checked before any moves (steps in the
 * module header, for each ref in turn), so a failed check moves none.
 * @param commonDir absolute git common dir; @param gitDir absolute git dir of the worktree
 *   making the update; @param committer `Name <email> <seconds> <±hhmm>` for the reflog lines.
 * @returns true when every ref moved; false when this is not the plain case and nothing was
 *   written: the caller runs git.
 * @throws HagentError TARGET_MOVED (naming the ref) when a check fails or a lock stays taken for
 *   100 ms; nothing moved. The file system's error otherwise, with every lock removed; refs
 *   already renamed into place by then stay moved, as with git.
 */
export async function updateRefsDirect(
  commonDir: string,
  gitDir: string,
  moves: readonly DirectRefMove[],
  committer: string,
  message: string,
): Promise<boolean> {
  if (
    moves.length === 0 ||
    moves.some(
      (m) =>
        !OID.test(m.newOid) ||
        (m.oldOid != null && m.oldOid.length !== m.newOid.length) ||
        (m.oldOid != null && !OID.test(m.oldOid)) ||
        !plainCase(commonDir, gitDir, m.ref),
    )
  )
    return false;
  if (new Set(moves.map((m) => m.ref)).size !== moves.length) return false;
  const locks: {
    file: string;
    lock: string;
    fd: number | null;
    move: DirectRefMove;
    old: string | null;
  }[] = [];
  let headLock: string | null = null;
  let done = 0;
  try {
    for (const move of moves) {
      const file = path.join(commonDir, ...move.ref.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      const fd = await lockExclusive(`${file}.lock`, 100);
      if (fd === null)
        throw movedError(
          move.ref,
          move.oldOid ?? null,
          `cannot lock ref '${move.ref}': '${file}.lock' exists`,
        );
      locks.push({ file, lock: `${file}.lock`, fd, move, old: null });
    }
    const current = readRefsDirectSync(
      commonDir,
      moves.map((m) => m.ref),
    );
    if (current === null) return false;
    for (const l of locks) {
      l.old = current.get(l.move.ref) ?? null;
      if (l.move.oldOid !== undefined && l.old !== l.move.oldOid)
        throw movedError(
          l.move.ref,
          l.move.oldOid,
          `cannot lock ref '${l.move.ref}': is at ${l.old ?? 'nothing'} but expected ${l.move.oldOid ?? 'nothing'}`,
        );
    }
    const head = readText(path.join(gitDir, 'HEAD')).trim();
    const headMove = locks.find((l) => head === `ref: ${l.move.ref}`);
    if (headMove) {
      const headFd = await lockExclusive(path.join(gitDir, 'HEAD.lock'), 100);
      if (headFd === null)
        throw movedError(
          'HEAD',
          null,
          `cannot lock ref 'HEAD': '${path.join(gitDir, 'HEAD.lock')}' exists`,
        );
      closeSync(headFd);
      headLock = path.join(gitDir, 'HEAD.lock');
    }
    for (const l of locks) {
      const fd = l.fd!;
      l.fd = null;
      try {
        writeSync(fd, `${l.move.newOid}\n`);
      } finally {
        closeSync(fd);
      }
    }
    for (const l of locks) {
      const line = `${l.old ?? zeroOid(formatOfOid(l.move.newOid))} ${l.move.newOid} ${committer}\t${reflogMessage(message)}\n`;
      appendLine(path.join(commonDir, 'logs', ...l.move.ref.split('/')), line);
      if (l === headMove) appendLine(path.join(gitDir, 'logs', 'HEAD'), line);
      renameSync(l.lock, l.file);
      done++;
    }
    return true;
  } finally {
    for (const [i, l] of locks.entries()) {
      if (l.fd !== null) closeSync(l.fd);
      if (i >= done) removeQuietly(l.lock);
    }
    if (headLock) removeQuietly(headLock);
  }
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
