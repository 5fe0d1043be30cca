/**
 * R5, hostile paths through the CLI: a figure of bench/reliability/run.ts (short version in
 * test/reliability/faults.test.ts).
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  diffSnapshots,
  makeRepo,
  snapshotTree,
  startSession,
  tempDir,
} from '../../test/helpers/index.js';
import { tempFilesUnder } from '../../test/helpers/repo-checks.js';
import { cli, codeOf, fmtTally, headOf, tally, type Figure } from './common.js';

/** The hostile paths of R5 (symlinked ones are created in the worktree by {@link runR5}). */
export function hostilePaths(outside: string): string[] {
  const long = 'd'.repeat(200);
  return [
    // `..` in every position
    '../x.txt',
    '../../x.txt',
    '..',
    'a/..',
    'a/../../x.txt',
    'a/b/../../../x.txt',
    'dir/../../x.txt',
    './../x.txt',
    'a/./../../x.txt',
    'a//../../x.txt',
    'dir/..',
    '../dir/x.txt',
    // absolute, home, drive letters, UNC, backslashes
    `${outside}/abs.txt`,
    '/x.txt',
    '//server/share/x.txt',
    '~/x.txt',
    '~',
    '~root/x.txt',
    'C:/x.txt',
    'C:\\x.txt',
    'c:x.txt',
    'D:\\a\\b.txt',
    '\\\\server\\share\\x.txt',
    '..\\x.txt',
    'a\\..\\..\\x.txt',
    '\\x.txt',
    // .git in any case and component, .hagent
    '.git/config',
    '.GIT/config',
    '.Git/HEAD',
    '.git',
    'a/.git/x',
    'dir/.GiT/hooks/pre-commit',
    'a/.git',
    '.hagent/config.json',
    '.hagent/hooks/pre-apply',
    '.HAGENT/hooks/post-apply',
    // secret names
    '.env',
    '.env.local',
    'dir/.env',
    '.ENV.production',
    'id_rsa',
    'keys/id_rsa.pub',
    'id_ed25519',
    'x.pem',
    'certs/server.key',
    '.npmrc',
    'dir/.netrc',
    // NUL bytes, over-long
    'a\0b.txt',
    'dir/\0',
    `${'n'.repeat(300)}.txt`,
    `${`${long}/`.repeat(25)}x.txt`,
    // symlinked folders and files at every depth (created by runR5)
    'lnkdir/x.txt',
    'lnkdir/new.txt',
    'dir/lnkdir2/x.txt',
    'dir/sub/lnkdir3/deep/x.txt',
    'outlnk/abs.txt',
    'lnkfile.txt',
    'dir/lnkfile2.txt',
    'dir/sub/outfile.txt',
    'lnkdir',
  ];
}

export interface R5Options {
  moveAndDeleteAll?: boolean;
  concurrency?: number;
}

/**
 * R5: every hostile path as Add File, and as Delete File and Move to (all of them, or every
 * third with `moveAndDeleteAll: false`), through the CLI → PATH_DENIED, and nothing written: the
 * worktree (symlinks included), the main checkout, the folder outside the repository, HOME and
 * the head are as before.
 */
export async function runR5(o: R5Options = {}): Promise<Figure> {
  const repo = makeRepo({
    'probe.txt': 'probe\n',
    'f1.txt': 'one\n',
    'dir/x.txt': 'x\n',
    'dir/sub/y.txt': 'y\n',
  });
  const s = startSession(repo);
  const outside = tempDir('hagent-outside-');
  const home = tempDir('hagent-home-');
  writeFileSync(path.join(outside, 'abs.txt'), 'outside\n');
  writeFileSync(path.join(outside, 'x.txt'), 'outside x\n');
  mkdirSync(path.join(s.worktree, 'realdir'));
  writeFileSync(path.join(s.worktree, 'realdir', 'x.txt'), 'real\n');
  symlinkSync('realdir', path.join(s.worktree, 'lnkdir'));
  symlinkSync('../realdir', path.join(s.worktree, 'dir', 'lnkdir2'));
  mkdirSync(path.join(s.worktree, 'realdir', 'deep'));
  writeFileSync(path.join(s.worktree, 'realdir', 'deep', 'x.txt'), 'deep\n');
  symlinkSync('../../realdir', path.join(s.worktree, 'dir', 'sub', 'lnkdir3'));
  symlinkSync(outside, path.join(s.worktree, 'outlnk'));
  symlinkSync('f1.txt', path.join(s.worktree, 'lnkfile.txt'));
  symlinkSync('../f1.txt', path.join(s.worktree, 'dir', 'lnkfile2.txt'));
  symlinkSync(path.join(outside, 'x.txt'), path.join(s.worktree, 'dir', 'sub', 'outfile.txt'));
  const paths = hostilePaths(outside);
  const before = {
    wt: snapshotTree(s.worktree),
    main: snapshotTree(repo),
    out: snapshotTree(outside),
    home: snapshotTree(home),
    head: headOf(repo, s),
  };
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { paths: paths.length, attempts: 0, denied: 0, other: 0, written: 0 };
  const jobs: { what: string; text: string }[] = [];
  paths.forEach((p, i) => {
    jobs.push({
      what: `Add ${JSON.stringify(p)}`,
      text: `*** Begin Patch\n*** Add File: ${p}\n+hostile\n*** End Patch\n`,
    });
    if (o.moveAndDeleteAll !== false || i % 3 === 0) {
      jobs.push({
        what: `Delete ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Delete File: ${p}\n*** End Patch\n`,
      });
      jobs.push({
        what: `Move f1.txt to ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Update File: f1.txt\n*** Move to: ${p}\n-one\n+moved\n*** End Patch\n`,
      });
    }
    if (/lnk|outfile/.test(p) && !p.endsWith('new.txt'))
      jobs.push({
        what: `Update ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Update File: ${p}\n@@\n+hostile\n*** End Patch\n`,
      });
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency ?? 3 }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const run = await cli(s.worktree, ['apply', '-', '--json', '--yes'], {
          input: job.text,
          env: { HOME: home },
        });
        counts.attempts++;
        const code = codeOf(run);
        tally(codes, code);
        if (code === 'PATH_DENIED') counts.denied++;
        else {
          counts.other++;
          failures.push(
            `${job.what}: ${code} instead of PATH_DENIED: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 200)}`,
          );
        }
      }
    }),
  );
  const after = {
    wt: snapshotTree(s.worktree),
    main: snapshotTree(repo),
    out: snapshotTree(outside),
    home: snapshotTree(home),
    head: headOf(repo, s),
  };
  for (const k of ['wt', 'main', 'out', 'home'] as const) {
    const d = diffSnapshots(after[k], before[k]);
    if (d) {
      counts.written++;
      failures.push(`something was written in ${k}: ${d.split('\n')[0]}`);
    }
  }
  if (after.head !== before.head) failures.push('the session head moved');
  if (existsSync('/x.txt')) failures.push('/x.txt exists');
  for (const t of tempFilesUnder(s.worktree)) failures.push(`temp file left: ${t}`);
  const line = `R5 hostile paths: ${paths.length} paths, ${counts.attempts} patches (Add, Delete, Move to, Update through symlinks), ${counts.denied} PATH_DENIED, ${counts.other} other outcomes, ${counts.written} places written`;
  return { id: 'R5', line, counts, failures, notes: [`R5 codes: ${fmtTally(codes)}`] };
}
