/**
 * The `read` tool: a file of the session worktree as the agent should see it — its lines
 * numbered, and the blob id of the bytes on disk, which is the token later writes compare
 * against (`expected_blob`, `base_blobs`).
 */
import { HagentError } from '../errors.js';
import { blobId, entriesAt, formatOfOid } from '../git/index.js';
import { readEntry } from '../fsx/index.js';
import { splitText } from '../patch/index.js';
import { readSessionRefs } from '../session/index.js';
import { readMergeState } from '../update/index.js';
import type { SessionBinding } from './binding.js';
import { resolveToolPath } from './paths.js';

/** Lines returned when no `limit` is given. */
export const DEFAULT_READ_LINES = 2000;

/**
 * A line longer than this is shown cut, with its length (as Claude Code's own Read does): one
 * minified line must not flood the agent's context. Editing it needs a shorter `old_string`.
 */
export const MAX_LINE_CHARS = 2000;

/** Result of {@link readFile}; the `read` tool's output (schemas.ts `ReadOutput`). */
export interface ReadResult {
  ok: true;
  session: string;
  path: string;
  head: string;
  blob: string;
  headBlob: string | null;
  outsideEdit: boolean;
  /** True while a merge is in progress and this file is conflicted: its markers are its current content, not an outside edit. */
  conflicted?: boolean;
  totalLines: number;
  startLine: number;
  endLine: number;
  truncated: boolean;
  /** How many of the shown lines were cut at {@link MAX_LINE_CHARS}. */
  cutLines?: number;
  /** A main-checkout path mapped to the session's copy (paths.ts). */
  warnings?: string[];
  text: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads `rawPath` from the session worktree: the path is resolved as every tool's is (paths.ts:
 * relative, or absolute inside the worktree or main checkout) and checked against the denied paths (as a patch's are; the suffix list is about writing and does not apply), every
 * component is lstat'ed (a symlink is refused), and the head's blob at the path is looked up
 * in-process when loose, else through the warm batch process. Lines are numbered from 1, each
 * `"<n>\t<text>"` with its terminator dropped. Remembers the blob as read by this server.
 * @param offset first line (1-based); @param limit number of lines.
 * @throws HagentError PATH_DENIED, FILE_NOT_FOUND, UNSUPPORTED_FILE (a folder, binary, not
 *   UTF-8), SESSION_NOT_FOUND.
 */
export async function readFile(
  binding: SessionBinding,
  rawPath: string,
  offset = 1,
  limit = DEFAULT_READ_LINES,
): Promise<ReadResult> {
  const [session, config] = await Promise.all([binding.session(), binding.config()]);
  const warnings: string[] = [];
  const rel = await resolveToolPath(
    rawPath,
    session.worktree,
    config.root,
    { ...config.policy, suffixes: { mode: 'deny', list: [] } },
    warnings,
  );
  // The file, and the head's blob and merge state at the path, looked up at once.
  const inHeadAndMerge = readSessionRefs(binding.ctx, session).then(({ head }) =>
    Promise.all([
      head,
      binding.headTrees(head, rel, session.worktree),
      readMergeState(session.worktree, head),
    ]),
  );
  inHeadAndMerge.catch(() => undefined); // awaited below, after the file's checks
  const entry = await readEntry(session.worktree, rel);
  if (entry.kind === 'symlink')
    throw new HagentError(
      'PATH_DENIED',
      `${rel}: ${entry.component} is a symbolic link`,
      { path: rel, component: entry.component },
      'hagent never reads or writes through a symlink; name the real file inside the worktree',
    );
  if (entry.kind === 'missing')
    throw new HagentError(
      'FILE_NOT_FOUND',
      `${rel} does not exist in the session worktree`,
      { path: rel },
      'check the path (status and review list the changed files); create it with write',
    );
  if (entry.kind !== 'file')
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `${rel} is ${entry.kind === 'directory' ? 'a folder' : 'not a regular file'}`,
      { path: rel },
      'name a file',
    );
  if (entry.bytes.includes(0))
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `${rel} is a binary file (it holds NUL bytes)`,
      { path: rel },
      'hagent reads and writes UTF-8 text files only',
    );
  let text: string;
  try {
    text = decoder.decode(entry.bytes);
  } catch {
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `${rel} is not valid UTF-8`,
      { path: rel },
      'hagent reads and writes UTF-8 text files only',
    );
  }
  const [head, trees, merge] = await inHeadAndMerge;
  const inHead = entriesAt(trees, [rel]).get(rel);
  const blob = blobId(entry.bytes, formatOfOid(head));
  const conflicted = merge?.conflicted.has(rel) ?? false;
  binding.known.set(rel, blob);
  const lines = splitText(text).texts;
  const start = Math.min(offset, lines.length + 1);
  const end = Math.min(lines.length, start + limit - 1);
  const shown: string[] = [];
  let cutLines = 0;
  for (let n = start; n <= end; n++) {
    const line = lines[n - 1]!;
    if (line.length <= MAX_LINE_CHARS) shown.push(`${n}\t${line}`);
    else {
      cutLines++;
      shown.push(
        `${n}\t${line.slice(0, MAX_LINE_CHARS)}… [line cut: ${line.length} characters in all]`,
      );
    }
  }
  return {
    ok: true,
    session: session.id,
    path: rel,
    head,
    blob,
    headBlob: inHead?.type === 'blob' ? inHead.oid : null,
    outsideEdit: inHead?.oid !== blob && !conflicted,
    ...(conflicted ? { conflicted } : {}),
    totalLines: lines.length,
    startLine: start,
    endLine: end,
    truncated: start > 1 || end < lines.length,
    ...(cutLines ? { cutLines } : {}),
    ...(warnings.length ? { warnings } : {}),
    text: shown.join('\n'),
  };
}
