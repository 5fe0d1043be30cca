/**
 * `hagent review`: stat, diff, patches and approval of a session.
 */
import { refuseForAgent } from '../agents/marker.js';
import { reviewSession } from '../review/index.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { openRepo, resolveSession } from '../session/index.js';
import type { RepoContext } from '../session/context.js';
import { cappedLines, palette, printJson, printLines, short, type Io } from '../output/index.js';
import { driftLines, type CommonArgs } from './shared.js';
import { HagentError, isHagentError } from '../errors.js';

export async function runReview(
  argv: CommonArgs & {
    stat?: boolean;
    patches?: boolean;
    approve?: string[] | boolean;
    _?: (string | number)[];
  },
  io: Io,
): Promise<number> {
  if (argv.approve !== undefined && argv.approve !== false)
    refuseForAgent(io.env, 'hagent review --approve');
  // Paths after `--` (one may start with a dash: `--approve -- -x`) arrive as positionals.
  const afterDashes = (argv._ ?? []).slice(1).map(String);
  if (afterDashes.length && (argv.approve === undefined || argv.approve === false)) {
    throw new HagentError(
      'USAGE',
      `paths given without --approve: ${afterDashes.join(' ')}`,
      { paths: afterDashes },
      `approve them with: hagent review --approve -- ${afterDashes.join(' ')}`,
    );
  }
  const paths = [...(Array.isArray(argv.approve) ? argv.approve : []), ...afterDashes];
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.session);
  const approve =
    argv.approve === undefined || argv.approve === false
      ? undefined
      : paths.length
        ? paths
        : (true as const);
  const wantDiff = !argv.stat && !argv.patches;
  const r = await reviewSession(ctx, session, {
    diff: argv.json ? !argv.stat && !argv.patches : wantDiff,
    color: io.color,
    withPatchText: !!argv.patches,
    ...(approve ? { approve } : {}),
  }).catch(async (e: unknown) => {
    throw await approveTarget(ctx, session.id, session.worktree, e);
  });
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  const since =
    r.since === 'base'
      ? `base ${short(r.base)}`
      : r.since === 'landed'
        ? 'what has landed'
        : 'the target commit it merged';
  const lines: string[] = [
    p.bold(
      `Session ${r.session}: ${r.patches.length} patch${r.patches.length === 1 ? '' : 'es'}, ${r.files.length} file${r.files.length === 1 ? '' : 's'} to land (since ${since} → head ${short(r.head)})`,
    ),
  ];
  if (r.drift) lines.push(...driftLines(r.drift, p));
  lines.push(
    ...cappedLines(
      r.files,
      (f) =>
        `  ${f.status} ${f.path.padEnd(40)} ${f.added === null ? 'binary' : `${p.green(`+${f.added}`)} ${p.red(`-${f.removed}`)}`}`,
    ),
  );
  if (argv.patches || !argv.stat) {
    lines.push('', p.bold('Applied patches (newest first):'));
    for (const pt of r.patches) {
      lines.push(
        `  ${p.yellow(short(pt.commit))} ${p.dim(pt.time)} ${pt.subject}${pt.outside ? p.dim(' (outside hagent)') : ''}`,
      );
      if (argv.patches && pt.patch)
        lines.push(
          ...pt.patch
            .trimEnd()
            .split('\n')
            .map((l) => `      ${l}`),
        );
    }
  }
  if (r.diff) lines.push('', r.diff.trimEnd());
  const a = r.approval;
  if (a && a.head === r.head)
    lines.push(
      '',
      p.cyan(
        `${r.approvedNow ? 'Approved' : 'Approved earlier'}: ${a.paths ? a.paths.join(', ') : 'all files'} at ${short(a.head)}. Land with: hagent land`,
      ),
    );
  else if (a)
    lines.push(
      '',
      p.yellow(`An approval exists for ${short(a.head)}, but the head moved since: approve again.`),
    );
  else lines.push('', p.dim('Not approved yet: hagent review --approve [PATH…]'));
  printLines(io, lines);
  return 0;
}

/** A session id as a word (what `--approve ID` carries when its user meant `--session ID`). */
const ID_LIKE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * `--approve` takes paths, so `review --approve fix-login` names a path of the current session.
 * When such a word is not among the changes, is no file of the worktree and has no `/`, its user
 * (nor a dot: a file name) most likely meant a session: an unknown one is refused as any unknown session is
 * (SESSION_NOT_FOUND, exit 1, hint `hagent session list`); a known one gets the command that
 * approves it. Any other error comes back unchanged.
 */
async function approveTarget(
  ctx: RepoContext,
  current: string,
  worktree: string,
  e: unknown,
): Promise<unknown> {
  if (!isHagentError(e) || e.code !== 'USAGE' || !Array.isArray(e.details.files)) return e;
  const words = (e.details.files as string[]).filter(
    (f) => ID_LIKE.test(f) && !existsSync(path.join(worktree, f)),
  );
  if (words.length !== 1 || e.details.files.length !== 1) return e;
  const id = words[0]!;
  if (id === current)
    return new HagentError(
      'USAGE',
      `${id} is this session's name, not one of its paths: --approve takes paths`,
      { session: id, files: [id] },
      `approve the whole session with: hagent review --session ${id} --approve`,
    );
  const other = await resolveSession(ctx, id).catch(() => null);
  if (other)
    return new HagentError(
      'USAGE',
      `${id} is a session, not a path of session ${current}: --approve takes paths`,
      { session: id, files: [id] },
      `approve that session with: hagent review --session ${id} --approve`,
    );
  return new HagentError(
    'SESSION_NOT_FOUND',
    `no session named ${JSON.stringify(id)}, and no path ${id} among the changes to land`,
    { session: id, files: [id] },
    `hagent session list shows the sessions of this repository; approve one with: hagent review --session ID --approve (${e.hint ?? 'or approve paths among the changes to land'})`,
  );
}
