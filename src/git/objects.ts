/**
 * Object ids computed in-process and the index/tree verbs of a commit made without `git commit`.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { gitFailed, gitText, runGit, spawnGitFedLater } from './run.js';
import { trace } from '../trace/index.js';
import { literalPathspec, locateWorktreeDirect } from './plumbing.js';
import {
  formatOfOid,
  hashObject,
  objectFormat,
  zeroOid,
  type ObjectFormat,
} from './object-format.js';

/**
 * git's blob id of `bytes` exactly as given (no filters): the format's hash of
 * "blob <len>\0" + bytes, hex. 0.01 ms per small file (design.md). For a worktree file whose
 * path has filter or end-of-line attributes, git stores another blob: see storedBlobIds.
 */
export function blobId(bytes: Uint8Array, format: ObjectFormat): string {
  return hashObject('blob', bytes, format);
}

/**
 * Writes the worktree files `paths` into the object database as blobs (no filters, exact bytes)
 * with one `git hash-object -w --stdin-paths`. @returns their ids, in order.
 */
export async function writeBlobsFromPaths(
  cwd: string,
  paths: readonly string[],
): Promise<string[]> {
  if (paths.length === 0) return [];
  const out = await gitText(['hash-object', '-w', '--no-filters', '--stdin-paths'], {
    cwd,
    input: paths.map((p) => `${p}\n`).join(''),
  });
  return out.split('\n');
}

/** One index change: `oid` null removes the path. `mode` is git's octal string. */
export interface IndexEntryUpdate {
  path: string;
  mode: string;
  oid: string | null;
}

/**
 * Applies entries to the index of `cwd`'s worktree (or `indexFile`) with one `git update-index
 * -z --index-info`: git reads and writes its own index in every format and version (v4,
 * sparse, split). A worktree index of at least {@link SPLIT_INDEX_MIN_BYTES} is made a split
 * index by the same call (unless `core.splitIndex` is false), so the next updates rewrite only
 * the entries that differ from the shared index (at 100,000 entries: ~60 ms instead of ~160 ms
 * here). @throws HagentError GIT_FAILED.
 */
export async function updateIndex(
  cwd: string,
  entries: readonly IndexEntryUpdate[],
  indexFile?: string,
): Promise<void> {
  if (entries.length === 0) return;
  const input = await indexInfoOf(cwd, entries);
  const split = indexFile === undefined && (await shouldSplit(cwd));
  await runGit(['update-index', ...(split ? ['--split-index'] : []), '-z', '--index-info'], {
    cwd,
    input,
    detached: true,
    ...(indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}),
  });
}

/** The `--index-info -z` records of `entries` (a removal names the zero id of the format). */
async function indexInfoOf(cwd: string, entries: readonly IndexEntryUpdate[]): Promise<string> {
  const withId = entries.find((e) => e.oid !== null);
  const zero = zeroOid(withId ? formatOfOid(withId.oid!) : await objectFormatAt(cwd));
  return entries
    .map((e) => (e.oid === null ? `0 ${zero}\t${e.path}\0` : `${e.mode} ${e.oid}\t${e.path}\0`))
    .join('');
}

/** An index update whose git is already running, waiting for its entries ({@link openIndexUpdate}). */
export interface OpenIndexUpdate {
  /**
   * Sends `entries` and waits until git has written the index (none: as {@link abort}).
   * @throws HagentError GIT_FAILED when git fails or could not start (the index is as it was).
   */
  commit(entries: readonly IndexEntryUpdate[]): Promise<void>;
  /** Ends it with nothing sent: git changes nothing and exits. Never throws; may be called after commit. */
  abort(): Promise<void>;
}

/**
 * Starts {@link updateIndex}'s `git update-index -z --index-info` now and sends the entries
 * later, so that git's start-up and its read of the index (at 100,000 entries most of the
 * call: the shared index of a split one) overlap the caller's other steps, as the ref
 * transaction's start does (ref-transaction.ts). git takes `index.lock` at its start and writes
 * the index only when its input ends with entries in it: ended with none (`abort`, or hagent
 * dead), it removes the lock and leaves the index as it was. In a process group of its own, as
 * every index write of a transaction; an orphan's lock is handled by recovery like any other.
 */
export function openIndexUpdate(cwd: string): OpenIndexUpdate {
  let ended = false;
  let args: string[] = [];
  const git = shouldSplit(cwd).then((split) => {
    args = ['update-index', ...(split ? ['--split-index'] : []), '-z', '--index-info'];
    return spawnGitFedLater(args, cwd);
  });
  const end = async (input: string): Promise<number> => {
    const { child, exited } = await git;
    if (!ended) child.stdin.end(input);
    ended = true;
    return exited;
  };
  return {
    async commit(entries) {
      const input = entries.length ? await indexInfoOf(cwd, entries) : '';
      const code = await end(input);
      trace('git update-index (started early)');
      if (code !== 0) throw gitFailed(args, code, (await git).stderr());
    },
    async abort() {
      await end('').catch(() => undefined);
    },
  };
}

/** An index at least this large is made a split index ({@link updateIndex}, {@link splitLargeIndex}). */
export const SPLIT_INDEX_MIN_BYTES = 2 * 1024 * 1024;

/**
 * Whether the index of the worktree at `worktree` is a whole index of at least
 * {@link SPLIT_INDEX_MIN_BYTES} (a split one is small) that the repository does not keep whole
 * (`core.splitIndex=false`, asked only then). Never throws.
 */
async function shouldSplit(worktree: string): Promise<boolean> {
  const here = locateWorktreeDirect(worktree);
  const size = here ? statSync(path.join(here.gitDir, 'index'), { throwIfNoEntry: false }) : null;
  if (!size || size.size < SPLIT_INDEX_MIN_BYTES) return false;
  const setting = await runGit(['config', '--type=bool', '--get', 'core.splitIndex'], {
    cwd: worktree,
    allowFailure: true,
  }).catch(() => null);
  return setting?.stdout.toString('utf8').trim() !== 'false';
}

/**
 * Makes the index of the worktree at `worktree` a split index (git's `update-index
 * --split-index`) when {@link shouldSplit} says so: a long-lived server does it once at its
 * start, so its first apply does not pay for it. git reads and keeps a split index whatever
 * `core.splitIndex` is, as long as it is not false. Best effort: a failure leaves the index as
 * it was and is not reported. @returns whether the index was split by this call.
 */
export async function splitLargeIndex(worktree: string): Promise<boolean> {
  if (!(await shouldSplit(worktree))) return false;
  const r = await runGit(['update-index', '--split-index'], { cwd: worktree, allowFailure: true });
  return r.exitCode === 0;
}

/**
 * The object format of the repository around `cwd`: from its config when git's files are at hand
 * ({@link locateWorktreeDirect}), else from `git rev-parse --show-object-format`.
 * @throws HagentError GIT_FAILED when `cwd` is in no repository.
 */
export async function objectFormatAt(cwd: string): Promise<ObjectFormat> {
  const here = locateWorktreeDirect(cwd);
  if (here) return objectFormat(here.commonDir);
  return (await gitText(['rev-parse', '--show-object-format'], { cwd })) === 'sha256'
    ? 'sha256'
    : 'sha1';
}

/** Writes the index of `cwd` (or `indexFile`) as a tree. @returns the tree id. */
export function writeTree(cwd: string, indexFile?: string): Promise<string> {
  return gitText(['write-tree'], {
    cwd,
    ...(indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}),
  });
}

/** Loads `treeish` into the index of `cwd` (or `indexFile`), without touching files. */
export async function readTreeIntoIndex(
  cwd: string,
  treeish: string,
  indexFile?: string,
): Promise<void> {
  await runGit(['read-tree', treeish], {
    cwd,
    ...(indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}),
  });
}

/**
 * Two-tree fast-forward of a worktree (`git read-tree -m -u OLD NEW`): updates the index and only
 * the files that differ between the trees; git refuses when one of them has local changes.
 * Index entries that are only stat-dirty are refreshed once and the update retried.
 * With `verified` (the caller has checked every differing path itself) `--reset` is used, so
 * index entries without stat data (written by `update-index --index-info`) do not block it.
 * @throws HagentError DIRTY_TARGET with git's message when git refuses.
 */
export async function checkoutTreeDelta(
  cwd: string,
  oldTree: string,
  newTree: string,
  verified = false,
): Promise<void> {
  const args = ['read-tree', verified ? '--reset' : '-m', '-u', oldTree, newTree];
  let r = await runGit(args, { cwd, allowFailure: true, detached: true });
  if (r.exitCode !== 0 && /not uptodate/.test(r.stderr)) {
    await runGit(['update-index', '-q', '--refresh'], { cwd, allowFailure: true, detached: true });
    r = await runGit(args, { cwd, allowFailure: true, detached: true });
  }
  if (r.exitCode !== 0) {
    const { files, lock } = readTreeRefusal(r.stderr);
    throw new HagentError(
      'DIRTY_TARGET',
      `git refused to update the checkout: ${r.stderr.trim().split('\n')[0] ?? ''}`,
      { stderr: r.stderr.trim(), files, ...(lock ? { lock } : {}) },
      lock
        ? `another git command holds ${lock}: wait for it; if none runs in ${cwd}, a killed one left it: remove it, then run the command again`
        : `commit or stash your changes to ${files.length ? files.slice(0, 3).join(', ') : 'the files git names'}${files.length > 3 ? ' …' : ''}, then run the command again`,
    );
  }
}

/**
 * What a refused `read-tree -m -u` names in its stderr: the paths of its `Entry 'P' not uptodate`
 * / `would be overwritten` lines and of its tab-indented lists, and the lock file of an
 * `Unable to create '…index.lock'`, so the refusal can say what is in the way.
 */
export function readTreeRefusal(stderr: string): { files: string[]; lock: string | null } {
  const files = new Set<string>();
  for (const m of stderr.matchAll(/^error: Entry '(.+)' (?:not uptodate|would be overwritten)/gm))
    files.add(m[1]!);
  for (const m of stderr.matchAll(/^\t(.+)$/gm)) files.add(m[1]!);
  const lock = /Unable to create '(.+\.lock)'/.exec(stderr)?.[1] ?? null;
  return { files: [...files], lock };
}

/**
 * Attaches `text` as a note on `commit` under `refs/notes/hagent` (replacing any), byte for byte:
 * the text is stored as a blob first and the note made from it (`-C`), because `-F` strips
 * trailing spaces and blank lines (a patch's empty context line ` ` among them).
 * @throws HagentError GIT_FAILED from git.
 */
export async function addNote(cwd: string, commit: string, text: string): Promise<void> {
  const blob = await gitText(['hash-object', '-w', '--stdin'], { cwd, input: text });
  await runGit(['notes', '--ref=hagent', 'add', '-f', '-C', blob, commit], { cwd });
}

/** Reads the `refs/notes/hagent` note of `commit`; null when none. */
export async function readNote(cwd: string, commit: string): Promise<string | null> {
  const r = await runGit(['notes', '--ref=hagent', 'show', commit], { cwd, allowFailure: true });
  return r.exitCode === 0 ? r.stdout.toString('utf8') : null;
}

/** Status lines (`git status --porcelain=v1 -z`) of `paths` in a worktree; no optional locks. */
export async function dirtyPaths(cwd: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const r = await runGit(
    [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--ignored=matching',
      '--no-renames',
      '--',
      ...paths.map(literalPathspec),
    ],
    { cwd, noOptionalLocks: true },
  );
  const out: string[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    if (rec.length > 3) out.push(rec.slice(3));
  }
  return out;
}

/** The bytes of blob `oid`. @throws HagentError GIT_FAILED when it is not in the object database. */
export async function readBlob(cwd: string, oid: string): Promise<Buffer> {
  return (await runGit(['cat-file', 'blob', oid], { cwd })).stdout;
}
