/**
 * `hagent mcp` figures, each measured side by side with git in one run (interleaved, the order
 * alternating round by round, median of the rounds; an untimed `sync` before each sample):
 *
 *   1. apply_patch round trip through MCP (the client's view: request → commit → answer) of the
 *      3-file patch of bench/patches.ts        ≤ 0.5 × (git apply --index + git commit), per size
 *   2. the same on 100k ÷ on 1k files           ≤ 1.2 (servers on both repositories at once,
 *      their applies interleaved in one set of rounds)
 *   3. edit round trip (one file, one line)     ≤ 0.5 × (git apply --index + git commit) of it
 *   4. read of a 1,000-line file                ≤ 2 ms
 *   5. memory over 1,000 applies: the built server's resident set (reported), and the live heap
 *      after a full collection of the same server run in this process, on the SDK's in-memory
 *      transport (needs --expose-gc): growth after the first 100 ≤ 20 %
 *
 *   node --expose-gc --import tsx bench/mcp.ts [--sizes 1000,20000,100000] [--runs N] [--applies 1000] [--baseline DIR]
 *
 * `--baseline DIR`: another hagent build (`DIR/dist/hagent.cjs`, e.g. an older commit's files
 * built in DIR) serves a session of its own in the same rounds, so figures 1–4 are reported for
 * both builds side by side, interleaved with git and each other.
 *
 * The server is the built one (`dist/hagent.cjs mcp`), spawned and driven by the official SDK
 * client over stdio, as an agent's client does. Repositories come from bench/gen-repo.ts.
 */
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BENCH_ENV, ensureRepo, git, resetRepo, type BenchRepo } from './gen-repo.js';
import { makePatches } from './patches.js';
import { openRepo } from '../src/session/index.js';
import { createServer, SessionBinding } from '../src/mcp/index.js';
import { splitLargeIndex } from '../src/git/objects.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HAGENT = path.join(ROOT, 'dist', 'hagent.cjs');

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1]!;
}
const SIZES = option('sizes', '1000,20000,100000')
  .split(',')
  .map((s) => Number(s.replace(/k$/i, '000')));
const RUNS = Number(option('runs', '15'));
const APPLIES = Number(option('applies', '1000'));
const BASELINE = option('baseline', '')
  ? path.join(path.resolve(option('baseline', '')), 'dist', 'hagent.cjs')
  : null;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const label = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
const now = () => Number(process.hrtime.bigint()) / 1e6;
const summary: string[] = [];
const say = (line: string) => {
  summary.push(line);
  console.log(line);
};
const verdict = (name: string, value: number, base: number, target: number) =>
  say(
    `${name}: hagent mcp ${fmt(value)}, git ${fmt(base)}, ratio ${(value / base).toFixed(2)} (target ≤ ${target}) ${value / base <= target ? 'PASS' : 'MISS'}`,
  );

/** Times one git command line (spawned, as an agent's shell would). */
function timedGit(args: readonly string[], cwd: string): number {
  const t0 = now();
  const r = spawnSync('git', args, { cwd, env: BENCH_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return now() - t0;
}

interface Server {
  client: Client;
  pid: number;
  call(name: string, args: Record<string, unknown>): Promise<{ ms: number; data: any }>;
  close(): Promise<void>;
}

async function serve(cwd: string, session: string, bin = HAGENT): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--session', session],
    cwd,
    env: BENCH_ENV as Record<string, string>,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'hagent-bench', version: '1' });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid!,
    async call(name, args) {
      const t0 = now();
      const r = await client.callTool({ name, arguments: args });
      const ms = now() - t0;
      if (r.isError) throw new Error(`${name}: ${(r.content as { text: string }[])[0]?.text}`);
      return { ms, data: r.structuredContent };
    },
    close: () => client.close(),
  };
}

/** Resident memory of a process, in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Rounds of two contenders, alternating which goes first, an untimed sync before each sample. */
async function interleave(
  rounds: number,
  contenders: Record<string, (round: number) => Promise<number> | number>,
): Promise<Record<string, number[]>> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(r + j) % names.length]!;
      spawnSync('sync');
      samples[name]!.push(await contenders[name]!(r));
    }
  }
  return samples;
}

/**
 * What design.md's invariants alone cost for the 3-file change, with none of hagent's own work
 * (no parse, staleness check, objects, lock, journal or transport): an intent record and three
 * temp files written, fsynced with the record's folder, renamed over the targets (their bytes
 * unchanged), the folders fsynced, and the three entries given to `git update-index`, the
 * process that owns the index (split when large, as in a session worktree); then the record
 * removed. It changes nothing but the index stat data of `worktree`, a worktree of its own.
 * @returns one timed run (ms); the entries and bytes are read once, untimed.
 */
async function durableFloor(
  worktree: string,
  paths: readonly string[],
): Promise<() => Promise<number>> {
  await splitLargeIndex(worktree);
  const gitDir = git(['rev-parse', '--absolute-git-dir'], worktree).trim();
  const entries = git(['ls-files', '-s', '-z', '--', ...paths], worktree)
    .split('\0')
    .filter(Boolean)
    .map((e) => {
      const [meta, rel] = e.split('\t') as [string, string];
      const [mode, oid] = meta.split(' ') as [string, string];
      return `${mode} ${oid}\t${rel}\0`;
    })
    .join('');
  const bytes = await Promise.all(paths.map((p) => fsp.readFile(path.join(worktree, p))));
  const record = path.join(gitDir, 'bench-floor-intent');
  const tmps = paths.map((p) => path.join(worktree, `${p}.bench-floor-tmp`));
  const folders = [...new Set(paths.map((p) => path.dirname(path.join(worktree, p))))];
  const fsyncOf = async (p: string) => {
    const h = await fsp.open(p, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  };
  return async () => {
    const t0 = now();
    await fsp.writeFile(record, JSON.stringify({ paths, tmps }));
    await Promise.all(tmps.map((t, i) => fsp.writeFile(t, bytes[i]!)));
    await Promise.all([record, gitDir, ...tmps].map(fsyncOf));
    await Promise.all(tmps.map((t, i) => fsp.rename(t, path.join(worktree, paths[i]!))));
    await Promise.all(folders.map(fsyncOf));
    const r = spawnSync('git', ['update-index', '-z', '--index-info'], {
      cwd: worktree,
      env: BENCH_ENV,
      input: entries,
    });
    if (r.status !== 0) throw new Error(`git update-index: ${r.stderr}`);
    await fsp.unlink(record);
    return now() - t0;
  };
}

interface SizeFigures {
  apply: number;
  git: number;
  /** {@link durableFloor}'s median in the same rounds. */
  floor: number;
  baseline?: number;
}

/** One build's server on a session of its own, with the 3-file patches made for its worktree. */
interface Contender {
  name: string;
  bin: string;
  id: string;
  server: Server;
  codex: string[];
  repo: string;
}

async function startContender(repo: BenchRepo, name: string, bin: string): Promise<Contender> {
  const id = `mcp-${name}-${Date.now().toString(36)}`;
  const started = JSON.parse(
    spawnSync(process.execPath, [bin, 'session', 'start', '--json', '--name', id], {
      cwd: repo.dir,
      env: BENCH_ENV,
      encoding: 'utf8',
    }).stdout,
  ) as { worktree: string };
  const server = await serve(repo.dir, id, bin);
  const codex = makePatches(repo, started.worktree).codex.map((f) => readFileSync(f, 'utf8'));
  return { name, bin, id, server, codex, repo: repo.dir };
}

async function benchSize(repo: BenchRepo): Promise<SizeFigures> {
  const gid = `mcp-${Date.now().toString(36)}`;
  const gwt = path.join(repo.dir, '.git', 'bench-wt', gid);
  const fwt = `${gwt}-floor`; // the floor's worktree (durableFloor)
  git(['worktree', 'add', '-q', '-b', `bench/${gid}`, gwt, repo.commit], repo.dir);
  const contenders: Contender[] = [];
  try {
    contenders.push(await startContender(repo, 'mcp', HAGENT));
    if (BASELINE) contenders.push(await startContender(repo, 'baseline', BASELINE));
    const patches = makePatches(repo, gwt);
    const gitApply = (which: number) =>
      timedGit(['apply', '--index', patches.udiff[which]!], gwt) +
      timedGit(['commit', '-q', '-m', 'x'], gwt);
    const applyOf = (c: Contender) => async (which: number) =>
      (await c.server.call('apply_patch', { patch: c.codex[which], yes: true })).ms;
    for (const c of contenders) {
      await applyOf(c)(0);
      await applyOf(c)(1);
    } // warm-up, and a check that all apply
    gitApply(0);
    gitApply(1);
    git(['worktree', 'add', '-q', '--detach', fwt, repo.commit], repo.dir);
    const floorRun = await durableFloor(fwt, patches.paths);
    const s = await interleave(RUNS * 2, {
      git: (r) => gitApply(r % 2),
      floor: floorRun,
      ...Object.fromEntries(contenders.map((c) => [c.name, (r: number) => applyOf(c)(r % 2)])),
    });
    const figures: SizeFigures = {
      apply: median(s.mcp!),
      git: median(s.git!),
      floor: median(s.floor!),
    };
    verdict(
      `apply_patch round trip, 3-file patch (${label(repo.n)} files)`,
      figures.apply,
      figures.git,
      0.5,
    );
    say(
      `  floor of a durable apply, the same rounds (${label(repo.n)} files): intent record, temp files, fsyncs, renames and git's index update alone ${fmt(figures.floor)}, ${(figures.floor / figures.git).toFixed(2)} × git (what the invariants cost before hagent's own work)`,
    );
    if (BASELINE) {
      figures.baseline = median(s.baseline!);
      verdict(
        `  baseline build, same rounds (${label(repo.n)} files)`,
        figures.baseline,
        figures.git,
        0.5,
      );
    }

    // Edit: one file, one line replaced and one added (the first file of the 3-file change).
    const e = patches.edits[0]!;
    const oneFile = (reverse: boolean) => {
      const [from, to] = reverse ? [e.newText, e.oldText] : [e.oldText, e.newText];
      // git apply anchors a hunk without leading context at the top of the file: keep the
      // three lines each side as context, as the 3-file diff does.
      const [a, b] = [from.split('\n'), to.split('\n')];
      const body = [
        ...a.slice(0, 3).map((l) => ` ${l}`),
        ...a.slice(3, -3).map((l) => `-${l}`),
        ...b.slice(3, -3).map((l) => `+${l}`),
        ...a.slice(-3).map((l) => ` ${l}`),
      ];
      return `diff --git a/${e.path} b/${e.path}\n--- a/${e.path}\n+++ b/${e.path}\n@@ -${e.startLine},${from.split('\n').length} +${e.startLine},${to.split('\n').length} @@\n${body.join('\n')}\n`;
    };
    const udiffs = [oneFile(false), oneFile(true)];
    const editOf = (c: Contender) => async (which: number) =>
      (
        await c.server.call(
          'edit',
          which
            ? { path: e.path, old_string: e.newText, new_string: e.oldText }
            : { path: e.path, old_string: e.oldText, new_string: e.newText },
        )
      ).ms;
    const gitEdit = (which: number) => {
      const t0 = now();
      const r = spawnSync('git', ['apply', '--index', '-'], {
        cwd: gwt,
        env: BENCH_ENV,
        input: udiffs[which],
      });
      if (r.status !== 0) throw new Error(`git apply: ${r.stderr}`);
      return now() - t0 + timedGit(['commit', '-q', '-m', 'x'], gwt);
    };
    for (const c of contenders) {
      await editOf(c)(0);
      await editOf(c)(1);
    }
    gitEdit(0);
    gitEdit(1);
    const es = await interleave(RUNS * 2, {
      git: (r) => gitEdit(r % 2),
      ...Object.fromEntries(contenders.map((c) => [c.name, (r: number) => editOf(c)(r % 2)])),
    });
    for (const c of contenders)
      verdict(
        `${c.name === 'mcp' ? '' : '  baseline build: '}edit round trip, 1 file (${label(repo.n)} files)`,
        median(es[c.name]!),
        median(es.git!),
        0.5,
      );

    // Read of a 1,000-line file: written once through each server, then read RUNS × 4 times, interleaved.
    const lines =
      Array.from(
        { length: 1000 },
        (_, i) => `export const value${i} = ${i}; // a line of ordinary length for a source file`,
      ).join('\n') + '\n';
    for (const c of contenders) {
      await c.server.call('write', { path: 'bench-read/thousand.ts', content: lines, yes: true });
      for (let i = 0; i < 5; i++) await c.server.call('read', { path: 'bench-read/thousand.ts' });
    }
    const reads: Record<string, number[]> = Object.fromEntries(contenders.map((c) => [c.name, []]));
    for (let i = 0; i < RUNS * 4; i++)
      for (const c of contenders)
        reads[c.name]!.push((await c.server.call('read', { path: 'bench-read/thousand.ts' })).ms);
    for (const c of contenders) {
      const r = median(reads[c.name]!);
      say(
        `${c.name === 'mcp' ? '' : '  baseline build: '}read of a 1,000-line file (${label(repo.n)} files): ${fmt(r)} median, ${fmt(Math.min(...reads[c.name]!))} best (target ≤ 2 ms) ${r <= 2 ? 'PASS' : 'MISS'}`,
      );
    }
    // After all those applies, git must agree with each session's commits: nothing staged or
    // changed in its worktree, and an index git reads cleanly (split at this size or not).
    for (const c of contenders) {
      const wt = (
        JSON.parse(
          spawnSync(process.execPath, [c.bin, 'session', 'status', c.id, '--json'], {
            cwd: repo.dir,
            env: BENCH_ENV,
            encoding: 'utf8',
          }).stdout,
        ) as { worktree: string }
      ).worktree;
      const quiet = { ...BENCH_ENV, GIT_OPTIONAL_LOCKS: '0' };
      for (const args of [
        ['status', '--porcelain'],
        ['diff-index', '--cached', 'HEAD'],
      ]) {
        const r = spawnSync('git', args, { cwd: wt, env: quiet, encoding: 'utf8' });
        if (r.status !== 0 || r.stdout !== '' || r.stderr !== '')
          throw new Error(
            `${c.name}: git ${args.join(' ')} after the rounds: ${r.stdout}${r.stderr}`,
          );
      }
    }
    return figures;
  } finally {
    for (const c of contenders) {
      await c.server.close();
      spawnSync(process.execPath, [c.bin, 'session', 'end', c.id, '--force', '--yes'], {
        cwd: repo.dir,
        env: BENCH_ENV,
      });
    }
    git(['worktree', 'remove', '--force', gwt], repo.dir);
    spawnSync('git', ['worktree', 'remove', '--force', fwt], {
      cwd: repo.dir,
      env: BENCH_ENV,
    });
    git(['branch', '-q', '-D', `bench/${gid}`], repo.dir);
  }
}

/** Figure 5: one server, APPLIES applies (the 3-file patch and its reverse, alternating). */
async function benchMemory(repo: BenchRepo): Promise<void> {
  const id = `mcp-mem-${Date.now().toString(36)}`;
  const started = JSON.parse(
    spawnSync(process.execPath, [HAGENT, 'session', 'start', '--json', '--name', id], {
      cwd: repo.dir,
      env: BENCH_ENV,
      encoding: 'utf8',
    }).stdout,
  ) as { worktree: string };
  const server = await serve(repo.dir, id);
  try {
    const patches = makePatches(repo, started.worktree);
    const codex = patches.codex.map((f) => readFileSync(f, 'utf8'));
    const marks: Record<number, number> = {};
    const t0 = now();
    for (let i = 1; i <= APPLIES; i++) {
      await server.call('apply_patch', { patch: codex[(i - 1) % 2], yes: true });
      if (i === 1 || i === 100 || i % 250 === 0 || i === APPLIES) marks[i] = rssMiB(server.pid);
    }
    const seconds = (now() - t0) / 1000;
    const growth = marks[APPLIES]! / marks[100]! - 1;
    say(
      `server resident memory (${label(repo.n)} files, ${APPLIES} applies in ${seconds.toFixed(0)} s): ${Object.entries(
        marks,
      )
        .map(([k, v]) => `${k}: ${v.toFixed(1)} MiB`)
        .join(
          ', ',
        )}; growth after the first 100: ${(growth * 100).toFixed(1)} % (reported: V8 grows its heap between full collections)`,
    );
    await server.close();
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) {
      say('server live heap: not measured (run with node --expose-gc)');
      return;
    }
    // The same server in this process, on the in-memory transport: live heap after full collections.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const binding = new SessionBinding(await openRepo(repo.dir), id, BENCH_ENV);
    await createServer(binding, 'bench').connect(serverSide);
    const client = new Client({ name: 'hagent-bench', version: '1' });
    await client.connect(clientSide);
    const heap: Record<number, number> = {};
    for (let i = 1; i <= APPLIES; i++) {
      const r = await client.callTool({
        name: 'apply_patch',
        arguments: { patch: codex[(i - 1) % 2], yes: true },
      });
      if (r.isError) throw new Error(`apply_patch: ${JSON.stringify(r.content)}`);
      if (i === 100 || i % 250 === 0 || i === APPLIES) {
        gc();
        gc();
        heap[i] = process.memoryUsage().heapUsed / 2 ** 20;
      }
    }
    await client.close();
    binding.close();
    const heapGrowth = heap[APPLIES]! / heap[100]! - 1;
    say(
      `server live heap after full collections (${label(repo.n)} files, in-process, same tools and SDK): ${Object.entries(
        heap,
      )
        .map(([k, v]) => `${k}: ${v.toFixed(1)} MiB`)
        .join(
          ', ',
        )}; growth after the first 100: ${(heapGrowth * 100).toFixed(1)} % (target ≤ 20 %) ${heapGrowth <= 0.2 ? 'PASS' : 'MISS'}`,
    );
  } finally {
    await server.close().catch(() => undefined);
    spawnSync(process.execPath, [HAGENT, 'session', 'end', id, '--force', '--yes'], {
      cwd: repo.dir,
      env: BENCH_ENV,
    });
  }
}

/**
 * Figure 2 in one set of rounds: servers on the smallest and the largest repository at once,
 * their applies interleaved (with the baseline build's, if any), so that a change of the
 * machine's load between the per-size phases does not enter the ratio.
 */
async function benchSizeRatio(small: number, large: number): Promise<void> {
  const repos = [await ensureRepo(small), await ensureRepo(large)];
  for (const r of repos) resetRepo(r); // before any session: a reset removes every pooled worktree
  const contenders: Contender[] = [];
  try {
    for (const r of repos) {
      contenders.push(await startContender(r, `mcp-${r.n}`, HAGENT));
      if (BASELINE) contenders.push(await startContender(r, `baseline-${r.n}`, BASELINE));
    }
    const applyOf = (c: Contender) => async (which: number) =>
      (await c.server.call('apply_patch', { patch: c.codex[which], yes: true })).ms;
    for (const c of contenders) {
      await applyOf(c)(0);
      await applyOf(c)(1);
    }
    const s = await interleave(
      RUNS * 2,
      Object.fromEntries(contenders.map((c) => [c.name, (r: number) => applyOf(c)(r % 2)])),
    );
    for (const build of BASELINE ? ['mcp', 'baseline'] : ['mcp']) {
      const [a, b] = [median(s[`${build}-${large}`]!), median(s[`${build}-${small}`]!)];
      say(
        `${build === 'mcp' ? '' : '  baseline build: '}apply_patch round trip ${label(large)} ÷ ${label(small)} files, interleaved in one set of rounds: ${fmt(a)} vs ${fmt(b)}, ratio ${(a / b).toFixed(2)} (target ≤ 1.2) ${a / b <= 1.2 ? 'PASS' : 'MISS'}`,
      );
    }
  } finally {
    for (const c of contenders) {
      await c.server.close();
      spawnSync(process.execPath, [c.bin, 'session', 'end', c.id, '--force', '--yes'], {
        cwd: c.repo,
        env: BENCH_ENV,
      });
    }
    for (const r of repos) resetRepo(r);
  }
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(
    `hagent mcp benchmarks: ${cpus.length} cpus, load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(
        ' ',
      )}, node ${process.version}, ${spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout.trim()}, ${RUNS} rounds`,
  );
  const bySize = new Map<number, SizeFigures>();
  for (const n of SIZES) {
    const repo = await ensureRepo(n, (s) => console.log(s));
    resetRepo(repo);
    try {
      bySize.set(n, await benchSize(repo));
      if (n === SIZES[0] && APPLIES > 0) await benchMemory(repo);
    } finally {
      resetRepo(repo);
    }
  }
  if (bySize.size >= 2) {
    const small = Math.min(...bySize.keys());
    const large = Math.max(...bySize.keys());
    const ratio = bySize.get(large)!.apply / bySize.get(small)!.apply;
    say(
      `apply_patch round trip ${label(large)} ÷ ${label(small)} files, from the per-size rounds (minutes apart): ${fmt(bySize.get(large)!.apply)} vs ${fmt(bySize.get(small)!.apply)}, ratio ${ratio.toFixed(2)}`,
    );
    const [fl, fs] = [bySize.get(large)!.floor, bySize.get(small)!.floor];
    say(
      `  floor of a durable apply ${label(large)} ÷ ${label(small)} files, per-size rounds: ${fmt(fl)} vs ${fmt(fs)}, ratio ${(fl / fs).toFixed(2)}`,
    );
    const [bl, bs] = [bySize.get(large)!.baseline, bySize.get(small)!.baseline];
    if (bl !== undefined && bs !== undefined)
      say(
        `  baseline build: ${label(large)} ÷ ${label(small)} files, per-size rounds: ${fmt(bl)} vs ${fmt(bs)}, ratio ${(bl / bs).toFixed(2)}`,
      );
    await benchSizeRatio(small, large);
  }
  console.log('\nsummary:');
  for (const l of summary) console.log(`  ${l}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
  process.exitCode = 1;
});
