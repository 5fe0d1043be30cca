/**
 * `hagent integrate <agent> --mcp [--strict]`: hagent's MCP server (`hagent mcp`) merged into the
 * agent's own MCP configuration, project scope (in the repository) or user scope (home), and with
 * `--strict` the agent's own rule that takes its native edit tools away, so every write goes
 * through hagent's tools. Rules the agent enforces itself fail closed, unlike hooks.
 *
 * Never clobbering: hagent owns the server named `hagent` and the rules it adds, recognised by
 * their exact text; everything else in the files stays as it was. A re-run changes nothing
 * (idempotent); `--remove` takes the server, its approval and hagent's allow rule out, and with
 * `--strict` the deny rules too (they are ordinary rules a user may have written: they go only
 * when asked). Contracts: Claude Code 2.1 (`.mcp.json`, `~/.claude.json`, permission rules),
 * Codex 0.171 (`[mcp_servers]`, `[features]`), Gemini CLI 0.61 (`mcpServers`, `tools.exclude`),
 * Copilot CLI (`.github/mcp.json`, `~/.copilot/mcp-config.json`, `--deny-tool`), Cursor
 * (`.cursor/mcp.json`, the Cursor CLI's `.cursor/cli.json` permissions).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { HagentError } from '../errors.js';
import {
  commandProblem,
  MCP_PROJECT_FILES,
  MCP_SERVER,
  parseJsonObject,
  readTextOrNull,
  writeFileAtomic,
} from './integrate.js';
import { AGENTS, agentName, type AgentName } from './normalize.js';
import { setKey, setTable } from './toml-lines.js';

type Json = Record<string, unknown>;
type Env = Readonly<Record<string, string | undefined>>;

export { MCP_SERVER } from './integrate.js';

/** The command an installed MCP server runs: plain `hagent` on PATH, as the installed hooks do. */
export function installedMcpCommand(): { command: string; args: string[] } {
  return { command: 'hagent', args: ['mcp'] };
}

/** Claude Code's native edit tools that `--strict` denies (rules by tool name). */
export const CLAUDE_STRICT_DENY = ['Edit', 'Write', 'NotebookEdit'];
/** Claude Code's rule that lets hagent's MCP tools run without asking. */
export const CLAUDE_MCP_ALLOW = `mcp__${MCP_SERVER}__*`;
/** Gemini CLI's native edit tools that `--strict` excludes. */
export const GEMINI_STRICT_EXCLUDE = ['write_file', 'replace'];
/** The Cursor CLI's permission rule that `--strict` denies: every file write. */
export const CURSOR_STRICT_DENY = ['Write(**)'];
/** Copilot CLI's flags for strict mode (flags, not a file). */
export const COPILOT_STRICT_FLAGS = ['--deny-tool=write', `--allow-tool=${MCP_SERVER}`];

/** What `--strict` enforces for an agent and what it cannot. */
export interface StrictReport {
  /** True when the agent itself refuses its native edit tools once this is in place. */
  failsClosed: boolean;
  enforced: string;
  notEnforced: string;
  /** Command-line flags to start the agent with (Copilot: strict mode is a flag, not a file). */
  flags: string[];
}

/** One file `--mcp` merges into. */
export interface McpFileResult {
  file: string;
  format: 'json' | 'toml';
  /** `added`, `updated`, `removed`, `unchanged`, or `printed` (--print). */
  action: 'added' | 'updated' | 'removed' | 'unchanged' | 'printed';
  /** What hagent merges into this file (its part only). */
  snippet: Json;
}

/**
 * JSON of `hagent integrate <agent> --mcp`. `file`, `action`, `snippet` are those of the server's
 * file (`files[0]`).
 */
export interface McpIntegrateResult {
  ok: true;
  agent: AgentName;
  scope: 'project' | 'user';
  mcp: true;
  strict: boolean;
  file: string;
  action: McpFileResult['action'];
  snippet: Json;
  files: McpFileResult[];
  /** With --strict: what it enforces (null without). */
  strictMode: StrictReport | null;
  /** What the user should know to make the agent use the server. */
  notes: string[];
}

/** One file's part: its snippet and the pure edit that adds or removes it. */
interface Part {
  file: string;
  format: 'json' | 'toml';
  snippet: Json;
  /** The file holds nothing but MCP servers: a removal that leaves it empty deletes it. */
  serversOnly?: boolean;
  /** The JSON edit (TOML parts are edited as text: editCodexToml). */
  edit?: (value: Json, remove: boolean) => Json;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * `value` with `entry` as server `hagent` of its `key` object (or that server taken out; an emptied
 * object goes).
 */
function withServer(value: Json, key: string, entry: Json, remove: boolean): Json {
  const had = isObject(value[key]);
  const servers: Json = had ? { ...(value[key] as Json) } : {};
  if (remove) {
    if (!(MCP_SERVER in servers)) return value;
    delete servers[MCP_SERVER];
  } else servers[MCP_SERVER] = entry;
  const out = { ...value };
  if (remove && !Object.keys(servers).length) delete out[key];
  else out[key] = servers;
  return out;
}

/**
 * `value` with `items` in the string list at `keys` (added at its end, or taken out); a list or
 * object emptied by a removal goes.
 */
function withList(
  value: Json,
  keys: readonly string[],
  items: readonly string[],
  remove: boolean,
): Json {
  const [head, ...rest] = keys as [string, ...string[]];
  const out = { ...value };
  if (rest.length) {
    const inner = isObject(value[head]) ? (value[head] as Json) : {};
    if (remove && !isObject(value[head])) return value;
    const next = withList(inner, rest, items, remove);
    if (remove && !Object.keys(next).length) delete out[head];
    else out[head] = next;
    return out;
  }
  const list = Array.isArray(value[head]) ? (value[head] as unknown[]) : [];
  if (remove) {
    if (!Array.isArray(value[head])) return value;
    const kept = list.filter((x) => !(typeof x === 'string' && items.includes(x)));
    if (kept.length === list.length) return value;
    if (kept.length) out[head] = kept;
    else delete out[head];
    return out;
  }
  out[head] = [...list, ...items.filter((x) => !list.includes(x))];
  return out;
}

function home(env: Env): string {
  return env.HOME ?? os.homedir();
}

/**
 * The MCP server files of each agent (project path relative to the repository; user path absolute).
 */
export function mcpServerFile(agent: AgentName, user: boolean, root: string, env: Env): string {
  if (!user) return path.join(root, MCP_PROJECT_FILES[agent]);
  const h = home(env);
  switch (agent) {
    case 'claude':
      return path.join(h, '.claude.json');
    case 'codex':
      return path.join(env.CODEX_HOME ?? path.join(h, '.codex'), 'config.toml');
    case 'gemini':
      return path.join(h, '.gemini', 'settings.json');
    case 'cursor':
      return path.join(h, '.cursor', 'mcp.json');
    case 'copilot':
      return path.join(env.COPILOT_HOME ?? path.join(h, '.copilot'), 'mcp-config.json');
  }
}

/** What plan knows of one run: the flags, where the repository and home are, hagent's command. */
interface PlanInput {
  user: boolean;
  strict: boolean;
  remove: boolean;
  root: string;
  env: Env;
  command: string;
  args: string[];
  /** The agent's MCP server file in the scope asked for. */
  serverFile: string;
  /** The home folder. */
  h: string;
}

/** An agent's parts (the files and hagent's share of each), notes and strict report. */
interface McpPlan {
  parts: Part[];
  notes: string[];
  strictMode: StrictReport | null;
}

/** Each agent's parts, notes and strict report. */
function plan(
  agent: AgentName,
  options: { user: boolean; strict: boolean; remove: boolean; root: string; env: Env },
): McpPlan {
  const { command, args } = installedMcpCommand();
  const serverFile = mcpServerFile(agent, options.user, options.root, options.env);
  return PLANS[agent]({ ...options, command, args, serverFile, h: home(options.env) });
}

/**
 * Claude Code: the server in .mcp.json (approved in .claude/settings.json) or ~/.claude.json;
 * `--strict` as permission rules, which the agent enforces itself.
 */
function claudePlan({
  user,
  strict,
  remove,
  root,
  command,
  args,
  serverFile,
  h,
}: PlanInput): McpPlan {
  const entry = { type: 'stdio', command, args };
  const parts: Part[] = [
    {
      file: serverFile,
      format: 'json',
      serversOnly: !user,
      snippet: { mcpServers: { [MCP_SERVER]: entry } },
      edit: (v, r) => withServer(v, 'mcpServers', entry, r),
    },
  ];
  // A project's .mcp.json servers need approval; user-scope servers do not.
  const settings: Json = {};
  if (!user) settings.enabledMcpjsonServers = [MCP_SERVER];
  if (strict) settings.permissions = { deny: CLAUDE_STRICT_DENY, allow: [CLAUDE_MCP_ALLOW] };
  else if (remove) settings.permissions = { allow: [CLAUDE_MCP_ALLOW] };
  if (Object.keys(settings).length) {
    parts.push({
      file: user
        ? path.join(h, '.claude', 'settings.json')
        : path.join(root, '.claude', 'settings.json'),
      format: 'json',
      snippet: settings,
      edit: (v, r) => {
        let out = user ? v : withList(v, ['enabledMcpjsonServers'], [MCP_SERVER], r);
        // The allow rule is hagent's own and goes with the server; the deny rules only with
        // --strict.
        if (strict || r) out = withList(out, ['permissions', 'allow'], [CLAUDE_MCP_ALLOW], r);
        if (strict) out = withList(out, ['permissions', 'deny'], CLAUDE_STRICT_DENY, r);
        return out;
      },
    });
  }
  return {
    parts,
    notes: [
      user
        ? 'Claude Code uses user-scope servers in every project (claude mcp list shows it).'
        : "enabledMcpjsonServers approves the project's hagent server; claude -p uses .mcp.json " +
          'servers without asking. Commit .mcp.json and .claude/settings.json so session ' +
          'worktrees carry them.',
      ...(strict && !user
        ? [
            "Claude Code applies a project's allow rules only in a workspace you trusted: run " +
              'claude in the repository once and accept the trust dialog (session worktrees ' +
              "share the repository's trust); deny rules apply regardless.",
          ]
        : []),
    ],
    strictMode: strict
      ? {
          failsClosed: true,
          enforced:
            "Claude Code's permission rules deny Edit, Write and NotebookEdit (the model " +
            "cannot call them, even under --dangerously-skip-permissions) and allow hagent's " +
            'MCP tools (mcp__hagent__*).',
          notEnforced:
            "Bash stays: a shell command can still write files (hagent's hooks guard and " +
            'commit it: hagent integrate claude); add "Bash" to permissions.deny to send ' +
            "commands through hagent's exec tool.",
          flags: [],
        }
      : null,
  };
}

/** Seconds Codex waits for hagent's MCP server to start (`startup_timeout_sec`). */
const CODEX_STARTUP_TIMEOUT_S = 60;

/**
 * Codex: the server in config.toml; `--strict` turns its shell tool off (its apply_patch tool
 * stays: hooks gate it).
 */
function codexPlan({ user, strict, command, args, serverFile }: PlanInput): McpPlan {
  // Codex gives a server 10 s to start by default; hagent's first start on a loaded machine
  // (Node, the SDK, a cold cache) can take longer, and Codex then runs without hagent's tools.
  const entry = { command, args, startup_timeout_sec: CODEX_STARTUP_TIMEOUT_S };
  const snippet: Json = { mcp_servers: { [MCP_SERVER]: entry } };
  if (strict) snippet.features = { shell_tool: false };
  return {
    parts: [{ file: serverFile, format: 'toml', serversOnly: !user, snippet }],
    notes: user
      ? []
      : [
          "Codex reads a project's .codex/config.toml only in a project you trusted " +
            '(projects."<path>".trust_level = "trusted" in ~/.codex/config.toml); or use --user.',
        ],
    strictMode: strict
      ? {
          failsClosed: false,
          enforced:
            "[features] shell_tool = false takes Codex's shell tools (exec_command, " +
            "write_stdin) away: commands go through hagent's exec tool.",
          notEnforced:
            'Codex 0.171 has no setting that removes its apply_patch tool: patches stay gated ' +
            "by hagent's hooks (hagent integrate codex), which fail open.",
          flags: [],
        }
      : null,
  };
}

/**
 * Gemini CLI: the server in settings.json; `--strict` excludes its edit tools from the registry.
 */
function geminiPlan({ strict, command, args, serverFile }: PlanInput): McpPlan {
  const entry = { command, args };
  const snippet: Json = { mcpServers: { [MCP_SERVER]: entry } };
  if (strict) snippet.tools = { exclude: GEMINI_STRICT_EXCLUDE };
  return {
    parts: [
      {
        file: serverFile,
        format: 'json',
        snippet,
        edit: (v, r) => {
          const out = withServer(v, 'mcpServers', entry, r);
          return strict ? withList(out, ['tools', 'exclude'], GEMINI_STRICT_EXCLUDE, r) : out;
        },
      },
    ],
    notes: [
      'Gemini CLI asks before each MCP tool call unless the server is trusted ("trust": true ' +
        'in its entry) or the call is allowed by its policy.',
    ],
    strictMode: strict
      ? {
          failsClosed: true,
          enforced: "tools.exclude takes write_file and replace out of Gemini CLI's tool registry.",
          notEnforced:
            "run_shell_command stays (hagent's hooks guard and commit it: hagent integrate " +
            'gemini). Gemini 0.61 warns that tools.exclude is deprecated in favour of its ' +
            'policy engine.',
          flags: [],
        }
      : null,
  };
}

/**
 * Cursor: the server in mcp.json; `--strict` denies every write in the Cursor CLI's permissions
 * (the editor has no such setting).
 */
function cursorPlan({ user, strict, root, command, args, serverFile, h }: PlanInput): McpPlan {
  const entry = { command, args };
  const parts: Part[] = [
    {
      file: serverFile,
      format: 'json',
      serversOnly: true,
      snippet: { mcpServers: { [MCP_SERVER]: entry } },
      edit: (v, r) => withServer(v, 'mcpServers', entry, r),
    },
  ];
  if (strict) {
    parts.push({
      file: user
        ? path.join(h, '.cursor', 'cli-config.json')
        : path.join(root, '.cursor', 'cli.json'),
      format: 'json',
      snippet: { permissions: { deny: CURSOR_STRICT_DENY } },
      edit: (v, r) => withList(v, ['permissions', 'deny'], CURSOR_STRICT_DENY, r),
    });
  }
  return {
    parts,
    notes: [
      "Cursor asks you to approve a project's MCP servers once. Written from Cursor's " +
        'documented formats (Cursor cannot run here).',
    ],
    strictMode: strict
      ? {
          failsClosed: false,
          enforced:
            'The Cursor CLI (cursor-agent) denies every file write (permissions.deny ' +
            '"Write(**)"): its edits go through hagent\'s tools.',
          notEnforced:
            'The Cursor editor has no setting that disables its native edit tools: there, ' +
            "hagent's hooks (hagent integrate cursor) stay the gate, and they fail open.",
          flags: [],
        }
      : null,
  };
}

/**
 * Copilot CLI: the server in its MCP file; strict mode is a command-line flag, reported, not
 * written.
 */
function copilotPlan({ user, strict, command, args, serverFile }: PlanInput): McpPlan {
  const entry = { type: 'local', command, args, tools: ['*'] };
  return {
    parts: [
      {
        file: serverFile,
        format: 'json',
        serversOnly: true,
        snippet: { mcpServers: { [MCP_SERVER]: entry } },
        edit: (v, r) => withServer(v, 'mcpServers', entry, r),
      },
    ],
    notes: [
      user
        ? 'Copilot CLI reads ~/.copilot/mcp-config.json in every folder.'
        : "Copilot CLI loads a workspace's .github/mcp.json once you trust the folder. Written " +
          "from Copilot's documented formats (Copilot CLI cannot run here).",
    ],
    strictMode: strict
      ? {
          failsClosed: true,
          enforced:
            `Started with ${COPILOT_STRICT_FLAGS.join(' ')}, Copilot CLI refuses its ` +
            `file-writing tools (a deny rule beats --allow-all) and runs hagent's tools without ` +
            `asking.`,
          notEnforced:
            'Strict mode is a command-line flag, not a file: hagent cannot write it. Start ' +
            "copilot with these flags (e.g. an alias); the shell tool stays (hagent's hooks " +
            'guard it).',
          flags: COPILOT_STRICT_FLAGS,
        }
      : null,
  };
}

/** The planner of each agent. */
const PLANS: Record<AgentName, (input: PlanInput) => McpPlan> = {
  claude: claudePlan,
  codex: codexPlan,
  gemini: geminiPlan,
  cursor: cursorPlan,
  copilot: copilotPlan,
};

/** The TOML text of Codex's part, for --print. */
export function codexSnippetToml(snippet: Json): string {
  const server = (snippet.mcp_servers as Json)[MCP_SERVER] as { command: string; args: string[] };
  const lines = [
    `[mcp_servers.${MCP_SERVER}]`,
    `command = ${JSON.stringify(server.command)}`,
    `args = ${JSON.stringify(server.args)}`,
    `startup_timeout_sec = ${CODEX_STARTUP_TIMEOUT_S}`,
  ];
  if (isObject(snippet.features)) lines.push('', '[features]', 'shell_tool = false');
  return `${lines.join('\n')}\n`;
}

/** Codex's config.toml with hagent's part added or removed, checked by parsing before and after. */
function editCodexToml(
  file: string,
  raw: string | null,
  snippet: Json,
  strict: boolean,
  remove: boolean,
): string {
  const text = raw ?? '';
  const parse = (t: string, what: string): Json => {
    try {
      return parseToml(t) as Json;
    } catch (e) {
      throw new HagentError(
        'CONFIG_INVALID',
        `${file}${what ? ` ${what}` : ''} is not valid TOML ` +
          `(${(e as Error).message.split('\n')[0]}); it was left as it is`,
        { path: file },
        'fix the file by hand, then run hagent integrate again',
      );
    }
  };
  const before = parse(text, '');
  const server = (snippet.mcp_servers as Json)[MCP_SERVER] as { command: string; args: string[] };
  let next = setTable(
    text,
    `mcp_servers.${MCP_SERVER}`,
    remove
      ? null
      : [
          `command = ${JSON.stringify(server.command)}`,
          `args = ${JSON.stringify(server.args)}`,
          `startup_timeout_sec = ${CODEX_STARTUP_TIMEOUT_S}`,
        ],
  );
  if (strict) next = setKey(next, 'features', 'shell_tool', remove ? null : 'false');
  const after = parse(next, 'as hagent would write it');
  // Exactly hagent's values changed, and to what they should be (compared as plain JSON: the
  // parser's tables have no prototype).
  const same = (x: unknown, y: unknown): boolean => JSON.stringify(x) === JSON.stringify(y);
  const strip = (v: Json): Json => {
    const out = JSON.parse(JSON.stringify(v)) as Json;
    const servers = out.mcp_servers as Json | undefined;
    if (isObject(servers)) {
      delete servers[MCP_SERVER];
      if (!Object.keys(servers).length) delete out.mcp_servers;
    }
    const features = out.features as Json | undefined;
    if (strict && isObject(features)) {
      delete features.shell_tool;
      if (!Object.keys(features).length) delete out.features;
    }
    return out;
  };
  const ours = (after.mcp_servers as Json | undefined)?.[MCP_SERVER];
  const shell = (after.features as Json | undefined)?.shell_tool;
  const right =
    same(strip(before), strip(after)) &&
    (remove ? ours === undefined : same(ours, server)) &&
    (!strict || (remove ? shell === undefined : shell === false));
  if (!right) {
    throw new HagentError(
      'CONFIG_INVALID',
      `${file} defines mcp_servers.${MCP_SERVER}${strict ? ' or features.shell_tool' : ''} in ` +
        `a layout hagent does not edit (an inline table or dotted keys); it was left as it is`,
      { path: file },
      `write it by hand as a [mcp_servers.${MCP_SERVER}] ` +
        `table${strict ? ' and a [features] table' : ''} (hagent integrate codex --mcp --print ` +
        `shows it), or move those lines into that form and run hagent integrate again`,
    );
  }
  return next;
}

/**
 * One part merged into (or taken out of) its file: the file's result and what to write there
 * (text, null to delete a servers-only file a removal emptied), or no write when nothing changes.
 * Nothing is written here, so that every part is refused before any file changes.
 * @throws HagentError CONFIG_INVALID (a file that is not a JSON object or valid TOML).
 */
async function mergePart(
  part: Part,
  strict: boolean,
  remove: boolean,
): Promise<{ result: McpFileResult; write: { file: string; text: string | null } | null }> {
  const raw = await readTextOrNull(part.file);
  let text: string;
  let had: boolean;
  if (part.format === 'toml') {
    text = editCodexToml(part.file, raw, part.snippet, strict, remove);
    had = raw !== null && editCodexToml(part.file, raw, part.snippet, strict, true) !== raw;
  } else {
    const existing = parseJsonObject(part.file, raw);
    const edit = part.edit!;
    had = JSON.stringify(edit(existing, true)) !== JSON.stringify(existing);
    const next = edit(existing, remove);
    text =
      JSON.stringify(next) === JSON.stringify(existing) && raw !== null
        ? raw
        : `${JSON.stringify(next, null, 2)}\n`;
  }
  let action: McpFileResult['action'];
  if (text === (raw ?? '') || (remove && raw === null)) action = 'unchanged';
  else action = remove ? 'removed' : had ? 'updated' : 'added';
  const result = { file: part.file, format: part.format, action, snippet: part.snippet };
  if (action === 'unchanged') return { result, write: null };
  const emptied =
    remove &&
    part.serversOnly &&
    (part.format === 'json' ? text.trim() === '{}' : text.trim() === '');
  return { result, write: { file: part.file, text: emptied ? null : text } };
}

/**
 * Merges (or removes) hagent's MCP server for `agent`, and with `strict` its strict-mode rules,
 * into the agent's project files under `root` or its user files (`user`). Writes a file only when
 * its content changes (temp file + rename); `print` writes nothing.
 * @throws HagentError USAGE (unknown agent), CONFIG_INVALID (a file that is not a JSON object /
 *   valid TOML, or Codex TOML in a layout line edits cannot change safely: left as it is).
 */
export async function integrateMcp(
  agent: string,
  options: {
    root: string;
    user?: boolean;
    remove?: boolean;
    print?: boolean;
    strict?: boolean;
    env: Env;
  },
): Promise<McpIntegrateResult> {
  agent = agentName(agent);
  if (!(AGENTS as readonly string[]).includes(agent))
    throw new HagentError(
      'USAGE',
      `unknown agent ${JSON.stringify(agent)}`,
      { agent },
      `name one of: ${AGENTS.join(', ')}`,
    );
  const a = agent as AgentName;
  const user = !!options.user;
  const strict = !!options.strict;
  const remove = !!options.remove;
  const { parts, notes, strictMode } = plan(a, {
    user,
    strict,
    remove,
    root: options.root,
    env: options.env,
  });
  const scope = user ? 'user' : 'project';
  const files: McpFileResult[] = [];
  // Every file is planned (and refused) before any is written.
  const writes: { file: string; text: string | null }[] = [];
  for (const part of parts) {
    if (options.print) {
      files.push({
        file: part.file,
        format: part.format,
        action: 'printed',
        snippet: part.snippet,
      });
      continue;
    }
    const merged = await mergePart(part, strict, remove);
    files.push(merged.result);
    if (merged.write) writes.push(merged.write);
  }
  for (const w of writes) {
    if (w.text === null) await fs.rm(w.file, { force: true });
    else await writeFileAtomic(w.file, w.text);
  }
  const first = files[0]!;
  const changed = files.find((f) => f.action !== 'unchanged');
  const action =
    first.action !== 'unchanged'
      ? first.action
      : changed
        ? remove
          ? 'removed'
          : 'updated'
        : 'unchanged';
  return {
    ok: true,
    agent: a,
    scope,
    mcp: true,
    strict,
    file: first.file,
    action,
    snippet: first.snippet,
    files,
    strictMode,
    notes,
  };
}

/** One installed hagent MCP server and whether its command resolves. */
export interface InstalledMcpServer {
  agent: AgentName;
  file: string;
  command: string;
  args: string[];
  resolves: boolean;
  problem?: string;
}

/**
 * The hagent MCP servers configured in the project files under `root` and the user files, with
 * whether each command resolves (a server that cannot start leaves the agent without hagent's
 * tools; in strict mode, without any edit tool). Unreadable or invalid files are skipped.
 */
export async function installedMcpServers(
  root: string | null,
  env: Env,
): Promise<InstalledMcpServer[]> {
  const out: InstalledMcpServer[] = [];
  for (const agent of AGENTS) {
    const files = [
      ...(root ? [mcpServerFile(agent, false, root, env)] : []),
      mcpServerFile(agent, true, root ?? '', env),
    ];
    for (const file of files) {
      const raw = await readTextOrNull(file).catch(() => null);
      if (raw === null) continue;
      let entry: unknown;
      try {
        const value = (agent === 'codex' ? parseToml(raw) : JSON.parse(raw)) as Json;
        entry = ((agent === 'codex' ? value.mcp_servers : value.mcpServers) as Json | undefined)?.[
          MCP_SERVER
        ];
      } catch {
        continue;
      }
      if (!isObject(entry) || typeof entry.command !== 'string') continue;
      const args = Array.isArray(entry.args)
        ? entry.args.filter((x): x is string => typeof x === 'string')
        : [];
      const problem = await commandProblem([entry.command, ...args], env);
      out.push({
        agent,
        file,
        command: entry.command,
        args,
        resolves: problem === null,
        ...(problem ? { problem } : {}),
      });
    }
  }
  return out;
}
