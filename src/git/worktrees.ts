/**
 * Worktree verbs the commands use (add, remove, repair, switch, status, clean, ignore checks),
 * one named function each. A worktree is named by its folder, and optionally by its git dir
 * too ({@link WorktreeAt}): git then takes that git dir instead of discovering one from the
 * folder's `.git` file (a pooled worktree whose `.git` file may vanish must not let git find
 * another repository above it).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gitText, runGit, type GitResult, type RunGitOptions } from './run.js';
import { literalPathspec } from './plumbing.js';

/** A worktree folder, with its git dir when git must not discover it. */
export interface WorktreeAt {
  worktree: string;
  gitDir?: string;
}

type At = string | WorktreeAt;

function run(at: At, args: readonly string[], options: Omit<RunGitOptions, 'cwd'> = {}) {
  const w = typeof at === 'string' ? { worktree: at } : at;
  const dirs = w.gitDir ? [`--git-dir=${w.gitDir}`, `--work-tree=${w.worktree}`] : [];
  return runGit([...dirs, ...args], { ...options, cwd: w.worktree });
}

const nul = (b: Buffer) => b.toString('utf8').split('\0').filter(Boolean);
const firstLine = (r: GitResult) => r.stderr.trim().split('\n')[0] ?? '';

/**
 * Adds the worktree `worktree` with a new branch `branch` at `base` (`git worktree add --no-track
 * -b`), from the repository of `cwd`. @throws HagentError GIT_FAILED.
 */
export async function worktreeAdd(
  cwd: string,
  worktree: string,
  branch: string,
  base: string,
): Promise<void> {
  await runGit(['worktree', 'add', '--quiet', '--no-track', '-b', branch, worktree, base], { cwd });
}

/**
 * Checks the existing branch `branch` out in a new worktree `worktree` (`git worktree add`),
 * from the repository of `cwd`. `force` (`--force`) lets git reuse a registration whose folder
 * is gone (git refuses "a missing but already registered worktree", and a branch checked out in
 * one): the caller has made sure no present worktree holds the branch.
 * @throws HagentError GIT_FAILED.
 */
export async function worktreeAddBranch(
  cwd: string,
  worktree: string,
  branch: string,
  force: boolean,
): Promise<void> {
  await runGit(['worktree', 'add', '--quiet', ...(force ? ['--force'] : []), worktree, branch], {
    cwd,
  });
}

/**
 * Removes the worktree `worktree` whatever it holds (`git worktree remove --force`; twice
 * `--force` with `locked`: also when it is locked). @returns whether git removed it.
 */
export async function worktreeRemove(
  cwd: string,
  worktree: string,
  locked = false,
): Promise<boolean> {
  const force = locked ? ['--force', '--force'] : ['--force'];
  const r = await runGit(['worktree', 'remove', ...force, worktree], { cwd, allowFailure: true });
  return r.exitCode === 0;
}

/** Mends git's links between the repository of `cwd` and `worktree` (`git worktree repair`). */
export async function worktreeRepair(cwd: string, worktree: string): Promise<boolean> {
  const r = await runGit(['worktree', 'repair', worktree], { cwd, allowFailure: true });
  return r.exitCode === 0;
}

/**
 * Switches the worktree to a new branch `branch` at `base` (`git switch --no-track -c`).
 * @returns null when it did, else git's first line of complaint.
 */
export async function switchToNewBranch(
  at: At,
  branch: string,
  base: string,
): Promise<string | null> {
  const r = await run(at, ['switch', '--quiet', '--no-track', '-c', branch, base], {
    allowFailure: true,
  });
  return r.exitCode === 0 ? null : firstLine(r);
}

/** Detaches the worktree's HEAD at its commit, files untouched. @throws GIT_FAILED. */
export async function detachHead(at: At): Promise<void> {
  await run(at, ['checkout', '--quiet', '--detach']);
}

/**
 * Removes every ignored file of the worktree except those `keep` names (gitignore patterns):
 * `git clean -ffdqX` with each kept pattern negated (`-e` patterns take precedence over
 * .gitignore). @throws HagentError GIT_FAILED.
 */
export async function removeIgnoredFiles(at: At, keep: readonly string[]): Promise<void> {
  const negated = keep.flatMap((p) => ['-e', p.startsWith('!') ? p.slice(1) : `!${p}`]);
  await run(at, ['clean', '-ffdqX', ...negated]);
}

/** Writes `paths` of `commit` into the worktree and its index (`git checkout <commit> --`). */
export async function checkoutPaths(
  cwd: string,
  commit: string,
  paths: readonly string[],
): Promise<void> {
  if (paths.length)
    await runGit(['checkout', commit, '--', ...paths.map(literalPathspec)], { cwd });
}

/** Options of {@link statusRecords}. */
export interface StatusOptions {
  untracked: 'normal' | 'all';
  /** List ignored files too (`--ignored=matching`). */
  ignored?: boolean;
  /** Report changes inside submodules too (`--ignore-submodules=none`). */
  submodules?: boolean;
}

/**
 * The worktree's `git status --porcelain=v1 -z --no-renames` records (`XY path`), taking no
 * optional locks. @throws HagentError GIT_FAILED.
 */
export async function statusRecords(at: At, options: StatusOptions): Promise<string[]> {
  const args = ['status', '--porcelain=v1', '-z', `--untracked-files=${options.untracked}`];
  if (options.ignored) args.push('--ignored=matching');
  if (options.submodules) args.push('--ignore-submodules=none');
  const r = await run(at, [...args, '--no-renames'], { noOptionalLocks: true });
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((rec) => rec.length > 3);
}

/**
 * Paths whose index entry differs from HEAD (`git diff-index --cached --name-only HEAD`);
 * null when git cannot tell (no HEAD yet). No optional locks.
 */
export async function stagedPaths(cwd: string): Promise<string[] | null> {
  const r = await runGit(['diff-index', '--cached', '--name-only', '-z', 'HEAD'], {
    cwd,
    allowFailure: true,
    noOptionalLocks: true,
  });
  return r.exitCode === 0 ? nul(r.stdout) : null;
}

/** Paths whose worktree file differs from its index entry (`git diff-files --name-only`). */
export async function unstagedPaths(cwd: string): Promise<string[]> {
  const r = await runGit(['diff-files', '--name-only', '-z'], {
    cwd,
    allowFailure: true,
    noOptionalLocks: true,
  });
  return nul(r.stdout);
}

/**
 * Untracked files of the worktree that the patterns of `excludeFile` match
 * (`git ls-files --others --ignored --exclude-from`). @throws HagentError GIT_FAILED.
 */
export async function untrackedMatching(cwd: string, excludeFile: string): Promise<string[]> {
  const args = ['ls-files', '-z', '--others', '--ignored', `--exclude-from=${excludeFile}`];
  return nul((await runGit(args, { cwd })).stdout);
}

/** Those of `paths` that git ignores in the worktree (`git check-ignore --stdin`). */
export async function ignoredPaths(cwd: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const r = await runGit(['check-ignore', '-z', '--stdin'], {
    cwd,
    input: paths.join('\0') + '\0',
    allowFailure: true,
  });
  return nul(r.stdout);
}

/**
 * The changes of the worktree under `pathspecs` against the index (`GIT_INDEX_FILE` `indexFile`
 * when given): `git status --porcelain=v1 -z --untracked-files=all --no-renames` records (`XY
 * path`). An untracked folder shows only when it holds a repository of its own (`?? sub/`).
 * @throws HagentError GIT_FAILED.
 */
export async function worktreeChanges(
  at: At,
  pathspecs: readonly string[],
  indexFile?: string,
): Promise<string[]> {
  const args = ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'];
  const r = await run(at, [...args, '--', ...pathspecs], {
    noOptionalLocks: true,
    ...(indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}),
  });
  return nul(r.stdout).filter((rec) => rec.length > 3);
}

/**
 * The files of the repository whose working tree is `dir` (a repository nested in a worktree):
 * tracked and untracked ones its own ignore rules keep (`git ls-files -c -o --exclude-standard`),
 * relative to `dir`; a repository nested in it shows as `name/`. Empty when git cannot read it.
 */
export async function nestedRepoFiles(dir: string): Promise<string[]> {
  const r = await runGit(['ls-files', '-z', '-c', '-o', '--exclude-standard', '--deduplicate'], {
    cwd: dir,
    allowFailure: true,
    noOptionalLocks: true,
  });
  return r.exitCode === 0 ? nul(r.stdout) : [];
}

/**
 * Stages exactly `paths` as the worktree holds them (`git update-index --add --remove --replace
 * -z --stdin`, into `indexFile` when given), detached: a file is hashed and added, a missing one
 * removed. Nothing else of the worktree is read. @throws HagentError GIT_FAILED.
 */
export async function stageExactPaths(
  at: At,
  paths: readonly string[],
  indexFile?: string,
): Promise<void> {
  if (paths.length === 0) return;
  await run(at, ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], {
    input: paths.join('\0') + '\0',
    detached: true,
    ...(indexFile ? { env: { GIT_INDEX_FILE: indexFile } } : {}),
  });
}

/** Writes the index file `indexFile` as a tree (`git write-tree`). @returns the tree id. */
export async function treeOfIndexFile(at: At, indexFile: string): Promise<string> {
  const env = { GIT_INDEX_FILE: indexFile };
  return (await run(at, ['write-tree'], { env })).stdout.toString('utf8').trim();
}

/** Creates a repository in `dir` with `initialBranch` (`git init`). */
export async function initRepository(dir: string, initialBranch: string): Promise<void> {
  await gitText(['init', '--quiet', `--initial-branch=${initialBranch}`], { cwd: dir });
}

/**
 * Commits every file of the worktree (`git add -A`, `git commit`), hooks off as everywhere.
 * @param env identity or dates for the commit.
 */
export async function commitEverything(
  cwd: string,
  message: string,
  env?: Record<string, string>,
): Promise<void> {
  await runGit(['add', '-A'], { cwd });
  await runGit(['commit', '--quiet', '-m', message], { cwd, ...(env ? { env } : {}) });
}

/**
 * Points a linked worktree's admin dir at its folder's new place `dest` (its `gitdir` file), as
 * `git worktree move` does, without a process. @throws the fs error of a failed write.
 */
export async function pointWorktreeAdminAt(admin: string, dest: string): Promise<void> {
  await fs.writeFile(path.join(admin, 'gitdir'), `${path.join(dest, '.git')}\n`);
}

/** Removes a linked worktree's admin dir (`.git/worktrees/<name>`), as `git worktree prune` does. */
export async function removeWorktreeAdmin(admin: string): Promise<void> {
  await fs.rm(admin, { recursive: true, force: true });
}

/** What `git status` says of a checkout's files, for the outside watch (exec/outside.ts). */
export interface CheckoutStatus {
  /** Tracked paths whose file differs from the index. */
  unstaged: string[];
  /** Untracked files (each one) and ignored files and folders (as their ignore pattern matched them: `node_modules/`). */
  others: string[];
}

/**
 * One `git status --porcelain -z --untracked-files=all --ignored=matching --no-renames` of the
 * checkout at `cwd`, without optional locks (the user's index is never written). Never throws:
 * null when git fails.
 */
export async function checkoutStatus(cwd: string): Promise<CheckoutStatus | null> {
  const r = await runGit(
    [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--ignored=matching',
      '--no-renames',
    ],
    { cwd, allowFailure: true, noOptionalLocks: true },
  ).catch(() => null);
  if (!r || r.exitCode !== 0) return null;
  const unstaged: string[] = [];
  const others: string[] = [];
  for (const entry of nul(r.stdout)) {
    const xy = entry.slice(0, 2);
    const p = entry.slice(3);
    if (xy === '??' || xy === '!!') others.push(p);
    else if (xy[1] !== ' ') unstaged.push(p);
  }
  return { unstaged, others };
}
