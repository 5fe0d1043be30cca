/**
 * The agent marker: an environment variable hagent sets for every process it runs for an agent
 * (the agent `hagent run` starts, the command of `hagent exec` and of the MCP server's `exec`).
 * Whatever those processes start inherits it, so a `hagent` they run knows it works for an agent
 * and refuses the verbs that are the human's: approving, landing, taking a land back, ending a
 * session, changing the agents' hook or MCP configuration.
 *
 * It is a tripwire, not a lock: a process can drop a variable. The shell guard refuses commands
 * that unset or override it, and refuses the human-only verbs themselves (for Claude's Bash under
 * `hagent integrate`, where no hagent process stands between the agent and its shell). A human
 * who runs hagent from a process that carries the marker on purpose (a CI job started by an agent
 * run, say) unsets it for that command: `env -u HAGENT_AGENT hagent land`.
 */
import { HagentError } from '../errors.js';

/** The variable's name; its value is the session id. */
export const AGENT_MARKER = 'HAGENT_AGENT';

/** The environment entries that mark a process started for an agent in `sessionId`. */
export function agentMarkerEnv(sessionId: string): Record<string, string> {
  return { [AGENT_MARKER]: sessionId };
}

/**
 * Refuses a human-only command when the environment carries the agent marker.
 * `what` names the command as typed (e.g. `hagent land`). Nothing has been read or written yet:
 * call it first. @throws HagentError HUMAN_ONLY.
 */
export function refuseForAgent(
  env: Readonly<Record<string, string | undefined>>,
  what: string,
): void {
  const value = env[AGENT_MARKER];
  if (value === undefined || value === '') return;
  throw new HagentError(
    'HUMAN_ONLY',
    `${what} is for the human: run it from your own shell`,
    { command: what, marker: AGENT_MARKER, session: value },
    // The way round (unsetting the marker) is in docs/agents.md for the human, not here for the agent.
    `nothing was changed; an agent cannot ${verbOf(what)}: tell the user the work is ready and ask them to run ${what} in their own terminal`,
  );
}

function verbOf(what: string): string {
  if (/review --approve/.test(what)) return 'approve its own work';
  if (/land --undo|undo --land/.test(what)) return 'take a land back';
  if (/\bland\b/.test(what)) return 'land its own work';
  if (/session end/.test(what)) return 'end sessions';
  if (/integrate/.test(what)) return "change the agents' hook and MCP configuration";
  return 'run it';
}
