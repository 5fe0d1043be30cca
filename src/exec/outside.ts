/**
 * Effects of a shell command outside the session: the guard reads command text, so a script the
 * agent wrote and then ran (`sh s.sh` holding `git -C <checkout> commit`, an `npm run clean`), or
 * a program that writes by itself, can still reach the user's main checkout and the repository.
 * This file notices it afterwards: a snapshot taken before the command and one after are
 * compared, what differs is reported to the agent and the human, and what was there is kept where
 * it can be (docs/human-only.md).
 *
 * What is compared (three git calls per snapshot, a fourth only when the index moved):
 * - the main checkout's HEAD (its symbolic ref and commit) and the session's target branch;
 * - every ref of the repository but the session's own (`refs/replace/`, tags, notes, other
 *   branches, other sessions'), with their ids: a moved or deleted ref's old id is in the report
 *   with the `git update-ref` that puts it back;
 * - one `git status --untracked-files=all --ignored=matching`: tracked files that differ from the
 *   index, each untracked file and each ignored file or folder (`.env`, `node_modules/`), each with
 *   its size and mtime — a change or a removal of any of them counts (a second write to a file
 *   already dirty, a discard of the user's edit, an `rm` of their notes). Small untracked and
 *   ignored files (64 KiB each, 1 MiB in all) are kept with the snapshot: one the command removed
 *   is put back (never over a file that exists again);
 * - the index file's size and mtime; when it moved, the staged paths (`git diff-index --cached`);
 * - the repository's `config`, the checkout's `config.worktree`, `info/attributes`,
 *   `info/exclude` and `hooks/` (size and mtime; the old `config` text is kept and saved when it
 *   changed, so the human can put it back);
 * - `.hagent/config.json`, the user's hagent configuration: a change is undone at once (the old
 *   text written back, or the file removed when there was none), so an agent cannot relax its
 *   own rules.
 * A change by the user at the same moment is reported too (the report says "while the command
 * ran", not "by the command").
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { mainCheckoutRoot } from '../config/index.js';
import {
  checkoutStatus,
  readRef,
  refOids,
  revParseLines,
  stagedPaths,
  symbolicHead,
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
  /** Untracked files and ignored files or folders (`dir/`), each with `size:mtimeMs`. */
  others?: Record<string, string>;
  /** The bytes (base64) of the small untracked and ignored files, to put back a removed one. */
  kept?: Record<string, string>;
  /** Every ref but the session's own, with its object id. */
  allRefs?: Record<string, string>;
  /** `size:mtimeMs` of git's files that change how git behaves (`config`, `hooks/`, ...). */
  gitFiles?: Record<string, string>;
  /** The repository's `config` text (null when unreadable). */
  gitConfig?: string | null;
  /** `.hagent/config.json` of the checkout (null when absent). */
  hagentConfig?: string | null;
}

/** One ref that moved: `before`/`after` are commit ids (or the ref HEAD named), null when absent. */
export interface MovedRef {
  ref: string;
  before: string | null;
  after: string | null;
}

/**
 * What changed outside the session while a command ran (JSON `outside` of exec, MCP exec and the
 * hook's journal entry). `refs`: moved refs (`HEAD`, the target branch, any other ref but the
 * session's own), each with its old id; `paths`: tracked paths whose working-tree state changed;
 * `others`: untracked or ignored files (or ignored folders) changed or removed; `staged`: the
 * staged paths when the index moved; `gitFiles`: git's own files that changed (`.git/config`,
 * `.git/hooks/`, ...); `restored`: what hagent put back (`.hagent/config.json`, removed small
 * files); `restore`: commands that put the rest back (refs, the old `.git/config`); `hint`: how
 * to inspect it.
 */
export interface OutsideChange {
  checkout: string;
  refs: MovedRef[];
  paths: string[];
  others: string[];
  staged: string[];
  gitFiles: string[];
  restored: string[];
  restore: string[];
  message: string;
  hint: string;
}

/** Small files kept with a snapshot: each at most 64 KiB, 1 MiB and 64 files in all. */
const KEEP_FILE_BYTES = 64 * 1024;
const KEEP_TOTAL_BYTES = 1024 * 1024;
const KEEP_FILES = 64;

async function stamp(file: string): Promise<string> {
  try {
    const st = await fs.lstat(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

/** The index file of a checkout: `.git/index`, or the one of a linked worktree's git dir. */
function indexFile(checkout: string): string {
  return path.join(worktreeGitDirSync(checkout) ?? path.join(checkout, '.git'), 'index');
}

/** Whether `ref` is one of the session's own (its branch, `refs/hagent/<id>/…`, its notes). */
function ownRef(ref: string, session: Session): boolean {
  return (
    ref === `refs/heads/hagent/${session.id}` ||
    ref.startsWith(`refs/hagent/${session.id}/`) ||
    ref === `refs/notes/hagent-sessions/${session.id}`
  );
}

/** `size:mtimeMs` of each of `paths` below `root`. */
async function stamps(root: string, paths: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    paths.map(async (p) => {
      out[p] = await stamp(path.join(root, p));
    }),
  );
  return out;
}

/** The bytes of the small regular files among `paths` (limits above), base64. */
async function keepSmall(root: string, paths: readonly string[]): Promise<Record<string, string>> {
  const kept: Record<string, string> = {};
  let total = 0;
  let count = 0;
  for (const p of paths) {
    if (p.endsWith('/') || count >= KEEP_FILES) continue;
    const file = path.join(root, p);
    const st = await fs.lstat(file).catch(() => null);
    if (!st?.isFile() || st.size > KEEP_FILE_BYTES || total + st.size > KEEP_TOTAL_BYTES) continue;
    const bytes = await fs.readFile(file).catch(() => null);
    if (!bytes) continue;
    kept[p] = bytes.toString('base64');
    total += bytes.length;
    count++;
  }
  return kept;
}

/** Git's files that change how git behaves, by the name the report gives them, and their paths. */
function gitFilesOf(commonDir: string, checkout: string): Record<string, string> {
  const gitDir = worktreeGitDirSync(checkout) ?? path.join(checkout, '.git');
  return {
    '.git/config': path.join(commonDir, 'config'),
    '.git/config.worktree': path.join(gitDir, 'config.worktree'),
    '.git/info/attributes': path.join(commonDir, 'info', 'attributes'),
    '.git/info/exclude': path.join(commonDir, 'info', 'exclude'),
    '.git/hooks/': path.join(commonDir, 'hooks'),
  };
}

/** Stamps of git's files; the hooks folder's stamp names each hook with its own. */
async function gitFileStamps(files: Record<string, string>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, file] of Object.entries(files)) {
    if (!name.endsWith('/')) {
      out[name] = await stamp(file);
      continue;
    }
    const names = ((await fs.readdir(file).catch(() => [])) as string[]).sort();
    out[name] = (
      await Promise.all(names.map(async (n) => `${n}=${await stamp(path.join(file, n))}`))
    ).join(',');
  }
  return out;
}

/**
 * Takes the snapshot of `session`'s main checkout; null when there is none (a bare repository
 * alone) or git cannot read it. Three git calls. Never throws.
 */
export async function snapshotOutside(
  ctx: RepoContext,
  session: Session,
): Promise<OutsideSnapshot | null> {
  try {
    const checkout = await mainCheckoutRoot(ctx, session.target);
    if (!checkout) return null;
    const target = session.target;
    const [revs, status, refs] = await Promise.all([
      revParseLines(
        checkout,
        ['HEAD', ...(target ? [target] : []), '--symbolic-full-name', 'HEAD'],
        true,
      ),
      checkoutStatus(checkout),
      refOids(checkout, []).catch(() => new Map<string, string>()),
    ]);
    if (!status) return null;
    const allRefs: Record<string, string> = {};
    for (const [ref, oid] of refs) if (!ownRef(ref, session)) allRefs[ref] = oid;
    const configFile = path.join(checkout, '.hagent', 'config.json');
    const [dirty, others, kept, index, gitFiles, gitConfig, hagentConfig] = await Promise.all([
      stamps(checkout, status.unstaged),
      stamps(checkout, status.others),
      keepSmall(checkout, status.others),
      stamp(indexFile(checkout)),
      gitFileStamps(gitFilesOf(ctx.commonDir, checkout)),
      fs.readFile(path.join(ctx.commonDir, 'config'), 'utf8').catch(() => null),
      fs.readFile(configFile, 'utf8').catch(() => null),
    ]);
    const rest = { dirty, index, others, kept, allRefs, gitFiles, gitConfig, hagentConfig };
    if (revs.ok) {
      const lines = revs.lines;
      return {
        checkout,
        head: lines[0] || null,
        targetOid: target ? lines[1] || null : null,
        headRef: lines[target ? 2 : 1] || null,
        target,
        ...rest,
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
      ...rest,
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

/** The keys of two stamp maps whose values differ (a key missing on one side counts). */
function differing(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): string[] {
  const x = a ?? {};
  const y = b ?? {};
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => x[k] !== y[k]).sort();
}

/**
 * Compares `before` with the checkout now and keeps what was there: a changed
 * `.hagent/config.json` is put back as it was, a small untracked or ignored file the command
 * removed is written back, and an old `.git/config` is saved under hagent's folder (the report
 * gives the command that puts it back). Null when nothing changed. A fourth git call
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
  for (const ref of differing(before.allRefs, now.allRefs))
    if (ref !== before.target)
      refs.push({ ref, before: before.allRefs?.[ref] ?? null, after: now.allRefs?.[ref] ?? null });
  const paths = differing(before.dirty, now.dirty);
  const others = differing(before.others, now.others);
  const gitFiles = differing(before.gitFiles, now.gitFiles);
  let staged: string[] = [];
  if (now.index !== before.index) {
    staged = ((await stagedPaths(now.checkout).catch(() => null)) ?? []).sort();
  }
  const restored: string[] = [];
  const restore: string[] = [];
  if ((before.hagentConfig ?? null) !== (now.hagentConfig ?? null)) {
    if (await putBackConfig(now.checkout, before.hagentConfig ?? null))
      restored.push('.hagent/config.json');
  }
  for (const p of others) {
    const bytes = before.kept?.[p];
    if (bytes === undefined || now.others?.[p] !== undefined) continue;
    const file = path.join(now.checkout, p);
    const put = await fs
      .mkdir(path.dirname(file), { recursive: true })
      .then(() => fs.writeFile(file, Buffer.from(bytes, 'base64'), { flag: 'wx' }))
      .then(
        () => true,
        () => false,
      );
    if (put) restored.push(p);
  }
  for (const r of refs) {
    if (r.ref === 'HEAD') continue;
    restore.push(
      r.before === null
        ? `git -C ${now.checkout} update-ref -d ${r.ref} ${r.after}`
        : `git -C ${now.checkout} update-ref ${r.ref} ${r.before}${r.after ? ` ${r.after}` : ''}`,
    );
  }
  if (gitFiles.includes('.git/config') && before.gitConfig != null) {
    const saved = await saveOldConfig(ctx.commonDir, before.gitConfig);
    if (saved) restore.push(`cp ${saved} ${path.join(ctx.commonDir, 'config')}`);
  }
  if (
    refs.length === 0 &&
    paths.length === 0 &&
    others.length === 0 &&
    staged.length === 0 &&
    gitFiles.length === 0 &&
    restored.length === 0
  )
    return null;
  const parts = [
    ...refs.map((r) => `${r.ref} moved ${shown(r.before)} -> ${shown(r.after)}`),
    ...(paths.length ? [`tracked files changed: ${list(paths)}`] : []),
    ...(others.length ? [`untracked or ignored files changed or removed: ${list(others)}`] : []),
    ...(staged.length ? [`the index was written; staged now: ${list(staged)}`] : []),
    ...(gitFiles.length ? [`git's own files changed: ${list(gitFiles)}`] : []),
    ...(restored.length ? [`put back as they were: ${list(restored)}`] : []),
  ];
  const branch = (before.target ?? 'HEAD').replace(/^refs\/heads\//, '');
  return {
    checkout: now.checkout,
    refs,
    paths,
    others,
    staged,
    gitFiles,
    restored,
    restore,
    message: `the user's main checkout ${now.checkout} changed while the command ran (outside the session worktree): ${parts.join('; ')}`,
    hint: `${restored.length ? 'hagent put back what it names; nothing else was undone' : 'nothing was undone'}; inspect it with git -C ${now.checkout} status and git -C ${now.checkout} reflog ${branch}${restore.length ? `; to put the rest back: ${restore.join(' && ')}` : ''}; change files only inside the session worktree ${session.worktree}`,
  };
}

/** Writes `.hagent/config.json` back to `text` (removes it when null). @returns whether it did. */
async function putBackConfig(checkout: string, text: string | null): Promise<boolean> {
  const file = path.join(checkout, '.hagent', 'config.json');
  try {
    if (text === null) await fs.rm(file, { force: true });
    else {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.hagent-restore.tmp`;
      await fs.writeFile(tmp, text);
      await fs.rename(tmp, file);
    }
    return true;
  } catch {
    return false;
  }
}

/** Saves the old `.git/config` under `<common dir>/hagent/outside/`; its path, or null. */
async function saveOldConfig(commonDir: string, text: string): Promise<string | null> {
  const dir = path.join(commonDir, 'hagent', 'outside');
  const file = path.join(dir, `config-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  try {
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(file, text);
    return file;
  } catch {
    return null;
  }
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
    files: [...new Set([...change.paths, ...change.others, ...change.staged])],
    patch: shell,
  }).catch(() => undefined);
}
