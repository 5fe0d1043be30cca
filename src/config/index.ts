/**
 * config: loads `.hagent/config.json` from the user's main checkout — never from a session
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
 * worktree git lists; null for a bare repository.
 */
export async function mainCheckoutRoot(ctx: RepoContext): Promise<string | null> {
  if (path.basename(ctx.commonDir) === '.git') return path.dirname(ctx.commonDir);
  const first = (await listWorktrees(ctx.cwd))[0];
  return first && !first.bare ? first.path : null;
}

/**
 * The effective configuration of the repository around `ctx`.
 * @throws HagentError USAGE for an invalid file (naming the key) or environment value.
 */
export async function loadConfig(ctx: RepoContext, env: Readonly<Record<string, string | undefined>>): Promise<EffectiveConfig & { root: string | null }> {
  const root = await mainCheckoutRoot(ctx);
  const file = root ? path.join(root, '.hagent', 'config.json') : null;
  let text: string | null = null;
  if (file) {
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const parsed = text !== null && file ? (await import('../policy/config-schema.js')).parseConfigText(text, file) : null;
  return { ...effectiveConfig(parsed, parsed ? file : null, env), root };
}
