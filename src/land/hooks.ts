/**
 * The user's own git hooks for the land commit (docs/approval-and-hooks.md). The land commit is
 * the human's commit on their branch, so it goes through the hooks `git commit` would run for it:
 * `pre-commit`, `prepare-commit-msg`, `commit-msg`, `post-commit`, and `reference-transaction` for
 * the move of the target branch; from the user's `core.hooksPath` (else `<git common dir>/hooks`).
 * Every other git call of hagent keeps hooks off (git/run.ts, design.md invariant 7).
 *
 * Where they run: in the checkout of the target branch (its HEAD is the commit the land builds on,
 * as for a `git commit` there), with `GIT_INDEX_FILE` pointing at a temporary index that holds the
 * tree that lands, so `git diff --cached`, `git show :PATH` and every staged-file scanner see
 * exactly what lands, and the user's own index is never touched. When the target is checked out
 * nowhere, in a worktree of the target's commit with nothing checked out, made for the hooks and
 * removed after. A hook that changes that index (a formatter that re-stages files) refuses the
 * land: hagent lands what was reviewed, nothing a hook made.
 */
import { spawn } from 'node:child_process';
import { constants as fsConstants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  REPOSITORY_ENV,
  addHooksWorktree,
  readTreeIntoIndex,
  removeWorktree,
  userHooksFolder,
  writeTree,
} from '../git/index.js';
import { trace } from '../trace/index.js';

/** The hooks git runs for a commit and its ref move, in the order it runs them. */
export type CommitHook =
  'pre-commit' | 'prepare-commit-msg' | 'commit-msg' | 'reference-transaction' | 'post-commit';

/** One hook that ran: its name, arguments, exit code (null: ended by a signal) and output tail. */
export interface HookRun {
  hook: CommitHook;
  args: string[];
  exitCode: number | null;
  output: string;
}

/** What the land's hooks did: those that ran, and those `--no-verify` skipped. */
export interface LandHooksReport {
  folder: string;
  ran: HookRun[];
  skipped: CommitHook[];
}

/** The hooks `--no-verify` skips, as `git commit --no-verify` does. */
export const NO_VERIFY_SKIPS: readonly CommitHook[] = ['pre-commit', 'commit-msg'];

/** Characters kept of a hook's output (its end: where a refusal says why). */
const OUTPUT_TAIL = 4000;

async function executable(file: string): Promise<boolean> {
  try {
    if (!(await fs.stat(file)).isFile()) return false;
    await fs.access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one hook as git does: spawned directly with `args`, cwd the worktree's top, stdin `input`
 * (else none), stdout and stderr kept together. Never throws for the hook's own failure.
 */
function runHook(
  file: string,
  hook: CommitHook,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  input?: string,
): Promise<HookRun> {
  const vars: NodeJS.ProcessEnv = { ...process.env };
  for (const k of REPOSITORY_ENV) delete vars[k];
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd,
      env: { ...vars, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    if (input !== undefined) {
      child.stdin!.on('error', () => {
        /* a hook may exit without reading its input */
      });
      child.stdin!.end(input);
    }
    child.on('error', (e) => resolve({ hook, args, exitCode: 127, output: e.message }));
    child.on('close', (code) => {
      trace(`land: hook ${hook} exited ${code}`);
      resolve({ hook, args, exitCode: code, output });
    });
  });
}

/** The refusal of a land by the user's hook `run`. */
export function hookRefused(run: HookRun, folder: string, extra = ''): HagentError {
  const said = run.output.trim();
  // Its last lines, on the message's one line: where a hook says why.
  const tail = said.split('\n').filter((l) => l.trim());
  const last = tail.slice(-3).join(' | ').slice(-300);
  const bypass = NO_VERIFY_SKIPS.includes(run.hook)
    ? ` — or land with --no-verify, which skips ${NO_VERIFY_SKIPS.join(' and ')} as git commit --no-verify does`
    : '';
  return new HagentError(
    'HOOK_REFUSED',
    `your git hook ${run.hook} refused the land (${run.exitCode === null ? 'ended by a signal' : `exit ${run.exitCode}`})${extra}${last ? `: ${last}` : ''}`,
    { hook: run.hook, exitCode: run.exitCode, output: said, path: path.join(folder, run.hook) },
    `nothing was landed; fix what the hook says in the session (a patch, or hagent exec), review and approve again, then land${bypass}`,
  );
}

/** The user's hooks for one land, found once: which exist, and where they run. */
export interface LandHooks {
  folder: string;
  present: Set<CommitHook>;
  /** The worktree whose top the hooks run in (the target's checkout, else hagent's). */
  top: string;
  report: LandHooksReport;
}

/**
 * Finds the user's hooks for a land: the hooks folder of the checkout of the target (`checkout`),
 * else of the worktree hagent runs in (`top`). @throws HagentError GIT_FAILED.
 */
export async function findLandHooks(
  top: string,
  commonDir: string,
  checkout: string | null,
): Promise<LandHooks> {
  const where = checkout ?? top;
  const folder = await userHooksFolder(where, commonDir);
  const names: CommitHook[] = [
    'pre-commit',
    'prepare-commit-msg',
    'commit-msg',
    'reference-transaction',
    'post-commit',
  ];
  const present = new Set<CommitHook>();
  await Promise.all(
    names.map(async (n) => {
      if (await executable(path.join(folder, n))) present.add(n);
    }),
  );
  return { folder, present, top: where, report: { folder, ran: [], skipped: [] } };
}

/**
 * Runs `pre-commit`, `prepare-commit-msg` and `commit-msg` for the land commit of `tree` on
 * `previous` with `message` (`--no-verify` skips pre-commit and commit-msg), in the checkout of the
 * target (`checkout`) or a worktree of `previous` made for them.
 * @returns the message as the hooks left it, with a `Hagent-No-Verify` trailer when hooks were
 *   skipped.
 * @throws HagentError HOOK_REFUSED (a hook exited non-zero, changed the staged tree, or left an
 *   empty message), GIT_FAILED.
 */
export async function runCommitHooks(
  hooks: LandHooks,
  cwd: string,
  opts: {
    checkout: string | null;
    previous: string;
    tree: string;
    message: string;
    noVerify: boolean;
  },
): Promise<string> {
  const { present, folder, report } = hooks;
  const skipped = opts.noVerify ? NO_VERIFY_SKIPS.filter((h) => present.has(h)) : [];
  report.skipped.push(...skipped);
  const message = skipped.length
    ? withTrailer(opts.message, `Hagent-No-Verify: ${skipped.join(', ')}`)
    : opts.message;
  const wanted = (['pre-commit', 'prepare-commit-msg', 'commit-msg'] as const).filter(
    (h) => present.has(h) && !skipped.includes(h),
  );
  if (wanted.length === 0) return message;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'hagent-land-hooks-'));
  let scratch: string | null = null;
  try {
    if (!opts.checkout) {
      scratch = path.join(tmp, 'worktree');
      await addHooksWorktree(cwd, scratch, opts.previous);
    }
    const top = scratch ?? opts.checkout!;
    const index = path.join(tmp, 'index');
    await readTreeIntoIndex(top, opts.tree, index);
    const env = { GIT_INDEX_FILE: index, GIT_EDITOR: ':' };
    const run = async (hook: CommitHook, args: string[]) => {
      const r = await runHook(path.join(folder, hook), hook, args, top, env);
      report.ran.push(r);
      if (r.exitCode !== 0) throw hookRefused(r, folder);
    };
    if (wanted.includes('pre-commit')) {
      await run('pre-commit', []);
      if ((await writeTree(top, index)) !== opts.tree)
        throw hookRefused(
          report.ran[report.ran.length - 1]!,
          folder,
          ', it changed the staged files: hagent lands what was reviewed, not what a hook made',
        );
    }
    const file = path.join(tmp, 'COMMIT_EDITMSG');
    await fs.writeFile(file, message);
    if (wanted.includes('prepare-commit-msg')) await run('prepare-commit-msg', [file, 'message']);
    if (wanted.includes('commit-msg')) await run('commit-msg', [file]);
    const edited = await fs.readFile(file, 'utf8');
    if (edited.trim() === '')
      throw hookRefused(
        report.ran[report.ran.length - 1]!,
        folder,
        ', it left an empty commit message',
      );
    return edited;
  } finally {
    if (scratch) await removeWorktree(cwd, scratch).catch(() => undefined);
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Runs the `reference-transaction` hook for the target's move (`old new ref` on stdin) in `state`:
 * `prepared` before hagent's ref transaction — a non-zero exit refuses the land — then `committed`
 * or `aborted` (their exit is ignored, as git ignores it). hagent's own refs moved in the same
 * transaction (refs/hagent/…) are its bookkeeping and are not shown to the hook.
 * @throws HagentError HOOK_REFUSED (prepared only).
 */
export async function runRefHook(
  hooks: LandHooks,
  state: 'prepared' | 'committed' | 'aborted',
  move: { ref: string; old: string; new: string },
): Promise<void> {
  if (!hooks.present.has('reference-transaction')) return;
  const r = await runHook(
    path.join(hooks.folder, 'reference-transaction'),
    'reference-transaction',
    [state],
    hooks.top,
    {},
    `${move.old} ${move.new} ${move.ref}\n`,
  );
  hooks.report.ran.push(r);
  if (state === 'prepared' && r.exitCode !== 0) throw hookRefused(r, hooks.folder);
}

/**
 * Runs `post-commit` after the land, in the checkout of the target (else where hagent runs). As
 * for git, its exit does not undo the commit. @returns a warning when it failed, else null.
 */
export async function runPostCommit(hooks: LandHooks): Promise<string | null> {
  if (!hooks.present.has('post-commit')) return null;
  const r = await runHook(path.join(hooks.folder, 'post-commit'), 'post-commit', [], hooks.top, {});
  hooks.report.ran.push(r);
  return r.exitCode === 0
    ? null
    : `landed; your post-commit hook exited ${r.exitCode ?? 'by a signal'}: ${r.output.trim().split('\n').pop() ?? ''}`;
}

/** `message` with `trailer` added to its trailer block (or as a new paragraph). Pure. */
export function withTrailer(message: string, trailer: string): string {
  const body = message.replace(/\n+$/, '');
  const last = body.split('\n\n').pop() ?? '';
  const isTrailers = body.includes('\n\n') && last.split('\n').every((l) => /^[\w-]+: /.test(l));
  return `${body}${isTrailers ? '\n' : '\n\n'}${trailer}\n`;
}
