/**
 * Turning the operating system's refusals in a sandboxed command's output ("Read-only file
 * system", EROFS, EPERM) into what the agent can act on: the path, and why it is out of reach.
 */
import path from 'node:path';
import type { SandboxLaunch } from './launch.js';

/** One write the sandbox stopped. */
export interface SandboxDenial {
  /** The path the command tried to write (absolute when the output named it so). */
  path: string;
  /** Why it is read-only, and where the write can go instead. */
  reason: string;
}

const REFUSAL =
  /read-only file system|\bEROFS\b|operation not permitted|\bEPERM\b|device or resource busy|\bEBUSY\b/i;

/** Files of the common folder that belong to the main checkout (its index, HEAD, merge state). */
const MAIN_WORKTREE_FILE =
  /^(index|HEAD|ORIG_HEAD|FETCH_HEAD|MERGE_\w+|CHERRY_PICK_HEAD|REVERT_HEAD|AUTO_MERGE|sequencer|rebase-\w+)(\.lock)?$/;

/** Paths named on one line of output: quoted, or an absolute path before a colon. Pure. */
function pathsOnLine(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/['"‘“`]((?:~|\.{0,2}\/)[^'"’”`\n]+)['"’”`]/g)) out.push(m[1]!);
  for (const m of line.matchAll(/(?:^|\s)(\/[^\s:'"]+)(?=:)/g)) out.push(m[1]!);
  return out;
}

function inside(p: string, dir: string | null): boolean {
  return !!dir && (p === dir || p.startsWith(dir + path.sep));
}

/** Why `p` is read-only in `launch`'s sandbox, in one sentence. Pure. */
export function whyReadOnly(p: string, launch: SandboxLaunch): string {
  const c = launch.commonDir;
  const rel = inside(p, c) ? path.relative(c, p) : null;
  const where = `writable: the session worktree, $TMPDIR (${launch.tmpDir}) and the caches`;
  if (rel !== null) {
    if (/^(refs|logs|packed-refs)/.test(rel))
      return `read-only: the repository's refs (the user's branches, tags, stash, replace refs) — only the session's branch hagent/${launch.sessionId} moves, through the session's own commits`;
    if (MAIN_WORKTREE_FILE.test(rel.split(path.sep)[0]!))
      return "read-only: the user's checkout (its index and HEAD); it changes only through hagent land";
    if (rel.startsWith('objects') || rel.startsWith('gc.'))
      return 'read-only: the objects already in the repository (no gc, prune or repack of the user’s history); new objects go to the session’s own store';
    if (rel.startsWith('worktrees'))
      return "read-only: another session's worktree folder in the git folder";
    if (rel.startsWith('hagent'))
      return "read-only: hagent's own records; hagent writes them outside the sandbox";
    return "read-only: the repository's config, hooks and info/ are the user's (git -c for one command)";
  }
  if (inside(p, launch.userCheckout))
    return "read-only: outside the session worktree; the user's checkout changes only through hagent land";
  if (inside(p, '/tmp') || inside(p, '/var/tmp'))
    return `read-only: ${path.dirname(p)} is shared; write temporary files under $TMPDIR (${launch.tmpDir})`;
  return `read-only: outside the session worktree (${where}; more in .hagent/config.json "sandbox": {"writable": [...]}, set by the user)`;
}

/**
 * The writes `output` reports refused by the sandbox, each with its reason; a refusal whose line
 * names no path gets the line itself as its path. At most 10, each path once. Pure.
 * @param cwd the folder relative paths of the output are read against (the worktree).
 */
export function sandboxDenials(output: string, launch: SandboxLaunch): SandboxDenial[] {
  const seen = new Set<string>();
  const out: SandboxDenial[] = [];
  for (const line of output.split('\n')) {
    if (!REFUSAL.test(line) || out.length >= 10) continue;
    const named = pathsOnLine(line);
    for (const raw of named.length ? named : [line.trim()]) {
      const abs = raw.startsWith('/') ? path.normalize(raw) : raw;
      if (abs.startsWith('/') && inside(abs, launch.worktree)) {
        // A lock or object path inside the worktree's own folder is writable: not a sandbox refusal.
        continue;
      }
      if (seen.has(abs)) continue;
      seen.add(abs);
      out.push({
        path: abs,
        reason: abs.startsWith('/')
          ? whyReadOnly(abs, launch)
          : `read-only: outside the session worktree and $TMPDIR (${launch.tmpDir})`,
      });
    }
  }
  return out;
}

/** The lines told to the agent for `denials` (empty when none). Pure. */
export function denialLines(denials: readonly SandboxDenial[]): string[] {
  return denials.map((d) => `hagent sandbox: ${d.path}: ${d.reason}`);
}
