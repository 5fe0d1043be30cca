/**
 * config: loads `.hagent/config.json` from the user's main checkout (in a bare repository, the
 * worktree holding the target branch) — never from a session
 * worktree, so an agent cannot rewrite its own rules (design.md) — and merges it with defaults
 * and environment overrides.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { listWorktrees } from '../git/index.js';
import { effectiveConfig, type EffectiveConfig } from '../policy/index.js';
import type { RepoContext } from '../session/index.js';

/**
 * The main checkout's root: the folder holding the common dir when it is `.git`, else the first
 * worktree git lists. In a bare repository with worktrees, the worktree that holds the target
 * branch: `target` (a full ref, the session's) when given, else the user's worktree around
 * `ctx.cwd`, else the one on the branch the bare repository's HEAD names. Null when no worktree holds it (a bare repository alone).
 */
export async function mainCheckoutRoot(
  ctx: RepoContext,
  target?: string | null,
): Promise<string | null> {
  if (path.basename(ctx.commonDir) === '.git') return path.dirname(ctx.commonDir);
  const worktrees = await listWorktrees(ctx.cwd);
  const first = worktrees[0];
  if (!first) return null;
  if (!first.bare) return first.path;
  // Without a session: the user's worktree around cwd (what a session started here lands on),
  // else the branch the bare HEAD names. A session worktree (hagent/<id>) never counts.
  const here =
    ctx.location.topLevel === null
      ? undefined
      : worktrees.find(
          (w) =>
            !w.bare &&
            w.branch &&
            !w.branch.startsWith('refs/heads/hagent/') &&
            path.resolve(w.path) === path.resolve(ctx.location.topLevel!),
        );
  const branch =
    target ??
    here?.branch ??
    /^ref: (refs\/\S+)/.exec(
      await fs.readFile(path.join(ctx.commonDir, 'HEAD'), 'utf8').catch(() => ''),
    )?.[1];
  return (
    worktrees.find((w) => !w.bare && branch !== undefined && w.branch === branch)?.path ?? null
  );
}

/**
 * The effective configuration of the repository around `ctx` (`target`: the session's target
 * branch, which picks the worktree of a bare repository: {@link mainCheckoutRoot}).
 * @throws HagentError USAGE for an invalid file (naming the key) or environment value.
 */
export async function loadConfig(
  ctx: RepoContext,
  env: Readonly<Record<string, string | undefined>>,
  target?: string | null,
): Promise<EffectiveConfig & { root: string | null }> {
  const root = await mainCheckoutRoot(ctx, target);
  const { file, text } = await readConfigText(root);
  return parseConfig(root, file, text, env);
}

/** `.hagent/config.json` of the main checkout at `root`: its path and text (null when absent). */
async function readConfigText(
  root: string | null,
): Promise<{ file: string | null; text: string | null }> {
  const file = root ? path.join(root, '.hagent', 'config.json') : null;
  if (!file) return { file, text: null };
  try {
    return { file, text: await fs.readFile(file, 'utf8') };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return { file, text: null };
  }
}

/** The effective configuration from the file's text (validated) and the environment. */
async function parseConfig(
  root: string | null,
  file: string | null,
  text: string | null,
  env: Readonly<Record<string, string | undefined>>,
): Promise<EffectiveConfig & { root: string | null }> {
  const parsed =
    text !== null && file
      ? (await import('../policy/config-schema.js')).parseConfigText(text, file)
      : null;
  return { ...effectiveConfig(parsed, parsed ? file : null, env), root };
}

/**
 * A {@link loadConfig} for a long-lived process (the MCP server): every call reads
 * `.hagent/config.json` again, so a change is seen on the next call, but the file is parsed and
 * validated again only when its text changed (the parse loads zod's classic build and costs more
 * than the read). The main checkout's root is found once per repository.
 * @returns a function with {@link loadConfig}'s contract (same throws).
 */
export function cachedConfigLoader(): (
  ctx: RepoContext,
  env: Readonly<Record<string, string | undefined>>,
) => Promise<EffectiveConfig & { root: string | null }> {
  const roots = new Map<string, string | null>();
  let last: {
    file: string | null;
    text: string | null;
    env: object;
    value: EffectiveConfig & { root: string | null };
  } | null = null;
  return async (ctx, env) => {
    let root = roots.get(ctx.commonDir);
    if (root === undefined) {
      root = await mainCheckoutRoot(ctx);
      roots.set(ctx.commonDir, root);
    }
    const { file, text } = await readConfigText(root);
    if (last && last.file === file && last.text === text && last.env === env) return last.value;
    const value = await parseConfig(root, file, text, env);
    last = { file, text, env, value };
    return value;
  };
}
