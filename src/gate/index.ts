/**
 * gate: the project's own check (`"land": {"gate": …}` of `.hagent/config.json`, read from the
 * user's checkout only, so an agent cannot change its own gate) run on the exact tree a land
 * would put on the target, before the target moves.
 *
 * Rules:
 * - The gate runs in a scratch worktree of the repository (`<worktree root>/.gate/<target key>`),
 *   detached at a commit of that tree, kept between runs so dependency folders and build caches
 *   survive (a later run checks out only what differs and removes untracked files git does not
 *   ignore); `.worktreeinclude` files are copied in when it is made.
 * - Standard input closed, its own process group killed whole on timeout, output capped (head and
 *   tail) as `hagent exec` captures it (exec/run.ts).
 * - The result is recorded with the tree id and the command (`<common dir>/hagent/gates/`); a
 *   pass is reused only for the same tree and the same command.
 * - The caller holds the target's lock (lock/index.ts withTargetLock): one gate at a time uses a
 *   target's scratch worktree, and the tree cannot change under a land.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { REPOSITORY_ENV, gitText, runGit, writeInternalCommit } from '../git/index.js';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';
import { shellWord } from '../output/index.js';
import { runShell, type Cut } from '../exec/run.js';
import type { GateCommand, LandGateConfig } from '../policy/config.js';
import {
  copyWorktreeIncludes,
  hagentDir,
  worktreeRootFor,
  type RepoContext,
} from '../session/index.js';

/** Bytes of each stream a gate's result keeps (first half and last half). */
const GATE_OUTPUT_BYTES = 64 * 1024;

/** The recorded result of one gate run (`hagent gate --json`, a land's `gate`). */
export interface GateResult {
  /** The tree the gate ran on: the tree that lands. */
  tree: string;
  /** The gate's command as configured. */
  command: GateCommand;
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  truncated: false | { stdout: Cut | null; stderr: Cut | null };
  /** The scratch worktree it ran in (it holds the tree until the next gate run there). */
  worktree: string;
  /** The session whose land it checked, when one. */
  session: string | null;
  /** The session's head and the target commit it was checked over (a later check of either differs). */
  head: string | null;
  previous: string;
  at: string;
  /** true when this is an earlier run's pass for the same tree and command, not a new run. */
  reused: boolean;
}

/** The command as one shell line (argv quoted), for messages and for running it by hand. Pure. */
export function gateCommandLine(command: GateCommand): string {
  return Array.isArray(command) ? command.map(shellWord).join(' ') : command.shell;
}

/** File name of a result: the tree and the command hashed together. Pure. */
function resultKey(tree: string, command: GateCommand): string {
  return createHash('sha256')
    .update(`${tree}\0${JSON.stringify(command)}`)
    .digest('hex')
    .slice(0, 40);
}

function resultFile(commonDir: string, tree: string, command: GateCommand): string {
  return path.join(hagentDir(commonDir), 'gates', `${resultKey(tree, command)}.json`);
}

/**
 * The recorded result of `command` on `tree`, or null when it never ran there (or the record is
 * unreadable: the gate then runs again). Reads one file.
 */
export async function recordedGate(
  commonDir: string,
  tree: string,
  command: GateCommand,
): Promise<GateResult | null> {
  const raw = (await readJsonFile(resultFile(commonDir, tree, command)).catch(
    () => null,
  )) as GateResult | null;
  if (!raw || raw.tree !== tree || JSON.stringify(raw.command) !== JSON.stringify(command))
    return null;
  return { ...raw, reused: true };
}

/** What a gate checks: the tree that would land, over which target commit, for which session. */
export interface GateSubject {
  tree: string;
  /** The target's commit the tree lands on (the scratch commit's parent). */
  previous: string;
  /** Full ref of the target branch: names the scratch worktree. */
  target: string;
  session: string | null;
  /** The session head whose change the tree holds, when known. */
  head: string | null;
}

/**
 * Runs the gate on `subject.tree`, or reuses a recorded pass of the same command on the same
 * tree. The caller holds the target's lock. A failure is a result (`passed: false`), not an
 * exception: {@link gateFailure} turns it into the refusal.
 * @throws HagentError GIT_FAILED when the scratch worktree cannot be made.
 */
export async function runGate(
  ctx: RepoContext,
  config: LandGateConfig & { worktreeRoot: string | null; mainRoot: string | null },
  subject: GateSubject,
  env: Readonly<Record<string, string | undefined>>,
  options: { rerun?: boolean } = {},
): Promise<GateResult> {
  const command = config.gate;
  if (!command) throw new Error('runGate: no gate configured');
  if (!options.rerun) {
    const known = await recordedGate(ctx.commonDir, subject.tree, command);
    if (known?.passed) return known;
  }
  const worktree = await scratchWorktree(ctx, config, subject);
  const line = gateCommandLine(command);
  // The gate runs in a process group of its own (so a timeout kills it whole); a Ctrl-C or kill
  // of hagent must end it too, or a 15-minute suite would run on with nobody waiting.
  let group: number | null = null;
  const stop = (signal: NodeJS.Signals) => () => {
    if (group !== null)
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const onInt = stop('SIGINT');
  const onTerm = stop('SIGTERM');
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  const outcome = await runShell(Array.isArray(command) ? `exec ${line}` : line, {
    cwd: worktree,
    env: gateEnv(env, subject),
    timeoutMs: config.gateTimeoutS * 1000,
    maxOutputBytes: GATE_OUTPUT_BYTES,
    onSpawn: (pid) => {
      group = pid;
    },
  }).finally(() => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  });
  const result: GateResult = {
    tree: subject.tree,
    command,
    passed: outcome.exitCode === 0 && !outcome.timedOut,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    timedOut: outcome.timedOut,
    durationMs: Math.round(outcome.durationMs),
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated: outcome.truncated,
    worktree,
    session: subject.session,
    head: subject.head,
    previous: subject.previous,
    at: new Date().toISOString(),
    reused: false,
  };
  const { reused: _, ...record } = result;
  await writeJsonFile(resultFile(ctx.commonDir, subject.tree, command), record, {
    durable: false,
  });
  if (subject.session)
    await writeJsonFile(lastFile(ctx.commonDir, subject.session), record, { durable: false });
  return result;
}

function lastFile(commonDir: string, session: string): string {
  return path.join(hagentDir(commonDir), 'gates', 'sessions', `${session}.json`);
}

/**
 * The last gate run for `session` (by a land or `hagent gate`), or null: for `hagent status`,
 * which tells a result of the session's current head over the target's current commit from an
 * older one by its `head` and `previous`.
 */
export async function lastGate(commonDir: string, session: string): Promise<GateResult | null> {
  const raw = (await readJsonFile(lastFile(commonDir, session)).catch(
    () => null,
  )) as GateResult | null;
  return raw && typeof raw.tree === 'string' ? { ...raw, reused: true } : null;
}

/**
 * The gate's environment: the caller's, without the variables that would point git at another
 * repository, plus `HAGENT_GATE=1` and `HAGENT_GATE_TREE` (a test suite can tell it is a gate).
 */
function gateEnv(
  env: Readonly<Record<string, string | undefined>>,
  subject: GateSubject,
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const key of REPOSITORY_ENV) delete out[key];
  out.HAGENT_GATE = '1';
  out.HAGENT_GATE_TREE = subject.tree;
  if (subject.session) out.HAGENT_GATE_SESSION = subject.session;
  return out;
}

/** The folder of a target's scratch worktree: `<worktree root>/.gate/<hash of the ref>`. */
export function gateWorktreePath(root: string, target: string): string {
  return path.join(root, '.gate', createHash('sha256').update(target).digest('hex').slice(0, 12));
}

/**
 * The scratch worktree detached at a commit of `subject.tree` (parent: the target commit, so
 * tools that read history see the land's place): made on first use (with `.worktreeinclude`'s
 * files), else moved there with a forced checkout and `git clean -fd` (ignored files — the
 * dependencies — stay).
 */
async function scratchWorktree(
  ctx: RepoContext,
  config: { worktreeRoot: string | null; mainRoot: string | null },
  subject: GateSubject,
): Promise<string> {
  const root = worktreeRootFor(ctx.commonDir, config.mainRoot, config.worktreeRoot, process.env);
  const worktree = gateWorktreePath(root, subject.target);
  const commit = await writeInternalCommit(
    ctx.cwd,
    null,
    subject.tree,
    [subject.previous],
    `hagent: gate${subject.session ? ` of session ${subject.session}` : ''}\n`,
  );
  const known = await gitText(['rev-parse', '--git-dir'], { cwd: worktree })
    .then((gitDir) => path.resolve(worktree, gitDir))
    .catch(() => null);
  const ours =
    known !== null &&
    (await gitText(['rev-parse', '--git-common-dir'], { cwd: worktree })
      .then((d) => path.resolve(worktree, d) === path.resolve(ctx.commonDir))
      .catch(() => false));
  if (!ours) {
    // Gone, or not ours any more: made afresh (git forgets a removed folder's worktree first).
    await fs.rm(worktree, { recursive: true, force: true });
    await runGit(['worktree', 'prune'], { cwd: ctx.cwd });
    await fs.mkdir(path.dirname(worktree), { recursive: true });
    await runGit(['worktree', 'add', '--detach', '--force', worktree, commit], { cwd: ctx.cwd });
    if (config.mainRoot) await copyWorktreeIncludes(config.mainRoot, worktree);
    return worktree;
  }
  await runGit(['checkout', '--detach', '--force', '--quiet', commit], { cwd: worktree });
  await runGit(['clean', '-fdq'], { cwd: worktree });
  return worktree;
}

/**
 * The refusal of a land whose gate failed: exit code or timeout, the output's tail, and how to
 * run it again by hand in the scratch worktree (which still holds the tree). Pure.
 */
export function gateFailure(result: GateResult, session: string | null): HagentError {
  const line = gateCommandLine(result.command);
  const byHand = Array.isArray(result.command) ? line : `bash -c ${shellWord(line)}`;
  const how = result.timedOut
    ? `timed out after ${Math.round(result.durationMs / 1000)} s`
    : `exit ${result.exitCode ?? result.signal}`;
  // Both streams: test runners report failures on stdout and warnings on stderr, or the reverse.
  const tail = [
    result.stdout.trim() ? failureTail(result.stdout, 5) : '',
    result.stderr.trim() ? failureTail(result.stderr, 3) : '',
  ]
    .filter(Boolean)
    .join('\n');
  return new HagentError(
    'GATE_FAILED',
    `the gate (${line}) failed on the tree that would land${session ? ` session ${session}` : ''}: ${how}${tail ? `\n${tail}` : ''}`,
    {
      session,
      tree: result.tree,
      command: result.command,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      stdout: result.stdout,
      stderr: result.stderr,
      worktree: result.worktree,
    },
    `nothing was landed; run it by hand where it ran: cd ${shellWord(result.worktree)} && ${byHand}; fix the session${session ? ` (${session})` : ''}, approve its new head and land again${result.timedOut ? ', or raise "land": {"gateTimeoutS"} in .hagent/config.json' : ''}; hagent land --no-gate lands without the gate`,
  );
}

/**
 * Lines naming what failed, as test runners print them (TAP's `not ok`, node --test's and
 * mocha's `✖`/`✗`, jest's and vitest's `FAIL` and `●`): the last lines of a run are often a
 * summary of counts that names no test. Pure.
 */
const FAILED_LINE = /^\s*(not ok\b|[✖✗×●]\s|FAIL\b)/;

/**
 * The output's tail for a gate's refusal: the first (up to 3) lines naming a failed test when the
 * last `n` lines name none, then the last `n` non-empty lines, indented. Pure.
 */
function failureTail(text: string, n: number): string {
  const lines = text.split('\n').filter((l) => l.trim());
  const last = lines.slice(-n);
  const named = last.some((l) => FAILED_LINE.test(l))
    ? []
    : lines
        .slice(0, -n)
        .filter((l) => FAILED_LINE.test(l))
        .slice(0, 3);
  return [...named, ...(named.length ? ['…'] : []), ...last].map((l) => `  ${l}`).join('\n');
}
