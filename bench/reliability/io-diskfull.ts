/**
 * A real full disk (a tmpfs, as root): the I/O figure of bench/reliability/run.ts, and the one
 * real-kernel fault test (test/reliability/faults.test.ts). The faults hagent's own file calls
 * meet are injected without root instead (test/reliability/fs-*.test.ts); this one reaches what
 * the injected file system cannot: git's own processes and hagent's in-process writes into
 * `.git` (loose objects, index, refs, journal).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  diffSnapshots,
  git,
  snapshotTree,
  startSession,
  tempDir,
} from '../../test/helpers/index.js';
import {
  compareWorktreeWithCommit,
  fsckProblem,
  tempFilesUnder,
} from '../../test/helpers/repo-checks.js';
import {
  anchoredFile,
  cli,
  codeOf,
  fmtTally,
  headOf,
  tally,
  type Figure,
  type Run,
  type Session,
} from './common.js';

/** State that a refused apply must leave exactly as it was. */
function stateOf(repo: string, s: Session) {
  return { snap: snapshotTree(s.worktree), head: headOf(repo, s) };
}

function checkUnchanged(
  label: string,
  repo: string,
  s: Session,
  before: ReturnType<typeof stateOf>,
  failures: string[],
): boolean {
  const now = stateOf(repo, s);
  const d = diffSnapshots(now.snap, before.snap);
  let ok = true;
  if (d) {
    ok = false;
    failures.push(`${label}: refused but the worktree changed: ${d.split('\n')[0]}`);
  }
  if (now.head !== before.head) {
    ok = false;
    failures.push(`${label}: refused but the head moved`);
  }
  for (const t of tempFilesUnder(s.worktree)) {
    ok = false;
    failures.push(`${label}: temp file left: ${t}`);
  }
  return ok;
}

/**
 * Disk full: the repository (and its session worktree, inside .git) on a small tmpfs; before each
 * apply a filler file leaves only F bytes free, F swept from 0 up, so ENOSPC strikes at every
 * stage (staging, blobs, index, commit, ref, journal). Each apply must either apply fully
 * (worktree = head, one commit) or be refused with everything restored and no temp files.
 * What the injected file system cannot reach is the point: git's own processes and hagent's
 * in-process writes into .git (objects, index, refs, journal) hit the real full disk.
 * Needs root and mount; returns `skipped` (the reason) when tmpfs cannot be mounted.
 */
export async function runDiskFull(
  o: { steps: number; stepBytes?: number } = { steps: 24 },
): Promise<Figure> {
  const failures: string[] = [];
  const notes: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { applies: 0, applied: 0, refused: 0, restored: 0, exit3: 0 };
  const mnt = tempDir('hagent-tmpfs-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], {
    encoding: 'utf8',
  });
  if (m.status !== 0) {
    return {
      id: 'IO-diskfull',
      line: 'I/O disk full: skipped (cannot mount a tmpfs here)',
      counts,
      failures,
      notes: [`mount failed: ${m.stderr.trim()}`],
      skipped: `a tmpfs cannot be mounted here (needs root and mount): ${m.stderr.trim()}`,
    };
  }
  try {
    const repo = path.join(mnt, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '--template=', '--initial-branch=main');
    const files: Record<string, string> = {
      'probe.txt': 'probe\n',
      'a.txt': anchoredFile('a', 2),
      'b.txt': anchoredFile('b', 2),
    };
    for (const [p, t] of Object.entries(files)) writeFileSync(path.join(repo, p), t);
    git(repo, 'add', '--', ...Object.keys(files));
    git(repo, 'commit', '-q', '-m', 'initial');
    const s = startSession(repo);
    const filler = path.join(mnt, 'filler');
    const stepBytes = o.stepBytes ?? 4096;
    const free = () => {
      const st = statfsSync(mnt);
      return st.bavail * st.bsize;
    };
    for (let k = 0; k < o.steps; k++) {
      // ~24 KB of incompressible text over three files (zlib cannot shrink random base64 much).
      const rnd = (n: number) =>
        Array.from({ length: n }, () => `+${randomBytes(60).toString('base64')}`).join('\n') + '\n';
      const text = `*** Begin Patch\n*** Update File: a.txt\n@@\n anchor-0\n+df-${k}\n${rnd(100)}*** Update File: b.txt\n@@\n anchor-1\n+df-${k}\n${rnd(100)}*** Add File: new/df-${k}.txt\n${rnd(100)}*** End Patch\n`;
      const before = stateOf(repo, s);
      rmSync(filler, { force: true });
      const leave = k * stepBytes;
      const room = free() - leave;
      if (room > 0) writeFileSync(filler, Buffer.alloc(room));
      let run: Run;
      try {
        run = await cli(s.worktree, ['apply', '-', '--json', '--yes', '--no-watch'], {
          input: text,
        });
      } finally {
        rmSync(filler, { force: true });
      }
      counts.applies++;
      const code = codeOf(run);
      tally(codes, code);
      const label = `disk full with ${leave} bytes free`;
      if (run.status === 0) {
        counts.applied++;
        const head = headOf(repo, s);
        if (head !== run.json?.commit)
          failures.push(`${label}: applied as ${run.json?.commit} but the head is ${head}`);
        for (const p of compareWorktreeWithCommit(s.worktree, head).problems)
          failures.push(`${label}: applied but worktree ≠ head: ${p}`);
        for (const t of tempFilesUnder(s.worktree)) failures.push(`${label}: temp file left: ${t}`);
      } else {
        counts.refused++;
        if (run.status === 3) {
          counts.exit3++;
          failures.push(
            `${label}: exit 3 (INTERNAL) instead of a refusal: ${(run.json?.error?.message ?? run.stderr).slice(0, 300)}`,
          );
        } else if (run.status !== 1) failures.push(`${label}: exit ${run.status} (${code})`);
        if (checkUnchanged(label, repo, s, before, failures)) counts.restored++;
        // A later command must not find anything to recover either.
        const intent = path.join(repo, '.git', 'hagent', 'tx', `${s.id}.json`);
        if (existsSync(intent)) failures.push(`${label}: an intent record was left behind`);
      }
    }
    const f = fsckProblem(repo);
    if (f) failures.push(f);
    const line = `I/O disk full (tmpfs, free space swept 0–${(o.steps - 1) * stepBytes} bytes): ${counts.applies} applies, ${counts.applied} applied whole, ${counts.refused} refused (${counts.restored} fully restored), ${counts.exit3} exit 3, fsck ${f ? 'NOT clean' : 'clean'} (codes: ${fmtTally(codes)})`;
    return { id: 'IO-diskfull', line, counts, failures, notes };
  } finally {
    spawnSync('umount', ['-l', mnt]);
  }
}
