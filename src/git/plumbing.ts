/**
 * One function per git plumbing verb hagent uses, each beside a pure parser of its output.
 * All go through {@link runGit}; every function takes the directory to run in as `cwd`.
 */
import { askGit, traceFastPath } from './fast-path.js';
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { gitText, runGit, type RunGitOptions } from './run.js';
import { readRefsDirectSync } from './refs-direct.js';

/** Minimum git: `merge-tree --write-tree` arrived in 2.38 (design.md). */
export const MIN_GIT: readonly [number, number] = [2, 38];

/** Parses `git version 2.39.5` (or `git version 2.39.5.windows.1`) into [major, minor]. Pure. */
export function parseGitVersion(text: string): [number, number] | null {
  const m = /git version (\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/**
 * Checks git ≥ 2.38.
 * @throws HagentError GIT_TOO_OLD naming the found and needed versions.
 */
export async function assertGitVersion(cwd: string): Promise<void> {
  const text = await gitText(['version'], { cwd });
  const v = parseGitVersion(text);
  if (!v || v[0] < MIN_GIT[0] || (v[0] === MIN_GIT[0] && v[1] < MIN_GIT[1])) {
    throw new HagentError(
      'GIT_TOO_OLD',
      `hagent needs git ${MIN_GIT.join('.')} or newer; found "${text.trim()}"`,
      {},
      'upgrade git (merge-tree --write-tree arrived in 2.38)',
    );
  }
}

/** Where a directory sits in git. Paths are absolute. `topLevel` is null in a bare repository. */
export interface RepoLocation {
  gitDir: string;
  commonDir: string;
  topLevel: string | null;
  bare: boolean;
}

/**
 * Environment variables that change how git finds a repository: with any of them set, git is
 * asked. (GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR are not among them: run.ts never passes a
 * calling hook's values on to git, so git's answer ignores them too.)
 */
const DISCOVERY_ENV = [
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
];

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** True when `dir` looks like a git directory itself (git stops its upward search there). */
function isGitDirectory(dir: string): boolean {
  try {
    return (
      statSync(path.join(dir, 'HEAD')).isFile() && statSync(path.join(dir, 'objects')).isDirectory()
    );
  } catch {
    return false;
  }
}

/**
 * A repository's `config` says nothing that moves the worktree or makes the repository bare
 * (`core.worktree`, `core.bare = true`), includes no other file that could, and asks for no
 * extension but the object format, and no repository format git might refuse; judged conservatively on the text (a key may
 * follow its section header on the same line), so a false only means "ask git".
 */
function plainConfig(gitDir: string): boolean {
  let text: string;
  try {
    text = readFileSync(path.join(gitDir, 'config'), 'utf8');
  } catch {
    return false;
  }
  const key = (name: string) =>
    new RegExp(`(?:^|\\])[ \\t]*${name}\\b[ \\t]*(?:=[ \\t]*"?([^\\s#;"]*))?`, 'gim');
  if (/\[\s*include/i.test(text) || key('worktree').test(text)) return false;
  // Of the extensions, only the object format (SHA-1 or SHA-256), which the direct readers follow.
  const sections = [...text.matchAll(/\[\s*extensions\b([^\]]*)\]([^[]*)/gi)];
  for (const [, sub, body] of sections) {
    if (sub!.trim() !== '') return false;
    for (const line of body!.split('\n')) {
      const l = line.replace(/[#;].*$/, '').trim();
      if (l !== '' && !/^objectformat\s*=\s*"?sha(?:1|256)"?$/i.test(l)) return false;
    }
  }
  for (const m of text.matchAll(key('bare')))
    if (!/^(false|no|off|0)$/i.test(m[1] ?? '')) return false;
  for (const m of text.matchAll(key('repositoryformatversion')))
    if (!/^[01]$/.test(m[1] ?? '')) return false;
  return true;
}

/** `HEAD` of a git dir holds a symbolic ref or an object id, as git requires to call it a repository. */
function validHead(gitDir: string): boolean {
  return /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\s*$/.test(
    readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
  );
}

/**
 * Finds the worktree around `cwd` from git's own files, as git's discovery does
 * (gitrepository-layout(5), git-worktree(1) "DETAILS"): the nearest `.git` upwards is either a
 * file `gitdir: <dir>` whose `<dir>` holds `HEAD` and `commondir` (a linked worktree: every
 * session worktree is one), or a folder holding `HEAD` and `objects` whose `config` neither moves
 * the worktree nor makes it bare (a main worktree). Saves the ~15 ms `git rev-parse` spawn on
 * every command.
 * @returns the location (paths real and absolute), or null — ask git — for anything else: a
 *   discovery variable in the environment, `cwd` inside a git directory, a `config` with
 *   `core.worktree`, `core.bare` or an include, another owner than this user (git's
 *   safe.directory check), another file system on the way up, or any unreadable or unexpected
 *   file. Never throws.
 */
export function locateWorktreeDirect(cwd: string): RepoLocation | null {
  if (DISCOVERY_ENV.some((k) => process.env[k] !== undefined)) return null;
  try {
    const start = realpathSync(cwd);
    let dir = start;
    const dev = statSync(dir).dev;
    for (;;) {
      if (isGitDirectory(dir)) return null; // a bare repository or a git dir: git's answer differs
      const dotGit = path.join(dir, '.git');
      const st = lstatSync(dotGit, { throwIfNoEntry: false });
      if (st) {
        let gitDir: string | null;
        let commonDir: string | null;
        if (st.isFile()) {
          const linked = parseGitFile(dir, readFileSync(dotGit, 'utf8'));
          if (!linked) return null;
          gitDir = realOrNull(linked);
          if (!gitDir) return null;
          commonDir = realOrNull(
            path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()),
          );
          // A worktree's own config.worktree may set core.worktree (extensions.worktreeConfig).
          if (
            !commonDir ||
            !validHead(gitDir) ||
            !plainConfig(commonDir) ||
            statSync(path.join(gitDir, 'config.worktree'), { throwIfNoEntry: false })
          )
            return null;
        } else if (st.isDirectory()) {
          const real = realOrNull(dotGit);
          if (
            !real ||
            !isGitDirectory(real) ||
            !validHead(real) ||
            !plainConfig(real) ||
            !statSync(path.join(real, 'refs'), { throwIfNoEntry: false })?.isDirectory()
          )
            return null;
          gitDir = commonDir = real;
          if (start === gitDir || start.startsWith(gitDir + path.sep)) return null;
        } else {
          return null;
        }
        const uid = process.getuid?.();
        if (
          uid === undefined ||
          statSync(dir).uid !== uid ||
          statSync(gitDir).uid !== uid ||
          statSync(commonDir).uid !== uid
        )
          return null;
        return { gitDir, commonDir, topLevel: dir, bare: false };
      }
      const parent = path.dirname(dir);
      if (parent === dir || statSync(parent).dev !== dev) return null;
      dir = parent;
    }
  } catch {
    return null;
  }
}

/** The `<dir>` of a `.git` file's `gitdir: <dir>` line, resolved against `worktree`; null for anything else. Pure. */
export function parseGitFile(worktree: string, text: string): string | null {
  const m = /^gitdir: (.+?)\r?\n?$/.exec(text);
  return m ? path.resolve(worktree, m[1]!) : null;
}

/** The git dir of a linked worktree, from its `.git` file; null when there is none (or it is a folder). Never throws. */
export function worktreeGitDirSync(worktree: string): string | null {
  try {
    return parseGitFile(worktree, readFileSync(path.join(worktree, '.git'), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Finds the repository around `cwd`: from git's files ({@link locateWorktreeDirect}) when they
 * can be read that way, else with one `git rev-parse`.
 * @throws HagentError NOT_A_GIT_REPO outside any repository.
 */
export async function locateRepo(cwd: string): Promise<RepoLocation> {
  const direct = locateWorktreeDirect(cwd);
  const found = traceFastPath(
    'repository found',
    direct ? { kind: 'done', location: direct } : askGit('not a plain worktree layout'),
  );
  if (found.kind === 'done') return found.location;
  const r = await runGit(
    [
      'rev-parse',
      '--path-format=absolute',
      '--git-dir',
      '--git-common-dir',
      '--is-bare-repository',
      '--show-toplevel',
    ],
    { cwd, allowFailure: true },
  );
  const lines = r.stdout.toString('utf8').split('\n');
  if (r.exitCode !== 0 && lines.length < 3) {
    throw new HagentError(
      'NOT_A_GIT_REPO',
      `not a git repository: ${cwd}`,
      { path: cwd },
      'run hagent inside a git repository (git init, or cd into one)',
    );
  }
  const [gitDir = '', commonDir = '', bare = 'false', topLevel = ''] = lines;
  const isBare = bare === 'true';
  return { gitDir, commonDir, bare: isBare, topLevel: isBare || !topLevel ? null : topLevel };
}

/** Resolves `rev` to a commit id, or null if it names no commit. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  if (rev.startsWith('-')) return null;
  const r = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
    { cwd, allowFailure: true },
  );
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** The full ref HEAD points at in `cwd`'s worktree (e.g. `refs/heads/main`), or null when detached. */
export async function symbolicHead(cwd: string): Promise<string | null> {
  const r = await runGit(['symbolic-ref', '--quiet', 'HEAD'], { cwd, allowFailure: true });
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** One entry of a tree listing. `mode` is git's octal string (100644, 100755, 120000, 160000). */
export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

/** Parses `git ls-tree -z` / `diff-tree`-free listings: `<mode> SP <type> SP <oid> TAB <path> NUL`. Pure. */
export function parseLsTree(out: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const rec of out.toString('utf8').split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode = '', type = '', oid = ''] = rec.slice(0, tab).split(' ');
    entries.push({ mode, type, oid, path: rec.slice(tab + 1) });
  }
  return entries;
}

/** Lists `paths` (files, recursively) in `treeish`. Missing paths are simply absent from the map. */
export async function lsTree(
  cwd: string,
  treeish: string,
  paths: readonly string[],
): Promise<Map<string, TreeEntry>> {
  const map = new Map<string, TreeEntry>();
  if (paths.length === 0) return map;
  const r = await runGit(
    ['ls-tree', '-r', '-z', '--full-tree', treeish, '--', ...paths.map(literalPathspec)],
    { cwd },
  );
  for (const e of parseLsTree(r.stdout)) map.set(e.path, e);
  return map;
}

/** A pathspec that matches exactly `path` (no globbing, no magic). */
export function literalPathspec(path: string): string {
  return `:(literal,top)${path}`;
}

/** One changed path between two trees. `status` is git's letter (A, M, D, T). */
export interface TreeChange {
  status: string;
  path: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
}

/** Parses `git diff-tree -r -z --no-renames` raw output. Pure. */
export function parseRawDiff(out: Buffer): TreeChange[] {
  const parts = out.toString('utf8').split('\0');
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) {
      i -= 1;
      continue;
    }
    const [oldMode = '', newMode = '', oldOid = '', newOid = '', status = ''] = meta
      .slice(1)
      .split(' ');
    changes.push({
      status: status.charAt(0),
      path: parts[i + 1]!,
      oldMode,
      newMode,
      oldOid,
      newOid,
    });
  }
  return changes;
}

/**
 * The submodules (gitlinks) that `changes` (from {@link diffTrees}) turn into folders of files:
 * a gitlink removed while paths below it are added. Pure.
 */
export function gitlinksTurnedIntoFolders(changes: readonly TreeChange[]): string[] {
  return changes
    .filter(
      (c) =>
        c.oldMode === '160000' &&
        c.newMode !== '160000' &&
        changes.some((o) => o.path.startsWith(`${c.path}/`)),
    )
    .map((c) => c.path);
}

/** Paths that differ between two tree-ish values (recursive, renames not detected). */
export async function diffTrees(
  cwd: string,
  from: string,
  to: string,
  paths: readonly string[] = [],
): Promise<TreeChange[]> {
  const args = ['diff-tree', '-r', '-z', '--no-renames', '--no-ext-diff', from, to];
  if (paths.length) args.push('--', ...paths.map(literalPathspec));
  const r = await runGit(args, { cwd });
  return parseRawDiff(r.stdout);
}

/** Identity hagent falls back to when the repository has none configured. */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: 'hagent',
  GIT_AUTHOR_EMAIL: 'hagent@localhost',
  GIT_COMMITTER_NAME: 'hagent',
  GIT_COMMITTER_EMAIL: 'hagent@localhost',
};

/**
 * Whether `commit` was written with hagent's fallback identity (git had no user configured):
 * the human must be told, since the commit carries no name of theirs.
 */
export async function hasFallbackIdentity(cwd: string, commit: string): Promise<boolean> {
  const who = await gitText(['log', '-1', '--no-show-signature', '--format=%ae%n%ce', commit], {
    cwd,
  });
  return who.split('\n').some((e) => e === FALLBACK_IDENTITY.GIT_AUTHOR_EMAIL);
}

/** Longest message passed as an argument (Linux caps one argument at 128 KiB, MAX_ARG_STRLEN). */
const MESSAGE_ARG_MAX = 100_000;

/**
 * Writes a commit object (`git commit-tree`), never signed, never running hooks.
 * Falls back to a `hagent` identity when git has no user configured.
 * A message that ends with a newline goes in as `-m`, which git takes byte for byte then
 * (builtin/commit-tree.c appends a newline only when one is missing), so git has all it needs at
 * exec and can finish while this process is busy; stdin would wait for this event loop to close
 * the pipe. A longer message, or one without the final newline, goes through stdin.
 * @param message the whole message (subject, blank line, body), as git should store it.
 * @returns the new commit id. @throws HagentError GIT_FAILED from git.
 */
export async function commitTree(
  cwd: string,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<string> {
  const asArgument =
    message.endsWith('\n') &&
    !message.includes('\0') &&
    Buffer.byteLength(message) <= MESSAGE_ARG_MAX;
  const args = [
    'commit-tree',
    tree,
    ...parents.flatMap((p) => ['-p', p]),
    ...(asArgument ? ['-m', message] : []),
  ];
  const input = asArgument ? undefined : message;
  const r = await runGit(args, { cwd, input, allowFailure: true });
  if (r.exitCode === 0) return r.stdout.toString('utf8').trim();
  if (/identity|empty ident|tell me who you are|user\.(name|email)/i.test(r.stderr)) {
    return gitText(args, { cwd, input, env: FALLBACK_IDENTITY });
  }
  return gitText(args, { cwd, input });
}

/**
 * Moves `ref` to `newOid` only if it still points at `oldOid` (compare-and-swap; design.md invariant 7).
 * `oldOid` of null means "must not exist yet". Keeps a reflog entry with `message`.
 * @throws HagentError TARGET_MOVED when the ref no longer holds `oldOid`.
 */
export async function updateRefCas(
  cwd: string,
  ref: string,
  newOid: string,
  oldOid: string | null,
  message: string,
): Promise<void> {
  const r = await runGit(
    ['update-ref', '--create-reflog', '-m', message, ref, newOid, oldOid ?? ''],
    { cwd, allowFailure: true },
  );
  if (r.exitCode !== 0) {
    throw new HagentError(
      'TARGET_MOVED',
      `${ref} moved while hagent was working (expected ${oldOid?.slice(0, 12) ?? 'no ref'})`,
      { ref, expected: oldOid, stderr: r.stderr.trim() },
      'someone else updated it at the same moment; run the command again',
    );
  }
}

/** One ref update of {@link updateRefsCas}: `oldOid` a commit id (compare-and-swap), null (must not exist yet) or undefined (no check). */
export interface RefUpdate {
  ref: string;
  newOid: string;
  oldOid?: string | null;
}

/**
 * Moves several refs in one `git update-ref --stdin` transaction: all move or none does
 * (compare-and-swap on each `oldOid` given; design.md invariant 7). Keeps reflog entries with `message`.
 * @throws HagentError TARGET_MOVED (naming the first ref) when any check fails.
 */
export async function updateRefsCas(
  cwd: string,
  updates: readonly RefUpdate[],
  message: string,
): Promise<void> {
  const input = updates
    .map(
      (u) =>
        `update ${u.ref}\0${u.newOid}\0${u.oldOid === undefined ? '' : (u.oldOid ?? '0'.repeat(u.newOid.length))}\0`,
    )
    .join('');
  const r = await runGit(['update-ref', '--create-reflog', '-m', message, '--stdin', '-z'], {
    cwd,
    input,
    allowFailure: true,
  });
  if (r.exitCode !== 0) {
    const first = updates[0]!;
    throw new HagentError(
      'TARGET_MOVED',
      `${first.ref} moved while hagent was working (expected ${first.oldOid?.slice(0, 12) ?? 'no ref'})`,
      { ref: first.ref, expected: first.oldOid ?? null, stderr: r.stderr.trim() },
      'someone else updated it at the same moment; run the command again',
    );
  }
}

/** Deletes `ref` if it still points at `oldOid`. */
export async function deleteRefCas(cwd: string, ref: string, oldOid: string): Promise<void> {
  await runGit(['update-ref', '-d', ref, oldOid], { cwd });
}

/** Reads a ref; null when missing. */
export async function readRef(cwd: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', ref], { cwd, allowFailure: true });
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** A worktree as `git worktree list --porcelain` tells it. `branch` is a full ref or null. */
export interface WorktreeInfo {
  path: string;
  head: string | null;
  branch: string | null;
  bare: boolean;
}

/** Parses `git worktree list --porcelain -z`. Pure. */
export function parseWorktreeList(out: Buffer): WorktreeInfo[] {
  const list: WorktreeInfo[] = [];
  let cur: WorktreeInfo | null = null;
  for (const line of out.toString('utf8').split('\0')) {
    if (line.startsWith('worktree ')) {
      cur = { path: line.slice(9), head: null, branch: null, bare: false };
      list.push(cur);
    } else if (cur && line.startsWith('HEAD ')) cur.head = line.slice(5);
    else if (cur && line.startsWith('branch ')) cur.branch = line.slice(7);
    else if (cur && line === 'bare') cur.bare = true;
  }
  return list;
}

/**
 * Lists every worktree of the repository: from git's files when `commonDir` is given and the
 * repository is the plain case ({@link listWorktreesDirect}), else `git worktree list`.
 * @throws HagentError GIT_FAILED (git path only).
 */
export async function listWorktrees(cwd: string, commonDir?: string): Promise<WorktreeInfo[]> {
  const direct = commonDir ? listWorktreesDirect(commonDir) : null;
  if (direct) return direct;
  const r = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd });
  return parseWorktreeList(r.stdout);
}

/**
 * The worktrees `git worktree list` would print, read from git's files (git-worktree(1)
 * "DETAILS"): the main worktree is the folder holding the common dir `.git`; each linked one
 * has `worktrees/<name>/gitdir` (the path of its `.git` file) and `HEAD`. Null (ask git) for a
 * bare or otherwise configured repository (`core.worktree`, includes), a common dir not named
 * `.git`, or any unexpected file. Never throws.
 */
export function listWorktreesDirect(commonDir: string): WorktreeInfo[] | null {
  try {
    if (path.basename(commonDir) !== '.git' || !plainConfig(commonDir)) return null;
    const one = (gitDir: string, at: string): WorktreeInfo | null => {
      const head = readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
      if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(head))
        return { path: at, head, branch: null, bare: false };
      const m = /^ref: (refs\/\S+)$/.exec(head);
      if (!m) return null;
      const oid = readRefsDirectSync(commonDir, [m[1]!]);
      if (!oid) return null;
      return { path: at, head: oid.get(m[1]!) ?? null, branch: m[1]!, bare: false };
    };
    const main = one(commonDir, path.dirname(commonDir));
    if (!main) return null;
    const list = [main];
    const dir = path.join(commonDir, 'worktrees');
    const names = statSync(dir, { throwIfNoEntry: false }) ? readdirSync(dir).sort() : [];
    for (const name of names) {
      const gitDir = path.join(dir, name);
      if (!statSync(gitDir).isDirectory()) continue;
      const dotGit = readFileSync(path.join(gitDir, 'gitdir'), 'utf8').trim();
      const w = one(gitDir, path.dirname(path.resolve(gitDir, dotGit)));
      if (!w) return null;
      list.push(w);
    }
    return list;
  } catch {
    return null;
  }
}

/** Tree id of a commit. */
export function treeOf(cwd: string, commit: string): Promise<string> {
  return gitText(['rev-parse', `${commit}^{tree}`], { cwd });
}

/** Commits of `first-parent` chain from `head` back to (excluding) `base`, newest first. */
export async function firstParentChain(cwd: string, base: string, head: string): Promise<string[]> {
  const out = await gitText(['rev-list', '--first-parent', `${base}..${head}`], { cwd });
  return out ? out.split('\n') : [];
}

/** Options for {@link withIndex}: runs git against a temporary index file. */
export function tempIndexEnv(indexFile: string): Pick<RunGitOptions, 'env'> {
  return { env: { GIT_INDEX_FILE: indexFile } };
}
