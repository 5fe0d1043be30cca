/**
 * Each agent's exact answer to a hook. PURE. Blocks take the form the agent honours:
 * - Claude Code, Codex, Gemini CLI: exit 2 with the reason on stderr (Codex rejects `ask` and a
 *   bare `allow`, and needs a non-empty stderr on exit 2; Gemini shows stderr as the tool error).
 * - Cursor: JSON on every path: `{"permission":"deny","user_message","agent_message"}`, `{}` otherwise.
 * - Copilot CLI: exit codes never block; `{"permissionDecision":"deny","permissionDecisionReason"}`.
 * Nothing but the agent's JSON is ever written on stdout (Gemini and Cursor parse it).
 */
import type { AgentEvent, AgentName } from './normalize.js';

/** What the hook process prints and exits with. */
export interface HookAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The answer that changes nothing (also outside a hagent session). */
export function noEffect(agent: AgentName, note = ''): HookAnswer {
  return { exitCode: 0, stdout: agent === 'cursor' ? '{}\n' : '', stderr: note ? `${note}\n` : '' };
}

/** Refuses the tool call; `reason` is what the model reads as the tool's result. */
export function block(agent: AgentName, event: AgentEvent, reason: string): HookAnswer {
  const text = reason.trim();
  switch (agent) {
    case 'cursor':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({ permission: 'deny', continue: true, user_message: text.split('\n')[0], agent_message: text })}\n`,
        stderr: '',
      };
    case 'copilot':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: text })}\n`,
        stderr: '',
      };
    case 'gemini':
      return { exitCode: 2, stdout: '', stderr: `${text}\n` };
    case 'claude':
    case 'codex':
      void event;
      return { exitCode: 2, stdout: '', stderr: `${text}\n` };
  }
}

/**
 * A successful post-tool or session-start answer that tells the model something (Claude Code's
 * `additionalContext`); the other agents get the plain no-effect answer.
 */
export function withContext(agent: AgentName, event: AgentEvent, context: string): HookAnswer {
  if (agent === 'claude' && (event.kind === 'post-tool' || event.kind === 'session-start')) {
    return {
      exitCode: 0,
      stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: event.eventName, additionalContext: context } })}\n`,
      stderr: '',
    };
  }
  return noEffect(agent);
}

/**
 * A post-tool warning both the model and the human must see (the user's checkout changed by a
 * shell command, a write the sandbox stopped): Claude Code gets it as `additionalContext` and
 * `systemMessage` (shown to the user), Gemini CLI's AfterTool and Codex's PostToolUse the same
 * keys (Codex's post-tool-use output schema); the agents whose post-tool answer carries no text
 * (Cursor, Copilot) get it on stderr with exit 0, which their hook logs show.
 */
export function warnAfterTool(agent: AgentName, event: AgentEvent, text: string): HookAnswer {
  if (
    (agent === 'claude' || agent === 'gemini' || agent === 'codex') &&
    event.kind === 'post-tool'
  ) {
    return {
      exitCode: 0,
      stdout: `${JSON.stringify({ systemMessage: text.split('\n')[0], hookSpecificOutput: { hookEventName: event.eventName, additionalContext: text } })}\n`,
      stderr: '',
    };
  }
  return noEffect(agent, text);
}

/**
 * A pre-tool warning that lets the call go (the overlap radar): Claude Code and Codex get it as
 * `additionalContext` (the model reads it beside the tool's result) with a `systemMessage` for
 * the human, Gemini CLI the same keys of its BeforeTool output; Cursor and Copilot CLI, whose
 * pre-tool answer carries no text but a decision, get the plain no-effect answer with the text on
 * stderr (their hook logs). No permission decision is given: the agent's own rules still apply.
 */
export function warnBeforeTool(agent: AgentName, event: AgentEvent, text: string): HookAnswer {
  if (agent === 'claude' || agent === 'codex' || agent === 'gemini')
    return {
      exitCode: 0,
      stdout: `${JSON.stringify({
        systemMessage: text.split('\n')[0],
        hookSpecificOutput: {
          hookEventName: event.eventName || (agent === 'gemini' ? 'BeforeTool' : 'PreToolUse'),
          additionalContext: text,
        },
      })}\n`,
      stderr: '',
    };
  return noEffect(agent, text);
}

/**
 * Lets a shell call go with its command replaced (the sandbox's rewrite), in each agent's
 * input-rewriting form (agents.md §1.1 "Rewrite input"): Claude Code and Codex
 * `hookSpecificOutput.updatedInput` (the whole input, with `allow`: Codex takes it only so, and
 * Claude Code's deny and ask rules still apply after a hook's allow), Gemini CLI
 * `hookSpecificOutput.tool_input` (merged), Cursor `updated_input` with `permission: allow`,
 * Copilot CLI top-level `modifiedArgs`. `input` is the tool's input as the agent sent it;
 * `field` the key of the command in it. `note` goes to stderr (shown in the agents' hook logs).
 */
export function rewriteShell(
  agent: AgentName,
  event: AgentEvent,
  input: Record<string, unknown>,
  field: string,
  command: string,
  note = '',
): HookAnswer {
  const updated = { ...input, [field]: command };
  const stderr = note ? `${note}\n` : '';
  switch (agent) {
    case 'claude':
    case 'codex':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({
          hookSpecificOutput: {
            hookEventName: event.eventName || 'PreToolUse',
            permissionDecision: 'allow',
            updatedInput: updated,
          },
        })}\n`,
        stderr,
      };
    case 'gemini':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({
          hookSpecificOutput: {
            hookEventName: event.eventName || 'BeforeTool',
            tool_input: updated,
          },
        })}\n`,
        stderr,
      };
    case 'cursor':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({ permission: 'allow', updated_input: updated })}\n`,
        stderr,
      };
    case 'copilot':
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({ permissionDecision: 'allow', modifiedArgs: updated })}\n`,
        stderr,
      };
  }
}

/**
 * A session-start warning: the model reads `agentText` (Claude Code's `additionalContext`), the
 * human sees `humanText` (`systemMessage`); agents whose session start carries no text get the
 * human's line on stderr with exit 0.
 */
export function warnAtStart(
  agent: AgentName,
  event: AgentEvent,
  agentText: string,
  humanText: string,
): HookAnswer {
  if (agent === 'claude' && event.kind === 'session-start')
    return {
      exitCode: 0,
      stdout: `${JSON.stringify({ systemMessage: humanText, hookSpecificOutput: { hookEventName: event.eventName, additionalContext: agentText } })}\n`,
      stderr: '',
    };
  return noEffect(agent, humanText);
}

/** What the hook server sends back for one of Claude Code's HTTP hooks. */
export interface HttpHookReply {
  status: number;
  body: string;
}

/**
 * Claude Code's HTTP-hook form of `answer` (a command hook's exit status, stdout and stderr), for
 * the event `eventName`. An HTTP hook has no exit status: Claude Code reads a 2xx body as it reads
 * a command hook's stdout on exit 0 (empty = no effect), and anything else as a non-blocking
 * error. So a block (exit 2) becomes the event's JSON form of it: PreToolUse `permissionDecision:
 * "deny"` with the reason (the model reads it), PostToolUse, Stop and UserPromptSubmit `decision:
 * "block"`, other events a `systemMessage`; another failing status (1, 3) becomes a
 * `systemMessage` (the user sees it, the call goes on, as with a command hook); a non-JSON stdout
 * becomes `additionalContext` (SessionStart, UserPromptSubmit) or a `systemMessage`. PURE.
 */
export function claudeHttpReply(eventName: string, answer: HookAnswer): HttpHookReply {
  const json = (v: unknown): HttpHookReply => ({ status: 200, body: JSON.stringify(v) });
  const err = answer.stderr.trim();
  if (answer.exitCode === 2) {
    const reason = err || 'blocked by hagent';
    if (eventName === 'PreToolUse')
      return json({
        hookSpecificOutput: {
          hookEventName: eventName,
          permissionDecision: 'deny',
          permissionDecisionReason: reason,
        },
      });
    if (['PostToolUse', 'Stop', 'SubagentStop', 'UserPromptSubmit'].includes(eventName))
      return json({ decision: 'block', reason });
    return json({ systemMessage: reason });
  }
  if (answer.exitCode !== 0)
    return json({ systemMessage: err || `hagent's hook failed (exit ${answer.exitCode})` });
  const out = answer.stdout.trim();
  if (out === '') return { status: 200, body: '' };
  try {
    const parsed: unknown = JSON.parse(out);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return { status: 200, body: out };
  } catch {
    // plain text: wrapped below
  }
  if (eventName === 'SessionStart' || eventName === 'UserPromptSubmit')
    return json({ hookSpecificOutput: { hookEventName: eventName, additionalContext: out } });
  return json({ systemMessage: out });
}
