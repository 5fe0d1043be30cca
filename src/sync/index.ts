/**
 * sync: adopts edits made in a session worktree outside hagent (by hand, by a build, by the
 * agent's shell) into one commit marked as outside, so they become reviewable and undoable
 * (issue: safety envelope §4). The same commit, limited to named paths and carrying its own op
 * and trailers, records what an agent's native tool wrote (agents/: one commit per tool call).
 */
import { HagentError } from '../errors.js';
import { commitTree, diffTrees, literalPathspec, parseRawDiff, runGit, treeOf, updateRefCas, writeTree } from '../git/index.js';
import { checkPath, type Policy } from '../policy/index.js';
import { loadConfig } from '../config/index.js';
import { guardTarget, outsideEdits, retireRedo, sessionHead, sessionRef, type ChangedFile, type RepoContext, type Session } from '../session/index.js';
import { guardedWrite, storeNote, type Recovery } from '../transaction/index.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempIndexEnv } from '../git/index.js';

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
 * What a sync commit records. The default is `hagent sync`: every outside edit, `Hagent-Op: sync`,
 * `Hagent-Outside: true`. An agent's tool call names its `paths` (only those are committed, from
 * a temporary index, so a parallel call's write or the agent's own `git add` stays out), its `op`
 * (`edit` for a native edit tool, `exec` for a shell command), a `subject`, extra `trailers`
 * (tool name, tool-use id, command) and the `note` kept beside the commit (the edit itself).
 */
export interface SyncOptions {
  paths?: readonly string[];
  op?: 'sync' | 'edit' | 'exec';
  subject?: string;
  /** Trailer name → value; values are kept to one line. */
  trailers?: Readonly<Record<string, string>>;
  note?: string;
  /** Journal command name (default: the op). */
  command?: string;
  /** How long to wait for the session lock (default from config): agent hooks wait longer. */
  lockTimeoutMs?: number;
}

/** Pathspec that leaves hagent's own temp files out. */
const EXCLUDE_TEMPS = ':(exclude,glob)**/.*.hagent-*.tmp';

/**
 * Files hagent itself put in a session worktree (an agent's hook file, where the agent has no
 * per-run mechanism), listed in `<git-common-dir>/hagent/agents/<id>/owned.json`: never adopted.
 */
export function ownedFilesPath(commonDir: string, sessionId: string): string {
  return path.join(commonDir, 'hagent', 'agents', sessionId, 'owned.json');
}

async function ownedExcludes(commonDir: string, sessionId: string): Promise<string[]> {
  const raw = await fs.readFile(ownedFilesPath(commonDir, sessionId), 'utf8').catch(() => null);
  if (raw === null) return [];
  try {
    const list = JSON.parse(raw) as unknown;
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string').map((p) => `:(exclude,literal)${p}`) : [];
  } catch {
    return [];
  }
}

/**
 * Commits every outside edit of the session worktree (modified, added, deleted; ignored files,
 * paths the policy denies and symlinks stay out and are reported as `skipped`) on the session branch, marked `Hagent-Op: sync` and `Hagent-Outside: true`, under
 * the session lock; journaled.
 * @throws HagentError LOCKED, TARGET_MOVED, SESSION_NOT_FOUND.
 */
export async function syncSession(ctx: RepoContext, session: Session, env: Readonly<Record<string, string | undefined>> = {}, options: SyncOptions = {}): Promise<SyncResult> {
  const config = await loadConfig(ctx, env);
  const command = options.command ?? (options.op && options.op !== 'sync' ? options.op : 'sync');
  const { value, recovery } = await guardedWrite(guardTarget(ctx, session), command, { timeoutMs: options.lockTimeoutMs ?? config.runtime.lockTimeoutMs, ...(options.note !== undefined ? { patch: options.note } : {}) }, async () => {
    const r = await syncLocked(ctx, session, config.policy, options);
    return { value: r, files: r.files.map((f) => f.path), head: r.commit ?? r.parent };
  });
  if (recovery) value.recovery = recovery;
  return value;
}

async function syncLocked(ctx: RepoContext, session: Session, policy: Policy, options: SyncOptions): Promise<SyncResult> {
  const worktree = session.worktree;
  const head = await sessionHead(ctx, session);
  const none = { ok: true as const, session: session.id, commit: null, parent: head, files: [], skipped: [] };
  if (options.paths) return syncPaths(ctx, session, policy, options, head, options.paths);
  const pending = await outsideEdits(worktree);
  if (pending.length === 0) return none;
  await runGit(['add', '-A', '--', '.', EXCLUDE_TEMPS, ...(await ownedExcludes(ctx.commonDir, session.id))], { cwd: worktree });
  // The same path policy as a patch (patch-language.md §5b): denied names and symlinks stay out.
  const staged = parseRawDiff((await runGit(['diff-index', '--cached', '-z', '--no-renames', 'HEAD'], { cwd: worktree })).stdout);
  const skipped = policySkips(staged, policy);
  if (skipped.length) await runGit(['reset', '-q', 'HEAD', '--', ...skipped.map((k) => literalPathspec(k.path))], { cwd: worktree });
  const tree = await writeTree(worktree);
  if (tree === (await treeOf(worktree, head))) return { ...none, skipped };
  return commitSynced(ctx, session, options, head, tree, skipped, () => runGit(['read-tree', head], { cwd: worktree }).then(() => undefined));
}

/**
 * The tool-call form: commits exactly `paths` (relative to the worktree) as they are on disk,
 * built in a temporary index from the head, so nothing else of the worktree or of the real
 * index gets in; the real index then takes the same paths. Denied paths and symlinks stay out.
 */
async function syncPaths(ctx: RepoContext, session: Session, policy: Policy, options: SyncOptions, head: string, paths: readonly string[]): Promise<SyncResult> {
  const worktree = session.worktree;
  const none = { ok: true as const, session: session.id, commit: null, parent: head, files: [], skipped: [] };
  if (paths.length === 0) return none;
  const specs = [...new Set(paths)].map(literalPathspec);
  const indexFile = path.join(ctx.commonDir, 'hagent', `index-${process.pid}-${randomBytes(3).toString('hex')}.tmp`);
  const env = tempIndexEnv(indexFile);
  try {
    await runGit(['read-tree', head], { cwd: worktree, ...env });
    await runGit(['add', '-A', '--ignore-errors', '--', ...specs], { cwd: worktree, ...env, allowFailure: true });
    const staged = parseRawDiff((await runGit(['diff-index', '--cached', '-z', '--no-renames', head], { cwd: worktree, ...env })).stdout);
    const skipped = policySkips(staged, policy);
    if (skipped.length) await runGit(['reset', '-q', head, '--', ...skipped.map((k) => literalPathspec(k.path))], { cwd: worktree, ...env });
    const tree = await writeTree(worktree, indexFile);
    if (tree === (await treeOf(worktree, head))) return { ...none, skipped };
    const r = await commitSynced(ctx, session, options, head, tree, skipped, async () => undefined);
    // The real index follows the commit on these paths only (git status stays clean there).
    await runGit(['reset', '-q', r.commit!, '--', ...r.files.map((f) => literalPathspec(f.path))], { cwd: worktree, allowFailure: true });
    return r;
  } finally {
    await fs.rm(indexFile, { force: true });
  }
}

/** Staged changes the path policy refuses (patch-language.md §5b), and symlinks. */
function policySkips(staged: ReturnType<typeof parseRawDiff>, policy: Policy): { path: string; reason: string }[] {
  const skipped: { path: string; reason: string }[] = [];
  for (const c of staged) {
    if (c.newMode === '120000' && c.status !== 'D') { skipped.push({ path: c.path, reason: 'a symbolic link' }); continue; }
    try {
      checkPath(c.path, policy);
    } catch (e) {
      skipped.push({ path: c.path, reason: (e as Error).message });
    }
  }
  return skipped;
}

const oneLine = (v: string) => v.replace(/[\r\n]+/g, ' ').slice(0, 500);

/** Writes the commit of `tree` on the session branch (compare-and-swap) with its message and note. */
async function commitSynced(ctx: RepoContext, session: Session, options: SyncOptions, head: string, tree: string, skipped: { path: string; reason: string }[], undoIndex: () => Promise<void>): Promise<SyncResult> {
  const worktree = session.worktree;
  const changes = await diffTrees(worktree, head, tree);
  const files = changes.map((c) => ({ path: c.path, status: c.status }));
  if (files.length === 0) throw new HagentError('INTERNAL', 'sync made an empty commit');
  const list = files.map((f) => `${f.status} ${f.path}`);
  const op = options.op ?? 'sync';
  let message: string;
  if (op === 'sync' && options.subject === undefined) {
    let subject = `hagent: outside edits (${list.join(', ')})`;
    if (subject.length > 72) subject = `hagent: outside edits (${files.length} files)`;
    message = `${subject}\n\nEdits made in the session worktree outside hagent, adopted by hagent sync:\n${list.map((l) => `- ${l}`).join('\n')}\n\nHagent-Session: ${session.id}\nHagent-Op: sync\nHagent-Outside: true\n`;
  } else {
    let subject = options.subject ?? `hagent: ${list.join(', ')}`;
    if (subject.length > 72) subject = `${subject.slice(0, 69)}...`;
    const trailers = Object.entries(options.trailers ?? {}).map(([k, v]) => `${k}: ${oneLine(v)}`);
    message = `${subject}\n\n${list.map((l) => `- ${l}`).join('\n')}\n\nHagent-Session: ${session.id}\nHagent-Op: ${op}\n${op === 'sync' ? 'Hagent-Outside: true\n' : ''}${trailers.map((t) => `${t}\n`).join('')}`;
  }
  const commit = await commitTree(worktree, tree, [head], message);
  try {
    await updateRefCas(worktree, sessionRef(session), commit, head, `hagent ${op}: ${files.map((f) => f.path).join(', ')}`.slice(0, 200));
  } catch (error) {
    await undoIndex().catch(() => undefined);
    throw error;
  }
  await retireRedo(worktree, session);
  if (options.note !== undefined) await storeNote(ctx.commonDir, worktree, commit, options.note).catch(() => undefined);
  return { ok: true, session: session.id, commit, parent: head, files, skipped };
}
