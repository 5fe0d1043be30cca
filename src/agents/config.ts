/**
 * Each agent's hook configuration for hagent, one source for `hagent run` (per-run settings),
 * `hagent integrate` (merged into the agent's own files) and the shipped `hooks/` folder.
 * PURE. Events and shapes: agents.md §1.1 and §2 (each agent's configuration reference).
 */
import type { AgentName } from './normalize.js';

/** A hook entry as the agent's JSON files hold it. */
type Json = Record<string, unknown>;

/** Claude Code's tools hagent gates: native edits and the shell. */
export const CLAUDE_TOOL_MATCHER = 'Write|Edit|MultiEdit|NotebookEdit|Bash';
/** Gemini CLI's tools hagent gates. */
export const GEMINI_TOOL_MATCHER = 'write_file|replace|run_shell_command';
/** Copilot CLI's tools hagent gates. */
export const COPILOT_TOOLS = ['edit', 'create', 'apply_patch', 'bash'];

/** Seconds an agent gives hagent's hook before it fails open (hooks wait on the session lock). */
export const HOOK_TIMEOUT_S = 120;

/** Where `hagent run`'s hook server answers Claude Code's HTTP hooks, and the run's token. */
export interface HttpHookTarget {
  url: string;
  token: string;
}

/**
 * The `hooks` object of Claude Code's settings (`.claude/settings.json`, `--settings FILE`).
 * `worktrees` adds WorktreeCreate/WorktreeRemove, so `claude --worktree NAME` makes hagent sessions.
 * `http`: each event is an HTTP hook (Claude Code POSTs the event's JSON) to the run's hook server
 * with the run's token, instead of a process (agents.md §2.1; hook-http.ts).
 */
export function claudeHooks(
  command: string,
  options: { worktrees?: boolean; http?: HttpHookTarget } = {},
): Json {
  const handler = options.http
    ? [
        {
          type: 'http',
          url: options.http.url,
          headers: { Authorization: `Bearer ${options.http.token}` },
          timeout: HOOK_TIMEOUT_S,
        },
      ]
    : [{ type: 'command', command, timeout: HOOK_TIMEOUT_S }];
  const hooks: Json = {
    PreToolUse: [{ matcher: CLAUDE_TOOL_MATCHER, hooks: handler }],
    PostToolUse: [{ matcher: CLAUDE_TOOL_MATCHER, hooks: handler }],
    Stop: [{ hooks: handler }],
    SessionEnd: [{ hooks: handler }],
    // Tells the model it works in a hagent session and how to read a refusal.
    SessionStart: [{ hooks: handler }],
  };
  if (options.worktrees) {
    hooks.WorktreeCreate = [{ hooks: handler }];
    hooks.WorktreeRemove = [{ hooks: handler }];
  }
  return hooks;
}

/** The `hooks` object of Codex's `hooks.json` (all tools: apply_patch and the shell tools under their several names). */
export function codexHooks(command: string): Json {
  const handler = [{ type: 'command', command, timeout: HOOK_TIMEOUT_S }];
  return {
    PreToolUse: [{ hooks: handler }],
    PostToolUse: [{ hooks: handler }],
    Stop: [{ hooks: handler }],
  };
}

/**
 * Codex per-run overrides (`-c key=value`, TOML values): the same hooks inline, for this run
 * only. JSON strings are valid TOML basic strings.
 */
export function codexConfigArgs(command: string): string[] {
  const inline = `[{hooks=[{type="command",command=${JSON.stringify(command)},timeout=${HOOK_TIMEOUT_S}}]}]`;
  return ['PreToolUse', 'PostToolUse', 'Stop'].flatMap((event) => [
    '-c',
    `hooks.${event}=${inline}`,
  ]);
}

/** The `hooks` object of Gemini CLI's `settings.json` (timeouts in ms). */
export function geminiHooks(command: string): Json {
  const handler = [{ type: 'command', name: 'hagent', command, timeout: HOOK_TIMEOUT_S * 1000 }];
  return {
    BeforeTool: [{ matcher: GEMINI_TOOL_MATCHER, hooks: handler }],
    AfterTool: [{ matcher: GEMINI_TOOL_MATCHER, hooks: handler }],
    AfterAgent: [{ hooks: handler }],
    SessionEnd: [{ hooks: handler }],
  };
}

/** The `hooks` object of Cursor's `hooks.json` (`version: 1`). */
export function cursorHooks(command: string): Json {
  const h = (extra: Json = {}) => [{ command, ...extra }];
  return {
    preToolUse: h({ matcher: 'Write|Edit|MultiEdit|Delete' }),
    beforeShellExecution: h(),
    afterFileEdit: h(),
    afterShellExecution: h(),
    stop: h(),
  };
}

/** The `hooks` object of Copilot CLI's `.github/hooks/*.json` (`version: 1`); the event rides on the command line, as Copilot's payload lacks it. */
export function copilotHooks(command: string): Json {
  const h = (event: string) => [
    { type: 'command', bash: `${command} ${event}`, timeoutSec: HOOK_TIMEOUT_S },
  ];
  return {
    preToolUse: h('preToolUse'),
    postToolUse: h('postToolUse'),
    sessionEnd: h('sessionEnd'),
  };
}

/** The whole configuration object an agent's hook file holds, for `command` (e.g. `hagent hook claude`). */
export function agentHookFile(
  agent: AgentName,
  command: string,
  options: { worktrees?: boolean } = {},
): Json {
  switch (agent) {
    case 'claude':
      return { hooks: claudeHooks(command, options) };
    case 'codex':
      return { hooks: codexHooks(command) };
    case 'gemini':
      return { hooks: geminiHooks(command), hooksConfig: { enabled: true } };
    case 'cursor':
      return { version: 1, hooks: cursorHooks(command) };
    case 'copilot':
      return { version: 1, hooks: copilotHooks(command) };
  }
}
