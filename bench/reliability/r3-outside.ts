/**
 * R3, an outside writer during applies: a figure of bench/reliability/run.ts (short version in
 * test/reliability/faults.test.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { git, makeRepo, startSession } from '../../test/helpers/index.js';
import { fsckProblem, gitRaw, tempFilesUnder } from '../../test/helpers/repo-checks.js';
import {
  PROBE_PATCH,
  anchoredFile,
  cli,
  cliHas,
  codeOf,
  fmtTally,
  headOf,
  insertAfter,
  int,
  lineCount,
  pick,
  rng,
  sha1,
  tally,
  type Figure,
} from './common.js';

export interface R3Options {
  applies: number;
  seed?: number;
}

/** The outside writer: a separate node process; per round it gets `{round, writes:[{file, delay}]}`, appends a line to each file at its time (reading again while the file is absent for a moment) and logs what it wrote. */
const WRITER_SRC = `
const fs = require('node:fs');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const m = JSON.parse(l);
  let left = m.writes.length;
  if (!left) { process.stdout.write(JSON.stringify({ round: m.round, done: true }) + '\\n'); return; }
  m.writes.forEach((w, n) => setTimeout(function write(tries = 0) {
    // hagent's publish moves a target aside before linking the new file in (its compare-and-swap
    // on the bytes), so for a moment the path is absent: read again, as an editor would.
    let prev;
    try {
      prev = fs.readFileSync(w.file);
    } catch (e) {
      if (e.code === 'ENOENT' && tries < 1000) return void setTimeout(write, 1, tries + 1);
      throw e;
    }
    const bytes = Buffer.concat([prev, Buffer.from('outside-' + m.round + '-' + n + '\\n')]);
    fs.writeFileSync(w.file, bytes);
    process.stdout.write(JSON.stringify({ round: m.round, file: w.rel, t: Date.now(), b64: bytes.toString('base64') }) + '\\n');
    if (--left === 0) process.stdout.write(JSON.stringify({ round: m.round, done: true }) + '\\n');
  }, w.delay));
});
`;

/**
 * R3: one outside writer process appends lines to files (mostly the patch's targets) at random
 * moments during each of N applies. After each round: every file the writer wrote holds the
 * writer's last bytes (an outside write is never lost, whether hagent refused or applied first);
 * a successful apply's commit holds its change; a refused one leaves its other targets as in the
 * head; refusals are EXTERNAL_EDIT or STALE_FILE. The outside edits are then adopted (hagent sync
 * when it exists, else a plain git commit in the worktree) before the next round.
 */
export async function runR3(o: R3Options): Promise<Figure> {
  const r = rng(o.seed ?? 3);
  const files = ['r3/t0.txt', 'r3/t1.txt', 'r3/t2.txt', 'r3/t3.txt', 'r3/other.txt'];
  const init: Record<string, string> = { 'probe.txt': 'probe\n' };
  for (const f of files) init[f] = anchoredFile(f, 3);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const failures: string[] = [];
  const notes: string[] = [];
  const codes: Record<string, number> = {};
  const counts = {
    applies: 0,
    outsideWrites: 0,
    overlaps: 0,
    detected: 0,
    appliedBeforeOutsideWrite: 0,
    externalEdit: 0,
    stale: 0,
    outsideLost: 0,
    hagentLost: 0,
    exit3: 0,
    other: 0,
  };
  const writer = spawn(process.execPath, ['-e', WRITER_SRC], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const pending: string[] = [];
  let wake: (() => void) | null = null;
  let buf = '';
  writer.stdout!.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      pending.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    wake?.();
  });
  const roundLog = async (round: number) => {
    const logs: { file: string; t: number; bytes: Buffer }[] = [];
    for (;;) {
      while (pending.length) {
        const m = JSON.parse(pending.shift()!);
        if (m.round !== round) continue;
        if (m.done) return logs;
        logs.push({ file: m.file, t: m.t, bytes: Buffer.from(m.b64, 'base64') });
      }
      await new Promise<void>((res) => (wake = res));
    }
  };
  const t0 = Date.now();
  await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH });
  const windowMs = Math.max(300, Math.round((Date.now() - t0) * 1.3));
  const useSync = cliHas('sync');
  try {
    for (let i = 0; i < o.applies; i++) {
      const targets = [...files.slice(0, 4)].sort(() => r() - 0.5).slice(0, int(r, 1, 2));
      let text = '*** Begin Patch\n';
      const lines = targets.map((f) => ({ file: f, line: `r3-${i}-${f}` }));
      for (const l of lines) text += insertAfter(l.file, int(r, 0, 2), l.line);
      text += '*** End Patch\n';
      const nWrites = r() < 0.15 ? 0 : r() < 0.7 ? 1 : 2;
      const writes = Array.from({ length: nWrites }, () => {
        const rel = r() < 0.8 ? pick(r, targets) : pick(r, files);
        return { rel, file: path.join(s.worktree, rel), delay: Math.floor(r() * windowMs) };
      });
      const headBefore = headOf(repo, s);
      const logP = roundLog(i);
      writer.stdin!.write(JSON.stringify({ round: i, writes }) + '\n');
      const run = await cli(s.worktree, ['apply', '-', '--json'], { input: text });
      const logs = await logP;
      counts.applies++;
      counts.outsideWrites += logs.length;
      const code = codeOf(run);
      tally(codes, code);
      const label = `round ${i} (${code}; writer: ${logs.map((l) => `${l.file} at +${l.t - run.startedAt} ms`).join(', ') || 'none'}; apply took ${run.endedAt - run.startedAt} ms)`;
      const overlap = logs.some(
        (l) => targets.includes(l.file) && l.t >= run.startedAt && l.t <= run.endedAt,
      );
      if (overlap) counts.overlaps++;
      // The outside bytes survive: each written file holds the writer's last bytes.
      const last = new Map<string, Buffer>();
      for (const l of logs) last.set(l.file, l.bytes);
      for (const [f, bytes] of last) {
        const disk = readFileSync(path.join(s.worktree, f));
        if (!disk.equals(bytes)) {
          counts.outsideLost++;
          failures.push(
            `${label}: the outside write to ${f} was lost (disk holds ${sha1(disk).slice(0, 10)}, the writer wrote ${sha1(bytes).slice(0, 10)}${disk.includes(`r3-${i}-${f}`) ? "; the disk holds hagent's change instead" : ''})`,
          );
        }
      }
      if (run.status === 0 && run.json?.ok) {
        for (const l of lines) {
          const inCommit = gitRaw(repo, ['show', `${run.json.commit}:${l.file}`]).stdout;
          if (lineCount(inCommit, l.line) !== 1) {
            counts.hagentLost++;
            failures.push(
              `${label}: the commit ${run.json.commit.slice(0, 10)} does not hold ${l.line}`,
            );
          }
        }
        if (headOf(repo, s) !== run.json.commit)
          failures.push(
            `${label}: applied as ${run.json.commit.slice(0, 10)} but the session head is ${headOf(repo, s).slice(0, 10)}`,
          );
        if (overlap) counts.appliedBeforeOutsideWrite++;
      } else {
        if (run.status === 3) counts.exit3++;
        if (code === 'EXTERNAL_EDIT') counts.externalEdit++;
        else if (code === 'STALE_FILE') counts.stale++;
        else {
          counts.other++;
          failures.push(
            `${label}: refused with ${code}, expected EXTERNAL_EDIT or STALE_FILE: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 300)}`,
          );
        }
        if (overlap) counts.detected++;
        if (headOf(repo, s) !== headBefore)
          failures.push(`${label}: refused but the session head moved`);
        for (const l of lines) {
          if (last.has(l.file)) continue;
          const disk = readFileSync(path.join(s.worktree, l.file));
          const inHead = Buffer.from(gitRaw(repo, ['show', `${headBefore}:${l.file}`]).stdout);
          if (!disk.equals(inHead))
            failures.push(
              `${label}: refused but ${l.file} (not written from outside) differs from the head`,
            );
        }
      }
      const temps = tempFilesUnder(s.worktree);
      for (const t of temps) failures.push(`${label}: temp file left: ${t}`);
      // Adopt the outside edits so the next round starts clean.
      const dirty = gitRaw(s.worktree, [
        'status',
        '--porcelain',
        '--untracked-files=all',
      ]).stdout.trim();
      if (dirty) {
        if (useSync) {
          const sync = await cli(s.worktree, ['sync', '--json']);
          if (sync.status !== 0)
            failures.push(
              `${label}: hagent sync failed: ${sync.stdout}${sync.stderr}`.slice(0, 300),
            );
        } else {
          git(s.worktree, 'add', '--', ...files);
          git(s.worktree, 'commit', '-q', '-m', `outside edits of round ${i}`);
        }
      }
    }
  } finally {
    writer.stdin!.end();
    writer.kill();
  }
  const f = fsckProblem(repo);
  if (f) failures.push(f);
  notes.push(
    `R3 codes: ${fmtTally(codes)}; outside edits adopted with ${useSync ? 'hagent sync' : 'git commit in the worktree (hagent sync not available)'}; writer window 0–${windowMs} ms`,
  );
  const line = `R3 outside writer: ${counts.applies} applies, ${counts.outsideWrites} outside writes, ${counts.overlaps} overlapping an apply (${counts.detected} refused: EXTERNAL_EDIT ${counts.externalEdit}, STALE_FILE ${counts.stale} in all; ${counts.appliedBeforeOutsideWrite} applied before the outside write landed), ${counts.outsideLost} outside writes lost, ${counts.hagentLost} hagent writes lost, ${counts.other} other refusals, ${counts.exit3} exit 3`;
  return { id: 'R3', line, counts, failures, notes };
}
