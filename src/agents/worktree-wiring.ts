/**
 * The wiring `hagent integrate` writes in the user's checkout (each agent's project hook file and
 * MCP server file) is often left uncommitted, and a session worktree checks out commits only: an
 * agent started there would run without hagent's hooks. So a new session worktree gets a copy of
 * each such file the main checkout has and the worktree lacks, hidden from git by a `.gitignore`
 * in the topmost folder the worktree lacked (naming only those files and itself): `git status`,
 * sync, review and land never see them, and `git add -A` does not take them. A file whose folder
 * the worktree already has (`.mcp.json` at the top, a committed `.claude/`) is not copied, as it
 * could not be hidden without touching a committed file: it is reported instead (doctor, the
 * worktree provider). Rules: docs/agents-wiring.md.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { mainCheckoutRoot } from '../config/index.js';
import type { RepoContext } from '../session/index.js';
import { AGENTS, type AgentName } from './normalize.js';
import { HOOK_FILES, isOurs, MCP_PROJECT_FILES, MCP_SERVER, readTextOrNull } from './integrate.js';

/** One wiring file of an agent, relative to a checkout (posix separators). */
interface WiringFile {
  agent: AgentName;
  kind: 'hooks' | 'mcp';
  rel: string;
}

/** Every agent's project wiring files (hook file, MCP server file). */
export function wiringFiles(): WiringFile[] {
  return AGENTS.flatMap((agent) => [
    { agent, kind: 'hooks' as const, rel: HOOK_FILES[agent].project },
    { agent, kind: 'mcp' as const, rel: MCP_PROJECT_FILES[agent] },
  ]);
}

/** True when a wiring file's text holds hagent's part: one of its hook handlers, or its MCP server. */
export function holdsHagentWiring(kind: 'hooks' | 'mcp', text: string): boolean {
  if (kind === 'mcp')
    return new RegExp(`(^|[\\s"'\\[.])${MCP_SERVER}["'\\]]?\\s*[:=\\]]`, 'm').test(text);
  let found = false;
  const visit = (v: unknown): void => {
    if (found) return;
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      if (isOurs(v)) found = true;
      else Object.values(v).forEach(visit);
    }
  };
  try {
    visit((JSON.parse(text) as { hooks?: unknown }).hooks);
  } catch {
    return false;
  }
  return found;
}

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );

/** What {@link carryWiring} did. */
export interface CarryResult {
  /** Files copied into the worktree (relative). */
  carried: string[];
  /** Wiring files of the main checkout the worktree lacks and that could not be hidden there. */
  notCarried: string[];
}

/**
 * Copies into `worktree` each wiring file of `mainRoot` that holds hagent's part and that the
 * worktree lacks, when the worktree also lacks one of its folders (where the hiding `.gitignore`
 * goes). Idempotent: a file already there is left alone.
 */
export async function carryWiring(mainRoot: string, worktree: string): Promise<CarryResult> {
  const carried: string[] = [];
  const notCarried: string[] = [];
  const seen = new Set<string>();
  const hidden = new Map<string, string[]>();
  for (const w of wiringFiles()) {
    if (seen.has(w.rel)) continue;
    const text = await readTextOrNull(path.join(mainRoot, w.rel)).catch(() => null);
    if (text === null) continue;
    const kinds = wiringFiles().filter((x) => x.rel === w.rel);
    if (!kinds.some((k) => holdsHagentWiring(k.kind, text))) continue;
    seen.add(w.rel);
    if (await exists(path.join(worktree, w.rel))) continue;
    // The topmost folder of the file that the worktree lacks: the .gitignore goes there.
    const parts = w.rel.split('/');
    let top: string | null = null;
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!(await exists(path.join(worktree, dir)))) {
        top = dir;
        break;
      }
    }
    if (top === null) {
      notCarried.push(w.rel);
      continue;
    }
    await fs.mkdir(path.dirname(path.join(worktree, w.rel)), { recursive: true });
    await fs.writeFile(path.join(worktree, w.rel), text);
    hidden.set(top, [...(hidden.get(top) ?? []), w.rel.slice(top.length + 1)]);
    carried.push(w.rel);
  }
  for (const [dir, names] of hidden) {
    const file = path.join(worktree, dir, '.gitignore');
    const prior =
      (await readTextOrNull(file)) ??
      '# hagent: wiring of this session worktree only\n/.gitignore\n';
    await fs.writeFile(file, `${prior}${names.map((n) => `/${n}\n`).join('')}`);
  }
  return { carried, notCarried };
}

/** One agent whose wiring a session worktree lacks although the main checkout has it. */
export interface MissingWiring {
  agent: AgentName;
  kind: 'hooks' | 'mcp';
  file: string;
}

/**
 * The wiring of the main checkout at `mainRoot` (hagent's hooks, its MCP server) that `worktree`
 * lacks: there, the agent would run without hagent's gate or tools.
 */
export async function missingWiring(mainRoot: string, worktree: string): Promise<MissingWiring[]> {
  const out: MissingWiring[] = [];
  for (const w of wiringFiles()) {
    const main = await readTextOrNull(path.join(mainRoot, w.rel)).catch(() => null);
    if (main === null || !holdsHagentWiring(w.kind, main)) continue;
    const here = await readTextOrNull(path.join(worktree, w.rel)).catch(() => null);
    if (here !== null && holdsHagentWiring(w.kind, here)) continue;
    out.push({ agent: w.agent, kind: w.kind, file: w.rel });
  }
  return out;
}

/** The warning for wiring files a session worktree could not be given (see {@link carryWiring}). */
export function notCarriedWarning(session: string, files: readonly string[]): string {
  return `hagent: WARNING: session ${session}'s worktree lacks ${files.join(', ')} (uncommitted in your checkout, and not copied: its folder is committed); an agent there runs without that part of hagent's wiring. Commit the file(s), or run hagent integrate AGENT --user, then start a new session`;
}

/**
 * {@link carryWiring} for a new session worktree of the repository around `ctx`, from its main
 * checkout (none in a bare repository: nothing is carried).
 */
export async function carrySessionWiring(ctx: RepoContext, worktree: string): Promise<CarryResult> {
  const main = await mainCheckoutRoot(ctx).catch(() => null);
  return main ? carryWiring(main, worktree) : { carried: [], notCarried: [] };
}
