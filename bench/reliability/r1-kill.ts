/**
 * R1, kill -9 of apply: a figure of bench/reliability/run.ts (short version in
 * test/reliability/faults.test.ts). The other writing commands are killed by kills.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { makeRepo, startSession } from '../../test/helpers/index.js';
import {
  compareWorktreeWithCommit,
  fsckProblem,
  tempFilesUnder,
} from '../../test/helpers/repo-checks.js';
import {
  PROBE_PATCH,
  anchoredFile,
  cli,
  codeOf,
  commonDirOf,
  headOf,
  insertAfter,
  int,
  lineCount,
  pick,
  recoverSession,
  rng,
  type Figure,
} from './common.js';

export interface R1Options {
  applies: number;
  seed?: number;
  fsckEvery?: number;
}

/**
 * R1: N applies, each SIGKILLed (with the git processes it started) after a random delay; then
 * the next command on the session recovers it. After every recovery: the worktree equals the
 * session head's tree, no temp files, no intent record; every patch so far is all-or-none in the
 * head. Every quarter of the kills is followed directly by another killed apply, so recovery
 * itself gets killed too.
 */
export async function runR1(o: R1Options): Promise<Figure> {
  const r = rng(o.seed ?? 1);
  const files = ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'dir/g0.txt', 'dir/sub/g1.txt'];
  const init: Record<string, string> = { 'probe.txt': 'probe\n' };
  for (const f of files) init[f] = anchoredFile(f, 4);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const common = commonDirOf(repo);
  const intentFile = path.join(common, 'hagent', 'tx', `${s.id}.json`);
  const failures: string[] = [];
  const counts = {
    applies: 0,
    finishedBeforeKill: 0,
    killedMidTransaction: 0,
    killedBefore: 0,
    recoveries: 0,
    applied: 0,
    absent: 0,
    halfApplied: 0,
    tempFilesLeft: 0,
    fsckRuns: 0,
    fsckProblems: 0,
    exit3: 0,
    emptyDirsLeft: 0,
  };
  // Calibrate: how long an unkilled apply takes here (the kill window covers it).
  const t0 = Date.now();
  await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH });
  const calib = Date.now() - t0;
  const windowMs = Math.max(400, Math.round(calib * 1.2));

  interface P {
    i: number;
    parts: { file: string; line: string }[];
    added: string | null;
    deleted: string | null;
    checked: boolean;
  }
  const patches: P[] = [];
  const liveAdded = new Set<string>(); // added files known to be in the head
  let stateKnown = true;

  const verify = async (label: string) => {
    const { run, via } = await recoverSession(repo, s);
    counts.recoveries++;
    if (run.status === 3 || (via === 'apply' && codeOf(run) !== 'CONTEXT_NOT_FOUND')) {
      if (run.status === 3) counts.exit3++;
      failures.push(
        `${label}: recovery via ${via} gave ${codeOf(run)}: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 300)}`,
      );
    }
    if (existsSync(intentFile))
      failures.push(`${label}: the intent record is still there after recovery`);
    const head = headOf(repo, s);
    const cmp = compareWorktreeWithCommit(s.worktree, head);
    for (const p of cmp.problems)
      failures.push(`${label}: worktree ≠ head ${head.slice(0, 10)}: ${p}`);
    counts.emptyDirsLeft = cmp.emptyDirs.length;
    const temps = tempFilesUnder(s.worktree);
    counts.tempFilesLeft += temps.length;
    for (const t of temps) failures.push(`${label}: temp file left: ${t}`);
    // All-or-none for every patch not yet judged (read from disk: it equals the head, checked above).
    const read = (f: string) =>
      existsSync(path.join(s.worktree, f)) ? readFileSync(path.join(s.worktree, f), 'utf8') : null;
    for (const p of patches) {
      if (p.checked) continue;
      p.checked = true;
      const present: boolean[] = [];
      for (const part of p.parts) {
        const n = lineCount(read(part.file) ?? '', part.line);
        if (n > 1)
          failures.push(`${label}: patch ${p.i}: ${part.line} is in ${part.file} ${n} times`);
        present.push(n >= 1);
      }
      if (p.added) present.push(read(p.added) === `added by ${p.i}\n`);
      if (p.deleted) present.push(read(p.deleted) === null);
      const all = present.every(Boolean);
      const none = present.every((x) => !x);
      if (all) {
        counts.applied++;
        if (p.added) liveAdded.add(p.added);
        if (p.deleted) liveAdded.delete(p.deleted);
      } else if (none) counts.absent++;
      else {
        counts.halfApplied++;
        failures.push(
          `${label}: patch ${p.i} is half-applied in head ${head.slice(0, 10)}: parts present ${JSON.stringify(present)}`,
        );
      }
    }
    stateKnown = true;
  };

  for (let i = 0; i < o.applies; i++) {
    const parts: { file: string; line: string }[] = [];
    const chosen = [...files].sort(() => r() - 0.5).slice(0, int(r, 2, 3));
    let text = '*** Begin Patch\n';
    for (const f of chosen) {
      const line = `r1-marker-${i}-${f}`;
      parts.push({ file: f, line });
      text += insertAfter(f, int(r, 0, 3), line);
    }
    let added: string | null = null;
    if (r() < 0.5) {
      added = r() < 0.5 ? `added/new-${i}.txt` : `added/d${i}/deep/new.txt`;
      text += `*** Add File: ${added}\n+added by ${i}\n`;
    }
    let deleted: string | null = null;
    if (stateKnown && liveAdded.size && r() < 0.3) {
      deleted = pick(r, [...liveAdded]);
      text += `*** Delete File: ${deleted}\n`;
    }
    text += '*** End Patch\n';
    patches.push({ i, parts, added, deleted, checked: false });
    const delay = Math.floor(r() * windowMs);
    const run = await cli(s.worktree, ['apply', '-', '--json', '--yes'], {
      input: text,
      killAfterMs: delay,
    });
    counts.applies++;
    if (!run.killed) {
      counts.finishedBeforeKill++;
      if (run.status === 3) {
        counts.exit3++;
        failures.push(`apply ${i}: exit 3: ${run.stdout}${run.stderr}`.slice(0, 400));
      }
    } else if (existsSync(intentFile)) counts.killedMidTransaction++;
    else counts.killedBefore++;
    stateKnown = false;
    if (i === o.applies - 1 || r() < 0.75)
      await verify(`after apply ${i} (killed at ${delay} ms${run.killed ? '' : ', had finished'})`);
    if (o.fsckEvery && (i + 1) % o.fsckEvery === 0) {
      counts.fsckRuns++;
      const f = fsckProblem(repo);
      if (f) {
        counts.fsckProblems++;
        failures.push(`after apply ${i}: ${f}`);
      }
    }
  }
  counts.fsckRuns++;
  const f = fsckProblem(repo);
  if (f) {
    counts.fsckProblems++;
    failures.push(`at the end: ${f}`);
  }
  const line = `R1 kill -9: ${counts.applies} applies (${counts.killedMidTransaction} killed mid-transaction, ${counts.killedBefore} before it, ${counts.finishedBeforeKill} finished first; ${counts.recoveries} recoveries), ${counts.halfApplied} half-applied (${counts.applied} fully in, ${counts.absent} fully absent), ${counts.tempFilesLeft} temp files left, fsck ${counts.fsckProblems ? `${counts.fsckProblems} problems` : 'clean'} (${counts.fsckRuns} runs), ${counts.exit3} exit 3`;
  const notes = counts.emptyDirsLeft
    ? [
        `R1: ${counts.emptyDirsLeft} empty folder(s) left in the worktree by killed adds (git does not track them; not counted as a failure)`,
      ]
    : [];
  return {
    id: 'R1',
    line,
    counts,
    failures,
    notes: [...notes, `R1: kill window 0–${windowMs} ms (an unkilled apply took ${calib} ms)`],
  };
}
