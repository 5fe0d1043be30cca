/**
 * R2, concurrent writers on one session: a figure of bench/reliability/run.ts (short version in
 * test/reliability/faults.test.ts).
 */
import { git, makeRepo, startSession } from '../../test/helpers/index.js';
import {
  compareWorktreeWithCommit,
  fsckProblem,
  gitRaw,
  tempFilesUnder,
} from '../../test/helpers/repo-checks.js';
import {
  anchoredFile,
  cli,
  codeOf,
  fmtTally,
  headOf,
  insertAfter,
  int,
  lineCount,
  rng,
  tally,
  type Figure,
  type Run,
} from './common.js';

export interface R2Options {
  processes: number;
  patchesEach: number;
  seed?: number;
}

/**
 * R2: P processes each applying K patches to one session at once. Worker w's patches insert
 * `r2-w-k` after an anchor of its own file, and a third of them also after worker w's own anchor
 * of a shared file (distinct lines, same file): no patch can miss its context whatever order the
 * lock gives them. Every success must be in the final head (exactly once, its commit an ancestor),
 * every failure LOCKED or STALE_FILE and absent from the head.
 */
export async function runR2(o: R2Options): Promise<Figure> {
  const r = rng(o.seed ?? 2);
  const init: Record<string, string> = {
    'probe.txt': 'probe\n',
    'r2/shared.txt': anchoredFile('shared', o.processes),
  };
  for (let w = 0; w < o.processes; w++) init[`r2/own-${w}.txt`] = anchoredFile(`own ${w}`, 3);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { applies: 0, ok: 0, locked: 0, stale: 0, other: 0, silent: 0, exit3: 0, lost: 0 };
  const results: { w: number; k: number; lines: { file: string; line: string }[]; run: Run }[] = [];
  const plans = Array.from({ length: o.processes }, (_, w) =>
    Array.from({ length: o.patchesEach }, (_, k) => {
      const line = `r2-${w}-${k}`;
      const lines = [{ file: `r2/own-${w}.txt`, line }];
      let text = `*** Begin Patch\n${insertAfter(`r2/own-${w}.txt`, int(r, 0, 2), line)}`;
      if (r() < 0.33) {
        lines.push({ file: 'r2/shared.txt', line: `${line}-shared` });
        text += insertAfter('r2/shared.txt', w, `${line}-shared`);
      }
      return { text: `${text}*** End Patch\n`, lines };
    }),
  );
  await Promise.all(
    plans.map(async (patches, w) => {
      for (const [k, p] of patches.entries()) {
        const run = await cli(s.worktree, ['apply', '-', '--json'], { input: p.text });
        results.push({ w, k, lines: p.lines, run });
      }
    }),
  );
  const head = headOf(repo, s);
  const contents = new Map<string, string>();
  for (const f of Object.keys(init)) contents.set(f, git(repo, 'show', `${head}:${f}`) + '\n');
  for (const { w, k, lines, run } of results) {
    counts.applies++;
    const code = codeOf(run);
    tally(codes, code);
    const inHead = lines.map((l) => lineCount(contents.get(l.file)!, l.line));
    if (run.status === 0) {
      if (run.json?.ok !== true || typeof run.json.commit !== 'string') {
        counts.silent++;
        failures.push(
          `worker ${w} patch ${k}: exit 0 without an ok JSON result: ${run.stdout.slice(0, 200)}`,
        );
        continue;
      }
      counts.ok++;
      if (inHead.some((n) => n !== 1)) {
        counts.lost++;
        failures.push(
          `worker ${w} patch ${k}: applied as ${run.json.commit.slice(0, 10)} but its lines are in the final head ${JSON.stringify(inHead)} times`,
        );
      }
      if (gitRaw(repo, ['merge-base', '--is-ancestor', run.json.commit, head]).status !== 0) {
        counts.lost++;
        failures.push(
          `worker ${w} patch ${k}: its commit ${run.json.commit.slice(0, 10)} is not in the final head's history`,
        );
      }
    } else {
      if (run.status === 3) counts.exit3++;
      if (code === 'LOCKED') counts.locked++;
      else if (code === 'STALE_FILE') counts.stale++;
      else {
        counts.other++;
        if (!run.json?.error?.code) counts.silent++;
        failures.push(
          `worker ${w} patch ${k}: refused with ${code} (only LOCKED or STALE_FILE expected): ${(run.json?.error?.message ?? run.stderr).slice(0, 300)}`,
        );
      }
      if (inHead.some((n) => n !== 0))
        failures.push(
          `worker ${w} patch ${k}: refused with ${code} but its lines are in the final head`,
        );
    }
  }
  const cmp = compareWorktreeWithCommit(s.worktree, head);
  for (const p of cmp.problems) failures.push(`at the end: worktree ≠ head: ${p}`);
  const temps = tempFilesUnder(s.worktree);
  for (const t of temps) failures.push(`temp file left: ${t}`);
  const commits = Number(git(repo, 'rev-list', '--count', `${s.base}..${head}`));
  if (commits !== counts.ok)
    failures.push(`${counts.ok} applies succeeded but the session has ${commits} commits`);
  const f = fsckProblem(repo);
  if (f) failures.push(f);
  const line = `R2 concurrent writers: ${o.processes} processes × ${o.patchesEach} patches, ${counts.ok} applied (${commits} commits, all in the final head: ${counts.lost === 0 ? 'yes' : `no, ${counts.lost} lost`}), ${counts.locked} LOCKED, ${counts.stale} STALE_FILE, ${counts.other} other refusals, ${counts.silent} silent, ${counts.exit3} exit 3`;
  return { id: 'R2', line, counts, failures, notes: [`R2 codes: ${fmtTally(codes)}`] };
}
