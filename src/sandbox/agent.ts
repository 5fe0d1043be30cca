/**
 * The sandbox for an agent rather than one `hagent exec` command: the whole agent process of
 * `hagent run` inside it, or each shell command of an agent wired by `hagent integrate`
 * rewritten by its pre-tool hook to start inside it (docs/sandbox.md, "Every way in").
 *
 * Both keep the rule of launch.ts (the whole file system read-only but the session's own parts);
 * what differs is what stays in step while the sandbox lives. hagent's hooks commit outside the
 * sandbox while the agent inside goes on, so the private copy of the session's branch is brought
 * up to the repository's after each of hagent's own moves ({@link mirrorBranch}), and the
 * agent's own commits are brought out before each hook ({@link settleSandbox}).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRefsDirect, runGit } from '../git/index.js';
import { SANDBOX_GIT_CONFIG, type SandboxLaunch } from './launch.js';

/** The variable that tells hagent it runs inside a session's sandbox (its value: the session id). */
export const SANDBOX_ENV = 'HAGENT_SANDBOX';

/** The variables of a sandbox that must not reach hagent's own git outside it. */
export const SANDBOX_GIT_VARS = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES'];

/**
 * What an agent writes in its home folder while it runs (sessions, history, credentials
 * refreshed): folders and single files, writable when the whole agent runs inside (a file is
 * written in place there: no temp file and rename beside it in the read-only home folder); and
 * the files of those folders that
 * hold hooks or settings, kept read-only on top: an agent must not rewrite the hooks that gate
 * it (they run outside the sandbox in an agent started later). Paths absolute. Pure.
 */
export function agentHomePaths(
  agent: string,
  env: Readonly<Record<string, string | undefined>>,
): { folders: string[]; files: string[]; readOnly: string[] } {
  const home = env.HOME || os.homedir();
  const at = (...p: string[]) => path.join(home, ...p);
  switch (agent) {
    case 'claude': {
      const dir = env.CLAUDE_CONFIG_DIR || at('.claude');
      return {
        folders: [dir, at('.cache', 'claude')],
        files: [at('.claude.json')],
        readOnly: [path.join(dir, 'settings.json'), path.join(dir, 'settings.local.json')],
      };
    }
    case 'codex': {
      const dir = env.CODEX_HOME || at('.codex');
      return {
        folders: [dir],
        files: [],
        readOnly: [path.join(dir, 'config.toml'), path.join(dir, 'hooks.json')],
      };
    }
    case 'gemini':
      return { folders: [at('.gemini')], files: [], readOnly: [at('.gemini', 'settings.json')] };
    case 'cursor':
      return {
        folders: [at('.cursor'), at('.config', 'cursor')],
        files: [],
        readOnly: [at('.cursor', 'hooks.json'), at('.cursor', 'mcp.json')],
      };
    case 'copilot':
      return {
        folders: [at('.copilot')],
        files: [],
        readOnly: [at('.copilot', 'config.json'), at('.copilot', 'mcp-config.json')],
      };
    default:
      return { folders: [], files: [], readOnly: [] };
  }
}

/**
 * `launch`'s argv with `readOnly` bound read-only (those absent skipped) after every writable
 * bind, so a file inside a writable folder stays the user's. Pure.
 */
export function withReadOnly(launch: SandboxLaunch, readOnly: readonly string[]): SandboxLaunch {
  const argv = [...launch.argv];
  // prepareSandbox ends its options with `--chdir <worktree> --`.
  const at = argv.lastIndexOf('--chdir');
  const extra = readOnly.flatMap((f) => ['--ro-bind-try', f, f]);
  argv.splice(at < 0 ? argv.length - 1 : at, 0, ...extra);
  return { ...launch, argv };
}

/**
 * Brings the private copy of the session's branch (the one the sandbox sees) to the id the
 * repository's branch holds now, after hagent moved it outside (a hook's commit, an undo), and
 * makes that id the one {@link settleSandbox} compares against next. Returns the id (null: no
 * branch).
 */
export async function mirrorBranch(launch: SandboxLaunch): Promise<string | null> {
  const direct = await readRefsDirect(launch.commonDir, [launch.branchRef]);
  const now = direct
    ? (direct.get(launch.branchRef) ?? null)
    : (
        await runGit(['rev-parse', '--verify', '-q', launch.branchRef], {
          cwd: launch.worktree,
          allowFailure: true,
        })
      ).stdout
        .toString()
        .trim() || null;
  if (now) {
    const file = path.join(launch.stateDir, 'branch', launch.sessionId);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${now}\n`);
  }
  launch.branchBefore = now;
  return now;
}

/** Quotes one word for a POSIX shell. Pure. */
function quote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The shell command that runs `command` inside `launch`'s sandbox, for an agent's shell tool (a
 * pre-tool hook's rewrite): bwrap with the sandbox's variables set inside (`--setenv`), in the
 * folder the shell is in when it runs it, then `bash -c COMMAND` (`sh` where bash is absent).
 * The agent's shell keeps its own variables and folder; only the file system changes. Pure but
 * for one lookup of bash.
 */
export function sandboxedShellCommand(launch: SandboxLaunch, command: string): string {
  const argv = [...launch.argv];
  const at = argv.lastIndexOf('--chdir');
  // The folder at run time: the agent's shell may have moved into a subfolder.
  if (at >= 0) argv.splice(at, 2);
  argv.pop(); // the final `--`
  // Binds of absent folders (most default caches) say nothing: left out, the command is shorter.
  for (let i = argv.length - 3; i >= 0; i--)
    if ((argv[i] === '--bind-try' || argv[i] === '--ro-bind-try') && !existsSync(argv[i + 1]!))
      argv.splice(i, 3);
  const setenv = Object.entries(launch.env).flatMap(([k, v]) => ['--setenv', k, v]);
  setenv.push('--setenv', 'GIT_CONFIG_COUNT', String(SANDBOX_GIT_CONFIG.length));
  SANDBOX_GIT_CONFIG.forEach(([k, v], i) =>
    setenv.push('--setenv', `GIT_CONFIG_KEY_${i}`, k, '--setenv', `GIT_CONFIG_VALUE_${i}`, v),
  );
  const shell = bashPath();
  return `${[...argv, ...setenv].map(quote).join(' ')} --chdir "$PWD" -- ${quote(shell)} -c ${quote(command)}`;
}

let bash: string | null = null;
function bashPath(): string {
  if (bash) return bash;
  const r = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' });
  bash = (r.status === 0 && r.stdout.trim()) || '/bin/sh';
  return bash;
}
