/**
 * Generates (and caches) a git repository of N text files for the benchmarks.
 *
 * Layout: nested folders of ~20 files each (folder names from a word list, 2–5 levels deep),
 * text files of 20–200 lines, one commit on `main`, checked out. The content is deterministic
 * (seeded PRNG), so two generations of the same N give the same commit id.
 *
 * Speed: the blobs and the commit are streamed into one `git fast-import`, then the working tree
 * is written by `git read-tree -u` (no per-file `git add`).
 *
 * Cache: `os.tmpdir()/hagent-bench/repo-<N>-v<VERSION>`; a finished repository has the marker
 * file `.git/hagent-bench.json`. Run directly to (re)generate:
 *   node --import tsx bench/gen-repo.ts 1000 20000 100000
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from '../test/helpers/random.js';

/** Bump when the generated content or layout changes: old caches are then ignored. */
const VERSION = 1;
const FILES_PER_FOLDER = 20;
const FANOUT = 8;

/** Environment of every git (and hagent) process the benchmarks spawn. */
export const BENCH_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  HAGENT_MAX_FILES: '1000000',
  HAGENT_MAX_CHANGED_LINES: '100000000',
  // Session worktrees beside the repositories (same file system as git's in the figures), not in
  // the user's cache folder.
  HAGENT_WORKTREE_ROOT: path.join(os.tmpdir(), 'hagent-bench', 'worktrees'),
  NO_COLOR: '1',
};

/** What the benchmarks need to know about a generated repository. */
export interface BenchRepo {
  /** Files in the commit. */
  n: number;
  /** Repository root (working tree of `main`). */
  dir: string;
  /** The one commit of `main`. */
  commit: string;
  /** Seconds the generation took (0 when it came from the cache). */
  generatedInSec: number;
}

export function benchRoot(): string {
  return path.join(os.tmpdir(), 'hagent-bench');
}

let lockHeld = false;

/**
 * Makes this process the only bench using the cache folder until it exits: `resetRepo` removes
 * every worktree and ref of a cached repository, so a second bench on the same cache would break
 * the first (and two benches at once measure each other anyway). A second one waits, saying for
 * whom; a lock whose process is gone is taken over. Another cache folder (`TMPDIR=…`) runs
 * apart.
 */
export function holdBenchLock(log: (s: string) => void): void {
  if (lockHeld) return;
  mkdirSync(benchRoot(), { recursive: true });
  const file = path.join(benchRoot(), 'bench.lock');
  let told = false;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = readText(file);
    const holder = Number(text);
    // An empty file is one being written: its writer is alive.
    if (text !== '' && !alive(holder)) {
      if (readText(file) === text) rmSync(file, { force: true });
      continue;
    }
    if (!told) log(`waiting for the bench of process ${holder} (it uses ${benchRoot()}) …`);
    told = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
  }
  lockHeld = true;
  process.once('exit', () => rmSync(file, { force: true }));
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return 'gone';
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs git synchronously; throws with stderr on failure. */
export function git(args: readonly string[], cwd: string, extra: SpawnSyncOptions = {}): string {
  const r = spawnSync('git', args, {
    cwd,
    env: BENCH_ENV,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    ...extra,
  });
  if (r.error) throw r.error;
  if (r.status !== 0)
    throw new Error(
      `git ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${String(r.stderr).trim()}`,
    );
  return String(r.stdout);
}

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'omega',
  'core',
  'util',
  'model',
  'view',
  'store',
  'cache',
  'query',
  'index',
  'parser',
  'render',
  'widget',
  'event',
  'queue',
  'router',
  'client',
  'server',
  'config',
  'auth',
  'user',
  'order',
  'billing',
  'report',
  'search',
  'upload',
  'stream',
  'buffer',
  'token',
  'schema',
  'layout',
  'theme',
  'plugin',
  'worker',
  'session',
  'metric',
  'trace',
];
const EXTS = ['ts', 'ts', 'ts', 'js', 'py', 'md', 'go', 'json', 'css', 'txt'];
const TOP = ['src', 'lib', 'packages', 'services', 'docs', 'tools', 'apps', 'internal'];

/** Relative folder of folder number `k` (of `folders`): 2–5 levels, ~FANOUT sub-folders each. */
function folderOf(k: number, folders: number): string {
  let depth = 1;
  while (FANOUT ** depth < folders) depth++;
  const parts: string[] = [];
  let rest = k;
  for (let d = 0; d < depth; d++) {
    const digit = rest % FANOUT;
    rest = Math.floor(rest / FANOUT);
    parts.push(`${WORDS[(digit * 5 + d * 3) % WORDS.length]}${d === 0 ? '' : `-${digit}`}`);
  }
  return [TOP[k % TOP.length]!, ...parts.reverse()].join('/');
}

/** One line of "code": mostly unique, with the blank lines and braces real files have. */
function line(rand: () => number, i: number): string {
  const r = rand();
  if (r < 0.06) return '';
  if (r < 0.1) return '}';
  const w1 = WORDS[Math.floor(rand() * WORDS.length)]!;
  const w2 = WORDS[Math.floor(rand() * WORDS.length)]!;
  const n = Math.floor(rand() * 100000);
  const indent = '  '.repeat(Math.floor(rand() * 3));
  switch (Math.floor(rand() * 4)) {
    case 0:
      return `${indent}const ${w1}${i} = ${w2}(${n});`;
    case 1:
      return `${indent}if (${w1}.${w2} > ${n}) return ${w2}${i};`;
    case 2:
      return `${indent}// ${w1} ${w2} handles case ${n} at step ${i}`;
    default:
      return `${indent}${w1}.${w2}${i}(${n}, '${w2}');`;
  }
}

function fileText(rand: () => number): string {
  const count = 20 + Math.floor(rand() * 181);
  const lines = new Array<string>(count);
  for (let i = 0; i < count; i++) lines[i] = line(rand, i);
  return lines.join('\n') + '\n';
}

/** Paths of the N files, in the order they are generated. */
export function filePaths(n: number): string[] {
  const folders = Math.ceil(n / FILES_PER_FOLDER);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % folders;
    const j = Math.floor(i / folders);
    const ext = EXTS[(i * 7 + j) % EXTS.length]!;
    out.push(`${folderOf(k, folders)}/${WORDS[j % WORDS.length]}_${j}.${ext}`);
  }
  return out;
}

function repoDir(n: number): string {
  return path.join(benchRoot(), `repo-${n}-v${VERSION}`);
}

function markerPath(dir: string): string {
  return path.join(dir, '.git', 'hagent-bench.json');
}

/** Streams N files and one commit into `git fast-import` in `dir`. */
async function fastImport(dir: string, n: number): Promise<void> {
  // glibc's malloc returns memory to the kernel after every blob (thousands of brk calls a
  // second): a large top pad / trim threshold makes fast-import ~2-5x faster here.
  const env = {
    ...BENCH_ENV,
    MALLOC_TOP_PAD_: String(256 << 20),
    MALLOC_TRIM_THRESHOLD_: String(512 << 20),
  };
  const child = spawn(
    'git',
    ['-c', 'pack.compression=1', 'fast-import', '--quiet', '--done', '--depth=0'],
    { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
  const stdin = child.stdin;
  const chunks: string[] = [];
  let pending = 0;
  const flush = async (): Promise<void> => {
    if (!chunks.length) return;
    const ok = stdin.write(chunks.join(''));
    chunks.length = 0;
    pending = 0;
    if (!ok) await new Promise<void>((r) => stdin.once('drain', () => r()));
  };
  const push = async (s: string): Promise<void> => {
    chunks.push(s);
    pending += s.length;
    if (pending > 1 << 20) await flush();
  };
  const paths = filePaths(n);
  const rand = prng(0x5eed ^ n);
  const msg = `bench repository of ${n} files\n`;
  await push(
    `commit refs/heads/main\nauthor bench <bench@example.com> 1700000000 +0000\ncommitter bench <bench@example.com> 1700000000 +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`,
  );
  for (const p of paths) {
    const text = fileText(rand); // ASCII only: length is the byte count
    await push(`M 100644 inline ${p}\ndata ${text.length}\n${text}\n`);
  }
  await push('\ndone\n');
  await flush();
  stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import exited ${code}: ${stderr.trim()}`);
}

/**
 * Returns the cached repository of `n` files, generating it when missing.
 * The caller may move `main`, add worktrees and refs: {@link resetRepo} puts it back.
 */
export async function ensureRepo(
  n: number,
  log: (s: string) => void = () => undefined,
): Promise<BenchRepo> {
  holdBenchLock(log);
  const dir = repoDir(n);
  if (existsSync(markerPath(dir))) {
    const meta = JSON.parse(readFileSync(markerPath(dir), 'utf8')) as { commit: string };
    return { n, dir, commit: meta.commit, generatedInSec: 0 };
  }
  const started = performance.now();
  log(`generating a repository of ${n} files in ${dir} …`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  git(['init', '-q', '-b', 'main', '.'], dir);
  // Plain, predictable repository: no hooks, no fsmonitor, no auto gc while benchmarking.
  for (const [k, v] of [
    ['gc.auto', '0'],
    ['maintenance.auto', 'false'],
    ['core.fsmonitor', 'false'],
    ['core.untrackedCache', 'false'],
    ['user.name', 'bench'],
    ['user.email', 'bench@example.com'],
    ['commit.gpgSign', 'false'],
  ] as const) {
    git(['config', k, v], dir);
  }
  await fastImport(dir, n);
  const imported = performance.now();
  git(['read-tree', '-m', '-u', 'main'], dir); // writes the working tree and the index in one go
  log(
    `  fast-import ${((imported - started) / 1000).toFixed(1)} s, checkout ${((performance.now() - imported) / 1000).toFixed(1)} s`,
  );
  const commit = git(['rev-parse', 'main'], dir).trim();
  const count = Number(
    git(['ls-tree', '-r', '--name-only', '-z', 'main'], dir).split('\0').filter(Boolean).length,
  );
  if (count !== n) throw new Error(`generated ${count} files, wanted ${n}`);
  writeFileSync(markerPath(dir), JSON.stringify({ n, commit, version: VERSION }) + '\n');
  const secs = (performance.now() - started) / 1000;
  log(`  done in ${secs.toFixed(1)} s (commit ${commit.slice(0, 12)})`);
  return { n, dir, commit, generatedInSec: secs };
}

/**
 * Puts a cached repository back as generated: every extra worktree and ref gone, hagent's folder
 * gone, `main` checked out at the generated commit with a clean working tree.
 */
export function resetRepo(repo: BenchRepo): void {
  const { dir } = repo;
  const list = git(['worktree', 'list', '--porcelain', '-z'], dir).split('\0');
  const top = path.resolve(dir);
  for (const l of list) {
    if (!l.startsWith('worktree ')) continue;
    const wt = l.slice(9);
    if (path.resolve(wt) !== top) rmSync(wt, { recursive: true, force: true });
  }
  git(['worktree', 'prune'], dir);
  rmSync(path.join(dir, '.git', 'hagent'), { recursive: true, force: true });
  rmSync(path.join(dir, '.git', 'bench-wt'), { recursive: true, force: true });
  rmSync(path.join(benchRoot(), 'worktrees'), { recursive: true, force: true }); // the pools too
  const refs = git(['for-each-ref', '--format=%(refname)'], dir)
    .split('\n')
    .filter((r) => r && r !== 'refs/heads/main');
  if (refs.length)
    git(['update-ref', '--stdin'], dir, { input: refs.map((r) => `delete ${r}\n`).join('') });
  if (git(['symbolic-ref', '-q', 'HEAD'], dir).trim() !== 'refs/heads/main')
    git(['checkout', '-q', '-f', 'main'], dir);
  if (git(['rev-parse', 'HEAD'], dir).trim() !== repo.commit)
    git(['reset', '-q', '--hard', repo.commit], dir);
  // Keep the reflogs from growing run after run.
  git(['reflog', 'expire', '--expire=all', '--all'], dir);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => x > 0);
  for (const n of sizes.length ? sizes : [1000, 20000, 100000]) {
    const r = await ensureRepo(n, (s) => console.log(s));
    console.log(
      `${n}: ${r.dir} ${r.commit}${r.generatedInSec ? ` (${r.generatedInSec.toFixed(1)} s)` : ' (cached)'}`,
    );
  }
}

/** The built CLI every bench spawns (`npm run build` first). */
export const HAGENT_BIN = path.join(
  path.resolve(path.dirname(new URL(import.meta.url).pathname), '..'),
  'dist',
  'hagent.cjs',
);

/** The number after `--<name>` on the bench's command line, or `def`. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}
