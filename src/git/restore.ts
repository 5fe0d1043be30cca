/**
 * Putting chosen paths of a checkout, files and index entries both, to their state in a
 * commit (`git restore --staged --worktree`), for land --undo: git writes each file in its
 * checked-out form (filters, end of line) and removes the paths the commit lacks.
 */
import { literalPathspec } from './plumbing.js';
import { runGit } from './run.js';

/**
 * Gives `paths` of the checkout `cwd` their state in `source` (files and index entries).
 * @throws HagentError GIT_FAILED from git.
 */
export async function restorePathsFrom(
  cwd: string,
  source: string,
  paths: readonly string[],
): Promise<void> {
  if (paths.length === 0) return;
  await runGit(
    [
      'restore',
      `--source=${source}`,
      '--staged',
      '--worktree',
      '--',
      ...paths.map(literalPathspec),
    ],
    { cwd },
  );
}

/**
 * Gives the index entries of `paths` in the checkout `cwd` their state in `source`, files
 * untouched, for each path whose entry still is the one `staged` (a commit) holds: what a land
 * put in the index, and nothing the user staged since (that stays, as their work).
 * @returns the paths reset. @throws HagentError GIT_FAILED from git.
 */
export async function unstagePathsHolding(
  cwd: string,
  staged: string,
  source: string,
  paths: readonly string[],
): Promise<string[]> {
  if (paths.length === 0) return [];
  const specs = paths.map(literalPathspec);
  const [index, tree] = await Promise.all([
    runGit(['ls-files', '-s', '-z', '--', ...specs], { cwd }),
    runGit(['ls-tree', '-z', staged, '--', ...specs], { cwd }),
  ]);
  const entries = (out: Buffer, stageField: boolean) => {
    const m = new Map<string, string>();
    for (const rec of out.toString('utf8').split('\0')) {
      const tab = rec.indexOf('\t');
      if (tab < 0) continue;
      const f = rec.slice(0, tab).split(' ');
      // ls-files -s: mode oid stage; ls-tree: mode type oid.
      m.set(rec.slice(tab + 1), stageField ? `${f[0]} ${f[1]} ${f[2]}` : `${f[0]} ${f[2]} 0`);
    }
    return m;
  };
  const inIndex = entries(index.stdout, true);
  const inStaged = entries(tree.stdout, false);
  const reset = paths.filter((p) => (inIndex.get(p) ?? null) === (inStaged.get(p) ?? null));
  if (reset.length === 0) return [];
  await runGit(['restore', `--source=${source}`, '--staged', '--', ...reset.map(literalPathspec)], {
    cwd,
    detached: true,
  });
  return reset;
}
