/**
 * Questions about history and refs that the commands ask git, one named function each, so no
 * module outside src/git spells out a git command line.
 */
import { gitText, runGit } from './run.js';
import { literalPathspec } from './plumbing.js';

/** Whether `ancestor` is an ancestor of (or equal to) `commit` (`git merge-base --is-ancestor`). */
export async function isAncestor(cwd: string, ancestor: string, commit: string): Promise<boolean> {
  const r = await runGit(['merge-base', '--is-ancestor', ancestor, commit], {
    cwd,
    allowFailure: true,
  });
  return r.exitCode === 0;
}

/** The best common ancestor of `a` and `b` (`git merge-base`), or null when they have none. */
export async function mergeBase(cwd: string, a: string, b: string): Promise<string | null> {
  const r = await runGit(['merge-base', a, b], { cwd, allowFailure: true });
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() || null : null;
}

/** How many commits `range` (e.g. `a..b`) holds (`git rev-list --count`). @throws GIT_FAILED. */
export async function countCommits(cwd: string, range: string): Promise<number> {
  return Number(await gitText(['rev-list', '--count', range], { cwd }));
}

/**
 * The newest commit of `range` whose message holds `text` as a fixed string, or null (none, or
 * git refused the range). `git log -1 --fixed-strings --grep`.
 */
export async function newestCommitMentioning(
  cwd: string,
  range: string,
  text: string,
): Promise<string | null> {
  const r = await runGit(['log', '-1', '--format=%H', '--fixed-strings', `--grep=${text}`, range], {
    cwd,
    allowFailure: true,
  });
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() || null : null;
}

/**
 * `git log -z --first-parent --no-renames --name-status --format=<format> <range…>`: the raw
 * output, for a caller that parses its own format. @throws HagentError GIT_FAILED.
 */
export async function firstParentLogWithNames(
  cwd: string,
  format: string,
  range: readonly string[],
): Promise<Buffer> {
  const args = ['log', '-z', '--first-parent', `--format=${format}`, '--name-status'];
  return (await runGit([...args, '--no-renames', ...range], { cwd })).stdout;
}

/** `git diff --numstat -z --no-renames` of two trees or commits: the raw output. */
export async function diffNumstat(cwd: string, from: string, to: string): Promise<Buffer> {
  const args = [
    'diff',
    '--numstat',
    '-z',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    from,
    to,
  ];
  return (await runGit(args, { cwd })).stdout;
}

/** The patch text between two trees or commits, as `git diff` shows it (no external tools). */
export async function diffText(
  cwd: string,
  from: string,
  to: string,
  color: boolean,
): Promise<string> {
  const args = ['diff', '--no-ext-diff', '--no-textconv', '--no-renames'];
  const r = await runGit([...args, `--color=${color ? 'always' : 'never'}`, from, to], { cwd });
  return r.stdout.toString('utf8');
}

/** The last `n` commits of HEAD, one line each (`git log --oneline`). */
export async function onelineLog(cwd: string, n: number): Promise<string> {
  return (await runGit(['log', '--oneline', '-n', String(n)], { cwd })).stdout.toString('utf8');
}

/** Full names of the refs under `prefix` (`git for-each-ref`), in git's order. */
export async function refNames(cwd: string, prefix: string): Promise<string[]> {
  const out = await gitText(['for-each-ref', '--format=%(refname)', prefix], { cwd });
  return out.split('\n').filter(Boolean);
}

/**
 * Every ref under the `prefixes` with its object id and, when it names a commit, the
 * commit's committer time in epoch seconds (`git for-each-ref`); null for another object.
 */
export async function refsWithDates(
  cwd: string,
  prefixes: readonly string[],
): Promise<{ ref: string; oid: string; committed: number | null }[]> {
  const out = await gitText(
    ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(committerdate:unix)', ...prefixes],
    { cwd },
  );
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref, oid, at] = line.split('\0');
      const committed = at ? Number(at) : NaN;
      return { ref: ref!, oid: oid!, committed: Number.isFinite(committed) ? committed : null };
    });
}

/** Ref name → object id of those of `refs` that exist (`git for-each-ref`). */
export async function refOids(cwd: string, refs: readonly string[]): Promise<Map<string, string>> {
  const out = await gitText(['for-each-ref', '--format=%(refname) %(objectname)', ...refs], {
    cwd,
  });
  const found = new Map<string, string>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [ref, oid] = line.split(' ');
    found.set(ref!, oid!);
  }
  return found;
}

/**
 * `git rev-parse` of several revisions at once: one line per revision (`--symbolic-full-name`
 * applies to the revisions after it). Allowed to fail: the caller reads `ok` and the lines.
 */
export async function revParseLines(
  cwd: string,
  args: readonly string[],
  noOptionalLocks = false,
): Promise<{ ok: boolean; lines: string[] }> {
  const r = await runGit(['rev-parse', ...args], { cwd, allowFailure: true, noOptionalLocks });
  return { ok: r.exitCode === 0, lines: r.stdout.toString('utf8').split('\n') };
}

/**
 * Creates `ref` at `oid` with a reflog entry `message`, only if it does not exist yet
 * (`git update-ref <ref> <oid> ""`). @returns whether it was created.
 */
export async function createRef(
  cwd: string,
  ref: string,
  oid: string,
  message: string,
): Promise<boolean> {
  const r = await runGit(['update-ref', '--create-reflog', '-m', message, ref, oid, ''], {
    cwd,
    allowFailure: true,
  });
  return r.exitCode === 0;
}

/**
 * Deletes `ref`, only while it points at `oldOid` when given (compare-and-swap).
 * @returns whether it was deleted.
 */
export async function deleteRef(cwd: string, ref: string, oldOid?: string): Promise<boolean> {
  const r = await runGit(['update-ref', '-d', ref, ...(oldOid ? [oldOid] : [])], {
    cwd,
    allowFailure: true,
  });
  return r.exitCode === 0;
}

/**
 * Subjects of the first-parent commits of `range`, oldest first, of those touching `paths` when
 * given (`git log --first-parent --format=%s`). @throws HagentError GIT_FAILED.
 */
export async function firstParentSubjects(
  cwd: string,
  range: string,
  paths: readonly string[] | null,
): Promise<string[]> {
  const spec = paths ? ['--', ...paths.map(literalPathspec)] : [];
  const r = await runGit(['log', '--first-parent', '--format=%s', range, ...spec], { cwd });
  return r.stdout.toString('utf8').split('\n').filter(Boolean).reverse();
}

/** The absolute git dir of the worktree at `cwd` (`rev-parse --git-dir`). @throws GIT_FAILED. */
export async function absoluteGitDir(cwd: string): Promise<string> {
  const r = await runGit(['rev-parse', '--path-format=absolute', '--git-dir'], { cwd });
  return r.stdout.toString('utf8').trim();
}

/** The abbreviated id of `rev` (`git rev-parse --short`), as git labels it. @throws GIT_FAILED. */
export async function shortId(cwd: string, rev: string): Promise<string> {
  return gitText(['rev-parse', '--short', rev], { cwd });
}

/** The id `rev` names (`git rev-parse`, e.g. `c^1`). @throws HagentError GIT_FAILED. */
export async function revParse(cwd: string, rev: string): Promise<string> {
  return gitText(['rev-parse', rev], { cwd });
}

/** The tree ids of `revs`, in order (`git rev-parse REV^{tree}…`). @throws GIT_FAILED. */
export async function treeIdsOf(cwd: string, revs: readonly string[]): Promise<string[]> {
  const out = await gitText(['rev-parse', ...revs.map((r) => `${r}^{tree}`)], { cwd });
  return out.split('\n');
}

/** The newest merge commit of `range`, or '' when it has none (`git rev-list --merges -n1`). */
export async function newestMerge(cwd: string, range: string): Promise<string> {
  return gitText(['rev-list', '--merges', '-n1', range], { cwd });
}

/**
 * The first-parent commits of `head` not reachable from any of `exclude`, oldest first
 * (`git rev-list --reverse --first-parent HEAD ^X…`). @throws HagentError GIT_FAILED.
 */
export async function firstParentsOldestFirst(
  cwd: string,
  range: string,
  exclude: readonly string[],
): Promise<string[]> {
  const out = await gitText(
    ['rev-list', '--reverse', '--first-parent', range, ...exclude.map((e) => `^${e}`)],
    { cwd },
  );
  return out.split('\n').filter(Boolean);
}

/**
 * The first-parent chain of `ref` back to (excluding) `base`, newest first, each with its parents:
 * `[commit, parent1, parent2?]` (`git rev-list --first-parent --parents`). @throws GIT_FAILED.
 */
export async function firstParentChainWithParents(
  cwd: string,
  ref: string,
  base: string,
): Promise<string[][]> {
  const out = await gitText(['rev-list', '--first-parent', '--parents', ref, `^${base}`], { cwd });
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '));
}

/** One line (`id subject`) per commit of `range` (`git rev-list --oneline`). @throws GIT_FAILED. */
export async function onelineCommits(cwd: string, range: string): Promise<string[]> {
  return (await gitText(['rev-list', '--oneline', range], { cwd })).split('\n').filter(Boolean);
}

/** The whole message of `commit` (`git log -1 --format=%B`). @throws HagentError GIT_FAILED. */
export async function commitMessageOf(cwd: string, commit: string): Promise<string> {
  return gitText(['log', '-1', '--format=%B', commit], { cwd });
}

/** The raw text of commit object `oid` (`git cat-file commit`); '' when git cannot read it. */
export async function commitText(cwd: string, oid: string): Promise<string> {
  return gitText(['cat-file', 'commit', oid], { cwd, allowFailure: true });
}

/** Remote-tracking branches that contain `commit` (`git for-each-ref --contains`). */
export async function remoteBranchesContaining(cwd: string, commit: string): Promise<string[]> {
  const out = await gitText(
    ['for-each-ref', '--format=%(refname)', '--contains', commit, 'refs/remotes/'],
    { cwd },
  );
  return out.split('\n').filter(Boolean);
}

/**
 * Writes the index file `indexFile` as a tree, objects it names need not exist
 * (`git write-tree --missing-ok`). @returns the tree id. @throws HagentError GIT_FAILED.
 */
export async function writeTreeOfIndex(cwd: string, indexFile: string): Promise<string> {
  return gitText(['write-tree', '--missing-ok'], { cwd, env: { GIT_INDEX_FILE: indexFile } });
}

/**
 * `git diff -U0` between two trees or commits (no renames, no external diff or textconv, no
 * colour), optionally limited to `paths`: the raw patch text, whose hunk headers
 * (`@@ -a,b +c,d @@`) say which lines changed. Binary files show no hunk.
 * @throws HagentError GIT_FAILED.
 */
export async function diffZeroContext(
  cwd: string,
  from: string,
  to: string,
  paths: readonly string[] = [],
): Promise<string> {
  const args = [
    '-c',
    'core.quotePath=false',
    'diff',
    '-U0',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    from,
    to,
  ];
  if (paths.length) args.push('--', ...paths.map(literalPathspec));
  return (await runGit(args, { cwd })).stdout.toString('utf8');
}

/** Commits of `range` (`A..B`) touching any of `paths`, newest first (`git log --format=%H`). */
export async function commitsTouching(
  cwd: string,
  range: string,
  paths: readonly string[],
): Promise<string[]> {
  const out = await gitText(['log', '--format=%H', range, '--', ...paths.map(literalPathspec)], {
    cwd,
  });
  return out.split('\n').filter(Boolean);
}
