/**
 * The bwrap command line of one session's sandbox: the whole file system read-only, except the
 * session worktree, a temp folder of the session's own, the caches, and — of the git common
 * folder — only what the session's own commits need:
 *
 * - objects: git writes new objects into a store of the session's own (`GIT_OBJECT_DIRECTORY`)
 *   with the repository's store as a read-only alternate, as git's own receive-pack quarantine
 *   does; hagent moves the new objects into the repository's store after the command (settle.ts);
 * - refs: `refs/` and `logs/` are folders of the session's own holding read-only binds of the
 *   repository's, so every existing ref reads as usual and none can be written, except
 *   `refs/heads/hagent/` — a private folder holding only this session's branch, which hagent
 *   moves with compare-and-swap after the command — and a private `refs/stash` (the agent's
 *   `git stash` works; the user's stash is not seen);
 * - the worktree's admin folder `worktrees/<id>` (its index, HEAD, logs), but not the files that
 *   say where the repository is (`commondir`, `gitdir`, the worktree's `.git` file).
 *
 * Everything lives under `<git-common-dir>/hagent/sandbox/<id>/` (same file system as the
 * object store, so objects move by rename).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { parseGitFile, readRefsDirect, runGit } from '../git/index.js';
import { BWRAP_BASE } from './probe.js';
import type { SandboxSettings } from './settings.js';
import { realOrResolved } from '../fsx/index.js';

/**
 * git settings every command in a sandbox gets (through `GIT_CONFIG_*`): no automatic gc or
 * maintenance, whose lock files are in the read-only common folder and which would pack the
 * user's objects, not the agent's.
 */
export const SANDBOX_GIT_CONFIG: readonly (readonly [string, string])[] = [
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

/** What a sandbox is built for. */
export interface SandboxTarget {
  /** The git common folder. */
  commonDir: string;
  /** The session's id and worktree. */
  session: { id: string; worktree: string };
  settings: SandboxSettings;
  /** The bwrap executable (from {@link probeSandbox}). */
  bwrap: string;
  /** The user's main checkout, named in the messages of writes stopped there (optional). */
  userCheckout?: string | null;
  /**
   * More folders made writable (absolute; those absent are skipped): for the whole agent inside,
   * its own config folder and the hook server's socket folder.
   */
  extraWritable?: readonly string[];
  /**
   * The private folders' home, default {@link sandboxStateDir}: another one gives a sandbox
   * beside a live one of the same session that never touches what is mounted in that one.
   */
  stateDir?: string;
}

/** One prepared sandbox: how to start a command in it, and what settling needs. */
export interface SandboxLaunch {
  /** bwrap and its options, ending with `--`: append the program and its arguments. */
  argv: string[];
  /** Variables to set over the command's environment (TMPDIR, git's object store, …). */
  env: Record<string, string>;
  /** The session's private temp folder (`TMPDIR`). */
  tmpDir: string;
  /** Every folder writable inside, absolute. */
  writable: string[];
  /** The worktree folder as bound (real path). */
  worktree: string;
  commonDir: string;
  userCheckout: string | null;
  sessionId: string;
  /** The session's full branch ref, and the id it held when the sandbox was prepared. */
  branchRef: string;
  branchBefore: string | null;
  /** `<git-common-dir>/hagent/sandbox/<id>` (or the target's own `stateDir`). */
  stateDir: string;
}

/** `<git-common-dir>/hagent/sandbox/<id>`: the session's private sandbox folders. Pure. */
export function sandboxStateDir(commonDir: string, id: string): string {
  return path.join(commonDir, 'hagent', 'sandbox', id);
}

const real = realOrResolved;

/** The names in `dir`; none when it cannot be read. Never throws. */
export function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The worktree's admin folder, checked to be `<common>/worktrees/<name>` and to point back at
 * the worktree: the worktree's `.git` file is the agent's to write, and what it names becomes
 * writable. @throws HagentError WORKTREE_BROKEN.
 */
function adminDirOf(worktree: string, commonDir: string): string {
  let admin: string | null = null;
  try {
    admin = parseGitFile(worktree, readFileSync(path.join(worktree, '.git'), 'utf8'));
  } catch {
    admin = null;
  }
  const back = admin
    ? (() => {
        try {
          return real(path.dirname(readFileSync(path.join(admin, 'gitdir'), 'utf8').trim()));
        } catch {
          return null;
        }
      })()
    : null;
  if (
    !admin ||
    path.dirname(real(admin)) !== path.join(commonDir, 'worktrees') ||
    back !== worktree
  )
    throw new HagentError(
      'WORKTREE_BROKEN',
      `${worktree}/.git does not name this worktree's folder under ${commonDir}/worktrees`,
      { path: path.join(worktree, '.git') },
      'run hagent doctor (it repairs a session worktree git no longer knows)',
    );
  return real(admin);
}

/**
 * A private view of `dir`: `priv` bound on it, then each entry of the real `dir` bound back
 * read-only, except `keep` (private). Leftover mount points from an earlier start are removed
 * first (they are empty). Returns the bwrap options.
 */
function privateView(dir: string, priv: string, keep: ReadonlySet<string>): string[] {
  mkdirSync(dir, { recursive: true });
  mkdirSync(priv, { recursive: true });
  for (const e of entries(priv))
    if (!keep.has(e)) rmSync(path.join(priv, e), { recursive: true, force: true });
  const out = ['--bind', priv, dir];
  for (const e of entries(dir)) {
    if (keep.has(e)) continue;
    const p = path.join(dir, e);
    out.push('--ro-bind', p, p);
  }
  return out;
}

/**
 * Prepares the session's sandbox: its private folders (temp, object store, the branch folder
 * holding the branch's current id) and the bwrap options. Call it before each command, then
 * {@link settleSandbox} after it. Synchronous file work of a few folders (~1 ms).
 * @throws HagentError WORKTREE_BROKEN when the worktree's `.git` does not lead to its admin
 *   folder; GIT_FAILED when the branch cannot be read.
 */
export async function prepareSandbox(t: SandboxTarget): Promise<SandboxLaunch> {
  const commonDir = real(t.commonDir);
  const worktree = real(t.session.worktree);
  const id = t.session.id;
  const admin = adminDirOf(worktree, commonDir);
  const state = t.stateDir ?? sandboxStateDir(commonDir, id);
  const tmpDir = path.join(state, 'tmp');
  const objects = path.join(state, 'objects');
  for (const d of [tmpDir, path.join(objects, 'pack'), path.join(objects, 'info')])
    mkdirSync(d, { recursive: true });

  const branchRef = `refs/heads/hagent/${id}`;
  const direct = await readRefsDirect(commonDir, [branchRef]);
  const branchBefore = direct
    ? (direct.get(branchRef) ?? null)
    : (
        await runGit(['rev-parse', '--verify', '-q', branchRef], {
          cwd: worktree,
          allowFailure: true,
        })
      ).stdout
        .toString()
        .trim() || null;
  // The branch folder: only this session's branch, at its current id, with its reflog.
  const branchDir = path.join(state, 'branch');
  const branchLogs = path.join(state, 'branch-logs');
  rmSync(branchDir, { recursive: true, force: true });
  rmSync(branchLogs, { recursive: true, force: true });
  const branchFile = path.join(branchDir, id);
  mkdirSync(path.dirname(branchFile), { recursive: true });
  mkdirSync(path.dirname(path.join(branchLogs, id)), { recursive: true });
  if (branchBefore) writeFileSync(branchFile, `${branchBefore}\n`);
  try {
    copyFileSync(path.join(commonDir, 'logs', branchRef), path.join(branchLogs, id));
  } catch {
    // no reflog yet
  }
  const headsHagent = path.join(commonDir, 'refs', 'heads', 'hagent');
  const logsHagent = path.join(commonDir, 'logs', 'refs', 'heads', 'hagent');
  mkdirSync(headsHagent, { recursive: true });
  mkdirSync(logsHagent, { recursive: true });

  const writable: string[] = [];
  const args: string[] = [...BWRAP_BASE, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  if (!t.settings.network) args.push('--unshare-net');
  for (const w of [...t.settings.writable, ...(t.extraWritable ?? [])]) {
    const p = real(w);
    args.push('--bind-try', p, p);
    writable.push(p);
  }
  // The common folder itself is a private view too: git's lock files there (packed-refs.lock,
  // gc.pid) can be made, but every file of the repository stays read-only (a rename onto one
  // fails), so deleting the agent's own stash works and nothing else moves.
  args.push(...privateView(commonDir, path.join(state, 'root'), new Set(['refs', 'logs'])));
  args.push(
    ...privateView(path.join(commonDir, 'refs'), path.join(state, 'refs'), new Set(['stash'])),
  );
  args.push('--bind', branchDir, headsHagent);
  const logs = path.join(commonDir, 'logs');
  args.push(...privateView(logs, path.join(state, 'logs'), new Set(['refs'])));
  args.push(
    ...privateView(path.join(logs, 'refs'), path.join(state, 'logs', 'refs'), new Set(['stash'])),
  );
  args.push('--bind', branchLogs, logsHagent);
  // The session's own folders last: they may lie inside the common folder (worktreeRoot "git-dir").
  args.push('--bind', worktree, worktree, '--bind', admin, admin, '--bind', tmpDir, tmpDir);
  args.push('--bind', objects, objects);
  writable.push(worktree, tmpDir);
  // Where the repository is stays as it is: the worktree's .git and the admin folder's pointers.
  for (const f of [
    path.join(worktree, '.git'),
    path.join(admin, 'commondir'),
    path.join(admin, 'gitdir'),
  ])
    args.push('--ro-bind-try', f, f);
  args.push('--chdir', worktree, '--');

  return {
    argv: [t.bwrap, ...args],
    env: {
      TMPDIR: tmpDir,
      HAGENT_SANDBOX: id,
      ...gitEnv(objects, path.join(commonDir, 'objects')),
    },
    tmpDir,
    writable,
    worktree,
    commonDir,
    userCheckout: t.userCheckout ? real(t.userCheckout) : null,
    sessionId: id,
    branchRef,
    branchBefore,
    stateDir: state,
  };
}

/**
 * git's object store in the sandbox: new objects into the session's store, the repository's as
 * a read-only alternate. ({@link sandboxedEnv} adds no automatic gc or maintenance: their lock
 * files are in the read-only common folder, and packing the user's objects is not the agent's.)
 */
function gitEnv(objects: string, repoObjects: string): Record<string, string> {
  return { GIT_OBJECT_DIRECTORY: objects, GIT_ALTERNATE_OBJECT_DIRECTORIES: repoObjects };
}
