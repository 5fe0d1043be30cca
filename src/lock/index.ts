/**
 * lock: one writing operation (apply, sync, undo, land, exec commit) per session at a time
 * (style.md §5 "lock scope is a function scope").
 *
 * Owns `<commonDir>/hagent/locks/<sessionId>.lock`, the target locks of lands
 * (`locks/targets/<hash>.lock`, {@link withTargetLock}) and their takeover markers
 * `<name>.lock.stale-<identity>` in those folders; writes nothing else. Also tells recovery
 * whether a git lock file a killed command left still has a live owner
 * ({@link gitLockMayBeHeld}). Imports only node
 * built-ins, zod and errors.ts (no git, no fsx, no session).
 *
 * ## Why git-style O_EXCL lock files and not proper-lockfile
 *
 * proper-lockfile (the best-kept npm lockfile library) was weighed and not taken:
 * - It locks with `mkdir`, so the lock cannot name its holder; hagent needs pid, host, command
 *   and start time in the `LOCKED` error and in `hagent doctor`.
 * - It detects a dead holder only by mtime age: the holder must refresh the mtime on a timer
 *   (`update`, default every 5 s), a dead holder is seen only after `stale` ms (≥ 2 s), and a live
 *   holder that is paused (SIGSTOP, a laptop lid, a slow disk) past `stale` loses its lock while it
 *   still writes. A pid probe (`kill(pid, 0)` → ESRCH) sees a dead holder at once and never
 *   declares a live one dead.
 * - It brings three dependencies (graceful-fs, retry, signal-exit) and CommonJS into the bundle
 *   for what is ~200 lines here.
 * An exclusive create is what git itself does for `index.lock` and ref locks; here the body is
 * written to a temp file and hard-linked into place (same EEXIST rule, and never an empty lock):
 * three syscalls to take, one read and one unlink to release. Measured by bench/lock.ts: well under the 2 ms budget of
 * design.md (see that file for the figure).
 *
 * ## Takeover without two winners
 *
 * A holder is dead when it ran on this host and `kill(pid, 0)` fails with ESRCH or it is a
 * zombie (ended, not yet reaped: it runs no code), or the live
 * process with its pid started at another time than the holder recorded (a reused pid), or it started
 * before this machine booted, or its pid is ours but the token is not one we hold (pid reuse);
 * a lock file whose body cannot be parsed is dead only when older than {@link UNPARSABLE_MAX_AGE_MS}
 * (a holder writes its body right after the O_EXCL create, so a young empty file is live).
 * Breaking it: every taker that judged the same dead lock links it to the same marker name,
 * derived from that lock's identity (its token, or inode + mtime). `link` fails with EEXIST for
 * all but one taker, so only one proceeds; it checks that the marker is the very file it judged
 * (inode, mtime, bytes), unlinks the lock path, and then competes for a fresh O_EXCL create like
 * any waiter. A taker killed between `link` and `unlink` leaves a marker that blocks takeover;
 * such a marker is removed after {@link MARKER_GRACE_MS}. Residual risk, stated plainly: a taker
 * suspended for longer than that grace between two adjacent syscalls could remove a newer lock.
 * Hosts are told apart by `os.hostname()`; a lock held on another host is never broken (it waits
 * and then reports `LOCKED` naming that host).
 */
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  unlinkSync,
  writeSync,
  type BigIntStats,
} from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import * as z from 'zod/mini';
import { HagentError } from '../errors.js';

/** Default wait for a held lock, in ms (`--lock-timeout` default 10 s). */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
/** A lock file whose body cannot be parsed is taken over once older than this, in ms. */
export const UNPARSABLE_MAX_AGE_MS = 60_000;
/** A takeover marker still pointing at the lock after this long belongs to a dead taker, in ms. */
export const MARKER_GRACE_MS = 30_000;

const POLL_FIRST_MS = 2;
const POLL_MAX_MS = 40;

/** Who holds a session lock: the JSON body of the lock file. `startedAt` is an ISO 8601 time. */
export interface LockHolder {
  pid: number;
  hostname: string;
  command: string;
  startedAt: string;
  /** Random id of this acquisition; release removes the file only when it still carries it. */
  token: string;
  /**
   * The holder process's start time in clock ticks since boot (Linux `/proc/<pid>/stat` field
   * 22), so a pid reused by another process after the holder died is told apart. Absent where
   * /proc is not readable.
   */
  startTicks?: number;
}

const HolderSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  hostname: z.string(),
  command: z.string(),
  startedAt: z.string(),
  token: z.string().check(z.minLength(8), z.maxLength(128)),
  startTicks: z.optional(z.number()),
});

/** Start time of process `pid` in clock ticks since boot, from `/proc/<pid>/stat`; null when unknown. */
function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (in parentheses, which may hold spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]); // field 22 overall
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** The parent pid of process `pid`, from `/proc/<pid>/stat` (field 4); null when unknown. */
function parentOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isFinite(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/** What `hagent doctor` learns about a session lock. `ageMs` is from the file's mtime. */
export interface LockStatus {
  /** Absolute path of the lock file. */
  path: string;
  /** The parsed holder, or null when the body cannot be parsed (being written, or damaged). */
  holder: LockHolder | null;
  /** `dead` means the next writer will take the lock over; `unknown`: another host's lock. */
  state: 'alive' | 'dead' | 'unknown';
  ageMs: number;
}

/** Tokens of the locks this process holds right now (to tell our own pid apart from a reused one). */
const heldTokens = new Set<string>();

function locksDir(commonDir: string): string {
  return path.join(commonDir, 'hagent', 'locks');
}

function lockPath(commonDir: string, sessionId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(sessionId) || sessionId.length > 200) {
    throw new HagentError(
      'USAGE',
      `not a valid session id for a lock: ${JSON.stringify(sessionId)}`,
      { session: sessionId },
      'session ids are letters, digits, dot, dash and underscore',
    );
  }
  return path.join(locksDir(commonDir), `${sessionId}.lock`);
}

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;

/** The lock file as one read: its stat (bigint, for exact identity) and bytes; null if absent. */
interface Observed {
  stat: BigIntStats;
  bytes: Buffer;
  holder: LockHolder | null;
}

function observe(file: string): Observed | null {
  let bytes: Buffer;
  let stat: BigIntStats;
  try {
    stat = lstatSync(file, { bigint: true });
    bytes = readFileSync(file);
  } catch (e) {
    if (errno(e) === 'ENOENT') return null;
    throw e;
  }
  return { stat, bytes, holder: parseHolder(bytes) };
}

function parseHolder(bytes: Buffer): LockHolder | null {
  try {
    const r = HolderSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

function ageMs(stat: BigIntStats, now: number): number {
  return now - Number(stat.mtimeMs);
}

/**
 * True unless `kill(pid, 0)` says there is no such process on this host (ESRCH), or the process
 * has ended and only waits to be reaped (a zombie: state `Z` or `X` in `/proc/<pid>/stat`); a
 * process of another user (EPERM) is alive. A killed command whose parent is slow to reap it
 * (an orphan under a container's init) answers `kill(pid, 0)` for a while yet runs no code, so
 * its lock is taken over at once. Also used to sweep temp files named after their writer's pid.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return errno(e) !== 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc here (or it ended just now): kill(pid, 0) said it lives
  }
}

/** Alive, dead, or unknown (another host). Rule: module header, "Takeover without two winners". */
function judge(seen: Observed, now: number): LockStatus['state'] {
  const h = seen.holder;
  if (!h) return ageMs(seen.stat, now) > UNPARSABLE_MAX_AGE_MS ? 'dead' : 'alive';
  if (h.hostname !== os.hostname()) return 'unknown';
  const started = Date.parse(h.startedAt);
  const bootedAt = now - os.uptime() * 1000;
  if (Number.isFinite(started) && started < bootedAt - 5_000) return 'dead';
  if (h.pid === process.pid) return heldTokens.has(h.token) ? 'alive' : 'dead';
  if (!pidAlive(h.pid)) return 'dead';
  // The pid lives, but as another process than the holder (pids wrap: 32768 on many machines).
  if (h.startTicks !== undefined) {
    const now = processStartTicks(h.pid);
    if (now !== null && now !== h.startTicks) return 'dead';
  }
  return 'alive';
}

/**
 * One atomic create of the lock with the holder body. True when taken; false when the lock exists.
 * The body is written to `<lock>.tmp-<pid>-<random>` first and hard-linked to the lock's name
 * (`link` never replaces: EEXIST when held, like O_EXCL), so the lock never exists without its
 * body: a create then a write left an empty lock when killed between the two, and an empty lock
 * counts as held for {@link UNPARSABLE_MAX_AGE_MS} (found by the kill -9 reliability run).
 */
function tryCreate(file: string, holder: LockHolder): boolean {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', 0o644);
  } catch (e) {
    if (errno(e) === 'ENOENT') {
      mkdirSync(path.dirname(file), { recursive: true });
      return tryCreate(file, holder);
    }
    throw e;
  }
  try {
    try {
      writeSync(fd, `${JSON.stringify(holder)}\n`);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, file);
    return true;
  } catch (e) {
    if (errno(e) === 'EEXIST') return false;
    throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.mtimeNs === b.mtimeNs && a.size === b.size;
}

/**
 * Removes the dead lock `seen` from `file` so that at most one taker does it (see header).
 * Returns whether this caller removed it; false means someone else is on it or it changed.
 */
function breakDead(file: string, seen: Observed, now: number): boolean {
  const identity = seen.holder
    ? seen.holder.token.replace(/[^A-Za-z0-9]/g, '')
    : `${seen.stat.ino}-${seen.stat.mtimeNs}`;
  const marker = `${file}.stale-${identity}`;
  try {
    linkSync(file, marker);
  } catch (e) {
    if (errno(e) === 'ENOENT') return false; // already gone: the next create decides
    if (errno(e) !== 'EEXIST') throw e;
    // Another taker holds the marker. If it died between link and unlink, the marker still
    // names the lock file after the grace period: clear it so the takeover can be retried.
    try {
      const m = lstatSync(marker, { bigint: true });
      if (sameFile(m, seen.stat) && now - Number(m.ctimeMs) > MARKER_GRACE_MS) unlinkSync(marker);
    } catch {
      // gone meanwhile: fine
    }
    return false;
  }
  const linked = lstatSync(marker, { bigint: true });
  const stillSame = sameFile(linked, seen.stat) && readFileSync(marker).equals(seen.bytes);
  if (!stillSame) {
    unlinkSync(marker);
    return false;
  }
  try {
    unlinkSync(file);
  } catch (e) {
    if (errno(e) !== 'ENOENT') throw e;
  }
  sweepMarkers(path.dirname(file), now);
  return true;
}

/**
 * Removes takeover markers whose lock is long gone (kept a while so late judges get EEXIST), and
 * the body temp files of takers killed before they could remove them ({@link tryCreate}).
 */
function sweepMarkers(dir: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const tmp = /\.lock\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
    if (tmp && Number(tmp[1]) !== process.pid && !pidAlive(Number(tmp[1]))) {
      try {
        unlinkSync(path.join(dir, name));
      } catch {
        // raced with another sweeper
      }
      continue;
    }
    if (!name.includes('.lock.stale-')) continue;
    const p = path.join(dir, name);
    try {
      const st = lstatSync(p, { bigint: true });
      if (st.nlink === 1n && now - Number(st.ctimeMs) > MARKER_GRACE_MS) unlinkSync(p);
    } catch {
      // raced with another sweeper
    }
  }
}

function describeHolder(h: LockHolder | null): string {
  if (!h) return 'an unknown holder (the lock file is being written or is damaged)';
  return `${h.command} (pid ${h.pid} on ${h.hostname}, since ${h.startedAt})`;
}

/** What a lock guards, for its `LOCKED` error: the message's subject and the details' key. */
interface LockSubject {
  label: string;
  details: Record<string, string>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the session lock, polling with backoff (2 ms doubling to 40 ms, with jitter).
 * @returns the holder record written to the lock file.
 * @throws HagentError LOCKED after `timeoutMs`, with `details.holder` (or null) and a hint.
 */
async function acquire(
  file: string,
  subject: LockSubject,
  command: string,
  timeoutMs: number,
): Promise<{ holder: LockHolder; deadSince: number | null }> {
  let deadSince: number | null = null;
  const startTicks = processStartTicks(process.pid);
  const holder: LockHolder = {
    pid: process.pid,
    hostname: os.hostname(),
    command,
    startedAt: new Date().toISOString(),
    token: randomBytes(12).toString('hex'),
    ...(startTicks !== null ? { startTicks } : {}),
  };
  const deadline = Date.now() + timeoutMs;
  let delay = POLL_FIRST_MS;
  for (;;) {
    holder.startedAt = new Date().toISOString();
    heldTokens.add(holder.token); // before the create, so a concurrent judge in this process sees it alive
    if (tryCreate(file, holder)) return { holder, deadSince };
    heldTokens.delete(holder.token);
    const now = Date.now();
    const seen = observe(file);
    if (seen === null) continue; // released between our create and our read: try again at once
    if (judge(seen, now) === 'dead' && breakDead(file, seen, now)) {
      const at = seen.holder ? Date.parse(seen.holder.startedAt) : Number(seen.stat.mtimeMs);
      deadSince = Number.isFinite(at) ? at : Number(seen.stat.mtimeMs);
      continue;
    }
    if (now >= deadline) {
      const h = seen.holder;
      throw new HagentError(
        'LOCKED',
        `${subject.label} is busy: ${describeHolder(h)} holds its lock`,
        {
          ...subject.details,
          holder: h
            ? { pid: h.pid, hostname: h.hostname, command: h.command, startedAt: h.startedAt }
            : null,
          lockFile: file,
          waitedMs: timeoutMs,
        },
        h && h.hostname !== os.hostname()
          ? `the holder runs on another host (${h.hostname}); wait for it, or if that host is gone remove ${file}`
          : `wait for the ${h?.command ?? 'other'} command to finish and retry, or wait longer with --lock-timeout; a dead holder is taken over automatically`,
      );
    }
    await sleep(Math.min(delay, Math.max(1, deadline - now)) * (0.75 + Math.random() * 0.5));
    delay = Math.min(delay * 2, POLL_MAX_MS);
  }
}

/** Removes the lock file if it still carries `token` (a lock taken over meanwhile is left alone). */
function release(file: string, token: string): void {
  heldTokens.delete(token);
  const seen = observe(file);
  if (seen?.holder?.token !== token) return;
  try {
    unlinkSync(file);
  } catch (e) {
    if (errno(e) !== 'ENOENT') throw e;
  }
  sweepMarkers(path.dirname(file), Date.now());
}

/**
 * Runs `fn` while holding the lock of session `sessionId`, one writing operation per session at
 * a time. The lock file `<commonDir>/hagent/locks/<sessionId>.lock` holds
 * `{pid, hostname, command, startedAt, token}` as JSON. A dead holder is taken over (see the
 * module header for the rule); a live one is waited for, polling with backoff, up to `timeoutMs`.
 * The lock is released when `fn` settles, whether it resolves or throws, and only if the file
 * still carries this acquisition's token. The lock is not re-entrant: taking the same session's
 * lock again inside `fn` waits and fails with LOCKED.
 *
 * @param commonDir absolute git common dir of the repository.
 * @param sessionId session id (letters, digits, `.`, `-`, `_`).
 * @param holder `command` names the writing command for the holder record (e.g. `apply`).
 * @param options `timeoutMs`: how long to wait for a live holder, in ms (default 10000; 0 = one try).
 * @returns what `fn` returns.
 * @throws HagentError LOCKED when the lock is still held after `timeoutMs`; `details.holder` is
 *   `{pid, hostname, command, startedAt}` or null for an unreadable lock file, `details.lockFile`
 *   its path. USAGE for a session id that cannot name a file. Whatever `fn` throws, unchanged.
 * @example await withSessionLock(ctx.commonDir, 'fix-login', { command: 'apply' }, {}, async () => applyPatch(...))
 */
export async function withSessionLock<T>(
  commonDir: string,
  sessionId: string,
  holder: { command: string },
  options: { timeoutMs?: number },
  fn: (taken: LockTaken) => Promise<T>,
): Promise<T> {
  const file = lockPath(commonDir, sessionId);
  const timeoutMs = Math.max(0, options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS);
  const { holder: held, deadSince } = await acquire(
    file,
    { label: `session ${sessionId}`, details: { session: sessionId } },
    holder.command,
    timeoutMs,
  );
  try {
    return await fn({ deadSince });
  } finally {
    release(file, held.token);
  }
}

/**
 * Runs `fn` while holding the lock of the branch `ref` (a land's target), one land or land
 * undo per target at a time across sessions: a land reads the target, writes the user's
 * checkout of it and its index (shared by every session landing there), then moves the target
 * by compare-and-swap. Two such lands at once made one of them refuse `TARGET_MOVED` after
 * both had written the checkout, and the refused one's revert could meet the other's
 * `index.lock`, leaving its change staged. Serialized, a land reads the target only after the
 * previous one finished. The lock file is `<commonDir>/hagent/locks/targets/<hash of ref>.lock`,
 * the same kind as a session's (holder named, a dead holder taken over, see the module header).
 * Take it before the session lock (so the recovery of an interrupted land, which may write the
 * checkout, runs under it too) and never the other way round, so no two commands wait for each
 * other. The session lock alone serializes only one session's writes.
 * @param ref full ref name of the branch (`refs/heads/main`).
 * @throws HagentError LOCKED after `timeoutMs` (default 10 s) with `details.target`; whatever
 *   `fn` throws, unchanged.
 */
export async function withTargetLock<T>(
  commonDir: string,
  ref: string,
  holder: { command: string },
  options: { timeoutMs?: number },
  fn: () => Promise<T>,
): Promise<T> {
  const name = createHash('sha256').update(ref).digest('hex').slice(0, 32);
  const file = path.join(locksDir(commonDir), 'targets', `${name}.lock`);
  const timeoutMs = Math.max(0, options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS);
  const { holder: held } = await acquire(
    file,
    { label: `target ${ref}`, details: { target: ref } },
    holder.command,
    timeoutMs,
  );
  try {
    return await fn();
  } finally {
    release(file, held.token);
  }
}

/**
 * Takes over and releases every land target lock (`locks/targets/*.lock`, {@link withTargetLock})
 * whose holder died (a land or land undo killed), for `hagent doctor`: the next land would take
 * it over anyway, this leaves no lock file behind. A live holder's lock is left alone.
 * @returns the paths of the locks cleared.
 */
export async function clearDeadTargetLocks(commonDir: string): Promise<string[]> {
  const dir = path.join(locksDir(commonDir), 'targets');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.lock'));
  } catch {
    return [];
  }
  const cleared: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const seen = observe(file);
    if (!seen || judge(seen, Date.now()) !== 'dead') continue;
    try {
      const { holder } = await acquire(
        file,
        { label: `target lock ${name}`, details: {} },
        'doctor',
        0,
      );
      release(file, holder.token);
      cleared.push(file);
    } catch {
      // taken meanwhile by a live land: its own
    }
  }
  return cleared;
}

/**
 * How the lock was taken: `deadSince`, when it was taken over from a holder that died, is when
 * that holder took it (epoch ms): a git lock file in the session made since then is the dead
 * holder's (only hagent writes there under the lock), which recovery may clear.
 */
export interface LockTaken {
  deadSince: number | null;
}

/**
 * Reads who holds a session's lock, for `hagent doctor`; takes and changes nothing.
 * @param commonDir absolute git common dir. @param sessionId the session id.
 * @returns null when no lock file exists; else its path, the holder (null when the body cannot
 *   be parsed), whether that holder is `alive`, `dead` (the next writer takes over) or `unknown`
 *   (another host), and the file's age in ms.
 * @throws HagentError USAGE for an invalid session id; the I/O error if the folder is unreadable.
 */
export async function readLockHolder(
  commonDir: string,
  sessionId: string,
): Promise<LockStatus | null> {
  const file = lockPath(commonDir, sessionId);
  const seen = observe(file);
  if (!seen) return null;
  const now = Date.now();
  return {
    path: file,
    holder: seen.holder,
    state: judge(seen, now),
    ageMs: Math.max(0, ageMs(seen.stat, now)),
  };
}

/**
 * Whether a live process on this host may still own the git lock file `lockFile` (an
 * `index.lock`, `HEAD.lock` or ref `.lock`, which name no owner): a process that has it open, or
 * a git whose current folder is inside one of `dirs` (the worktree and git dirs it locks: git
 * closes a lock just before renaming it into place, so between the two only its folder shows
 * it). A process whose open files cannot be read (another user's) counts when it is a git;
 * this process's own children do not.
 * Linux only, through /proc; where /proc cannot be read the answer is true (unknown), so callers
 * keep waiting as before. Used by recovery to remove, at once, the lock a killed git left instead
 * of waiting for it to age.
 */
export function gitLockMayBeHeld(lockFile: string, dirs: readonly string[]): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return true;
  }
  if (!pids.length) return true;
  const inside = (p: string) => dirs.some((d) => p === d || p.startsWith(`${d}${path.sep}`));
  for (const pid of pids) {
    let comm = '';
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue; // ended meanwhile
    }
    // This process's own gits (its cat-file batch readers, working in the worktree) hold none
    // of a killed command's locks: the caller runs recovery before it writes anything itself.
    if (parentOf(pid) === process.pid) continue;
    const isGit = comm === 'git' || comm.startsWith('git-');
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch (e) {
      if (errno(e) === 'ENOENT') continue; // ended meanwhile
      if (isGit) return true; // another user's git: cannot tell what it holds
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (target === lockFile || target === `${lockFile} (deleted)`) return true;
      } catch {
        // closed meanwhile
      }
    }
    if (isGit) {
      try {
        if (inside(readlinkSync(`/proc/${pid}/cwd`))) return true;
      } catch (e) {
        if (errno(e) !== 'ENOENT') return true;
      }
    }
  }
  return false;
}
