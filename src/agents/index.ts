/**
 * agents: hagent in every agent's hands. One normalizer maps each agent's hook event to
 * hagent's terms, one handler gates and records the tool calls, and each agent gets its exact
 * answer shape (normalize.ts, hook.ts, respond.ts); the launcher and installer configurations
 * live in launch.ts and integrate.ts. Imports session/, sync/, apply/, policy/; never commands/.
 */
export {
  AGENTS,
  normalizeEvent,
  patchPaths,
  eventKind,
  toolAction,
  type AgentEvent,
  type AgentName,
  type EventKind,
  type ToolAction,
} from './normalize.js';
export { block, noEffect, withContext, type HookAnswer } from './respond.js';
export {
  handleHook,
  teach,
  sessionContext,
  HOOK_LOCK_TIMEOUT_MS,
  type HookContext,
} from './hook.js';
export {
  agentHookFile,
  claudeHooks,
  codexHooks,
  codexConfigArgs,
  geminiHooks,
  cursorHooks,
  copilotHooks,
  HOOK_TIMEOUT_S,
} from './config.js';
export {
  HOOK_SOCKET_ENV,
  HOOK_PROTOCOL,
  MCP_PROTOCOL,
  startHookServer,
  type HookServer,
} from './hook-server.js';
export { AGENT_MARKER, agentMarkerEnv, refuseForAgent } from './marker.js';
export {
  LAUNCHABLE,
  findAgentBinary,
  prepareLaunch,
  runAgent,
  runAgentProcess,
  shellQuote,
  WORKTREE_HOOK_FILES,
  type LaunchName,
  type LaunchPlan,
  type RunResult,
} from './launch.js';
export {
  integrateAgent,
  installedHooks,
  mergeHookConfig,
  installedHookCommand,
  HOOK_FILES,
  type IntegrateResult,
  type InstalledHook,
} from './integrate.js';
export {
  integrateMcp,
  installedMcpServers,
  installedMcpCommand,
  codexSnippetToml,
  mcpServerFile,
  MCP_SERVER,
  CLAUDE_STRICT_DENY,
  CLAUDE_MCP_ALLOW,
  GEMINI_STRICT_EXCLUDE,
  CURSOR_STRICT_DENY,
  COPILOT_STRICT_FLAGS,
  type McpIntegrateResult,
  type McpFileResult,
  type StrictReport,
  type InstalledMcpServer,
} from './integrate-mcp.js';
