/**
 * Reads many refs, or many diffs, in one git process each: what an overview of every session
 * (`hagent status`) needs without a process per session.
 */
import { runGit } from './run.js';

/** One ref of {@link listRefs}: its name, its object, and for a commit its parents and message. */
export interface ListedRef {
  ref: string;
  oid: string;
  /** The commit's parents, in order; empty for a root commit or another kind of object. */
  parents: string[];
  /** The commit's whole message (subject and body); '' for another kind of object. */
  message: string;
}

/** Ends each record of {@link listRefs}' format: no ref name, id or message holds byte 0x01. */
const RECORD_END = '\u0001\u0000\n';

/**
 * Every ref under `prefixes` (`refs/heads/`, `refs/hagent/`, …) with its object id and, for a
 * commit, its parents and message, from one `git for-each-ref`.
 * @throws HagentError GIT_FAILED.
 */
export async function listRefs(cwd: string, prefixes: readonly string[]): Promise<ListedRef[]> {
  const r = await runGit(
    [
      'for-each-ref',
      '--format=%(refname)%00%(objectname)%00%(parent)%00%(contents)%01%00',
      ...prefixes,
    ],
    { cwd },
  );
  return parseRefListing(r.stdout.toString('utf8'));
}

/** Parses {@link listRefs}' output: records ended by 0x01 0x00 and a newline, fields by 0x00. Pure. */
export function parseRefListing(text: string): ListedRef[] {
  const out: ListedRef[] = [];
  for (const record of text.split(RECORD_END)) {
    if (!record) continue;
    const [ref, oid, parents, ...rest] = record.split('\u0000');
    if (!ref || !oid) continue;
    out.push({
      ref,
      oid,
      parents: (parents ?? '').split(' ').filter(Boolean),
      message: rest.join('\u0000'),
    });
  }
  return out;
}

/** Two commits to compare: the paths that differ from `from` to `to`. */
export interface CommitPair {
  from: string;
  to: string;
}

/**
 * The paths that differ between each pair of commits (recursive, renames not detected), from one
 * `git diff-tree --stdin --always`: one list per pair, in the order given.
 * @throws HagentError GIT_FAILED (an id that is not a commit, among others).
 */
export async function changedPathsOfPairs(
  cwd: string,
  pairs: readonly CommitPair[],
): Promise<string[][]> {
  if (pairs.length === 0) return [];
  const input = pairs.map((p) => `${p.to} ${p.from}\n`).join('');
  const r = await runGit(
    ['diff-tree', '--stdin', '--always', '-r', '-z', '--name-only', '--no-renames'],
    { cwd, input },
  );
  return parseDiffTreeStdin(
    r.stdout.toString('utf8'),
    pairs.map((p) => p.to),
  );
}

/**
 * Parses `diff-tree --stdin --always -z --name-only` output for input lines whose first ids are
 * `heads`, in order: each pair's output is its commit id, then its paths, all NUL-ended. A path
 * spelled exactly as the next pair's commit id would be taken for it (never seen in practice).
 * Pure.
 */
export function parseDiffTreeStdin(text: string, heads: readonly string[]): string[][] {
  const tokens = text.split('\u0000');
  const out: string[][] = heads.map(() => []);
  let i = -1;
  for (const token of tokens) {
    if (!token) continue;
    if (i + 1 < heads.length && token === heads[i + 1]) {
      i++;
      continue;
    }
    if (i >= 0) out[i]!.push(token);
  }
  return out;
}
