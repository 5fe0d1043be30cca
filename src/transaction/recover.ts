/**
 * Recovery of a transaction interrupted at any instant (kill -9): finishes its commit when every
 * file was already written, otherwise restores the pre-transaction state. Files changed by
 * someone else since are never overwritten; they are reported (design.md invariant 3).
 */
import { promises as fs, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  objectFormat,
  readBlobCheckedOut,
  storedBlobIdsOf,
  type ObjectFormat,
  commitTree,
  deleteRefCas,
  lsTree,
  parseGitFile,
  readRef,
  updateIndex,
  updateRefCas,
  writeTree,
  type IndexEntryUpdate,
} from '../git/index.js';
import { backupNameFor, readEntry, replaceIfHolds, tempNameFor } from '../fsx/index.js';
import { intentPath, readIntent, removeIntent, writeIntent, type Intent } from './intent.js';
import { storeNote } from './note.js';
import { pidAlive } from '../lock/index.js';

/** What recovery did. `outside`: paths left alone because their bytes are neither before nor after. */
export interface Recovery {
  txid: string;
  command: string;
  action: 'completed' | 'restored' | 'discarded';
  commit: string | null;
  files: string[];
  outside: string[];
}

type DiskSide = { oid: string; mode: string; bytes: Uint8Array } | null;

/** What each of `rels` holds on disk, its blob id the one git would store (git/filters.ts). */
async function diskSides(
  worktree: string,
  rels: readonly string[],
  format: ObjectFormat,
): Promise<(DiskSide | 'other')[]> {
  const entries = await Promise.all(rels.map((rel) => readEntry(worktree, rel)));
  const ids = await storedBlobIdsOf(
    worktree,
    rels.flatMap((rel, i) => {
      const e = entries[i]!;
      return e.kind === 'file' ? [{ path: rel, bytes: e.bytes }] : [];
    }),
    format,
  );
  return entries.map((e, i) => {
    if (e.kind === 'missing') return null;
    if (e.kind !== 'file') return 'other';
    return { oid: ids.get(rels[i]!)!, mode: e.executable ? '100755' : '100644', bytes: e.bytes };
  });
}

const same = (a: DiskSide | 'other', b: { oid: string; mode: string } | null) =>
  a !== 'other' && (a === null ? b === null : b !== null && a.oid === b.oid && a.mode === b.mode);

function indexEntries(intent: Intent, side: 'prior' | 'next'): IndexEntryUpdate[] {
  return intent.targets.map((t) => {
    const s = t[side];
    return s ? { path: t.rel, mode: s.mode, oid: s.oid } : { path: t.rel, mode: '0', oid: null };
  });
}

/** The names a transaction's rollback (fsx/stage.ts restoreIfOurs) uses for target `rel`. */
function rollbackNames(rel: string, intent: Intent): { tmp: string; aside: string } {
  return {
    tmp: tempNameFor(rel, `restore-${intent.pid}`),
    aside: tempNameFor(rel, `restore-${intent.pid}-aside`),
  };
}

async function removeTemps(worktree: string, intent: Intent): Promise<void> {
  for (const [i, t] of intent.targets.entries()) {
    const names = [
      t.tmp,
      backupNameFor(t.rel, intent.txid, i),
      rollbackNames(t.rel, intent).tmp,
      rollbackNames(t.rel, intent).aside,
    ];
    for (const name of names)
      if (name) await fs.rm(path.join(worktree, name), { force: true }).catch(() => undefined);
  }
}

/**
 * A git process of the interrupted transaction killed with it (a whole process group killed)
 * leaves its lock file, and every later git command that needs it refuses: the session
 * worktree's `index.lock` (update-index) and `HEAD.lock`, the session ref's `.lock` (update-ref),
 * `refs/notes/hagent.lock` (notes), those of the refs that move with it and, when one of them is
 * deleted, `packed-refs.lock`. Recovery runs under the session lock with the transaction's
 * process dead, so a lock file made since the transaction started is its: wait until it is 2 s
 * old (an orphaned git child still finishing removes it itself), then remove it. An older lock
 * file is not ours and is left for git to report.
 */
async function clearLocksLeftBy(
  commonDir: string,
  worktree: string,
  ref: string,
  intent: Intent,
): Promise<void> {
  const locks = [
    path.join(commonDir, ...ref.split('/')) + '.lock',
    path.join(commonDir, 'refs', 'notes', 'hagent.lock'),
    // The refs that move with the session ref; deleting one takes packed-refs.lock too.
    ...(intent.refs ?? []).map((m) => path.join(commonDir, ...m.ref.split('/')) + '.lock'),
    ...((intent.refs ?? []).some((m) => m.oid === null)
      ? [path.join(commonDir, 'packed-refs.lock')]
      : []),
  ];
  try {
    const gitDir = parseGitFile(worktree, await fs.readFile(path.join(worktree, '.git'), 'utf8'));
    if (gitDir) {
      locks.push(path.join(gitDir, 'index.lock'), path.join(gitDir, 'HEAD.lock'));
    }
  } catch {
    // no worktree link: only the shared locks
  }
  const started = Date.parse(intent.startedAt);
  await Promise.all(
    locks.map(async (lock) => {
      for (;;) {
        const st = await fs.stat(lock).catch(() => null);
        if (!st || !(st.mtimeMs >= started - 1000)) return;
        const age = Date.now() - st.mtimeMs;
        if (age >= 2000) {
          await fs.rm(lock, { force: true });
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(100, 2000 - age)));
      }
    }),
  );
}

/**
 * A kill between moving a target's file aside and linking the next one in (fsx/stage.ts,
 * replaceIfHolds) leaves the target absent and its file under a name recovery knows: the
 * publish's backup name (the old file) or the rollback's aside name (hagent's new file, moved
 * aside to put the old one back). It goes back first, so the target reads as it did just
 * before the kill.
 */
async function putBackAsides(worktree: string, intent: Intent): Promise<void> {
  for (const [i, t] of intent.targets.entries()) {
    const abs = path.join(worktree, t.rel);
    if (
      await fs.lstat(abs).then(
        () => true,
        () => false,
      )
    )
      continue;
    for (const name of [backupNameFor(t.rel, intent.txid, i), rollbackNames(t.rel, intent).aside]) {
      const aside = path.join(worktree, name);
      const back = await fs.link(aside, abs).then(
        () => true,
        () => false,
      );
      if (back) {
        await fs.rm(aside, { force: true });
        break;
      }
    }
  }
}

/** True when `commit`'s first parent is the intent's head and it holds every target's new state. */
async function publishedFrom(worktree: string, intent: Intent, commit: string): Promise<boolean> {
  const parent = await readRef(worktree, `${commit}^`).catch(() => null);
  if (parent !== intent.head) return false;
  const entries = await lsTree(
    worktree,
    commit,
    intent.targets.map((t) => t.rel),
  );
  return intent.targets.every((t) => {
    const e = entries.get(t.rel);
    return t.next === null
      ? e === undefined
      : e !== undefined && e.oid === t.next.oid && e.mode === t.next.mode;
  });
}

/**
 * Removes the temp files of this session's intent record left by a process killed while writing
 * it (`<session>.json.<pid>-<random>.tmp`, fsx's writeJsonFile), when that process is gone.
 * Never throws.
 */
function removeDeadIntentTemps(commonDir: string, sessionId: string): void {
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
 * Moves the refs that go with the session ref ({@link Intent.refs}), after it: by the command,
 * or by the recovery that completes it when the command was killed in between, so an undo that
 * happened always keeps its redo. Each moves only from its recorded old value; one already moved
 * (by the command before its kill) or moved by someone else is left as it is.
 * @throws HagentError TARGET_MOVED when a ref moves at the same moment.
 */
export async function moveCompanionRefs(cwd: string, intent: Intent): Promise<void> {
  for (const m of intent.refs ?? []) {
    if ((await readRef(cwd, m.ref)) !== m.old) continue;
    if (m.oid !== null) await updateRefCas(cwd, m.ref, m.oid, m.old, `hagent ${intent.command}`);
    else if (m.old !== null) await deleteRefCas(cwd, m.ref, m.old);
  }
}

/**
 * Finishes or undoes the pending transaction of a session, if any, and removes the temp files of
 * an intent record whose writer died. Call it holding the session lock.
 * @returns what it did, or null when nothing was pending.
 * @throws HagentError INTERNAL-free: GIT_FAILED when git itself fails.
 */
export async function recoverTransaction(
  commonDir: string,
  sessionId: string,
  worktree: string,
  ref: string,
): Promise<Recovery | null> {
  removeDeadIntentTemps(commonDir, sessionId);
  const intent = await readIntent(commonDir, sessionId);
  if (intent === null) return null;
  if (intent === 'damaged') {
    await removeIntent(commonDir, sessionId);
    return { txid: '?', command: '?', action: 'discarded', commit: null, files: [], outside: [] };
  }
  const files = intent.targets.map((t) => t.rel);
  await clearLocksLeftBy(commonDir, worktree, ref, intent);
  await putBackAsides(worktree, intent);
  const headNow = await readRef(worktree, ref);
  let result: Recovery;
  if (intent.commit !== null && headNow === intent.commit) {
    // Killed after the ref moved: the commit is published; bring the index in line.
    await updateIndex(worktree, indexEntries(intent, 'next'));
    await moveCompanionRefs(worktree, intent);
    if (intent.note)
      await storeNote(commonDir, worktree, intent.commit, intent.note).catch(() => undefined);
    result = {
      txid: intent.txid,
      command: intent.command,
      action: 'completed',
      commit: intent.commit,
      files,
      outside: [],
    };
  } else if (
    headNow !== null &&
    headNow !== intent.head &&
    (await publishedFrom(worktree, intent, headNow))
  ) {
    // The ref moved to a commit made from this very intent (its parent is the intent's head and
    // it holds every target's new state), but the record never learned its id.
    await updateIndex(worktree, indexEntries(intent, 'next'));
    await moveCompanionRefs(worktree, intent);
    result = {
      txid: intent.txid,
      command: intent.command,
      action: 'completed',
      commit: headNow,
      files,
      outside: [],
    };
  } else if (headNow !== intent.head) {
    throw new HagentError(
      'STALE_FILE',
      `session ${sessionId}: an interrupted ${intent.command} started at ${intent.head.slice(0, 12)}, but the head is now ${headNow?.slice(0, 12) ?? 'gone'}`,
      {
        session: sessionId,
        record: intentPath(commonDir, sessionId),
        files: intent.targets.map((t) => t.rel),
      },
      `the files were left as they are; check ${intent.targets.map((t) => t.rel).join(', ')} (hagent session status ${sessionId}), then remove the stale record ${intentPath(commonDir, sessionId)} and run the command again`,
    );
  } else {
    const sides = await diskSides(
      worktree,
      intent.targets.map((t) => t.rel),
      objectFormat(commonDir),
    );
    const allWritten = intent.targets.every((t, i) => same(sides[i]!, t.next));
    if (allWritten) {
      await updateIndex(worktree, indexEntries(intent, 'next'));
      const tree = await writeTree(worktree);
      const commit =
        intent.commit ?? (await commitTree(worktree, tree, [intent.head], intent.message));
      // Recorded before the ref moves, so a recovery killed here is finished by the next one.
      if (intent.commit === null) await writeIntent(commonDir, { ...intent, commit });
      await updateRefCas(
        worktree,
        ref,
        commit,
        intent.head,
        `hagent recover: completed ${intent.command}`,
      );
      await moveCompanionRefs(worktree, intent);
      if (intent.note)
        await storeNote(commonDir, worktree, commit, intent.note).catch(() => undefined);
      result = {
        txid: intent.txid,
        command: intent.command,
        action: 'completed',
        commit,
        files,
        outside: [],
      };
    } else {
      const outside: string[] = [];
      for (const [i, t] of intent.targets.entries()) {
        const side = sides[i]!;
        if (same(side, t.prior)) continue;
        if (!same(side, t.next)) {
          outside.push(t.rel);
          continue;
        }
        // Put back only while the file still holds what was read above: an outside write in
        // the meantime is never overwritten (the same replacement as the publish).
        const abs = path.join(worktree, t.rel);
        const aside = path.join(worktree, tempNameFor(t.rel, `recover-${process.pid}-aside`));
        let tmp: string | null = null;
        try {
          if (t.prior !== null) {
            const bytes = await readBlobCheckedOut(worktree, t.rel, t.prior.oid);
            const mode = t.prior.mode === '100755' ? 0o755 : 0o644;
            tmp = path.join(worktree, tempNameFor(t.rel, `recover-${process.pid}`));
            await fs.mkdir(path.dirname(abs), { recursive: true });
            await fs.writeFile(tmp, bytes, { mode, flag: 'w' });
            await fs.chmod(tmp, mode);
          }
          const outcome = await replaceIfHolds(
            abs,
            aside,
            side === 'other' || side === null ? null : side.bytes,
            tmp,
          );
          if (outcome !== 'done') outside.push(t.rel);
        } finally {
          if (tmp) await fs.rm(tmp, { force: true }).catch(() => undefined);
        }
      }
      await updateIndex(worktree, indexEntries(intent, 'prior'));
      result = {
        txid: intent.txid,
        command: intent.command,
        action: 'restored',
        commit: null,
        files,
        outside,
      };
    }
  }
  await removeTemps(worktree, intent);
  await removeIntent(commonDir, sessionId);
  return result;
}
