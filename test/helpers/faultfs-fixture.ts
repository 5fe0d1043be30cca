/**
 * The repository the file-system fault tests run on, and the checks every fault must pass:
 * refused as IO_FAILED with the errno and a hint (exit 1), the repository exactly as before,
 * nothing left behind. Commands run in this process through the library, inside fsx's
 * injection scope, on real git repositories.
 */
import { chmodSync } from 'node:fs';
import path from 'node:path';
import * as assert from 'uvu/assert';
import { EXIT_STATUS, toHagentError } from '../../src/errors.js';
import { currentFileSystem, nodeFileSystem, withFileSystem } from '../../src/fsx/index.js';
import {
  applyPatch,
  landSession,
  openRepo,
  readSession,
  redo,
  undo,
  type ApplyResult,
} from '../../src/index.js';
import type { RepoContext } from '../../src/session/index.js';
import { FaultyFileSystem, captureState, leftovers, stateDiff, type FaultRule } from './faultfs.js';
import { GIT_ENV, TEST_CACHE, git, makeRepo, startSession } from './index.js';
import { compareWorktreeWithCommit } from './repo-checks.js';

// In-process commits take the pinned identity and dates; session worktrees go to the test cache.
Object.assign(process.env, GIT_ENV, { XDG_CACHE_HOME: TEST_CACHE });

/** A repository with one session: a.txt, an executable run.sh, dir/b.txt, gone.txt. */
export interface Fixture {
  repo: string;
  worktree: string;
  id: string;
  ctx: RepoContext;
}

export async function fixture(): Promise<Fixture> {
  const repo = makeRepo({
    'a.txt': 'one\ntwo\nthree\n',
    'dir/b.txt': 'bee\n',
    'gone.txt': 'bye\n',
    'run.sh': '#!/bin/sh\necho hi\n',
  });
  chmodSync(path.join(repo, 'run.sh'), 0o755);
  git(repo, 'add', 'run.sh');
  git(repo, 'commit', '-q', '-m', 'run.sh is executable');
  const s = startSession(repo);
  return { repo, worktree: s.worktree, id: s.id, ctx: await openRepo(s.worktree) };
}

/** Every kind of change: update (an executable too), add in new folders, delete, move. */
export const PATCH = [
  '*** Begin Patch',
  '*** Update File: a.txt',
  ' one',
  '-two',
  '+TWO',
  '*** Update File: run.sh',
  '-echo hi',
  '+echo hello',
  '*** Add File: new/deep/n.txt',
  '+new',
  '*** Delete File: gone.txt',
  '*** Update File: dir/b.txt',
  '*** Move to: moved/b.txt',
  '-bee',
  '+wasp',
  '*** End Patch',
  '',
].join('\n');

/**
 * The writing commands, in this process. Outside a fault scope they run on a healthy file
 * system that skips fsyncs (see FaultyFileSystem): the tests read the disk, never lose power.
 */
export const commands = {
  apply: (fx: Fixture, patchText = PATCH): Promise<ApplyResult> =>
    healthy(async () =>
      applyPatch(fx.ctx, await readSession(fx.ctx.commonDir, fx.id), {
        patchText,
        yes: true,
        noWatch: true,
      }),
    ),
  undo: (fx: Fixture) =>
    healthy(async () => undo(fx.ctx, await readSession(fx.ctx.commonDir, fx.id))),
  redo: (fx: Fixture) =>
    healthy(async () => redo(fx.ctx, await readSession(fx.ctx.commonDir, fx.id))),
  land: (fx: Fixture) =>
    healthy(async () =>
      landSession(fx.ctx, await readSession(fx.ctx.commonDir, fx.id), { yes: true }),
    ),
};

/** Runs `fn` on a sync-skipping healthy file system, unless a fault scope is already open. */
function healthy<T>(fn: () => Promise<T>): Promise<T> {
  if (currentFileSystem() !== nodeFileSystem) return fn();
  return withFileSystem(new FaultyFileSystem([], { skipSyncs: true }), fn);
}

/** The session worktree equals its head commit, and git sees nothing to commit. */
export function assertWorktreeAtHead(fx: Fixture, label: string): void {
  const head = git(fx.repo, 'rev-parse', `refs/heads/hagent/${fx.id}`);
  const { problems } = compareWorktreeWithCommit(fx.worktree, head);
  assert.equal(problems, [], `${label}: worktree ≠ head`);
  assert.is(git(fx.worktree, 'status', '--porcelain', '--untracked-files=all'), '', label);
}

/** What one command did under a faulty file system. */
export type Outcome =
  { kind: 'ok' } | { kind: 'refused'; code: string; errno: unknown; hint: string; exit: number };

/** Runs `run` with every fsx call on `fs`; a throw becomes the CLI's error (toHagentError). */
export async function underFaults(fs: FaultyFileSystem, run: () => Promise<unknown>) {
  try {
    await withFileSystem(fs, run);
    return { kind: 'ok' } as Outcome;
  } catch (error) {
    const e = toHagentError(error);
    return {
      kind: 'refused',
      code: e.code,
      errno: e.details.errno,
      hint: e.hint ?? '',
      exit: EXIT_STATUS[e.code],
    } as Outcome;
  }
}

/**
 * Runs `run` under `rules` (each failing with `errno`) and asserts a clean refusal: IO_FAILED with `errno`, exit 1, a hint
 * saying what to fix and to run the command again, the repository exactly as before and
 * nothing left behind. @returns the faulty file system (its calls, for the message).
 */
export async function assertRefusedCleanly(
  fx: Fixture,
  label: string,
  rules: Omit<FaultRule, 'errno'>[],
  errno: string,
  run: () => Promise<unknown>,
  options: { shortWrites?: number; skipSyncs?: boolean } = {},
): Promise<FaultyFileSystem> {
  const before = captureState(fx.repo, fx.worktree);
  const fs = new FaultyFileSystem(
    rules.map((r) => ({ ...r, errno })),
    { skipSyncs: true, ...options },
  );
  const out = await underFaults(fs, run);
  assert.ok(fs.failed.length > 0, `${label}: the fault was never reached`);
  const at = `${label} (failed: ${fs.failed.map((c) => `${c.op} ${c.path}`).join(', ')})`;
  assert.is(out.kind, 'refused', `${at}: the command succeeded`);
  if (out.kind !== 'refused') return fs;
  assert.is(out.code, 'IO_FAILED', at);
  assert.is(out.errno, errno, at);
  assert.is(out.exit, 1, at);
  assert.match(out.hint, /run the command again/, at);
  const changed = stateDiff(captureState(fx.repo, fx.worktree), before);
  assert.is(changed, null, `${at}: ${changed}`);
  assert.equal(leftovers(fx.repo, fx.worktree), [], at);
  return fs;
}
