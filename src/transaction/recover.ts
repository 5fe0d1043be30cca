/**
 * The one recovery of every kind of transaction (transaction/run.ts) interrupted at any instant
 * (kill -9), from its record alone:
 *
 * - every ref of the record holds its new id: the transaction committed; the session index is
 *   brought in line and the record removed (`completed`);
 * - every ref still holds its old id: when the record allows it (`rollForward`) and every file
 *   holds its new state, the ref transaction is made now (`completed`); otherwise each file
 *   that holds its new state is put back to its prior state, and the index with them
 *   (`restored`);
 * - someone else moved a ref meanwhile: nothing is touched; a user's branch the user moved
 *   ends the record (`kept`), a session ref moved under it is refused (STALE_FILE, the record
 *   kept for the user to judge).
 *
 * A file holding anything else was changed by someone else since: it is never overwritten, and
 * is reported (`outside`; design.md invariant 3). A user's checkout whose index is locked is
 * not touched at all (`blocked`; the record stays for the next command).
 */
import { promises as fs, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  blobId,
  commitTree,
  lsTree,
  moveRefs,
  objectFormat,
  parseGitFile,
  readBlobCheckedOut,
  readRef,
  readRefs,
  storedBlobIdsOf,
  updateIndex,
  writeTree,
  type ObjectFormat,
  removeLockMadeSince,
  absoluteGitDir,
  pruneWorktrees,
  removeWorktree,
  stageZeroEntries,
} from '../git/index.js';
import { backupNameFor, readEntry, replaceIfHolds, tempNameFor } from '../fsx/index.js';
import { gitLockMayBeHeld, pidAlive, withSessionLock } from '../lock/index.js';
import { indexEntriesOf } from './plan.js';
import {
  intentPath,
  readIntent,
  removeIntent,
  writeIntent,
  type RecordFile,
  type TxRecord,
} from './record.js';

/**
 * What recovery did (module header for `action`). `command`: the record's kind; `commit`: the
 * new id of the record's first ref when it ended completed; `files`: paths of the record
 * (for `restored` in a user's checkout: the paths put back); `outside`: paths left alone.
 * `target`, `worktree`: the first ref and the first worktree not the session's (a land's).
 */
export interface Recovery {
  txid: string;
  command: string;
  action: 'completed' | 'restored' | 'kept' | 'blocked' | 'discarded';
  commit: string | null;
  files: string[];
  outside: string[];
  target: string | null;
  worktree: string | null;
  /** The lock file that blocked the recovery (`blocked` only). */
  indexLock?: string;
}

type DiskSide = { oid: string; mode: string; bytes: Uint8Array | null } | null | 'folder' | 'other';
type Side = RecordFile['prior'];

/** What `rel` holds on disk, its blob id the one git would store (git/filters.ts). */
async function diskSides(
  worktree: string,
  rels: readonly string[],
  format: ObjectFormat,
): Promise<DiskSide[]> {
  const entries = await Promise.all(rels.map((rel) => readEntry(worktree, rel)));
  const ids = await storedBlobIdsOf(
    worktree,
    rels.flatMap((rel, i) => {
      const e = entries[i]!;
      return e.kind === 'file' ? [{ path: rel, bytes: e.bytes }] : [];
    }),
    format,
  );
  return Promise.all(
    entries.map(async (e, i): Promise<DiskSide> => {
      if (e.kind === 'missing') return null;
      if (e.kind === 'directory') return 'folder';
      if (e.kind === 'symlink') {
        const link = await fs.readlink(path.join(worktree, rels[i]!), { encoding: 'buffer' });
        return { oid: blobId(link, format), mode: '120000', bytes: null };
      }
      if (e.kind !== 'file') return 'other';
      return { oid: ids.get(rels[i]!)!, mode: e.executable ? '100755' : '100644', bytes: e.bytes };
    }),
  );
}

/** True when the disk holds `side` (a folder counts as absent when `folderOk`). */
function holds(disk: DiskSide, side: Side, folderOk: boolean): boolean {
  if (disk === 'other') return false;
  if (disk === 'folder') return side === null && folderOk;
  if (disk === null) return side === null;
  return side !== null && disk.oid === side.oid && disk.mode === side.mode;
}

/** The names a transaction's rollback (fsx/stage.ts restoreIfOurs) uses for target `rel`. */
function rollbackNames(rel: string, pid: number): { tmp: string; aside: string } {
  return {
    tmp: tempNameFor(rel, `restore-${pid}`),
    aside: tempNameFor(rel, `restore-${pid}-aside`),
  };
}

async function removeTemps(worktree: string, r: TxRecord, files: readonly RecordFile[]) {
  for (const [i, t] of files.entries()) {
    const names = [
      t.tmp,
      backupNameFor(t.rel, r.txid, i),
      rollbackNames(t.rel, r.pid).tmp,
      rollbackNames(t.rel, r.pid).aside,
    ];
    for (const name of names)
      if (name) await fs.rm(path.join(worktree, name), { force: true }).catch(() => undefined);
  }
}

/** The refs only hagent moves, under the session's lock: their lock files may be cleared. */
function sessionOwnedRef(ref: string, session: string): boolean {
  return (
    ref === `refs/heads/hagent/${session}` ||
    ref.startsWith(`refs/hagent/${session}/`) ||
    ref === `refs/notes/hagent-sessions/${session}`
  );
}

/**
 * A git process of the interrupted transaction killed with it leaves its lock file, and every
 * later git command that needs it refuses: the session worktree's `index.lock` and `HEAD.lock`,
 * and the `.lock` of the session's own refs. Recovery runs under the session lock with the
 * transaction's process dead, and only hagent moves these under that lock, so a lock file made
 * since the transaction started is its: wait until it is 2 s old (an orphaned git child still
 * finishing removes it itself), then remove it; a worktree's lock with no live owner at all
 * (lock/gitLockMayBeHeld) goes at once. An older one is not ours and is left for git to
 * report. A lock of any other ref is never removed, nor one in a user's checkout but by
 * {@link lockedCheckout}.
 */
async function clearLocksLeftBy(commonDir: string, r: TxRecord): Promise<void> {
  const locks: { lock: string; ownerGone?: () => boolean }[] = r.refs
    .filter((m) => sessionOwnedRef(m.ref, r.session))
    .map((m) => ({ lock: path.join(commonDir, ...m.ref.split('/')) + '.lock' }));
  for (const w of r.worktrees.filter((x) => x.owner === 'session')) {
    const gitDir = await fs
      .readFile(path.join(w.path, '.git'), 'utf8')
      .then((text) => parseGitFile(w.path, text))
      .catch(() => null);
    // A worktree lock whose git was killed too is removed at once (no live process holds it
    // open or runs git in that worktree), rather than after 2 s of every next command.
    if (gitDir)
      for (const name of ['index.lock', 'HEAD.lock']) {
        const lock = path.join(gitDir, name);
        locks.push({ lock, ownerGone: () => !gitLockMayBeHeld(lock, [w.path, gitDir]) });
      }
  }
  const started = Date.parse(r.startedAt);
  await Promise.all(locks.map((l) => removeLockMadeSince(l.lock, started, 2000, l.ownerGone)));
}

/**
 * The git lock files a dead lock holder's git may have left in a session before any record was
 * written (a sync's `git add` killed while it held the worktree's `index.lock`): the session
 * worktree's `index.lock` and `HEAD.lock` and its branch's ref lock, when made since `since`
 * (when the dead holder took the session lock) and 2 s old, by the rule of
 * {@link clearLocksLeftBy}. Never throws.
 */
export async function clearLocksOfDeadHolder(
  commonDir: string,
  session: string,
  worktree: string,
  since: number,
): Promise<void> {
  const ref = path.join(commonDir, 'refs', 'heads', 'hagent', `${session}.lock`);
  const gitDir = await fs
    .readFile(path.join(worktree, '.git'), 'utf8')
    .then((text) => parseGitFile(worktree, text))
    .catch(() => null);
  const locks: { lock: string; ownerGone?: () => boolean }[] = [{ lock: ref }];
  if (gitDir)
    for (const name of ['index.lock', 'HEAD.lock']) {
      const lock = path.join(gitDir, name);
      locks.push({ lock, ownerGone: () => !gitLockMayBeHeld(lock, [worktree, gitDir]) });
    }
  await Promise.all(locks.map((l) => removeLockMadeSince(l.lock, since, 2000, l.ownerGone)));
}

/** Whether `file` holds exactly `text` (false when missing or unreadable). */
async function holdsText(file: string, text: string): Promise<boolean> {
  return (await fs.readFile(file, 'utf8').catch(() => null)) === text;
}

/** How long recovery waits for a git the killed transaction left running. */
const ORPHAN_WAIT_MS = 10_000;

/**
 * Waits until the git processes a killed transaction left running have ended: its ref
 * transaction's git (`gitPid`), which runs in a process group of its own and finishes or drops
 * the moves it was sent, and any git still holding a lock on one of the record's refs taken
 * since the transaction started. Reading the refs before then could see the old ids of a move
 * about to land. Bounded: after {@link ORPHAN_WAIT_MS} recovery goes on (the locks then left
 * are handled as before). Never removes anything.
 */
async function orphanedGitDone(commonDir: string, r: TxRecord): Promise<void> {
  const until = Date.now() + ORPHAN_WAIT_MS;
  const started = Date.parse(r.startedAt);
  const locks = r.refs.map((m) => path.join(commonDir, ...m.ref.split('/')) + '.lock');
  const busy = async () => {
    // A record older than a minute: its git is long gone, and the id may name another process.
    if (r.gitPid && Date.now() - started < 60_000 && pidAlive(r.gitPid)) return true;
    const stats = await Promise.all(locks.map((l) => fs.stat(l).catch(() => null)));
    return stats.some((st) => st !== null && st.mtimeMs >= started - 1000);
  };
  while (Date.now() < until && (await busy())) await new Promise((res) => setTimeout(res, 20));
}

/**
 * The `index.lock` of a user's checkout in the record, if one exists now. A lock made since the
 * transaction started that no live process may hold (lock/gitLockMayBeHeld: none has it open or
 * runs git in that checkout) is the one the transaction's own git left when the kill took it
 * too: it is removed, and the checkout is then put back like any other. Any other lock is the
 * user's (or unknown) and blocks: a user's checkout is never unlocked on a guess.
 */
async function lockedCheckout(r: TxRecord): Promise<{ worktree: string; lock: string } | null> {
  const started = Date.parse(r.startedAt);
  for (const w of r.worktrees.filter((x) => x.owner === 'checkout')) {
    const g = await absoluteGitDir(w.path).catch(() => null);
    if (g === null) continue;
    const lock = path.join(g, 'index.lock');
    const st = await fs.stat(lock).catch(() => null);
    if (st === null) continue;
    const orphan = st.mtimeMs >= started - 1000 && !gitLockMayBeHeld(lock, [w.path, g]);
    if (
      orphan &&
      (await fs.rm(lock).then(
        () => true,
        () => false,
      ))
    )
      continue;
    return { worktree: w.path, lock };
  }
  return null;
}

/**
 * A kill between moving a target aside and linking the next one in (fsx/stage.ts,
 * replaceIfHolds) leaves the target absent and its file under a name recovery knows: the
 * publish's backup name (the old file) or the rollback's aside name (hagent's new file, moved
 * aside to put the old one back). It goes back first, so the target reads as it did just
 * before the kill.
 */
async function putBackAsides(worktree: string, r: TxRecord, files: readonly RecordFile[]) {
  for (const [i, t] of files.entries()) {
    const abs = path.join(worktree, t.rel);
    if (
      await fs.lstat(abs).then(
        () => true,
        () => false,
      )
    )
      continue;
    for (const name of [backupNameFor(t.rel, r.txid, i), rollbackNames(t.rel, r.pid).aside]) {
      const aside = path.join(worktree, name);
      if (
        await fs.link(aside, abs).then(
          () => true,
          () => false,
        )
      ) {
        await fs.rm(aside, { force: true });
        break;
      }
    }
  }
}

/**
 * Removes the temp files of this session's record left by a process killed while writing it
 * (`<session>.json.<pid>-<random>.tmp`, fsx's writeJsonFile), when that process is gone.
 */
function removeDeadRecordTemps(commonDir: string, sessionId: string): void {
  const dir = path.dirname(intentPath(commonDir, sessionId));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^(.+)\.json\.(\d+)-[0-9a-z]+\.tmp$/.exec(name);
    if (!m || m[1] !== sessionId || Number(m[2]) === process.pid || pidAlive(Number(m[2])))
      continue;
    try {
      rmSync(path.join(dir, name), { force: true });
    } catch {
      // left for the next command
    }
  }
}

/**
 * Puts `rel` back to `prior` while it still holds `disk`, hagent's new state just read (an
 * outside write in between wins: fsx's replaceIfHolds). @returns false when it was left alone.
 */
async function putBack(
  worktree: string,
  rel: string,
  disk: DiskSide,
  prior: Side,
): Promise<boolean> {
  const abs = path.join(worktree, rel);
  let want: Uint8Array | null = null;
  if (disk === 'folder') {
    // A folder where the file was: emptied by the deeper paths put back first.
    if (!(await fs.rmdir(abs).then(ok, no))) return false;
  } else if (disk !== null && disk !== 'other' && disk.bytes === null) {
    await fs.rm(abs, { force: true }); // the symlink hagent made
  } else if (disk !== null && disk !== 'other') want = disk.bytes;
  if (prior?.mode === '120000') {
    const target = await readBlobCheckedOut(worktree, rel, prior.oid);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    return fs.symlink(target, abs).then(ok, no);
  }
  const aside = path.join(worktree, tempNameFor(rel, `recover-${process.pid}-aside`));
  let tmp: string | null = null;
  try {
    if (prior !== null) {
      const bytes = await readBlobCheckedOut(worktree, rel, prior.oid);
      const mode = prior.mode === '100755' ? 0o755 : 0o644;
      tmp = path.join(worktree, tempNameFor(rel, `recover-${process.pid}`));
      await fs.mkdir(path.dirname(abs), { recursive: true });
      await fs.writeFile(tmp, bytes, { mode, flag: 'w' });
      await fs.chmod(tmp, mode);
    }
    if ((await replaceIfHolds(abs, aside, want, tmp)) !== 'done') return false;
    if (prior === null)
      for (let dir = path.posix.dirname(rel); dir !== '.'; dir = path.posix.dirname(dir))
        if (!(await fs.rmdir(path.join(worktree, dir)).then(ok, no))) break;
    return true;
  } finally {
    if (tmp) await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}

const ok = () => true;
const no = () => false;

/**
 * Puts back every file of `files` in `worktree` that holds its new state (deepest paths
 * first, so a folder the transaction made is emptied before the file it replaced returns).
 * @returns the paths put back and those left alone.
 */
async function restoreFiles(
  worktree: string,
  files: readonly RecordFile[],
  format: ObjectFormat,
): Promise<{ restored: string[]; outside: string[] }> {
  const restored: string[] = [];
  const outside: string[] = [];
  const order = [...files].sort((a, b) => b.rel.split('/').length - a.rel.split('/').length);
  const first = await diskSides(
    worktree,
    order.map((f) => f.rel),
    format,
  );
  for (const [i, f] of order.entries()) {
    const under = (side: 'prior' | 'next') =>
      files.some((o) => o[side] !== null && o.rel.startsWith(`${f.rel}/`));
    // A folder may have been emptied by the deeper paths just put back: read it again.
    const disk =
      first[i] === 'folder' ? (await diskSides(worktree, [f.rel], format))[0]! : first[i]!;
    if (holds(disk, f.prior, under('prior'))) continue;
    if (!holds(disk, f.next, under('next'))) {
      outside.push(f.rel);
      continue;
    }
    if (await putBack(worktree, f.rel, disk, f.prior)) restored.push(f.rel);
    else outside.push(f.rel);
  }
  return { restored, outside };
}

/** Stage-0 index entries of `paths` in a worktree: path → `<mode> <oid>`. */
async function indexEntries(worktree: string, paths: readonly string[]) {
  return stageZeroEntries(worktree, paths);
}

/**
 * Puts the index entries of `files` back to their prior state: always in the session's own
 * worktree; in a user's checkout only when every entry holds its new state (git writes a
 * checkout's index at once, so otherwise the index is still the user's and stays).
 */
async function restoreIndex(
  w: { path: string; owner: string },
  files: readonly RecordFile[],
): Promise<void> {
  if (files.length === 0) return;
  if (w.owner === 'checkout') {
    const staged = await indexEntries(
      w.path,
      files.map((f) => f.rel),
    );
    const key = (s: Side) => (s ? `${s.mode} ${s.oid}` : null);
    if (!files.every((f) => (staged.get(f.rel) ?? null) === key(f.next))) return;
  }
  await updateIndex(w.path, indexEntriesOf(files, 'prior'));
}

/** True when `commit`'s first parent is `head` and it holds every file's new state (v1 records). */
async function publishedFrom(
  worktree: string,
  files: readonly RecordFile[],
  head: string,
  commit: string,
): Promise<boolean> {
  if ((await readRef(worktree, `${commit}^`).catch(() => null)) !== head) return false;
  const entries = await lsTree(
    worktree,
    commit,
    files.map((t) => t.rel),
  );
  return files.every((t) => {
    const e = entries.get(t.rel);
    return t.next === null
      ? e === undefined
      : e !== undefined && e.oid === t.next.oid && e.mode === t.next.mode;
  });
}

/**
 * The refusal when a session ref of a pending record moved since (not by this transaction).
 * @returns HagentError STALE_FILE naming the record and its files, with the way out.
 */
function movedUnder(
  commonDir: string,
  r: TxRecord,
  ref: string,
  at: string | null,
  files: readonly string[],
): HagentError {
  const record = intentPath(commonDir, r.session);
  const was = r.refs.find((m) => m.ref === ref)?.old ?? null;
  return new HagentError(
    'STALE_FILE',
    `session ${r.session}: an interrupted ${r.kind} started at ${was?.slice(0, 12) ?? 'none'}, but ${ref} is now ${at?.slice(0, 12) ?? 'gone'}`,
    { session: r.session, record, files: [...files] },
    `the files were left as they are; check ${files.join(', ')} (hagent session status ${r.session}), then remove the stale record ${record} and run the command again`,
  );
}

/**
 * Rolls an interrupted session end forward (transaction/run.ts, `end`): each of its steps that
 * is left is done — the refs of the record that still hold their old id move (one that someone
 * else moved since is left as it is: it is theirs), the worktree folder goes (`git worktree
 * remove --force`; a folder git no longer knows as a worktree, half removed by the kill, is
 * removed and git's record of it pruned), the session's metadata goes — then the record. Git
 * runs in the git dir: the worktree may be gone.
 * @throws HagentError GIT_FAILED (the record stays for the next recovery).
 */
async function finishEnd(
  commonDir: string,
  r: TxRecord,
  end: NonNullable<TxRecord['end']>,
): Promise<Recovery> {
  await orphanedGitDone(commonDir, r);
  await clearLocksLeftBy(commonDir, r);
  const now = await readRefs(
    commonDir,
    commonDir,
    r.refs.map((m) => m.ref),
  );
  const left = r.refs.filter((m) => {
    const at = now.get(m.ref) ?? null;
    return at !== m.new && (m.unchecked || at === m.old);
  });
  await moveRefs(commonDir, left, `hagent recover: completed ${r.kind}`);
  const there = await fs.stat(end.worktree).then(ok, no);
  if (there)
    await removeWorktree(commonDir, end.worktree).catch(() =>
      fs.rm(end.worktree, { recursive: true, force: true }),
    );
  await pruneWorktrees(commonDir);
  await fs.rm(end.sessionFile, { force: true });
  await removeIntent(commonDir, r.session);
  return {
    txid: r.txid,
    command: r.kind,
    action: 'completed',
    commit: null,
    files: [],
    outside: [],
    target: null,
    worktree: end.worktree,
  };
}

/**
 * Finishes or puts back the pending transaction of a session, if any (module header), and
 * removes the temp files of a record whose writer died. Call it holding the session lock.
 * `worktree` and `ref`: the session's, for a version-1 record.
 * @returns what it did, or null when nothing was pending.
 * @throws HagentError STALE_FILE when a session ref moved under the record; GIT_FAILED when git
 *   itself fails (the record stays either way).
 */
export async function recoverTransaction(
  commonDir: string,
  sessionId: string,
  worktree: string,
  ref: string,
): Promise<Recovery | null> {
  removeDeadRecordTemps(commonDir, sessionId);
  const read = await readIntent(commonDir, sessionId, { worktree, ref });
  if (read === null) return null;
  const base = { commit: null, files: [], outside: [], target: null, worktree: null };
  if (read === 'damaged') {
    await removeIntent(commonDir, sessionId);
    return { txid: '?', command: '?', action: 'discarded', ...base };
  }
  let r = read.record;
  if (r.kind === 'end' && r.end) return finishEnd(commonDir, r, r.end);
  const checkout = r.worktrees.find((w) => w.owner === 'checkout') ?? null;
  const about = {
    txid: r.txid,
    command: r.kind,
    target: r.refs[0]?.ref ?? null,
    worktree: checkout?.path ?? null,
  };
  const allFiles = r.worktrees.flatMap((w) => w.files.map((f) => f.rel));
  await orphanedGitDone(commonDir, r);
  const locked = await lockedCheckout(r);
  if (locked)
    return {
      ...base,
      ...about,
      action: 'blocked',
      worktree: locked.worktree,
      indexLock: locked.lock,
    };
  await clearLocksLeftBy(commonDir, r);
  for (const w of r.worktrees) if (w.owner === 'session') await putBackAsides(w.path, r, w.files);
  const format = objectFormat(commonDir);
  const now = await readRefs(
    worktree,
    commonDir,
    r.refs.map((m) => m.ref),
  );
  // A version-1 record may not know its commit: the ref moved to one made from it, or not.
  if (read.pending) {
    const m = r.refs[0]!;
    const at = now.get(m.ref) ?? null;
    if (at !== m.old && at !== null) {
      const files = r.worktrees[0]!.files;
      if (await publishedFrom(worktree, files, m.old!, at)) r.refs = [{ ...m, new: at }];
    }
  }
  const merged = r.merge ? await holdsText(r.merge.files[0]!, `${r.merge.head}\n`) : null;
  const committed = merged ?? r.refs.every((m) => (now.get(m.ref) ?? null) === m.new);
  const untouched = r.refs.every((m) => m.unchecked || (now.get(m.ref) ?? null) === m.old);
  let result: Recovery;
  if (committed) {
    // A merge in progress keeps the unmerged index its update wrote.
    for (const w of r.worktrees)
      if (w.owner === 'session' && !r.merge)
        await updateIndex(w.path, indexEntriesOf(w.files, 'next'));
    result = {
      ...base,
      ...about,
      action: 'completed',
      commit: r.refs[0]?.new ?? null,
      files: allFiles,
    };
  } else if (!untouched) {
    // Someone else moved a ref since: nothing is touched. A user's branch (a land's target)
    // moved by the user is theirs: the record goes. A session ref moved under a pending record
    // is refused, the record kept, for the user to judge the files.
    const moved = r.refs.find(
      (m) =>
        !m.unchecked && sessionOwnedRef(m.ref, r.session) && (now.get(m.ref) ?? null) !== m.old,
    );
    if (moved) throw movedUnder(commonDir, r, moved.ref, now.get(moved.ref) ?? null, allFiles);
    result = { ...base, ...about, action: 'kept' };
  } else {
    const sides = await Promise.all(
      r.worktrees.map((w) =>
        diskSides(
          w.path,
          w.files.map((f) => f.rel),
          format,
        ),
      ),
    );
    const allNew = r.worktrees.every((w, i) =>
      w.files.every((f, j) =>
        holds(
          sides[i]![j]!,
          f.next,
          w.files.some((o) => o.next && o.rel.startsWith(`${f.rel}/`)),
        ),
      ),
    );
    if (r.rollForward && allNew) {
      for (const w of r.worktrees)
        if (w.owner === 'session') await updateIndex(w.path, indexEntriesOf(w.files, 'next'));
      if (read.pending) {
        const m = r.refs[0]!;
        const commit = await commitTree(
          worktree,
          await writeTree(worktree),
          [m.old!],
          read.pending.message,
        );
        r = { ...r, refs: [{ ...m, new: commit }] };
        // Recorded before the ref moves, so a recovery killed here is finished by the next one.
        await writeIntent(commonDir, r);
      }
      await moveRefs(worktree, r.refs, `hagent recover: completed ${r.kind}`);
      result = {
        ...base,
        ...about,
        action: 'completed',
        commit: r.refs[0]?.new ?? null,
        files: allFiles,
      };
    } else {
      const restored: string[] = [];
      const outside: string[] = [];
      for (const w of r.worktrees) {
        const done = await restoreFiles(w.path, w.files, format);
        restored.push(...done.restored);
        outside.push(...done.outside);
        await restoreIndex(w, w.files);
      }
      if (r.merge) for (const f of r.merge.files) await fs.rm(f, { force: true });
      result = {
        ...base,
        ...about,
        action: 'restored',
        files: checkout ? restored : allFiles,
        outside,
      };
    }
  }
  for (const w of r.worktrees) if (w.owner === 'session') await removeTemps(w.path, r, w.files);
  await removeIntent(commonDir, sessionId);
  return result;
}

/**
 * Finishes every interrupted session end of the repository ({@link finishEnd}), each under its
 * session's lock: its record may outlive the session's metadata (a kill between the two
 * removals), so they are found by their records. For `hagent doctor` and `session end`.
 * @returns what was done, one entry per session end finished.
 * @throws HagentError LOCKED, GIT_FAILED.
 */
export async function finishInterruptedEnds(
  commonDir: string,
  only?: string,
): Promise<(Recovery & { session: string })[]> {
  const dir = path.dirname(intentPath(commonDir, 'x'));
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const done: (Recovery & { session: string })[] = [];
  for (const name of names) {
    const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : null;
    if (!id || (only !== undefined && id !== only)) continue;
    const read = await readIntent(commonDir, id).catch(() => null);
    if (!read || read === 'damaged' || read.record.kind !== 'end' || !read.record.end) continue;
    await withSessionLock(commonDir, id, { command: 'recover session end' }, {}, async () => {
      const again = await readIntent(commonDir, id);
      if (again && again !== 'damaged' && again.record.end)
        done.push({
          ...(await finishEnd(commonDir, again.record, again.record.end)),
          session: id,
        });
    });
  }
  return done;
}
