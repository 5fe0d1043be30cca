/**
 * The agent marker: an environment variable hagent sets for every process it runs for an agent
 * (the agent `hagent run` starts, the command of `hagent exec` and of the MCP server's `exec`).
 * Whatever those processes start inherits it, so a `hagent` they run knows it works for an agent
 * and refuses the verbs that are the human's: approving, landing, taking a land back, ending a
 * session, changing the agents' hook or MCP configuration.
 *
 * The variable is a tripwire, not a lock: a process can drop it. The lock is the caller's process
 * ancestry (ancestry.ts): a process that descends from an agent hagent launched, serves or saw in
 * a hook is refused with or without the variable. The shell guard also refuses commands that
 * unset or override it, and the human-only verbs themselves, before anything runs.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { HagentError } from '../errors.js';
import { locateWorktreeDirect } from '../git/plumbing.js';
import { agentAncestor, type AgentAncestor } from './ancestry.js';

/** The variable's name; its value is the session id. */
export const AGENT_MARKER = 'HAGENT_AGENT';

/** The environment entries that mark a process started for an agent in `sessionId`. */
export function agentMarkerEnv(sessionId: string): Record<string, string> {
  return { [AGENT_MARKER]: sessionId };
}

/**
 * Refuses a human-only command when the environment carries the agent marker, or when the
 * calling process descends from an agent's (ancestry.ts; `cwd` picks the repository whose exec
 * windows count). `what` names the command as typed (e.g. `hagent land`). Nothing has been read
 * or written yet: call it first. @throws HagentError HUMAN_ONLY (details `how`: the proof).
 */
export function refuseForAgent(
  env: Readonly<Record<string, string | undefined>>,
  what: string,
  cwd?: string,
): void {
  const value = env[AGENT_MARKER];
  const walled = sandboxOfThisProcess();
  const found: AgentAncestor | null =
    value !== undefined && value !== ''
      ? { pid: process.pid, kind: 'marker', how: `${AGENT_MARKER} is set`, session: value }
      : walled !== null
        ? {
            pid: process.pid,
            kind: 'marker',
            how: `it runs inside session ${walled}'s sandbox`,
            session: walled,
          }
        : agentAncestor(AGENT_MARKER, cwd === undefined ? null : repoOf(cwd));
  if (!found) return;
  throw new HagentError(
    'HUMAN_ONLY',
    `${what} is for the human: run it from your own shell${found.kind === 'marker' && found.pid === process.pid && walled === null ? '' : ` (${found.how})`}`,
    { command: what, marker: AGENT_MARKER, session: found.session, how: found.how, pid: found.pid },
    // The way round (unsetting the marker) is in docs/agents.md for the human, not here for the agent.
    `nothing was changed; an agent cannot ${verbOf(what)}: tell the user the work is ready and ask them to run ${what} in their own terminal`,
  );
}

function verbOf(what: string): string {
  if (/review --approve/.test(what)) return 'approve its own work';
  if (/land --undo|undo --land/.test(what)) return 'take a land back';
  if (/\bland\b/.test(what)) return 'land its own work';
  if (/session end/.test(what)) return 'end sessions';
  if (/session update --all/.test(what)) return 'update other sessions than its own';
  if (/integrate/.test(what)) return "change the agents' hook and MCP configuration";
  return 'run it';
}

/**
 * The session whose sandbox this process runs in (sandbox/launch.ts), or null. Read from the
 * process's own mount table, where the sandbox's private views of the git folder show as binds
 * of `<git-common-dir>/hagent/sandbox/<id>/…` (or `<id>/exec/…`): a process inside can drop
 * every variable and leave its process tree (the sandbox has a pid namespace of its own, so
 * ancestry stops at its edge), but it cannot unmount those (it has no capabilities). Never throws.
 */
export function sandboxOfThisProcess(): string | null {
  let table: string;
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return null;
  }
  for (const line of table.split('\n')) {
    // Field 4 is the root of the mount within its file system.
    const root = line.split(' ')[3] ?? '';
    // `<id>/exec/…`: the sandbox of an exec command beside a run's (exec/sandboxed.ts).
    const m = /\/hagent\/sandbox\/([^/]+)\/(?:exec\/)?(root|refs|branch|logs)$/.exec(root);
    if (m) return m[1]!;
  }
  return null;
}

/** The git common dir around `cwd`, real; null when it cannot be found without git. */
function repoOf(cwd: string): string | null {
  try {
    const common = locateWorktreeDirect(cwd)?.commonDir;
    return common ? realpathSync(common) : null;
  } catch {
    return null;
  }
}
