/**
 * Test helpers: real git repositories in temp folders, the real CLI spawned as a process,
 * and whole-tree snapshots. Identities and dates are pinned so commit ids are deterministic.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  mkdtempSync,
  promises as fs,
  readdirSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
  mkdirSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordCodes } from './codes.js';

/** Repository root of hagent. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI. `npm test` builds it first. */
export const BIN = path.join(ROOT, 'dist', 'hagent.cjs');
/** Shared conformance cases: ../shared/cases beside the repository, or $HAGENT_CASES. */
export const CASES_DIR = process.env.HAGENT_CASES ?? path.resolve(ROOT, '..', 'shared', 'cases');

/**
 * The user cache folder of every process the tests spawn, where session worktrees go by default:
 * one per test process, removed when it exits, never the tester's own.
 */
export const TEST_CACHE = path.join(os.tmpdir(), `hagent-test-cache-${process.pid}`);

/** The helpers' fixed identity and dates, for tests that let the repository's config decide. */
export const IDENTITY_VARS = [
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_DATE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
];

export const GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Test User',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test User',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  NO_COLOR: '1',
  XDG_CACHE_HOME: TEST_CACHE,
};

const tempDirs: string[] = [TEST_CACHE];
process.on('exit', () => {
  if (process.env.HAGENT_KEEP_TMP) return;
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp folder, removed when the test process exits. */
export function tempDir(prefix = 'hagent-test-'): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

/** Runs git synchronously; throws with stderr on failure. Returns stdout trimmed of its final newline. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr}`);
  return r.stdout.replace(/\n$/, '');
}

/** Writes files (path → text or Buffer) under `dir`, creating folders. */
export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

/** A git repository on branch main with `files` committed in one commit. */
export function makeRepo(
  files: Record<string, string | Buffer> = { 'README.md': '# demo\n' },
): string {
  const dir = tempDir('hagent-repo-');
  git(dir, 'init', '-q', '--initial-branch=main');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** Result of one CLI run. `json` is the parsed stdout when it is JSON. */
export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Spawns the built hagent CLI with no TTY; `unsetEnv` names variables of GIT_ENV (or the process) to leave out. */
export function hagent(
  cwd: string,
  args: string[],
  options: {
    input?: string | Buffer;
    env?: Record<string, string>;
    unsetEnv?: readonly string[];
    timeoutMs?: number;
  } = {},
): CliResult {
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV, ...options.env };
  for (const k of options.unsetEnv ?? []) delete env[k];
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    input: options.input ?? '',
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const } : {}),
  });
  recordCodes(r.stdout, r.stderr);
  let json: any = null;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = null;
  }
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json };
}

/**
 * The human reads a session's review (`hagent review --stat`, no agent marker): what a later
 * `hagent review --approve` from this process's terminal approves. Does not assert: a test of a
 * refusal may look at a session that cannot be reviewed.
 */
export function look(cwd: string, session?: string): CliResult {
  const s = session === undefined ? [] : ['--session', session];
  return hagent(cwd, ['review', '--stat', '--json', ...s], { unsetEnv: ['HAGENT_AGENT'] });
}

/** A patch replacing the line `from` of `file` with `to`: one chunk, no context. */
export const updatePatch = (file: string, from: string, to: string): string =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

/** A repository of `files` (three lines in a.txt, one in b.txt by default) and a session s1 on it. */
export function repoWithSession(
  files: Record<string, string> = { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' },
): { repo: string; s: ReturnType<typeof startSession> } {
  const repo = makeRepo(files);
  const s = startSession(repo, ['--name', 's1']);
  return { repo, s };
}

/** Starts a session in `repo` and returns its JSON (id, worktree, branch, base, target). */
export function startSession(
  repo: string,
  extra: string[] = [],
): { id: string; worktree: string; branch: string; base: string; target: string | null } {
  const r = hagent(repo, ['session', 'start', '--json', ...extra]);
  if (r.status !== 0) throw new Error(`session start failed: ${r.stdout}${r.stderr}`);
  return r.json;
}

/** One entry of a tree snapshot: file bytes + executable bit, or a symlink target. */
export type SnapEntry =
  { kind: 'file'; bytes: Buffer; exec: boolean } | { kind: 'link'; target: string };

/** Every file and symlink below `dir` (ignoring `.git` and `ignore` names), by relative path. */
export function snapshotTree(
  dir: string,
  ignore: string[] = ['.git', '.keep'],
): Map<string, SnapEntry> {
  const out = new Map<string, SnapEntry>();
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      if (ignore.includes(name)) continue;
      const abs = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) out.set(r, { kind: 'link', target: readlinkSync(abs) });
      else if (st.isDirectory()) walk(abs, r);
      else out.set(r, { kind: 'file', bytes: readFileSync(abs), exec: (st.mode & 0o111) !== 0 });
    }
  };
  walk(dir, '');
  return out;
}

/** Describes the first difference between two snapshots, or null when equal. */
export function diffSnapshots(
  actual: Map<string, SnapEntry>,
  expected: Map<string, SnapEntry>,
): string | null {
  for (const [p, e] of expected) {
    const a = actual.get(p);
    if (!a) return `missing ${p}`;
    if (a.kind !== e.kind) return `${p}: ${a.kind} instead of ${e.kind}`;
    if (a.kind === 'file' && e.kind === 'file') {
      if (!a.bytes.equals(e.bytes))
        return `${p}: bytes differ\n--- expected\n${JSON.stringify(e.bytes.toString('utf8'))}\n--- actual\n${JSON.stringify(a.bytes.toString('utf8'))}`;
      if (a.exec !== e.exec) return `${p}: executable bit ${a.exec} instead of ${e.exec}`;
    }
    if (a.kind === 'link' && e.kind === 'link' && a.target !== e.target)
      return `${p}: link target differs`;
  }
  for (const p of actual.keys()) if (!expected.has(p)) return `unexpected ${p}`;
  return null;
}

/** Copies a folder (files, symlinks, exec bits) into another. */
export async function copyTree(from: string, to: string): Promise<void> {
  await fs.cp(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: false });
}

/**
 * Writes the intent record an apply killed mid-transaction leaves for `session` (at the session
 * head), as src/transaction/intent.ts stores it. Targets give blob ids (null: absent), mode 100644.
 */
export function writeIntentRecord(
  repo: string,
  session: string,
  o: {
    txid: string;
    pid?: number;
    startedAt?: Date;
    targets: { rel: string; prior: string | null; next: string | null }[];
  },
): void {
  const head = git(repo, 'rev-parse', `hagent/${session}`);
  const common = git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
  const side = (oid: string | null) => (oid === null ? null : { oid, mode: '100644' });
  writeFiles(common, {
    [`hagent/tx/${session}.json`]: JSON.stringify({
      version: 1,
      txid: o.txid,
      session,
      command: 'apply',
      pid: o.pid ?? 1,
      startedAt: (o.startedAt ?? new Date()).toISOString(),
      head,
      commit: null,
      message: `hagent: ${o.targets.map((t) => `M ${t.rel}`).join(', ')}\n`,
      note: null,
      targets: o.targets.map((t) => ({
        rel: t.rel,
        prior: side(t.prior),
        next: side(t.next),
        tmp: null,
      })),
    }),
  });
}
