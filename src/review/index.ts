/**
 * review: what a session changed against its base — stat, unified diff, applied patches — and
 * approval of its current head (all paths or some).
 */
import { HagentError } from '../errors.js';
import { diffTrees, readNote, runGit } from '../git/index.js';
import { sessionHead, writeSession, type Approval, type RepoContext, type Session } from '../session/index.js';

/** One file of a review stat. `added`/`removed` are line counts; null for binary files. */
export interface ReviewFile {
  path: string;
  status: string;
  added: number | null;
  removed: number | null;
}

/** One applied patch of a session (a commit on its branch), newest first. `time` is ISO 8601. */
export interface ReviewPatch {
  commit: string;
  time: string;
  subject: string;
  files: { path: string; status: string }[];
  patch?: string;
}

/** JSON of `hagent review` (issue 2 §4). */
export interface ReviewResult {
  ok: true;
  session: string;
  base: string;
  head: string;
  target: string | null;
  files: ReviewFile[];
  patches: ReviewPatch[];
  diff?: string;
  approval: Approval | null;
  approvedNow: boolean;
}

/** Options of {@link reviewSession}. `approve`: true = every path; a list = those paths. */
export interface ReviewOptions {
  diff?: boolean;
  color?: boolean;
  withPatchText?: boolean;
  approve?: true | string[];
}

/** Parses `git diff --numstat -z` (no renames). Pure. */
export function parseNumstat(out: Buffer): Map<string, { added: number | null; removed: number | null }> {
  const map = new Map<string, { added: number | null; removed: number | null }>();
  for (const rec of out.toString('utf8').split('\0')) {
    if (!rec) continue;
    const [a = '-', r = '-', ...rest] = rec.split('\t');
    map.set(rest.join('\t'), { added: a === '-' ? null : Number(a), removed: r === '-' ? null : Number(r) });
  }
  return map;
}

/** Parses `git log -z --format=%x01%H%x00%cI%x00%s --name-status`. Pure. */
export function parseLogNameStatus(out: Buffer): ReviewPatch[] {
  const patches: ReviewPatch[] = [];
  for (const rec of out.toString('utf8').split('\x01')) {
    if (!rec) continue;
    const fields = rec.split('\0');
    const [commit = '', time = '', subject = '', ...rest] = fields;
    const files: { path: string; status: string }[] = [];
    for (let i = 0; i + 1 < rest.length; i += 2) {
      const status = rest[i]!.trim();
      if (!status) { i -= 1; continue; }
      files.push({ status: status.charAt(0), path: rest[i + 1]! });
    }
    patches.push({ commit, time, subject, files });
  }
  return patches;
}

/**
 * Reviews a session: per-file stat against the base, the applied patches (commits, newest
 * first, with the patch text from the `refs/notes/hagent` note when asked), the unified diff,
 * and records approval of the current head when asked.
 * @throws HagentError USAGE when an approved path is not among the session's changes.
 */
export async function reviewSession(ctx: RepoContext, session: Session, options: ReviewOptions = {}): Promise<ReviewResult> {
  const head = await sessionHead(ctx, session);
  const cwd = ctx.cwd;
  const [changes, numstat, log, diff] = await Promise.all([
    diffTrees(cwd, session.base, head),
    runGit(['diff', '--numstat', '-z', '--no-renames', '--no-ext-diff', session.base, head], { cwd }),
    runGit(['log', '-z', '--first-parent', '--format=%x01%H%x00%cI%x00%s', '--name-status', '--no-renames', `${session.base}..${head}`], { cwd }),
    options.diff ? runGit(['diff', '--no-ext-diff', '--no-textconv', '--no-renames', `--color=${options.color ? 'always' : 'never'}`, session.base, head], { cwd }) : Promise.resolve(null),
  ]);
  const stats = parseNumstat(numstat.stdout);
  const files = changes.map((c) => ({ path: c.path, status: c.status, ...(stats.get(c.path) ?? { added: null, removed: null }) }));
  const patches = parseLogNameStatus(log.stdout);
  if (options.withPatchText) {
    await Promise.all(patches.map(async (p) => {
      const note = await readNote(cwd, p.commit);
      if (note !== null) p.patch = note;
    }));
  }
  let approval = session.approval;
  let approvedNow = false;
  if (options.approve !== undefined) {
    if (files.length === 0) throw new HagentError('NOTHING_TO_LAND', `session ${session.id} has no changes to approve`, { session: session.id }, 'apply a patch first');
    let paths: string[] | null = null;
    if (options.approve !== true) {
      const known = new Set(files.map((f) => f.path));
      const unknown = options.approve.filter((p) => !known.has(p));
      if (unknown.length) throw new HagentError('USAGE', `not changed by this session: ${unknown.join(', ')}`, { files: unknown }, `approve paths among: ${[...known].join(', ')}`);
      paths = [...new Set(options.approve)].sort();
    }
    approval = { head, paths, at: new Date().toISOString() };
    await writeSession(ctx.commonDir, { ...session, approval });
    approvedNow = true;
  }
  const result: ReviewResult = { ok: true, session: session.id, base: session.base, head, target: session.target, files, patches, approval, approvedNow };
  if (diff) result.diff = diff.stdout.toString('utf8');
  return result;
}
