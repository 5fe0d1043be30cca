/**
 * `hagent status` (the overview) for 20 sessions on a 20k-file repository: 14 open sessions of
 * 3 new files each, 3 approved, 2 landed, 1 empty; timed as the whole CLI process (`--json`),
 * beside `hagent session list --json` on the same sessions (interleaved, medians).
 *
 *   npm run build && node --import tsx bench/status.ts [--files 20000] [--sessions 20] [--runs 15] [--keep]
 * `--keep` leaves the repository and its sessions for a closer look (HAGENT_TRACE=1 hagent status).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { BENCH_ENV, ensureRepo, HAGENT_BIN, numberArg, resetRepo } from './gen-repo.js';

const BIN = HAGENT_BIN;
const arg = numberArg;
const files = arg('files', 20_000);
const count = arg('sessions', 20);
const runs = arg('runs', 15);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const repo = await ensureRepo(files, (t) => process.stderr.write(`${t}\n`));
resetRepo(repo);

/** Runs the built hagent in the repository; throws on a non-zero exit. */
function hagent(args: string[], input?: string): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: repo.dir,
    env: BENCH_ENV,
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`hagent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}

process.stderr.write(`starting ${count} sessions …\n`);
for (let i = 0; i < count; i++) {
  const id = `s${String(i).padStart(2, '0')}`;
  hagent(['session', 'start', '--name', id, '--json']);
  if (i === count - 1) continue; // one empty session
  const patch = [0, 1, 2]
    .map((k) => `*** Add File: bench-status/${id}-${k}.txt\n+${id} file ${k}\n`)
    .join('');
  hagent(['apply', '-', '--session', id, '--json'], `*** Begin Patch\n${patch}*** End Patch\n`);
  if (i < 5) {
    hagent(['review', '--session', id, '--stat', '--json']);
    hagent(['review', '--session', id, '--approve', '--json']);
    if (i < 2) hagent(['land', '--session', id, '--json']);
  }
}

const states = (
  JSON.parse(hagent(['status', '--json']).stdout) as { sessions: { state: string }[] }
).sessions.reduce<Record<string, number>>(
  (m, s) => ({ ...m, [s.state]: (m[s.state] ?? 0) + 1 }),
  {},
);
const status: number[] = [];
const list: number[] = [];
const bare: number[] = [];
for (let r = 0; r < runs; r++) {
  status.push(hagent(['status', '--json']).ms);
  list.push(hagent(['session', 'list', '--json']).ms);
  bare.push(hagent(['--version']).ms);
}
console.log(
  JSON.stringify(
    {
      files,
      sessions: count,
      states,
      runs,
      statusMs: Math.round(median(status)),
      sessionListMs: Math.round(median(list)),
      versionMs: Math.round(median(bare)),
    },
    null,
    2,
  ),
);
if (!process.argv.includes('--keep')) resetRepo(repo);
