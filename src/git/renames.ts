/**
 * Renames between two trees, as git detects them (`git diff-tree --find-renames`), so that
 * review shows a move as one change and an approval of either side covers both.
 */
import { runGit } from './run.js';
import { literalPathspec } from './plumbing.js';

/** One rename: `from` deleted and `to` added with similar content (`similarity` in percent). */
export interface Rename {
  from: string;
  to: string;
  similarity: number;
}

/** Parses `git diff-tree -r -z --find-renames --diff-filter=R` raw output. Pure. */
export function parseRenames(out: Buffer): Rename[] {
  const parts = out.toString('utf8').split('\0');
  const renames: Rename[] = [];
  for (let i = 0; i + 2 < parts.length; i += 1) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    const status = meta.split(' ')[4] ?? '';
    if (status.startsWith('R'))
      renames.push({ from: parts[i + 1]!, to: parts[i + 2]!, similarity: Number(status.slice(1)) });
    i += status.startsWith('R') || status.startsWith('C') ? 2 : 1;
  }
  return renames;
}

/**
 * The renames from `from` to `to` (commits or trees), limited to `paths` when given.
 * @throws HagentError GIT_FAILED.
 */
export async function diffRenames(
  cwd: string,
  from: string,
  to: string,
  paths: readonly string[] = [],
): Promise<Rename[]> {
  const args = ['diff-tree', '-r', '-z', '--find-renames', '--diff-filter=R', from, to];
  if (paths.length) args.push('--', ...paths.map(literalPathspec));
  return parseRenames((await runGit(args, { cwd })).stdout);
}
