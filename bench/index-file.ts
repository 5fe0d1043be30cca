/**
 * updateIndexFile (src/git/index-file.ts) against `git update-index -z --index-info` (objects.ts
 * updateIndex, as apply runs it today) for a 3-path update, on the indexes of the generated
 * benchmark repositories (gen-repo.ts). The index is copied into a fresh temporary repository;
 * the generated repositories are never touched.
 *
 *   node --import tsx bench/index-file.ts [--sizes 1000,20000,100000] [--runs N]
 *
 * Figures, medians over N runs, interleaved:
 *   - cold: one call in a fresh process, as `hagent apply` makes it (the process has already
 *     used the thread pool and SHA-1, as apply has by then; the JIT has not seen the code);
 *   - warm: the same call repeated in one process (the JIT has compiled it);
 *   - verify: SHA-1 of the old index, the check updateIndexFile makes before trusting it.
 * Each size also checks that both ways leave the same bytes.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, promises as fsp, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { updateIndexFile } from '../src/git/index-file.js';
import { updateIndex, type IndexEntryUpdate } from '../src/git/objects.js';
import { BENCH_ENV, ensureRepo, git } from './gen-repo.js';

const SELF = fileURLToPath(import.meta.url);

/** Child mode: `--once ours|git <repo> <path>…`: one timed call, prints its milliseconds. */
async function once(which: string, repo: string, paths: string[]): Promise<void> {
  createHash('sha1').update('warm').digest(); // as apply has by now (blob ids)
  await fsp.stat(repo); // the thread pool is up
  const updates = updatesFor(paths);
  const t = performance.now();
  if (which === 'ours') {
    if (!(await updateIndexFile(path.join(repo, '.git', 'index'), updates)))
      throw new Error('updateIndexFile left it to git');
  } else {
    await updateIndex(repo, updates);
  }
  console.log((performance.now() - t).toFixed(3));
}

function updatesFor(paths: string[]): IndexEntryUpdate[] {
  return paths.map((p, i) => ({
    path: p,
    mode: '100644',
    oid: createHash('sha1').update(`bench ${i}`).digest('hex'),
  }));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--once') return once(argv[1]!, argv[2]!, argv.slice(3));
  let sizes = [1000, 20000, 100000];
  let runs = 15;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--sizes') sizes = argv[++i]!.split(',').map(Number);
    else if (argv[i] === '--runs') runs = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  console.log(`3-path update, median of ${runs} runs (ms)`);
  console.log(
    'entries   index MB   cold: ours    git   ratio   warm: ours    git   verify (SHA-1)',
  );
  for (const n of sizes) {
    const source = path.join((await ensureRepo(n)).dir, '.git', 'index');
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'hagent-bench-index-'));
    try {
      git(['init', '-q'], tmp);
      const index = path.join(tmp, '.git', 'index');
      copyFileSync(source, index);
      const original = readFileSync(index);
      const files = git(['ls-files'], tmp).split('\n').filter(Boolean);
      const paths = [0.1, 0.5, 0.9].map((q) => files[Math.floor(files.length * q)]!);
      const restore = () => copyFileSync(source, index);

      // same bytes both ways
      restore();
      await updateIndex(tmp, updatesFor(paths));
      const theirs = readFileSync(index);
      restore();
      if (!(await updateIndexFile(index, updatesFor(paths)))) throw new Error('left to git');
      if (!readFileSync(index).equals(theirs))
        throw new Error(`${n}: updateIndexFile and git update-index wrote different indexes`);

      const cold: Record<string, number[]> = { ours: [], git: [] };
      for (let r = 0; r < runs; r++) {
        for (const which of r % 2 ? ['git', 'ours'] : ['ours', 'git']) {
          restore();
          const child = spawnSync(
            process.execPath,
            ['--import', 'tsx', SELF, '--once', which, tmp, ...paths],
            { env: BENCH_ENV, encoding: 'utf8' },
          );
          if (child.status !== 0) throw new Error(child.stderr);
          cold[which]!.push(Number(child.stdout.trim()));
        }
      }
      const warm: Record<string, number[]> = { ours: [], git: [] };
      for (let r = 0; r < runs + 3; r++) {
        for (const which of ['ours', 'git']) {
          restore();
          const t = performance.now();
          if (which === 'ours') await updateIndexFile(index, updatesFor(paths));
          else await updateIndex(tmp, updatesFor(paths));
          if (r >= 3) warm[which]!.push(performance.now() - t);
        }
      }
      const verify: number[] = [];
      for (let r = 0; r < runs; r++) {
        const t = performance.now();
        createHash('sha1')
          .update(original.subarray(0, original.length - 20))
          .digest();
        verify.push(performance.now() - t);
      }
      const c = { ours: median(cold.ours!), git: median(cold.git!) };
      console.log(
        `${String(n).padStart(7)}   ${(original.length / 1e6).toFixed(1).padStart(8)}   ${c.ours.toFixed(1).padStart(10)} ${c.git.toFixed(1).padStart(6)}   ${(c.git / c.ours).toFixed(1).padStart(4)}×   ${median(warm.ours!).toFixed(1).padStart(10)} ${median(warm.git!).toFixed(1).padStart(6)}   ${median(verify).toFixed(1).padStart(8)}`,
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

await main();
