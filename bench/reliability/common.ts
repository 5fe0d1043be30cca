/**
 * What the reliability figures (r1-kill.ts … r5-paths.ts, io-diskfull.ts, kills.ts) share: the
 * figure's shape, the real CLI spawned asynchronously (killable with every git it started), a
 * seeded PRNG, session reads, the recovery command, and the anchored files their patches
 * insert into by context. Nothing here checks a result: see test/helpers/repo-checks.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { recordCodes } from '../../test/helpers/codes.js';
import { BIN, GIT_ENV, git } from '../../test/helpers/index.js';
import { prng } from '../../test/helpers/random.js';

/** The outcome of one scenario. `failures` empty means hagent held up. */
export interface Figure {
  id: string;
  line: string;
  counts: Record<string, number>;
  failures: string[];
  /** Things worth knowing that are not failures (e.g. a fault that could not be injected here). */
  notes: string[];
  /** Why the scenario could not run here (a tool or privilege missing); nothing was checked. */
  skipped?: string;
}

export type Session = { id: string; worktree: string; branch: string; base: string };

/** A seeded PRNG (mulberry32), so a failing run can be replayed with the same seed. */
export const rng = prng;
/** One element of `xs`, drawn with `r`. */
export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
/** An integer in [lo, hi], drawn with `r`. */
export const int = (r: () => number, lo: number, hi: number) =>
  lo + Math.floor(r() * (hi - lo + 1));

/** Result of one asynchronous CLI run. `killed` when it was SIGKILLed by us before it exited. */
export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  json: any;
  killed: boolean;
  startedAt: number;
  endedAt: number;
}

/**
 * Spawns the built CLI (no TTY), without GIT_ENV's fixed dates. `killAfterMs` SIGKILLs the whole process group (hagent and the
 * git processes it started: a crash of the apply) after that delay.
 */
export function cli(
  cwd: string,
  args: string[],
  options: {
    input?: string | Buffer;
    env?: Record<string, string>;
    killAfterMs?: number;
    argv0?: string[];
  } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const cmd = options.argv0 ? options.argv0[0]! : process.execPath;
    const argv = options.argv0
      ? [...options.argv0.slice(1), process.execPath, BIN, ...args]
      : [BIN, ...args];
    // No fixed commit dates, as on a user's machine: apply then writes its commits in-process
    // (git/commit-direct.ts), the path the faults must hit.
    const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV, ...options.env };
    delete env.GIT_AUTHOR_DATE;
    delete env.GIT_COMMITTER_DATE;
    const child: ChildProcess = spawn(cmd, argv, {
      cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
    let timer: NodeJS.Timeout | undefined;
    if (options.killAfterMs !== undefined) {
      timer = setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        killed = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          killed = false;
        }
      }, options.killAfterMs);
    }
    child.on('close', (status, signal) => {
      if (timer) clearTimeout(timer);
      recordCodes(stdout, stderr);
      let json: any = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = null;
      }
      resolve({
        status,
        signal,
        stdout,
        stderr,
        json,
        killed: killed && signal === 'SIGKILL',
        startedAt,
        endedAt: Date.now(),
      });
    });
  });
}

/** The commit the session branch points at. */
export function headOf(repo: string, s: Session): string {
  return git(repo, 'rev-parse', `refs/heads/${s.branch}`);
}

/** The session head read from its loose ref file (falls back to git when the ref is packed). */
export function headFast(repo: string, common: string, s: Session): string {
  try {
    return readFileSync(path.join(common, 'refs', 'heads', s.branch), 'utf8').trim();
  } catch {
    return headOf(repo, s);
  }
}

/** `<git-common-dir>` of a repository (absolute). */
export function commonDirOf(repo: string): string {
  return path.resolve(repo, git(repo, 'rev-parse', '--git-common-dir'));
}

/** Whether the CLI has a command (doctor, sync), read from `hagent --help`. Cached. */
const commandCache = new Map<string, boolean>();
export function cliHas(command: string): boolean {
  if (!commandCache.has(command)) {
    const r = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    commandCache.set(command, new RegExp(`^\\s+hagent ${command}\\b`, 'm').test(r.stdout));
  }
  return commandCache.get(command)!;
}

/** A patch that parses but never applies (its context is nowhere): the "next command" that recovers. */
export const PROBE_PATCH =
  '*** Begin Patch\n*** Update File: probe.txt\n-this line is not in the file\n+x\n*** End Patch\n';

/**
 * The next command on the session after a crash, which must recover it: `hagent doctor
 * --session ID` when it exists, on odd calls, and otherwise an apply of {@link PROBE_PATCH}
 * (refused with CONTEXT_NOT_FOUND after recovering). Returns the run and what ran.
 */
let recoverCalls = 0;
export async function recoverSession(
  repo: string,
  s: Session,
): Promise<{ run: Run; via: 'doctor' | 'apply' }> {
  recoverCalls++;
  if (cliHas('doctor') && recoverCalls % 2 === 1) {
    return { run: await cli(repo, ['doctor', '--session', s.id, '--json']), via: 'doctor' };
  }
  return {
    run: await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH }),
    via: 'apply',
  };
}

/** The error code of a refused run, or a description of what else happened. */
export function codeOf(r: Run): string {
  if (r.status === 0) return 'OK';
  if (r.json?.error?.code) return String(r.json.error.code);
  return `exit ${r.status}${r.signal ? ` ${r.signal}` : ''} (no JSON error)`;
}

/** Counts one more `key` in `map` (codes seen, for the figure's notes). */
export function tally(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** `map` as `KEY n, …`, most frequent first. */
export function fmtTally(map: Record<string, number>): string {
  return Object.entries(map)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

/** The SHA-1 of some bytes, hex (to name bytes in a failure). */
export const sha1 = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

/** Lines `anchor-0 … anchor-(n-1)` separated by filler: a file every scenario can insert into by context. */
export function anchoredFile(tag: string, anchors: number): string {
  const lines: string[] = [];
  for (let i = 0; i < anchors; i++)
    lines.push(`${tag} filler ${i}`, `anchor-${i}`, `${tag} tail ${i}`);
  return lines.join('\n') + '\n';
}

/** An update chunk inserting `line` after `anchor-k`. One context line: unique in its file. */
export const insertAfter = (file: string, k: number, line: string) =>
  `*** Update File: ${file}\n@@\n anchor-${k}\n+${line}\n`;

/** How many lines of `text` are exactly `line`. */
export function lineCount(text: string, line: string): number {
  let n = 0;
  for (const l of text.split('\n')) if (l === line) n++;
  return n;
}
