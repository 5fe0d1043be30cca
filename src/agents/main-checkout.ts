/**
 * An agent wired by `hagent integrate` but started in a checkout that is no hagent session (the
 * user's main checkout, or a worktree of their own): by default its file writes and destructive
 * git are refused with how to start a session, and at session start the agent and the human are
 * told that it is not protected. `.hagent/config.json` `"mainCheckout": "warn"` keeps only the
 * telling. The rule applies where the repository's main checkout holds the agent's project hook
 * file with hagent's hooks (or the config names `mainCheckout`): a user-scope install stays a
 * no-op in every other repository. Rules: docs/agents-wiring.md.
 */
import path from 'node:path';
import { HagentError } from '../errors.js';
import { loadConfig, mainCheckoutRoot } from '../config/index.js';
import { isInside, openRepo, type RepoContext } from '../session/index.js';
import { HOOK_FILES, readTextOrNull } from './integrate.js';
import { holdsHagentWiring } from './worktree-wiring.js';
import type { AgentEvent, AgentName } from './normalize.js';

/** How the human starts a protected session of `agent` (what the refusal and the warning name). */
export function sessionStartHint(agent: AgentName): string {
  return agent === 'claude'
    ? 'claude --worktree NAME (hagent makes it a session) or hagent run claude'
    : `hagent run ${agent === 'cursor' ? 'cursor-agent' : agent}`;
}

/** git subcommands that change neither the checkout, the index, the refs nor the configuration. */
const READ_ONLY_GIT = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'annotate',
  'ls-files',
  'ls-tree',
  'ls-remote',
  'rev-parse',
  'rev-list',
  'describe',
  'grep',
  'shortlog',
  'cat-file',
  'for-each-ref',
  'show-ref',
  'show-branch',
  'name-rev',
  'merge-base',
  'diff-tree',
  'diff-files',
  'diff-index',
  'count-objects',
  'check-ignore',
  'check-attr',
  'var',
  'help',
  'version',
  'whatchanged',
  'range-diff',
]);

/** Options of `git branch` and `git tag` that list instead of making a branch or tag of their operand. */
const LIST_FLAGS =
  /^(-l|--list|-a|--all|-r|--remotes|--contains|--no-contains|--merged|--no-merged|--points-at|--sort.*|--format.*|--show-current|-v+|--verbose|--column.*|-n\d*)$/;

/** Whether `git SUB REST…` (a subcommand beyond {@link READ_ONLY_GIT}) changes anything. PURE. */
function gitWrites(sub: string, rest: readonly string[]): boolean {
  const flags = rest.filter((w) => w.startsWith('-'));
  const operands = rest.filter((w) => !w.startsWith('-'));
  const first = operands[0];
  switch (sub) {
    case 'branch':
    case 'tag':
      if (flags.some((f) => !LIST_FLAGS.test(f))) return true;
      return (
        operands.length > 0 &&
        !flags.some((f) =>
          /^(-l|--list|--contains|--merged|--no-merged|--points-at|--no-contains)$/.test(f),
        )
      );
    case 'config':
      if (flags.some((f) => /^(--get|--list|-l$|--show)/.test(f))) return false;
      return (
        flags.length > 0 ||
        operands.length > 1 ||
        first === 'set' ||
        first === 'unset' ||
        first === 'edit'
      );
    case 'stash':
      return !(first === 'list' || first === 'show');
    case 'remote':
      return !(first === undefined || first === 'show' || first === 'get-url');
    case 'reflog':
      return !(first === undefined || first === 'show');
    case 'worktree':
      return first !== 'list';
    case 'notes':
      return !(first === undefined || first === 'list' || first === 'show');
    default:
      return true;
  }
}

/** git's global options that take the next word as their value. */
const GIT_GLOBAL_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace']);

/** Removing or moving files: the user's untracked work in a checkout has no copy anywhere. */
const FILE_REMOVERS = new Set(['rm', 'rmdir', 'mv', 'shred', 'unlink', 'truncate']);

/** Words after which the next word runs as a command (launchers, `sh -c`, xargs). */
const LAUNCHERS = new Set([
  ...['sudo', 'doas', 'env', 'command', 'exec', 'nohup', 'time', 'nice', 'xargs', 'timeout'],
  ...['-c', 'eval', 'then', 'do', 'else', '!', '{'],
]);

/**
 * The part of a shell command that would change the user's checkout, branch or git state, or
 * null. Deliberately plain and conservative: quotes are dropped, and each word in a command
 * position (first of its segment, or after a launcher such as sudo, xargs or `sh -c`) that names
 * git (or rm, mv, …) is judged with what follows it, so `bash -c "git reset --hard"` and
 * `xargs rm` are seen too. What the text cannot show (a script's own writes, `$CMD`, an alias)
 * is not seen. PURE.
 */
export function destructiveInCheckout(command: string): string | null {
  const segments = command
    .replace(/["'\\]/g, ' ')
    .split(/&&|\|\||[;&|\n()`]|\$\(/)
    .map((s) => s.trim().split(/\s+/).filter(Boolean));
  for (const words of segments) {
    for (let i = 0; i < words.length; i++) {
      const before = i === 0 ? null : words[i - 1]!;
      const commandPosition =
        before === null || LAUNCHERS.has(before) || words.slice(0, i).every((w) => w.includes('='));
      if (!commandPosition) continue;
      const name = path.basename(words[i]!);
      if (FILE_REMOVERS.has(name)) return words.slice(i).join(' ');
      if (name !== 'git') continue;
      let j = i + 1;
      while (j < words.length && words[j]!.startsWith('-'))
        j += GIT_GLOBAL_VALUE.has(words[j]!) ? 2 : 1;
      const sub = words[j];
      if (sub === undefined || READ_ONLY_GIT.has(sub)) continue;
      if (gitWrites(sub, words.slice(j + 1))) return words.slice(i).join(' ');
    }
  }
  return null;
}

/** The checkout an event happens in, when the agent there is wired by `hagent integrate`. */
interface Unprotected {
  ctx: RepoContext;
  /** The checkout's top folder. */
  top: string;
  mode: 'refuse' | 'warn';
}

/**
 * Whether `dir` is a checkout of a repository whose main checkout wires `agent` with hagent's
 * hooks (or whose config sets `mainCheckout`). Null when hagent has no say there.
 */
async function unprotectedCheckout(
  agent: AgentName,
  dir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Unprotected | null> {
  let ctx: RepoContext;
  try {
    ctx = await openRepo(dir);
  } catch {
    return null;
  }
  const top = ctx.location.topLevel;
  if (top === null) return null;
  const root = await mainCheckoutRoot(ctx).catch(() => null);
  if (root === null) return null;
  const config = await loadConfig(ctx, env);
  let wired = config.sources.mainCheckout === 'config';
  if (!wired) {
    const raw = await readTextOrNull(path.join(root, HOOK_FILES[agent].project)).catch(() => null);
    wired = raw !== null && holdsHagentWiring('hooks', raw);
  }
  return wired ? { ctx, top, mode: config.runtime.mainCheckout } : null;
}

/**
 * A pre-tool event outside any session, in a checkout of a wired repository: refused with
 * MAIN_CHECKOUT when it writes a file of the checkout (native edit tools, apply_patch) or runs
 * destructive git or rm (see {@link destructiveInCheckout}); nothing otherwise.
 * @throws HagentError MAIN_CHECKOUT (mode `refuse` only).
 */
export async function refuseInCheckout(
  event: AgentEvent,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  if (event.action === 'other') return;
  const here = await unprotectedCheckout(event.agent, path.resolve(cwd, event.cwd ?? '.'), env);
  if (!here || here.mode !== 'refuse') return;
  const base = event.cwd ?? cwd;
  let what: string | null = null;
  if (event.action === 'patch') what = `a patch to ${event.paths.join(', ') || 'files here'}`;
  else if (event.action === 'edit') {
    const inside = event.paths.filter((p) => isInside(here.top, path.resolve(base, p)));
    if (inside.length) what = `a write to ${inside.join(', ')}`;
  } else if (event.action === 'shell' && event.command) {
    const bad = destructiveInCheckout(event.command);
    if (bad) what = `the command ${JSON.stringify(bad)}`;
  }
  if (what === null) return;
  throw new HagentError(
    'MAIN_CHECKOUT',
    `${what} would change the user's checkout ${here.top} directly: this is no hagent session, so nothing here could be reviewed or undone`,
    { path: here.top, tool: event.tool },
    `do not work around this: ask the user to start a hagent session (${sessionStartHint(event.agent)}) and continue there; reading files and read-only git stay allowed here`,
  );
}

/**
 * What an agent and its human are told at the start of an agent session outside any hagent
 * session, in a wired repository; null elsewhere (or when the folder is no checkout).
 */
export async function checkoutWarning(
  agent: AgentName,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ agentText: string; humanText: string } | null> {
  const here = await unprotectedCheckout(agent, cwd, env).catch(() => null);
  if (!here) return null;
  const start = sessionStartHint(agent);
  const refused = here.mode === 'refuse';
  return {
    agentText: `You are NOT in a hagent session: this is the user's checkout ${here.top}, where nothing you change can be reviewed or undone by hagent. ${refused ? 'hagent refuses your file writes and destructive git here (error MAIN_CHECKOUT); reading files and read-only git are fine.' : 'hagent does not stop your writes here: make none without the user saying so.'} To change files, ask the user to start a hagent session: ${start}.`,
    humanText: `hagent: this agent runs in your checkout ${here.top}, NOT in a hagent session: ${refused ? 'its file writes and destructive git are refused' : 'nothing it does is recorded or undoable (mainCheckout: warn)'}. Start a session with: ${start}`,
  };
}

/** Each agent's tools hagent's hooks see: the native edit tools and the shell. */
const TOOLS: Record<AgentName, { edit: string; shell: string }> = {
  claude: { edit: 'Write, Edit and NotebookEdit', shell: 'Bash' },
  codex: { edit: 'apply_patch', shell: 'its shell tools' },
  gemini: { edit: 'write_file and replace', shell: 'run_shell_command' },
  cursor: { edit: 'Write, Edit and Delete', shell: 'its shell' },
  copilot: { edit: 'edit, create and apply_patch', shell: 'bash' },
};

/** What `hagent integrate AGENT` protects, exactly: in a session, outside one, and not at all. */
export interface Protection {
  inSession: string;
  outsideSession: string;
  notProtected: string;
}

/** The {@link Protection} of `agent`'s hooks installed at `scope`. PURE. */
export function protectionOf(agent: AgentName, scope: 'project' | 'user'): Protection {
  const t = TOOLS[agent];
  return {
    inSession: `in a hagent session (${sessionStartHint(agent)}${agent === 'claude' ? '' : ', or the agent started in a session worktree'}): every ${t.edit} call is checked (inside the worktree, path policy, staleness) and becomes one commit; ${t.shell} commands are guarded (destructive git, deletes and writes outside the worktree, hagent's human-only steps) and what they change is committed${scope === 'project' ? '; a new session worktree gets this file even when it is not committed' : ''}`,
    outsideSession:
      scope === 'project'
        ? `in this repository's checkouts outside a session: ${t.edit} writes to the checkout, and rm/mv and git that changes the checkout, index, refs or configuration are refused (MAIN_CHECKOUT)${agent === 'claude' ? ', and the agent and you are told at its start that it is not protected' : ''}; "mainCheckout": "warn" in .hagent/config.json only warns`
        : 'outside a session nothing is refused, except in repositories wired at project scope or whose .hagent/config.json sets "mainCheckout"',
    notProtected: `hooks fail open: with hagent not on PATH (hagent doctor checks it), a crash or a timeout the tool runs unchecked; outside a session, what a shell command writes by itself (echo > file, scripts, npm run) is not seen${agent === 'codex' ? "; Codex reads a project's .codex/ only in a project you trusted" : ''}${agent === 'cursor' || agent === 'copilot' ? `; ${agent}'s hooks were checked against its documented payloads, not its real binary` : ''}`,
  };
}
