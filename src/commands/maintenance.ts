/**
 * `hagent sync` and `hagent doctor`.
 */
import { runDoctor } from '../doctor/index.js';
import { syncSession } from '../sync/index.js';
import { humanBytes, openRepo, resolveSession } from '../session/index.js';
import {
  cappedLines,
  cappedList,
  palette,
  printJson,
  printLines,
  short,
  type Io,
} from '../output/index.js';
import { recoveryLine, type CommonArgs } from './shared.js';

export async function runSync(argv: CommonArgs, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const r = await syncSession(ctx, await resolveSession(ctx, argv.session), io.env);
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  if (r.recovery) io.stderr.write(`${recoveryLine(r.recovery)}\n`);
  const p = palette(io.color);
  printLines(
    io,
    r.commit && r.merged
      ? [
          `${p.green('Concluded')} the merge of ${short(r.merged)} as commit ${short(r.commit)}:`,
          ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
        ]
      : r.commit
        ? [
            `${p.green('Adopted')} ${r.files.length} outside edit${r.files.length === 1 ? '' : 's'} as commit ${short(r.commit)} (marked outside):`,
            ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
          ]
        : [`Nothing to adopt: session ${r.session} has no outside edits (nothing was committed).`],
  );
  const skipped = cappedLines(
    r.skipped,
    (k) => `${p.yellow('left out:')} ${k.path}: ${k.reason}`,
    '',
  );
  if (skipped.length) io.stderr.write(`${skipped.join('\n')}\n`);
  return 0;
}

export async function runDoctorCommand(
  argv: CommonArgs & { restoreWorktree?: boolean },
  io: Io,
): Promise<number> {
  const r = await runDoctor(await openRepo(io.cwd), argv.session, io.env, {
    restoreWorktree: argv.restoreWorktree === true,
  });
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  const lines = [
    `Checked ${r.sessions.length} session${r.sessions.length === 1 ? '' : 's'}: ${r.findings.length ? `${r.findings.length} finding${r.findings.length === 1 ? '' : 's'}` : 'all well'}`,
  ];
  for (const f of r.findings) {
    lines.push(
      `  ${f.fixed ? p.green('fixed') : p.yellow('found')} ${f.message}${f.paths?.length ? ` (${cappedList(f.paths)})` : ''}`,
    );
    if (f.hint && !f.fixed) lines.push(`        ${p.cyan('hint:')} ${f.hint}`);
  }
  if (r.pool)
    lines.push(
      `Pool: ${r.pool.worktrees.length} recycled worktree${r.pool.worktrees.length === 1 ? '' : 's'} of at most ${r.pool.limit}, in ${r.pool.root}/.pool`,
    );
  const drop = (r.leftovers ?? []).filter((i) => i.action === 'drop');
  const kept = (r.leftovers ?? []).length - drop.length;
  if (drop.length || kept)
    lines.push(
      `Left behind: ${drop.length} item${drop.length === 1 ? '' : 's'} hagent gc drops (${humanBytes(drop.reduce((n, i) => n + (i.bytes ?? 0), 0))})${kept ? `, ${kept} it keeps` : ''}; see them with hagent gc --dry-run`,
    );
  const sb = r.sandbox;
  if (sb.on)
    lines.push(
      `Sandbox: on (${sb.bwrap}; network ${sb.network ? 'on' : 'off'}): commands run walled in their session`,
    );
  else if (sb.configured) lines.push(p.dim(`Sandbox: ${sb.reason}`));
  else
    lines.push(
      p.red(
        `Sandbox: ${sb.reason}; ${sb.required ? 'exec refuses ("sandbox": "required")' : 'the shell guard alone checks commands'}`,
      ),
      `        ${p.cyan('hint:')} ${sb.hint}`,
    );
  printLines(io, lines);
  return 0;
}
