/**
 * The one path rule of the MCP tools that take a path (read, edit, write, apply_patch's
 * base_blobs), the same as a patch's (patch-language.md §5b, apply's checkOpPaths): a relative
 * path is worktree-relative; an absolute path inside the session worktree, or inside the user's
 * main checkout of the same repository (mapped to the same file in the worktree, as the agent
 * hooks do for absolute paths), is accepted; any other absolute path is refused.
 */
import { absoluteRoots } from '../apply/index.js';
import { HagentError } from '../errors.js';
import { checkPath, relativizeAbsolute, type Policy } from '../policy/index.js';

/**
 * `raw` as a normalized worktree-relative path, checked against `policy`.
 * @param mainCheckout the user's main checkout (the configuration's root), null when none.
 * @param warnings receives the note that a main-checkout path was mapped to the session's copy.
 * @throws HagentError PATH_DENIED naming `raw`: an absolute path outside both folders, a path
 *   leading outside the worktree, or one the policy protects.
 */
export async function resolveToolPath(
  raw: string,
  worktree: string,
  mainCheckout: string | null,
  policy: Policy,
  warnings?: string[],
): Promise<string> {
  // A relative path needs no roots (their realpaths are two file-system calls).
  if (!raw.startsWith('/') || raw.startsWith('//')) return checkPath(raw, policy);
  const roots = await absoluteRoots(worktree, mainCheckout);
  const r = relativizeAbsolute(raw, roots);
  if (r.kind === 'relative' && raw.startsWith('/')) {
    const where = mainCheckout
      ? `the session worktree ${worktree} or the main checkout ${mainCheckout}`
      : `the session worktree ${worktree}`;
    throw new HagentError(
      'PATH_DENIED',
      `${JSON.stringify(raw)}: outside ${where}`,
      { path: raw, worktree, ...(mainCheckout ? { mainCheckout } : {}) },
      `use a path relative to the worktree root (or an absolute path inside ${where}); hagent never writes outside the session`,
    );
  }
  const rel = checkPath(r.path, policy);
  if (r.kind === 'main-checkout')
    warnings?.push(
      `${raw} is in the main checkout (${r.root}); this is the session's copy, ${rel}: the main checkout changes only when the session lands`,
    );
  return rel;
}
