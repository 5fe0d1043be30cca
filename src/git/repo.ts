/**
 * One repository as a command sees it: the directory it runs in and the repository's common
 * dir. The handle owns the choice between an in-process fast path and git for each operation
 * that has one (ref reads, commit writing, first-parent subjects): each fast path answers
 * `done` or `askGit` with a reason (fast-path.ts), the handle then runs git, and
 * `HAGENT_TRACE=1` prints which path ran and why. It memoises what cannot change while a
 * process runs: the object format, and git's identity for commits (commit-direct.ts).
 */
import { askGit, traceFastPath } from './fast-path.js';
import { forgetIdentities, gitIdentity, writeCommit, type MadeCommit } from './commit-direct.js';
import { firstParentSubjectsDirect } from './commits-direct.js';
import { looseObjectStore, type LooseObjectStore } from './loose.js';
import { forgetObjectFormats, objectFormat, zeroOid, type ObjectFormat } from './object-format.js';
import { readTreeIntoIndex, updateIndex, writeTree, type IndexEntryUpdate } from './objects.js';
import { readRef } from './plumbing.js';
import { readRefsDirect } from './refs-direct.js';
import { refOids } from './history.js';
import { gitText } from './run.js';

const handles = new Map<string, Repo>();

/**
 * Forgets every memo of this module and of the ones it reads through (handles, object formats,
 * identities): the next call sees the repository as a new process would. The hook server calls
 * it before each request (agents/hook-server.ts), so a long-lived process never answers from a
 * state an earlier request saw. git's configuration answers are not forgotten: config-memo.ts
 * already re-reads them whenever a configuration file changed, and keys them by the variables
 * that move configuration.
 */
export function forgetRepoMemos(): void {
  handles.clear();
  forgetObjectFormats();
  forgetIdentities();
}

/** The repository seen from `cwd` (a worktree, or any folder git finds it from). */
export class Repo {
  private format: ObjectFormat | undefined;

  private constructor(
    readonly cwd: string,
    readonly commonDir: string,
  ) {}

  /** The handle of `commonDir` seen from `cwd`: one per pair in a process. */
  static at(cwd: string, commonDir: string): Repo {
    const key = `${cwd}\0${commonDir}`;
    let repo = handles.get(key);
    if (!repo) handles.set(key, (repo = new Repo(cwd, commonDir)));
    return repo;
  }

  /** {@link Repo.at} of a repository context (`{ cwd, commonDir }`, session/context.ts). */
  static of(ctx: { cwd: string; commonDir: string }): Repo {
    return Repo.at(ctx.cwd, ctx.commonDir);
  }

  /** The same repository seen from another folder (e.g. a session worktree). */
  from(cwd: string): Repo {
    return Repo.at(cwd, this.commonDir);
  }

  /** The object format (`extensions.objectFormat`), read once. */
  objectFormat(): ObjectFormat {
    return (this.format ??= objectFormat(this.commonDir));
  }

  /** git's identity for commits made from `cwd`, asked once per process and kept (commit-direct.ts). */
  identity(): ReturnType<typeof gitIdentity> {
    return gitIdentity(this.cwd, this.commonDir);
  }

  /**
   * The loose object store hagent may write into, or null (write through git): asked each time,
   * since `refs/replace` or a shared setting may appear while a server runs. Never throws.
   */
  looseStore(): Promise<LooseObjectStore | null> {
    return looseObjectStore(this.commonDir, zeroOid(this.objectFormat()));
  }

  /**
   * Object ids of `refs` (full names): from git's ref files when they can be read that way,
   * else one `git for-each-ref`. A missing ref maps to null. @throws HagentError GIT_FAILED.
   */
  async readRefs(refs: readonly string[]): Promise<Map<string, string | null>> {
    const direct = await readRefsDirect(this.commonDir, refs);
    const read = traceFastPath(
      'refs read',
      direct ? { kind: 'done', refs: direct } : askGit('not plain ref files (reftable, symref)'),
    );
    if (read.kind === 'done') return read.refs;
    const found = await refOids(this.cwd, refs);
    return new Map(refs.map((r) => [r, found.get(r) ?? null]));
  }

  /** One ref's object id ({@link readRefs}; git: `rev-parse --verify`), null when missing. */
  async readRef(ref: string): Promise<string | null> {
    const direct = await readRefsDirect(this.commonDir, [ref]);
    if (direct) return direct.get(ref) ?? null;
    traceFastPath('ref read', askGit('not plain ref files (reftable, symref)'));
    return readRef(this.cwd, ref);
  }

  /**
   * The commit of `tree` with `parents` and `message`, made from `cwd`: in-process when the
   * object store and git's identity allow, else `git commit-tree` (commit-direct.ts).
   * @throws HagentError GIT_FAILED; the file system's error writing the object.
   */
  async writeCommit(
    tree: string,
    parents: readonly string[],
    message: string,
  ): Promise<MadeCommit> {
    const store = await this.looseStore();
    return writeCommit(this.cwd, this.commonDir, null, store, tree, parents, message);
  }

  /** Applies `entries` to the index (git update-index; objects.ts). @throws GIT_FAILED. */
  updateIndex(entries: readonly IndexEntryUpdate[], indexFile?: string): Promise<void> {
    return updateIndex(this.cwd, entries, indexFile);
  }

  /** Writes the index as a tree. @returns its id. @throws HagentError GIT_FAILED. */
  writeTree(indexFile?: string): Promise<string> {
    return writeTree(this.cwd, indexFile);
  }

  /** Loads `treeish` into the index, files untouched. @throws HagentError GIT_FAILED. */
  readTreeIntoIndex(treeish: string, indexFile?: string): Promise<void> {
    return readTreeIntoIndex(this.cwd, treeish, indexFile);
  }

  /**
   * Subjects of the first-parent commits of `base..head`, oldest first: from loose commit
   * objects when they are all at hand, else `git log`. @throws HagentError GIT_FAILED.
   */
  async firstParentSubjects(base: string, head: string): Promise<string[]> {
    const direct = await firstParentSubjectsDirect(this.commonDir, base, head);
    const read = traceFastPath(
      'subjects read',
      direct ? { kind: 'done', subjects: direct } : askGit('a commit not loose'),
    );
    if (read.kind === 'done') return read.subjects;
    const args = ['log', '--first-parent', '--reverse', '--format=%s', `${base}..${head}`];
    const out = await gitText(args, { cwd: this.cwd });
    return out ? out.split('\n') : [];
  }
}
