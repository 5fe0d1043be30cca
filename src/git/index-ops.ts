/**
 * Index verbs the commands use (stage, reset paths, read unmerged and stage-0 entries, list what
 * differs), one named function each. Every step that writes the index runs git in a process
 * group of its own (`detached`, git/run.ts), like every index write of a transaction.
 */
import { runGit } from './run.js';
import { literalPathspec, parseRawDiff, type TreeChange } from './plumbing.js';
import type { ConflictStage } from './merge.js';

const nul = (b: Buffer) => b.toString('utf8').split('\0').filter(Boolean);

/** Whether the index entry of `rel` has git's skip-worktree bit (`ls-files -t`); false on error. */
export async function hasSkipWorktreeBit(cwd: string, rel: string): Promise<boolean> {
  const r = await runGit(['ls-files', '-t', '-z', '--', literalPathspec(rel)], {
    cwd,
    allowFailure: true,
  });
  return (
    r.exitCode === 0 &&
    r.stdout
      .toString('utf8')
      .split('\0')
      .some((rec) => rec.startsWith('S '))
  );
}

/** What the index holds against HEAD (`diff-index --cached --no-renames`). @throws GIT_FAILED. */
export async function stagedChanges(cwd: string): Promise<TreeChange[]> {
  const r = await runGit(['diff-index', '--cached', '-z', '--no-renames', 'HEAD'], { cwd });
  return parseRawDiff(r.stdout);
}

/**
 * Loads `treeish` into the index without touching files (`git read-tree`), detached: the form a
 * transaction's revert step uses. @throws GIT_FAILED.
 */
export async function readTreeIntoIndexDetached(cwd: string, treeish: string): Promise<void> {
  await runGit(['read-tree', treeish], { cwd, detached: true });
}

/** Index entries of `paths` back to `treeish`'s (`git reset -q <treeish> --`), detached. */
export async function resetPathsTo(
  cwd: string,
  treeish: string,
  paths: readonly string[],
): Promise<void> {
  await runGit(['reset', '-q', treeish, '--', ...paths.map(literalPathspec)], {
    cwd,
    detached: true,
  });
}

/** Paths with unmerged index entries (`diff --name-only --diff-filter=U`). @throws GIT_FAILED. */
export async function unmergedPaths(cwd: string): Promise<string[]> {
  return nul((await runGit(['diff', '--name-only', '-z', '--diff-filter=U'], { cwd })).stdout);
}

/** Those of `paths` whose file differs from its index entry (`diff --name-only`). GIT_FAILED. */
export async function pathsDifferingFromIndex(
  cwd: string,
  paths: readonly string[],
): Promise<string[]> {
  const r = await runGit(['diff', '--name-only', '-z', '--', ...paths.map(literalPathspec)], {
    cwd,
  });
  return nul(r.stdout);
}

/** The unmerged entries of the index (`ls-files -u`), stages 1–3. @throws GIT_FAILED. */
export async function unmergedEntries(cwd: string): Promise<ConflictStage[]> {
  const listed = await runGit(['ls-files', '-u', '-z'], { cwd });
  const stages: ConflictStage[] = [];
  for (const rec of listed.stdout.toString('utf8').split('\0')) {
    const m = /^(\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(rec);
    if (m) stages.push({ mode: m[1]!, oid: m[2]!, stage: Number(m[3]), path: m[4]! });
  }
  return stages;
}

/** Stage-0 index entries of `paths` (`ls-files -s`): path → `<mode> <oid>`. @throws GIT_FAILED. */
export async function stageZeroEntries(
  cwd: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const r = await runGit(['ls-files', '-s', '-z', '--', ...paths.map(literalPathspec)], { cwd });
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    const m = /^(\d+) ([0-9a-f]+) 0\t(.*)$/s.exec(rec);
    if (m) out.set(m[3]!, `${m[1]} ${m[2]}`);
  }
  return out;
}

/** Feeds `input` (NUL-terminated records) to `update-index -z --index-info`, detached. */
export async function writeIndexInfo(cwd: string, input: string): Promise<void> {
  await runGit(['update-index', '-z', '--index-info'], { cwd, input, detached: true });
}
