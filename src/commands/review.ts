/**
 * `hagent review`: stat, diff, patches and approval of a session.
 */
import { AGENT_MARKER, refuseForAgent } from '../agents/marker.js';
import { matchChangedPaths, reviewSession, type ReviewResult } from '../review/index.js';
import { reviewedHead } from '../review/approve.js';
import { recordSeen } from '../review/seen.js';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { approveCommand, openRepo, resolveSession } from '../session/index.js';
import type { RepoContext } from '../session/context.js';
import {
  cappedLines,
  cappedList,
  palette,
  printJson,
  printLines,
  short,
  type Io,
  type Palette,
} from '../output/index.js';
import { driftLines, radarJson, radarLines, type CommonArgs } from './shared.js';
import { radarOf } from '../radar/index.js';
import { HagentError, isHagentError } from '../errors.js';

export async function runReview(
  argv: CommonArgs & {
    stat?: boolean;
    patches?: boolean;
    approve?: string[] | boolean;
    head?: string;
    _?: (string | number)[];
  },
  io: Io,
): Promise<number> {
  if (argv.approve !== undefined && argv.approve !== false)
    refuseForAgent(io.env, 'hagent review --approve', io.cwd);
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
  if (argv.head !== undefined && (argv.approve === undefined || argv.approve === false))
    throw new HagentError(
      'USAGE',
      '--head names the head an approval approves: it goes with --approve',
      {},
      `approve that head with: hagent review --approve --head ${argv.head}`,
    );
  const given = [...(Array.isArray(argv.approve) ? argv.approve : []), ...afterDashes];
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.session);
  const approve =
    argv.approve === undefined || argv.approve === false
      ? undefined
      : given.length
        ? repoRelative(io.cwd, ctx.location.topLevel, session.worktree, given)
        : (true as const);
  // An approval prints a confirmation, not the diff the user has just read (--json keeps it).
  const wantDiff = !argv.stat && !argv.patches && (!approve || !!argv.json);
  const r = await reviewSession(ctx, session, {
    diff: wantDiff,
    color: io.color,
    withPatchText: !!argv.patches,
    ...(approve ? { approve, given, ...(await reviewedHead(ctx, session.id, argv.head)) } : {}),
  }).catch(async (e: unknown) => {
    throw await approveTarget(ctx, session.id, session.worktree, e);
  });
  // What a human was shown, for this terminal's next `--approve`; an agent's review shows no human.
  const seenNote =
    !approve && !io.env[AGENT_MARKER]
      ? await recordSeen(
          ctx.commonDir,
          r.session,
          r.head,
          r.files.map((f) => f.path),
        ).then(
          () => null,
          (e: unknown) =>
            `note: this review could not be recorded for --approve (${e instanceof Error ? e.message : String(e)}); approve with --head ${r.head}`,
        )
      : null;
  if (seenNote) io.stderr.write(`${seenNote}\n`);
  const radar = (await radarOf(ctx, [r.session])).get(r.session);
  if (argv.json) {
    printJson(io, { ...r, ...radarJson(radar) });
    return 0;
  }
  printLines(io, [
    ...(r.approvedNow && approve
      ? approvedLines(r, approve, io.color)
      : reviewLines(r, argv, io.color)),
    ...radarLines(radar, palette(io.color), '', true),
  ]);
  return 0;
}

/** The human review: the stat, the patches, the diff, then where the approval stands. */
function reviewLines(r: ReviewResult, argv: { stat?: boolean; patches?: boolean }, color: boolean) {
  const p = palette(color);
  if (r.files.length === 0 && !r.drift)
    return [
      r.since !== 'base'
        ? `Nothing to review: everything session ${r.session} changed has landed. End it with: hagent session end ${r.session}`
        : r.patches.length
          ? `Nothing to review: the patches of session ${r.session} leave no change against its base ${short(r.base)}. End it with: hagent session end ${r.session}`
          : `Nothing to review: session ${r.session} has no changes since its base ${short(r.base)}. Apply a patch first.`,
    ];
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
  lines.push(...cappedLines(fileLines(r), (l) => l(p)));
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
  lines.push('', ...approvalLines(r, p));
  lines.push(
    p.dim(
      `Shown: head ${short(r.head)}. hagent review --approve in this terminal approves this head; anything the agent applies after it is refused until you review again.`,
    ),
  );
  return lines;
}

/**
 * One line per changed file, a rename as one `R old → new` line (its delete and add merged), in
 * the order of `files`.
 */
function fileLines(r: ReviewResult): ((p: Palette) => string)[] {
  const to = new Map(r.renames.map((m) => [m.to, m]));
  const from = new Set(r.renames.map((m) => m.from));
  const counts = (f: ReviewResult['files'][number], p: Palette) =>
    f.added === null ? 'binary' : `${p.green(`+${f.added}`)} ${p.red(`-${f.removed}`)}`;
  return r.files
    .filter((f) => !from.has(f.path))
    .map((f) => {
      const m = to.get(f.path);
      return m
        ? (p: Palette) =>
            `  R ${`${m.from} → ${m.to}`.padEnd(40)} ${p.dim(`(${m.similarity}% similar)`)}`
        : (p: Palette) => `  ${f.status} ${f.path.padEnd(40)} ${counts(f, p)}`;
    });
}

/**
 * After `--approve`: what this command approved (`specs` matched against the changes), what the
 * approval of the head covers now, and the next command.
 */
function approvedLines(r: ReviewResult, specs: true | string[], color: boolean): string[] {
  const p = palette(color);
  const a = r.approval!;
  const named =
    specs === true
      ? null
      : matchChangedPaths(
          r.files.map((f) => f.path),
          specs,
        ).paths;
  const more =
    a.paths === null
      ? named
        ? ['Every file was approved at this head already; it still is.']
        : []
      : a.paths.length > named!.length
        ? [`Approved at this head now: ${cappedList(a.paths)}.`]
        : [];
  return [
    p.cyan(
      `Approved ${named ? cappedList(named) : 'every file'} of session ${r.session} at head ${short(a.head)}.`,
    ),
    ...(r.movedWith ?? []).map((m) =>
      p.dim(`${m.from} → ${m.to} is one move: both sides approved, so the move lands whole.`),
    ),
    ...more.map((l) => p.dim(l)),
    ...approvalLines(r, p),
  ];
}

/**
 * Where the approval stands, in the words land and session end use: the approved changes to
 * land and the command that lands them, approved paths that have landed, changes not approved
 * yet and the command that approves them.
 */
function approvalLines(r: ReviewResult, p: Palette): string[] {
  const a = r.approval;
  const c = r.coverage;
  const lines: string[] = [];
  if (a && !c.current)
    lines.push(
      p.yellow(`An approval exists for ${short(a.head)}, but the head moved since: approve again.`),
    );
  if (c.landed.length) lines.push(p.dim(`Approved and landed already: ${cappedList(c.landed)}`));
  if (c.toLand.length)
    lines.push(
      p.cyan(
        `Approved to land${a?.paths ? `: ${cappedList(c.toLand)}` : ': every file'}. Land with: hagent land --session ${r.session}`,
      ),
    );
  if (c.notApproved.length)
    lines.push(
      (c.current ? p.yellow : p.dim)(
        `Not approved yet: ${cappedList(c.notApproved)}. Approve with: ${c.current ? approveCommand(r.session, c.notApproved) : `hagent review --session ${r.session} --approve [PATH…]`}${c.toLand.length ? '' : `, then hagent land --session ${r.session}`}`,
      ),
    );
  return lines;
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

/**
 * The paths given to `--approve` as repository-relative pathspecs: each is relative to the
 * current folder, as git takes a pathspec (`./a.txt`, `sub/`, `..`, an absolute path inside the
 * checkout or the session's worktree); `''` is the repository's root.
 * @throws HagentError USAGE for a path outside the repository.
 */
function repoRelative(
  cwd: string,
  topLevel: string | null,
  worktree: string,
  given: readonly string[],
): string[] {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const here = real(cwd);
  const roots = [topLevel, real(worktree)].filter((r): r is string => !!r);
  return given.map((g) => {
    const abs = path.resolve(here, g);
    const root = roots.find((r) => abs === r || abs.startsWith(`${r}${path.sep}`));
    if (!root && !topLevel && !path.isAbsolute(g))
      return path.posix.normalize(g).replace(/\/$/, '');
    if (!root)
      throw new HagentError(
        'USAGE',
        `${g} is outside the repository`,
        { files: [g] },
        'name paths inside the repository, relative to the current folder (hagent review lists the changed ones)',
      );
    return path.relative(root, abs).split(path.sep).join('/');
  });
}
