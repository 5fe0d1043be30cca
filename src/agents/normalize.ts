/**
 * One normalizer for every agent's hook event: whatever the agent's field names, hagent sees
 * the same {kind, action, tool, toolUseId, cwd, paths, command, patch}. PURE: no fs, no git.
 * Contracts: Claude Code hooks reference (PreToolUse/PostToolUse/Stop/SessionEnd/WorktreeCreate),
 * Codex hooks (`tool_input.command` holds the raw apply_patch text), Gemini CLI
 * (BeforeTool/AfterTool), Cursor hooks.json (camelCase events, `workspace_roots`), Copilot CLI
 * (`toolName`, `toolArgs` as a JSON string, the event known only from the configuration).
 */

/** The agents hagent has hook handlers for. */
export const AGENTS = ['claude', 'codex', 'gemini', 'cursor', 'copilot'] as const;
export type AgentName = (typeof AGENTS)[number];

/**
 * An agent's name as hagent's commands take it: Cursor's CLI binary is `cursor-agent`, and every
 * command (run, integrate, hook) takes either name for Cursor. Other names are returned as given.
 */
export function agentName(name: string): string {
  return name === 'cursor-agent' ? 'cursor' : name;
}

/** What happens in hagent's terms. */
export type EventKind =
  | 'pre-tool'
  | 'post-tool'
  | 'stop'
  | 'session-start'
  | 'session-end'
  | 'worktree-create'
  | 'worktree-remove'
  | 'other';
/** What the tool does: writes files natively, runs a shell command, sends a patch, or something hagent leaves alone. */
export type ToolAction = 'edit' | 'shell' | 'patch' | 'other';

/** An agent's hook event in hagent's terms. Paths are as the agent gave them (absolute or relative to `cwd`). */
export interface AgentEvent {
  agent: AgentName;
  kind: EventKind;
  /** The agent's own event name, for its answer (Claude's hookEventName). */
  eventName: string;
  tool: string;
  action: ToolAction;
  toolUseId: string | null;
  cwd: string | null;
  paths: string[];
  command: string | null;
  patch: string | null;
  /** The tool's input as the agent sent it (kept in the commit's note). */
  input: unknown;
  /** Post-tool: the text of the tool's result (every string in it, one per line); '' when none. */
  output: string;
  /** WorktreeCreate: the requested name; WorktreeRemove: the worktree's path. */
  worktreeName?: string;
  worktreePath?: string;
}

/** Every string inside `v` (a tool's result: a string, or objects such as `{stdout, stderr}`), one per line. Pure. */
function textOf(v: unknown, depth = 0): string {
  if (typeof v === 'string') return v;
  if (depth > 4 || v === null || typeof v !== 'object') return '';
  return Object.values(v as Record<string, unknown>)
    .map((x) => textOf(x, depth + 1))
    .filter(Boolean)
    .join('\n');
}

const KINDS: Record<string, EventKind> = {
  pretooluse: 'pre-tool',
  beforetool: 'pre-tool',
  beforeshellexecution: 'pre-tool',
  'pre-tool': 'pre-tool',
  posttooluse: 'post-tool',
  aftertool: 'post-tool',
  afterfileedit: 'post-tool',
  aftershellexecution: 'post-tool',
  'post-tool': 'post-tool',
  stop: 'stop',
  subagentstop: 'stop',
  afteragent: 'stop',
  agentstop: 'stop',
  sessionstart: 'session-start',
  'session-start': 'session-start',
  sessionend: 'session-end',
  'session-end': 'session-end',
  worktreecreate: 'worktree-create',
  'worktree-create': 'worktree-create',
  worktreeremove: 'worktree-remove',
  'worktree-remove': 'worktree-remove',
};

const EDIT_TOOLS = new Set([
  'write',
  'edit',
  'multiedit',
  'notebookedit',
  'write_file',
  'replace',
  'create',
  'strreplace',
  'delete',
]);
const SHELL_TOOLS = new Set([
  'bash',
  'shell',
  'exec_command',
  'local_shell',
  'run_shell_command',
  'container.exec',
  'unified_exec',
]);
const PATCH_TOOLS = new Set(['apply_patch']);

/** The kind of an agent's event name (case and dashes ignored); 'other' for events hagent leaves alone. */
export function eventKind(name: string): EventKind {
  return KINDS[name.replace(/_/g, '').toLowerCase()] ?? KINDS[name.toLowerCase()] ?? 'other';
}

/** The action of a tool name; the Cursor shell events carry no tool name and are shell by definition. */
export function toolAction(tool: string): ToolAction {
  const t = tool.toLowerCase();
  if (PATCH_TOOLS.has(t)) return 'patch';
  if (EDIT_TOOLS.has(t)) return 'edit';
  if (SHELL_TOOLS.has(t)) return 'shell';
  return 'other';
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Copilot's `toolArgs` is a JSON string for most tools and the raw patch for apply_patch. */
function parseArgs(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/**
 * The files a Codex-language patch names (Add/Update/Delete and Move to), read from its headers
 * without parsing the rest: a broken patch still names what it meant to touch.
 */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(
    /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/gm,
  ))
    out.push(m[1]!);
  for (const m of patch.matchAll(/^\+\+\+ (?:b\/)?(.+?)\s*$/gm))
    if (m[1] !== '/dev/null') out.push(m[1]!);
  return [...new Set(out)];
}

function commandText(v: unknown): string | null {
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    // ["bash", "-lc", "script"]: the script is what runs
    if (v.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(v[0]!) && /^-\w*c$/.test(v[1]!)) return v[2]!;
    return v.join(' ');
  }
  return str(v);
}

/**
 * Maps one hook payload to an {@link AgentEvent}. `eventArg` is the event named on hagent's
 * command line (Copilot's payload does not carry it; for the others it only fills a gap).
 * Never throws: an event hagent does not know is kind 'other', a tool it does not know is
 * action 'other'.
 */
export function normalizeEvent(
  agent: AgentName,
  eventArg: string | undefined,
  payload: unknown,
): AgentEvent {
  const p = obj(payload);
  const eventName = str(p.hook_event_name) ?? str(p.hookEventName) ?? eventArg ?? '';
  const kind = eventKind(eventName);
  let tool = str(p.tool_name) ?? str(p.toolName) ?? '';
  let input: unknown = p.tool_input ?? parseArgs(p.toolArgs) ?? {};
  const roots = Array.isArray(p.workspace_roots)
    ? p.workspace_roots.filter((r): r is string => typeof r === 'string')
    : [];
  const cwd = str(p.cwd) ?? roots[0] ?? null;
  // Cursor's dedicated events carry their fields at the top level.
  const lower = eventName.toLowerCase();
  if (agent === 'cursor' && (lower === 'beforeshellexecution' || lower === 'aftershellexecution')) {
    tool ||= 'Shell';
    input = { command: p.command };
  } else if (agent === 'cursor' && lower === 'afterfileedit') {
    tool ||= 'Edit';
    input = { file_path: p.file_path, edits: p.edits };
  }
  const args = obj(input);
  let action = toolAction(tool);
  let patch: string | null = null;
  let command: string | null = null;
  let paths: string[] = [];
  if (action === 'patch') {
    patch =
      typeof input === 'string'
        ? input
        : (str(args.command) ?? str(args.patch) ?? str(args.input) ?? commandText(args.command));
    paths = patch ? patchPaths(patch) : [];
  } else if (action === 'shell') {
    command = commandText(args.command) ?? commandText(args.cmd) ?? str(args.script);
    // Codex runs `apply_patch <<'EOF' …` through its shell tool too, and routes it to the same engine.
    if (command && /^\s*apply_patch\b[\s\S]*\*\*\* Begin Patch/.test(command)) {
      const m = /\*\*\* Begin Patch[\s\S]*?\*\*\* End Patch/.exec(command);
      if (m) {
        patch = m[0];
        paths = patchPaths(patch);
        action = 'patch';
      }
    }
  } else if (action === 'edit') {
    const one =
      str(args.file_path) ??
      str(args.notebook_path) ??
      str(args.path) ??
      str(args.filePath) ??
      str(args.absolute_path) ??
      str(p.file_path);
    if (one) paths = [one];
  }
  const event: AgentEvent = {
    agent,
    kind,
    eventName,
    tool,
    action,
    toolUseId:
      str(p.tool_use_id) ?? str(p.toolUseId) ?? str(p.tool_call_id) ?? str(p.generation_id) ?? null,
    cwd,
    paths,
    command,
    patch,
    input,
    output: kind === 'post-tool' ? textOf(p.tool_response ?? p.toolResult ?? p.output) : '',
  };
  if (kind === 'worktree-create') {
    const name = str(p.name) ?? str(p.worktree_name) ?? str(p.slug);
    if (name) event.worktreeName = name;
  }
  if (kind === 'worktree-remove') {
    const wt = str(p.worktree_path) ?? str(p.path);
    if (wt) event.worktreePath = wt;
  }
  return event;
}
