/**
 * The only code in hagent that spawns git. Sets git hygiene once (design.md invariant 7):
 * no user hooks, no fsmonitor, no signing, no prompts, C messages, and no inherited
 * GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE from a calling hook. Nothing an agent could plant
 * changes what hagent's git reads or runs: replace refs are ignored (`GIT_NO_REPLACE_OBJECTS`),
 * and configuration, programs and object sources given through the environment are not passed on
 * (the list, with what stays, is in docs/human-only.md).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { HagentError } from '../errors.js';
import { trace, tracing } from '../trace/index.js';

const nodeRequire = createRequire(import.meta.url);
let childProcess: typeof import('node:child_process') | undefined;
/**
 * Node's child_process, loaded on the first spawn: it brings Node's net and stream modules
 * (~2 ms of a start), and a hook that finds every object it needs in the loose store (the usual
 * native edit) spawns no git at all.
 */
function spawn(
  ...args: Parameters<typeof import('node:child_process').spawn>
): ReturnType<typeof import('node:child_process').spawn> {
  childProcess ??= nodeRequire('node:child_process') as typeof import('node:child_process');
  return childProcess.spawn(...args);
}

/** Options of {@link runGit}. `cwd` is required: nothing below commands/ reads process.cwd(). */
export interface RunGitOptions {
  cwd: string;
  /** Bytes or text written to git's stdin; stdin is closed when absent. */
  input?: string | Uint8Array;
  /** Extra environment (e.g. GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>;
  /** Return a non-zero exit instead of throwing GIT_FAILED. */
  allowFailure?: boolean;
  /** `GIT_OPTIONAL_LOCKS=0`, for status in the user's checkout (design.md invariant 7). */
  noOptionalLocks?: boolean;
  /**
   * Runs git in a process group of its own, for the steps of a transaction that hold git's
   * locks (`update-index`, `read-tree -u`): a kill of hagent's group (kill -9 of a whole job,
   * Ctrl-C) then never stops git between taking a lock and releasing it; git finishes the one
   * step, or dies of the broken pipe through its own handlers, which remove its lock files.
   */
  detached?: boolean;
}

/** Outcome of one git process. `durationMs` is wall time in milliseconds. */
export interface GitResult {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
  durationMs: number;
}

const NULL_DEVICE = process.platform === 'win32' ? 'NUL' : '/dev/null';

/** Config every internal git call carries (argv `-c` pairs). */
const HYGIENE = [
  '-c',
  `core.hooksPath=${NULL_DEVICE}`,
  '-c',
  'core.fsmonitor=false',
  '-c',
  'commit.gpgSign=false',
  '-c',
  'tag.gpgSign=false',
  '-c',
  'core.quotePath=false',
  '-c',
  'advice.detachedHead=false',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

/** Variables that point git at another repository, index or object store (a calling hook's). */
export const REPOSITORY_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_PREFIX',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
];

const DROPPED_ENV = [
  ...REPOSITORY_ENV,
  'LC_ALL',
  'LANGUAGE',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'PAGER',
  // What a caller's environment could plant: configuration, programs, other objects and refs.
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_EXEC_PATH',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_REPLACE_REF_BASE',
  'GIT_GRAFT_FILE',
  'GIT_SHALLOW_FILE',
  'GIT_ATTR_SOURCE',
  'GIT_NAMESPACE',
  'GIT_QUARANTINE_PATH',
];

function gitEnv(
  extra: Record<string, string> | undefined,
  noOptionalLocks: boolean | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of DROPPED_ENV) delete env[key];
  for (const key of Object.keys(env)) if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(key)) delete env[key];
  env.GIT_NO_REPLACE_OBJECTS = '1';
  env.LC_MESSAGES = 'C';
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_PAGER = 'cat';
  if (noOptionalLocks) env.GIT_OPTIONAL_LOCKS = '0';
  return { ...env, ...extra };
}

/**
 * Runs `git <args>` with hygiene config, argv array only (never a shell string).
 * @returns exit code, stdout bytes, stderr text, duration in ms.
 * @throws HagentError GIT_FAILED when git exits non-zero (unless `allowFailure`), carrying argv,
 *   exit code and stderr; GIT_FAILED with hint when git cannot be spawned at all.
 */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...HYGIENE, ...args], {
      cwd: options.cwd,
      env: gitEnv(options.env, options.noOptionalLocks),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
      ...(options.detached ? { detached: true } : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e: NodeJS.ErrnoException) => reject(spawnError(e, args, options.cwd)));
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => {
        /* git may exit before reading all input; its exit code tells */
      });
      child.stdin.end(options.input);
    }
    child.on('close', (code, signal) => {
      const result: GitResult = {
        exitCode: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString('utf8'),
        durationMs: performance.now() - started,
      };
      if (tracing())
        trace(`git ${args.slice(0, 2).join(' ')} (${result.durationMs.toFixed(1)} ms)`);
      if (result.exitCode !== 0 && !options.allowFailure) {
        reject(gitFailed(args, result.exitCode, result.stderr));
        return;
      }
      resolve(result);
    });
  });
}

/** The GIT_FAILED error of `git <args>` that exited `exitCode` with `stderr` (its last line shown). */
export function gitFailed(args: readonly string[], exitCode: number, stderr: string): HagentError {
  const firstLine = stderr.trim().split('\n').pop() ?? '';
  return new HagentError(
    'GIT_FAILED',
    `git ${args[0]} failed (exit ${exitCode})${firstLine ? `: ${firstLine}` : ''}`,
    { argv: ['git', ...args], exitCode, stderr: stderr.trim() },
    'this git error was not expected; the files and refs are as they were before the command',
  );
}

/**
 * Why git could not be spawned. Node reports a missing working folder as ENOENT too, like a
 * missing git: the folder is checked first, so a removed or mistyped folder is not called
 * "git missing". @returns IO_FAILED (the folder does not exist or is not a folder) or GIT_FAILED.
 */
function spawnError(e: NodeJS.ErrnoException, args: readonly string[], cwd: string): HagentError {
  if (e.code === 'ENOENT' || e.code === 'ENOTDIR') {
    const st = statSync(cwd, { throwIfNoEntry: false });
    if (!st?.isDirectory()) {
      return new HagentError(
        'IO_FAILED',
        `the folder ${cwd} ${st ? 'is not a folder' : 'does not exist'}`,
        { path: cwd, errno: st ? 'ENOTDIR' : 'ENOENT' },
        'name a folder that exists (it may have been removed or moved meanwhile); nothing was changed',
        { cause: e },
      );
    }
  }
  return new HagentError(
    'GIT_FAILED',
    `cannot run git: ${e.message}`,
    { argv: ['git', ...args] },
    e.code === 'ENOENT'
      ? 'install git 2.38 or newer and make sure it is on PATH'
      : 'check that git runs in this directory',
    { cause: e },
  );
}

/** Runs git and returns stdout as UTF-8 text without the final newline. Throws as {@link runGit}. */
export async function gitText(args: readonly string[], options: RunGitOptions): Promise<string> {
  const r = await runGit(args, options);
  return r.stdout.toString('utf8').replace(/\n$/, '');
}

/**
 * Starts a long-lived `git <args>` with the same hygiene as {@link runGit}, its stdin, stdout and
 * stderr piped: for a batch process that answers many requests (`cat-file --batch-command`).
 * The caller owns the process (writes requests, reads answers, ends stdin to stop it).
 */
export function spawnGit(
  args: readonly string[],
  options: { cwd: string; detached?: boolean },
): ChildProcessWithoutNullStreams {
  return spawn('git', [...HYGIENE, ...args], {
    cwd: options.cwd,
    env: gitEnv(undefined, false),
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
    ...(options.detached ? { detached: true } : {}),
  }) as ChildProcessWithoutNullStreams;
}

/** A git process started before its input is known ({@link spawnGitFedLater}). */
export interface FedLater {
  child: ChildProcessWithoutNullStreams;
  /** git's exit code once it ended (-1: it could not start). */
  exited: Promise<number>;
  /** What git wrote on stderr so far. */
  stderr(): string;
}

/**
 * Starts `git <args>` detached (a process group of its own, {@link RunGitOptions.detached}),
 * its stdout drained and stderr kept, for a caller that writes its input later: git's start-up
 * then overlaps the caller's work (ref-transaction.ts, objects.ts `openIndexUpdate`).
 */
export function spawnGitFedLater(args: readonly string[], cwd: string): FedLater {
  const child = spawnGit(args, { cwd, detached: true });
  const err: Buffer[] = [];
  child.stderr.on('data', (d: Buffer) => err.push(d));
  child.stdout.resume();
  child.stdin.on('error', () => undefined); // git may exit first: its exit code tells
  const exited = new Promise<number>((resolve) => {
    child.on('error', () => resolve(-1));
    child.on('close', (code) => resolve(code ?? 1));
  });
  return { child, exited, stderr: () => Buffer.concat(err).toString('utf8') };
}
