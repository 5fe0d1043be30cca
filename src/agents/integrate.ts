/**
 * `hagent integrate`: merges hagent's hook configuration into an agent's own file, project
 * scope (in the repository) or user scope (home), never clobbering the user's hooks:
 * hagent's entries are recognised by their command (`… hagent … hook <agent>`), replaced in place
 * on a re-run (idempotent) and taken out by `--remove`. Also the installed-hook check of
 * `hagent doctor`: a hook command that does not resolve silently disables the gate in Claude Code.
 */
import { accessSync, constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HagentError } from '../errors.js';
import { agentHookFile } from './config.js';
import { AGENTS, agentName, type AgentName } from './normalize.js';
import { protectionOf, type Protection } from './main-checkout.js';

type Json = Record<string, unknown>;

/** Where each agent keeps its hook file, relative to the repository or to the home folder. */
export const HOOK_FILES: Record<
  AgentName,
  {
    project: string;
    user: (env: Readonly<Record<string, string | undefined>>, home: string) => string;
  }
> = {
  claude: {
    project: '.claude/settings.json',
    user: (_e, home) => path.join(home, '.claude', 'settings.json'),
  },
  codex: {
    project: '.codex/hooks.json',
    user: (e, home) => path.join(e.CODEX_HOME ?? path.join(home, '.codex'), 'hooks.json'),
  },
  gemini: {
    project: '.gemini/settings.json',
    user: (_e, home) => path.join(home, '.gemini', 'settings.json'),
  },
  cursor: {
    project: '.cursor/hooks.json',
    user: (_e, home) => path.join(home, '.cursor', 'hooks.json'),
  },
  copilot: {
    project: '.github/hooks/hagent.json',
    user: (e, home) =>
      path.join(e.COPILOT_HOME ?? path.join(home, '.copilot'), 'hooks', 'hagent.json'),
  },
};

/**
 * The name of hagent's server in every agent's MCP configuration (Claude Code's tools are then
 * `mcp__hagent__<tool>`).
 */
export const MCP_SERVER = 'hagent';

/** Where each agent keeps its project MCP servers, relative to the repository (posix). */
export const MCP_PROJECT_FILES: Record<AgentName, string> = {
  claude: '.mcp.json',
  codex: '.codex/config.toml',
  gemini: '.gemini/settings.json',
  cursor: '.cursor/mcp.json',
  copilot: '.github/mcp.json',
};

/** The command an installed hook runs: plain `hagent` on PATH (README: npm install -g . or npm link). */
export function installedHookCommand(agent: AgentName): string {
  return `hagent hook ${agent}`;
}

/** True for a hook handler hagent installed (`command` or Copilot's `bash`). */
export function isOurs(handler: unknown): boolean {
  const h = handler as { command?: unknown; bash?: unknown } | null;
  const cmd =
    typeof h?.command === 'string' ? h.command : typeof h?.bash === 'string' ? h.bash : null;
  return (
    cmd !== null &&
    /(^|[\s/'"])hagent(\.cjs)?['"]?\s+hook\s+(claude|codex|gemini|cursor|copilot)\b/.test(cmd)
  );
}

/** An event's entries without hagent's handlers; a matcher group left with no handler goes. */
function strip(entries: unknown[]): unknown[] {
  return entries.flatMap((e) => {
    const group = e as { hooks?: unknown } | null;
    if (group && Array.isArray(group.hooks)) {
      const hooks = group.hooks.filter((h) => !isOurs(h));
      return hooks.length ? [{ ...group, hooks }] : [];
    }
    return isOurs(e) ? [] : [e];
  });
}

/**
 * The file's content with hagent's hooks merged in (or, with `remove`, taken out). Pure.
 * User entries keep their order; hagent's come last in each event.
 */
export function mergeHookConfig(existing: Json, ours: Json, remove: boolean): Json {
  const out: Json = { ...existing };
  const hooks: Json = {
    ...(existing.hooks && typeof existing.hooks === 'object' && !Array.isArray(existing.hooks)
      ? (existing.hooks as Json)
      : {}),
  };
  for (const [event, entries] of Object.entries(hooks)) {
    if (!Array.isArray(entries)) continue;
    const kept = strip(entries);
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  if (!remove) {
    for (const [event, entries] of Object.entries((ours.hooks ?? {}) as Json)) {
      const prior = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
      hooks[event] = [...prior, ...(entries as unknown[])];
    }
    for (const [k, v] of Object.entries(ours))
      if (k !== 'hooks' && out[k] === undefined) out[k] = v;
  }
  if (Object.keys(hooks).length) out.hooks = hooks;
  else delete out.hooks;
  return out;
}

/** JSON of `hagent integrate`. */
export interface IntegrateResult {
  ok: true;
  agent: AgentName;
  scope: 'project' | 'user';
  file: string;
  /** `added`: hagent's hooks were not there; `updated`: replaced; `removed`; `unchanged`; `printed`: --print. */
  action: 'added' | 'updated' | 'removed' | 'unchanged' | 'printed';
  /** The snippet hagent merges (the whole file content for --print); with --remove --print, the file as the removal leaves it (null: no file). */
  snippet: Json | null;
  /** Set with --remove --print: `snippet` is what the file would become. */
  removal?: true;
  /** What these hooks protect, exactly (absent with --remove). */
  protection?: Protection;
}

/**
 * Merges (or removes) hagent's hooks for `agent` in its project file under `root`, or its user
 * file with `user`. Writes only when the content changes (temp file + rename); `print` writes
 * nothing. Claude Code gets WorktreeCreate/WorktreeRemove too (`claude --worktree NAME` then makes
 * hagent sessions).
 * @throws HagentError USAGE (unknown agent), CONFIG_INVALID (the file is not a JSON object: it is
 *   left as it is).
 */
export async function integrateAgent(
  agent: string,
  options: {
    root: string;
    user?: boolean;
    remove?: boolean;
    print?: boolean;
    env: Readonly<Record<string, string | undefined>>;
  },
): Promise<IntegrateResult> {
  agent = agentName(agent);
  if (!(AGENTS as readonly string[]).includes(agent))
    throw new HagentError(
      'USAGE',
      `unknown agent ${JSON.stringify(agent)}`,
      { agent },
      `name one of: ${AGENTS.join(', ')}`,
    );
  const a = agent as AgentName;
  const home = options.env.HOME ?? os.homedir();
  const file = options.user
    ? HOOK_FILES[a].user(options.env, home)
    : path.join(options.root, HOOK_FILES[a].project);
  const snippet = agentHookFile(a, installedHookCommand(a), { worktrees: true });
  const scope = options.user ? 'user' : 'project';
  const protection = options.remove ? {} : { protection: protectionOf(a, scope) };
  if (options.print && !options.remove)
    return { ok: true, agent: a, scope, file, action: 'printed', snippet, ...protection };
  const { raw, value: existing } = await readJsonObject(file);
  // --remove --print: the file as the removal would leave it (null: there is no file), written nowhere.
  if (options.print)
    return {
      ok: true,
      agent: a,
      scope,
      file,
      action: 'printed',
      snippet: raw === null ? null : mergeHookConfig(existing, snippet, true),
      removal: true,
    };
  const had = JSON.stringify(mergeHookConfig(existing, snippet, true)) !== JSON.stringify(existing);
  const next = mergeHookConfig(existing, snippet, !!options.remove);
  const text = `${JSON.stringify(next, null, 2)}\n`;
  const unchanged = raw !== null && JSON.stringify(next) === JSON.stringify(existing);
  if (unchanged)
    return { ok: true, agent: a, scope, file, action: 'unchanged', snippet, ...protection };
  if (options.remove && raw === null)
    return { ok: true, agent: a, scope, file, action: 'unchanged', snippet };
  // Copilot's file is hagent's alone: removing its hooks removes the file.
  if (options.remove && a === 'copilot' && Object.keys(next).every((k) => k === 'version')) {
    await fs.rm(file, { force: true });
    return { ok: true, agent: a, scope, file, action: 'removed', snippet };
  }
  await writeFileAtomic(file, text);
  return {
    ok: true,
    agent: a,
    scope,
    file,
    action: options.remove ? 'removed' : had ? 'updated' : 'added',
    snippet,
    ...protection,
  };
}

/** A file's text, or null when it does not exist. */
export function readTextOrNull(file: string): Promise<string | null> {
  return fs
    .readFile(file, 'utf8')
    .catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
}

/**
 * An agent's JSON configuration file: its text (null when missing) and its object ({} when
 * missing or empty).
 * @throws HagentError CONFIG_INVALID when it is not JSON or not an object (the file is left as it is).
 */
export async function readJsonObject(file: string): Promise<{ raw: string | null; value: Json }> {
  const raw = await readTextOrNull(file);
  return { raw, value: parseJsonObject(file, raw) };
}

/** The object an agent's JSON file holds ({} for no text). @throws HagentError CONFIG_INVALID, as {@link readJsonObject}. */
export function parseJsonObject(file: string, raw: string | null): Json {
  if (raw === null || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new HagentError(
      'CONFIG_INVALID',
      `${file} is not valid JSON (${(e as Error).message}); it was left as it is`,
      { path: file },
      'fix the file by hand (or move it away), then run hagent integrate again',
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new HagentError(
      'CONFIG_INVALID',
      `${file} does not hold a JSON object; it was left as it is`,
      { path: file },
      'fix the file by hand, then run hagent integrate again',
    );
  return parsed as Json;
}

/** Writes `text` to `file` by temp file + rename (an agent reading it never sees half a file), making its folder. */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.hagent-${process.pid}.tmp`;
  await fs.writeFile(tmp, text);
  await fs.rename(tmp, file);
}

/** One installed hagent hook command and whether it resolves. */
export interface InstalledHook {
  agent: AgentName;
  file: string;
  command: string;
  resolves: boolean;
  /** Why it does not resolve. */
  problem?: string;
}

/** A hook command's words, quotes removed (the simple quoting hagent and users write). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Resolves a command word as the agent's shell would: a path, or a name on PATH. */
function resolves(word: string, env: Readonly<Record<string, string | undefined>>): boolean {
  if (word.includes('/')) return executable(word);
  return (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((d) => executable(path.join(d, word)));
}

/**
 * Why a command (its words) would not start as the agent starts it, or null when it would: the
 * executable must resolve, and for `node FILE …` the file must exist.
 */
export async function commandProblem(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | null> {
  const [word = '', script] = argv;
  if (!resolves(word, env)) return `${word} is not found${word.includes('/') ? '' : ' on PATH'}`;
  if (
    /(^|\/)node$/.test(word) &&
    script &&
    !(await fs.stat(script).then(
      () => true,
      () => false,
    ))
  )
    return `${script} does not exist`;
  return null;
}

/**
 * Every hagent hook installed in the project files under `root` and the user files, with whether
 * its command resolves (the executable, and for `node FILE …` the file too). Unreadable or
 * invalid files are skipped (the agent reports those itself).
 */
export async function installedHooks(
  root: string | null,
  env: Readonly<Record<string, string | undefined>>,
): Promise<InstalledHook[]> {
  const home = env.HOME ?? os.homedir();
  const out: InstalledHook[] = [];
  for (const agent of AGENTS) {
    const files = [
      ...(root ? [path.join(root, HOOK_FILES[agent].project)] : []),
      HOOK_FILES[agent].user(env, home),
    ];
    for (const file of files) {
      let parsed: Json;
      try {
        parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Json;
      } catch {
        continue;
      }
      const seen = new Set<string>();
      const visit = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(visit);
        else if (v && typeof v === 'object') {
          if (isOurs(v)) {
            const h = v as { command?: string; bash?: string };
            seen.add((h.command ?? h.bash)!);
          }
          Object.values(v).forEach(visit);
        }
      };
      visit(parsed.hooks);
      for (const command of seen) {
        const problem = await commandProblem(words(command), env);
        out.push({
          agent,
          file,
          command,
          resolves: problem === null,
          ...(problem ? { problem } : {}),
        });
      }
    }
  }
  return out;
}
