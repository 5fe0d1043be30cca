/**
 * Effects of a shell command outside the session: the guard reads command text, so a script the
 * agent wrote and then ran (`sh s.sh` holding `git -C <checkout> commit`), or a program that
 * writes by itself, can still reach the user's main checkout. This file notices it afterwards:
 * a snapshot taken before the command and one after are compared, and what differs is reported
 * (never undone: the user's files are the user's).
 *
 * What is compared, cheaply (two git calls per snapshot, a third only when the index moved):
 * - the main checkout's HEAD (its symbolic ref and commit) and the session's target branch;
 * - the tracked files that differ from the index (`git diff-files --name-only`, stat-only for
 *   unchanged files), each with its size and mtime, so a second write to a file already dirty
 *   counts too, and a discard (`git checkout -- f`) of the user's edit as well;
 * - the index file's size and mtime; when it moved, the staged paths (`git diff-index --cached`).
 * Untracked files are not looked at. A change by the user at the same moment is reported too
 * (the report says "while the command ran", not "by the command").
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { mainCheckoutRoot } from '../config/index.js';
import {
  readRef,
  revParseLines,
  stagedPaths,
  symbolicHead,
  unstagedPaths,
  worktreeGitDirSync,
} from '../git/index.js';
import { appendJournal } from '../journal/index.js';
import type { RepoContext, Session } from '../session/index.js';

/** The state of the user's main checkout at one moment (JSON-safe: hooks keep it in a file). */
export interface OutsideSnapshot {
  checkout: string;
  /** `refs/heads/main`, or `HEAD` when detached; null when HEAD is unborn. */
  headRef: string | null;
  head: string | null;
  /** The session's target branch (full ref) and its commit (null when absent). */
  target: string | null;
  targetOid: string | null;
  /** Tracked paths that differ from the index, each with `size:mtimeMs` (or `missing`). */
  dirty: Record<string, string>;
  /** `size:mtimeMs` of the checkout's index file, or `missing`. */
  index: string;
}

/** One ref that moved: `before`/`after` are commit ids (or the ref HEAD named), null when absent. */
export interface MovedRef {
  ref: string;
  before: string | null;
  after: string | null;
}

/**
 * What changed in the user's main checkout while a command ran (JSON `outside` of exec, MCP
 * exec and the hook's journal entry). `refs`: moved refs (`HEAD`, the target branch); `checkout`:
 * tracked paths whose working-tree state changed; `staged`: the staged paths when the index
 * moved; `hint`: how to inspect it.
 */
export interface OutsideChange {
  checkout: string;
  refs: MovedRef[];
  paths: string[];
  staged: string[];
  message: string;
  hint: string;
}

async function stamp(file: string): Promise<string> {
  try {
    const st = await fs.stat(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

/** The index file of a checkout: `.git/index`, or the one of a linked worktree's git dir. */
function indexFile(checkout: string): string {
  return path.join(worktreeGitDirSync(checkout) ?? path.join(checkout, '.git'), 'index');
}

/**
 * Takes the snapshot of `session`'s main checkout; null when there is none (a bare repository
 * alone) or git cannot read it. Two git calls. Never throws.
 */
export async function snapshotOutside(
  ctx: RepoContext,
  session: Session,
): Promise<OutsideSnapshot | null> {
  try {
    const checkout = await mainCheckoutRoot(ctx, session.target);
    if (!checkout) return null;
    const target = session.target;
    const [revs, files] = await Promise.all([
      revParseLines(
        checkout,
        ['HEAD', ...(target ? [target] : []), '--symbolic-full-name', 'HEAD'],
        true,
      ),
      unstagedPaths(checkout),
    ]);
    const dirty: Record<string, string> = {};
    await Promise.all(
      files.map(async (p) => {
        dirty[p] = await stamp(path.join(checkout, p));
      }),
    );
    const index = await stamp(indexFile(checkout));
    if (revs.ok) {
      const lines = revs.lines;
      return {
        checkout,
        head: lines[0] || null,
        targetOid: target ? lines[1] || null : null,
        headRef: lines[target ? 2 : 1] || null,
        target,
        dirty,
        index,
      };
    }
    // An unborn HEAD or a missing target branch: one at a time (rare).
    const sym = await symbolicHead(checkout);
    return {
      checkout,
      head: await oidOf(checkout, 'HEAD'),
      targetOid: await oidOf(checkout, target),
      headRef: sym ?? 'HEAD',
      target,
      dirty,
      index,
    };
  } catch {
    return null;
  }
}

/** A ref's commit when the batch rev-parse failed (unborn HEAD): null when absent. */
async function oidOf(checkout: string, ref: string | null): Promise<string | null> {
  if (!ref) return null;
  return (await readRef(checkout, ref)) || null;
}

/**
 * Compares `before` with the checkout now; null when nothing changed. A third git call
 * (`diff-index --cached`) only when the index file moved. Never throws.
 */
export async function outsideChangeSince(
  ctx: RepoContext,
  session: Session,
  before: OutsideSnapshot | null,
): Promise<OutsideChange | null> {
  if (!before) return null;
  const now = await snapshotOutside(ctx, session);
  if (!now) return null;
  const refs: MovedRef[] = [];
  if (now.headRef !== before.headRef || now.head !== before.head) {
    refs.push({
      ref: 'HEAD',
      before:
        before.headRef === before.target || before.headRef === 'HEAD'
          ? before.head
          : before.headRef,
      after: now.headRef === now.target || now.headRef === 'HEAD' ? now.head : now.headRef,
    });
  }
  if (before.target && now.targetOid !== before.targetOid)
    refs.push({ ref: before.target, before: before.targetOid, after: now.targetOid });
  const paths = [...new Set([...Object.keys(before.dirty), ...Object.keys(now.dirty)])]
    .filter((p) => before.dirty[p] !== now.dirty[p])
    .sort();
  let staged: string[] = [];
  if (now.index !== before.index) {
    staged = ((await stagedPaths(now.checkout).catch(() => null)) ?? []).sort();
  }
  if (refs.length === 0 && paths.length === 0 && staged.length === 0) return null;
  const parts = [
    ...refs.map((r) => `${r.ref} moved ${shown(r.before)} -> ${shown(r.after)}`),
    ...(paths.length ? [`tracked files changed: ${list(paths)}`] : []),
    ...(staged.length ? [`the index was written; staged now: ${list(staged)}`] : []),
  ];
  const branch = (before.target ?? 'HEAD').replace(/^refs\/heads\//, '');
  return {
    checkout: now.checkout,
    refs,
    paths,
    staged,
    message: `the user's main checkout ${now.checkout} changed while the command ran (outside the session worktree): ${parts.join('; ')}`,
    hint: `nothing was undone; inspect it with git -C ${now.checkout} status and git -C ${now.checkout} reflog ${branch}; change files only inside the session worktree ${session.worktree}`,
  };
}

/** A commit id shortened, a ref name whole, `(none)` for null. */
function shown(v: string | null): string {
  return v === null ? '(none)' : /^[0-9a-f]{40,64}$/.test(v) ? v.slice(0, 12) : v;
}

function list(paths: readonly string[]): string {
  return paths.length > 8
    ? `${paths.slice(0, 8).join(', ')} and ${paths.length - 8} more`
    : paths.join(', ');
}

/**
 * Journals an outside change as a refusal-shaped entry (`ok: false`, code OUTSIDE_CHANGED) of
 * `command` (e.g. `exec`, `hook claude Bash`), so `hagent log`, review and status show it. Never throws.
 */
export async function journalOutsideChange(
  ctx: RepoContext,
  session: Session,
  command: string,
  change: OutsideChange,
  shell: string,
): Promise<void> {
  await appendJournal(ctx.commonDir, {
    session: session.id,
    command,
    ok: false,
    code: 'OUTSIDE_CHANGED',
    message: change.message,
    hint: change.hint,
    files: [...new Set([...change.paths, ...change.staged])],
    patch: shell,
  }).catch(() => undefined);
}
