/**
 * sync: adopts edits made in a session worktree outside hagent (by hand, by a build, by the
 * agent's shell) into one commit marked as outside, so they become reviewable and undoable
 * (issue: safety envelope §4).
 */
import { HagentError } from '../errors.js';
import { commitTree, diffTrees, literalPathspec, parseRawDiff, runGit, treeOf, updateRefCas, writeTree } from '../git/index.js';
import { checkPath, type Policy } from '../policy/index.js';
import { loadConfig } from '../config/index.js';
import { guardTarget, outsideEdits, retireRedo, sessionHead, sessionRef, type ChangedFile, type RepoContext, type Session } from '../session/index.js';
import { guardedWrite, type Recovery } from '../transaction/index.js';

/** JSON of `hagent sync`. `commit` is null when there was nothing to adopt. */
export interface SyncResult {
  ok: true;
  session: string;
  commit: string | null;
  parent: string;
  files: ChangedFile[];
  /** Outside edits left out because the path policy refuses them (they stay pending). */
  skipped: { path: string; reason: string }[];
  recovery?: Recovery;
}

/**
 * How adopted edits are recorded: the `Hagent-Op` trailer, the journal's command name, the
 * subject's words, the body's opening line and any extra paragraph and trailers. `hagent sync`
 * adopts as outside edits; `hagent exec` adopts what its command changed.
 */
export interface AdoptAs {
  op: string;
  /** Words of the subject after `hagent: `, before the file list, e.g. `outside edits`. */
  title: string;
  /** The line before the file list in the body. */
  intro: string;
  /** A paragraph after the file list (e.g. the command that made the changes). */
  detail?: string;
  /** Trailers after `Hagent-Session` and `Hagent-Op`, e.g. `Hagent-Outside: true`. */
  trailers?: string[];
  /** The original text the journal keeps (hashed and redacted), e.g. the command. */
  journalText?: string;
}

/** What `hagent sync` records: outside edits, marked as such. */
export const ADOPT_OUTSIDE: AdoptAs = {
  op: 'sync',
  title: 'outside edits',
  intro: 'Edits made in the session worktree outside hagent, adopted by hagent sync:',
  trailers: ['Hagent-Outside: true'],
};

/** Pathspec that leaves hagent's own temp files out. */
const EXCLUDE_TEMPS = ':(exclude,glob)**/.*.hagent-*.tmp';

/**
 * Commits every outside edit of the session worktree (modified, added, deleted; ignored files,
 * paths the policy denies and symlinks stay out and are reported as `skipped`) on the session
 * branch as one commit, under the session lock; journaled. `as` says how the commit is marked:
 * by default `Hagent-Op: sync` and `Hagent-Outside: true` ({@link ADOPT_OUTSIDE}).
 * @throws HagentError LOCKED, TARGET_MOVED, SESSION_NOT_FOUND.
 */
export async function syncSession(ctx: RepoContext, session: Session, env: Readonly<Record<string, string | undefined>> = {}, as: AdoptAs = ADOPT_OUTSIDE): Promise<SyncResult> {
  const config = await loadConfig(ctx, env);
  const options = { timeoutMs: config.runtime.lockTimeoutMs, ...(as.journalText !== undefined ? { patch: as.journalText } : {}) };
  const { value, recovery } = await guardedWrite(guardTarget(ctx, session), as.op, options, async () => {
    const r = await syncLocked(ctx, session, config.policy, as);
    return { value: r, files: r.files.map((f) => f.path), head: r.commit ?? r.parent };
  });
  if (recovery) value.recovery = recovery;
  return value;
}

async function syncLocked(ctx: RepoContext, session: Session, policy: Policy, as: AdoptAs): Promise<SyncResult> {
  const worktree = session.worktree;
  const head = await sessionHead(ctx, session);
  const pending = await outsideEdits(worktree);
  const none = { ok: true as const, session: session.id, commit: null, parent: head, files: [], skipped: [] };
  if (pending.length === 0) return none;
  await runGit(['add', '-A', '--', '.', EXCLUDE_TEMPS], { cwd: worktree });
  // The same path policy as a patch (patch-language.md §5b): denied names and symlinks stay out.
  const staged = parseRawDiff((await runGit(['diff-index', '--cached', '-z', '--no-renames', 'HEAD'], { cwd: worktree })).stdout);
  const skipped: { path: string; reason: string }[] = [];
  for (const c of staged) {
    if (c.newMode === '120000' && c.status !== 'D') { skipped.push({ path: c.path, reason: 'a symbolic link' }); continue; }
    try {
      checkPath(c.path, policy);
    } catch (e) {
      skipped.push({ path: c.path, reason: (e as Error).message });
    }
  }
  if (skipped.length) await runGit(['reset', '-q', 'HEAD', '--', ...skipped.map((k) => literalPathspec(k.path))], { cwd: worktree });
  const tree = await writeTree(worktree);
  if (tree === (await treeOf(worktree, head))) return { ...none, skipped };
  const changes = await diffTrees(worktree, head, tree);
  const files = changes.map((c) => ({ path: c.path, status: c.status }));
  const list = files.map((f) => `${f.status} ${f.path}`);
  let subject = `hagent: ${as.title} (${list.join(', ')})`;
  if (subject.length > 72) subject = `hagent: ${as.title} (${files.length} file${files.length === 1 ? '' : 's'})`;
  const trailers = [`Hagent-Session: ${session.id}`, `Hagent-Op: ${as.op}`, ...(as.trailers ?? [])];
  const message = `${subject}\n\n${as.intro}\n${list.map((l) => `- ${l}`).join('\n')}\n\n${as.detail ? `${as.detail}\n\n` : ''}${trailers.join('\n')}\n`;
  const commit = await commitTree(worktree, tree, [head], message);
  try {
    await updateRefCas(worktree, sessionRef(session), commit, head, `hagent ${as.op}: ${as.title}`);
  } catch (error) {
    await runGit(['read-tree', head], { cwd: worktree }).catch(() => undefined);
    throw error;
  }
  await retireRedo(worktree, session);
  if (files.length === 0) throw new HagentError('INTERNAL', 'sync made an empty commit');
  return { ok: true, session: session.id, commit, parent: head, files, skipped };
}
