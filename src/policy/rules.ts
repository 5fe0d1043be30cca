/**
 * Which paths a patch may touch, how large it may be, and when it needs a human yes.
 * Rule source: patch-language.md §5b.
 */
import { HagentError } from '../errors.js';

/** The effective policy. Defaults: {@link DEFAULT_POLICY}. */
export interface Policy {
  /** Path globs denied whatever else says (compared case-insensitively). */
  deniedPaths: string[];
  /** Suffix policy: `deny` lists refused suffixes; `allow` lists the only accepted ones. */
  suffixes: { mode: 'deny' | 'allow'; list: string[] };
  /** Most files one patch may touch. */
  maxFiles: number;
  /** Most changed lines (added + removed, from the computed diff) one patch may have. */
  maxChangedLines: number;
  /** A patch touching at least this many files needs confirmation. */
  confirmFiles: number;
  /** A patch changing at least this many lines needs confirmation. */
  confirmChangedLines: number;
  /** A patch deleting a file needs confirmation. */
  confirmDeletes: boolean;
}

/**
 * The agents' own configuration in a project: the files `hagent integrate` writes (hooks, MCP
 * servers, strict mode's deny rules) and their siblings the agent reads as settings. An agent that
 * could edit them could take hagent's hooks or strict mode away for every later session once they
 * land, so they are denied like `.hagent/`: edits through hagent are refused, outside edits are
 * not committed, and a land that changes them needs `--allow-denied`. Exactly those files: the
 * folders around them (`.claude/commands/`, `.github/workflows/`) stay the project's.
 */
export const AGENT_CONFIG_PATHS: readonly string[] = [
  '**/.claude/settings.json',
  '**/.claude/settings.local.json',
  '**/.mcp.json',
  '**/.codex/**',
  '**/.gemini/settings.json',
  '**/.cursor/hooks.json',
  '**/.cursor/mcp.json',
  '**/.cursor/cli.json',
  '.github/hooks/**',
  '.github/mcp.json',
];

/** Defaults of patch-language.md §5b, and the agents' own configuration. */
export const DEFAULT_POLICY: Policy = {
  deniedPaths: [
    '.git',
    '.git/**',
    '**/.git',
    '**/.git/**',
    '.hagent/**',
    '.hagent',
    '**/.env',
    '**/.env.*',
    '**/*.pem',
    '**/*.key',
    '**/id_rsa*',
    '**/id_ed25519*',
    '**/.npmrc',
    '**/.netrc',
    ...AGENT_CONFIG_PATHS,
  ],
  suffixes: {
    mode: 'deny',
    list: [
      '.exe',
      '.dll',
      '.so',
      '.dylib',
      '.bin',
      '.o',
      '.a',
      '.class',
      '.jar',
      '.pyc',
      '.p12',
      '.pfx',
      '.keystore',
      '.jks',
      '.der',
      '.crt',
      '.sqlite',
      '.db',
    ],
  },
  maxFiles: 10,
  maxChangedLines: 800,
  confirmFiles: 6,
  confirmChangedLines: 400,
  confirmDeletes: true,
};

/** Result of {@link normalizePatchPath}. */
export type NormalizedPath = { kind: 'ok'; path: string } | { kind: 'denied'; reason: string };

const INVISIBLE = /[\u0000-\u001f\u007f]/;

/**
 * Normalizes a patch path (`a/./b`, `a//b`, `sub/../x` → `a/b`, `x`) relative to the worktree root,
 * optionally inside `cwd` (a heredoc's `cd DIR`). Denies absolute paths, `~`, drive letters,
 * backslashes, control characters (NUL included) and anything that resolves outside the root.
 * Rule: patch-language.md §5b. Pure.
 */
export function normalizePatchPath(raw: string, cwd = ''): NormalizedPath {
  if (raw.length === 0) return { kind: 'denied', reason: 'the path is empty' };
  if (raw.length > 4096)
    return { kind: 'denied', reason: 'the path is longer than 4096 characters' };
  if (INVISIBLE.test(raw)) return { kind: 'denied', reason: 'the path holds a control character' };
  if (raw.includes('\\'))
    return { kind: 'denied', reason: 'the path holds a backslash; use / between folders' };
  if (raw.startsWith('/')) return { kind: 'denied', reason: 'absolute paths are not allowed' };
  if (raw.startsWith('~'))
    return { kind: 'denied', reason: 'paths starting with ~ are not allowed' };
  if (/^[A-Za-z]:/.test(raw))
    return { kind: 'denied', reason: 'drive-letter paths are not allowed' };
  const out: string[] = [];
  for (const part of [...cwd.split('/'), ...raw.split('/')]) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0)
        return { kind: 'denied', reason: 'the path leads outside the worktree' };
      out.pop();
      continue;
    }
    if (Buffer.byteLength(part) > 255)
      return { kind: 'denied', reason: 'a path component is longer than 255 bytes' };
    out.push(part);
  }
  if (out.length === 0) return { kind: 'denied', reason: 'the path names the worktree root' };
  return { kind: 'ok', path: out.join('/') };
}

/** Where an absolute path may point (patch-language.md §5b): absolute, `/`-separated folders. */
export interface AbsoluteRoots {
  /** The session worktree (and the same folder through resolved symlinks, when it differs). */
  worktree: readonly string[];
  /** The user's main checkout of the same repository, when there is one. */
  mainCheckout: readonly string[];
}

/** Result of {@link relativizeAbsolute}: the path relative to the worktree, and how it was found. */
export type Relativized =
  | { kind: 'relative'; path: string }
  | { kind: 'worktree' | 'main-checkout'; path: string; root: string };

/**
 * An absolute path inside the session worktree is made relative to it (leniency `absolute-path`:
 * Claude Code, Cursor and Gemini CLI pass absolute paths); one inside the user's main checkout of
 * the same repository is mapped to the same relative path in the session (`main-checkout-path`).
 * The worktree is tried first (it may lie inside the main checkout's `.git`). Every other path is
 * returned unchanged for {@link normalizePatchPath} to judge (and deny when absolute).
 * `..` is resolved before the prefix test, so `/wt/../etc` is never inside `/wt`. Rule: §5b. Pure.
 */
export function relativizeAbsolute(raw: string, roots: AbsoluteRoots): Relativized {
  if (!raw.startsWith('/') || raw.startsWith('//')) return { kind: 'relative', path: raw };
  const parts: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  const abs = `/${parts.join('/')}`;
  const inside = (root: string): string | undefined => {
    const r = root.replace(/\/+$/, '');
    return abs.startsWith(`${r}/`) ? abs.slice(r.length + 1) : undefined;
  };
  for (const root of roots.worktree) {
    const rel = inside(root);
    if (rel !== undefined) return { kind: 'worktree', path: rel, root };
  }
  for (const root of roots.mainCheckout) {
    const rel = inside(root);
    if (rel !== undefined) return { kind: 'main-checkout', path: rel, root };
  }
  return { kind: 'relative', path: raw };
}

const compiled = new Map<string, RegExp>();

/**
 * Converts a glob (`**`, `*`, `?`) to an anchored, case-insensitive RegExp. Pure; each glob is
 * compiled once per process (a server checks the same denied globs on every call), the memo
 * bounded by clearing it past 1,000 globs.
 */
export function globToRegExp(glob: string): RegExp {
  let made = compiled.get(glob);
  if (!made) {
    if (compiled.size >= 1000) compiled.clear();
    made = compileGlob(glob);
    compiled.set(glob, made);
  }
  return made;
}

function compileGlob(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

/**
 * Checks a normalized path against the denied globs and the suffix policy.
 * Any component named `.git` (any case) is always denied. Rule: patch-language.md §5b.
 * @returns null when allowed, else the reason.
 */
export function deniedReason(path: string, policy: Policy): string | null {
  const parts = path.split('/');
  // `.git` in any case, with trailing dots or spaces, and its 8.3 short name `git~1` all name the
  // git folder on some file systems (git's own is_ntfs_dotgit rule).
  if (parts.some((p) => /^\.git[. ]*$/i.test(p) || /^git~\d+$/i.test(p)))
    return 'hagent never writes inside .git';
  if (parts[0]?.toLowerCase() === '.hagent') return ".hagent/ holds hagent's own policy and hooks";
  for (const glob of policy.deniedPaths) {
    if (!globToRegExp(glob).test(path)) continue;
    if (AGENT_CONFIG_PATHS.includes(glob))
      return `an agent's own configuration (hooks, MCP servers, permissions; denied pattern ${glob}): the human changes it, with hagent integrate`;
    return `the path matches the denied pattern ${glob}`;
  }
  const lower = path.toLowerCase();
  const base = parts[parts.length - 1]!.toLowerCase();
  if (policy.suffixes.mode === 'deny') {
    const hit = policy.suffixes.list.find((s) => lower.endsWith(s.toLowerCase()));
    if (hit) return `files ending in ${hit} are denied by the suffix policy`;
  } else if (
    !policy.suffixes.list.some((s) => lower.endsWith(s.toLowerCase()) || base === s.toLowerCase())
  ) {
    return `only files ending in ${policy.suffixes.list.join(', ')} may be written (suffix allow-list)`;
  }
  return null;
}

/**
 * Normalizes and checks one path.
 * @throws HagentError PATH_DENIED with the raw path, the reason and a hint.
 */
export function checkPath(raw: string, policy: Policy, cwd = ''): string {
  const n = normalizePatchPath(raw, cwd);
  if (n.kind === 'denied') {
    throw new HagentError(
      'PATH_DENIED',
      `${JSON.stringify(raw)}: ${n.reason}`,
      { path: raw },
      raw.startsWith('/')
        ? 'use a path relative to the worktree root; an absolute path is accepted only inside the session worktree or the main checkout of this repository'
        : 'use a path relative to the worktree root, inside it, with / between folders',
    );
  }
  const reason = deniedReason(n.path, policy);
  if (reason)
    throw new HagentError(
      'PATH_DENIED',
      `${n.path}: ${reason}`,
      { path: n.path },
      'this path is protected by policy; leave it to the human (.hagent/config.json sets the policy)',
    );
  return n.path;
}

/** Size of a planned change, counted from the computed diff (patch-language.md §5b). */
export interface ChangeSize {
  files: number;
  changedLines: number;
  deletes: number;
}

/**
 * Enforces the hard limits. @throws HagentError LIMIT_EXCEEDED naming the limit and the count.
 */
export function checkLimits(size: ChangeSize, policy: Policy): void {
  if (size.files > policy.maxFiles) {
    throw new HagentError(
      'LIMIT_EXCEEDED',
      `the patch touches ${size.files} files; the limit is ${policy.maxFiles}`,
      { count: size.files, limit: policy.maxFiles },
      `split the patch into smaller ones of at most ${policy.maxFiles} file${policy.maxFiles === 1 ? '' : 's'}; or the human raises maxFiles in .hagent/config.json`,
    );
  }
  if (size.changedLines > policy.maxChangedLines) {
    throw new HagentError(
      'LIMIT_EXCEEDED',
      `the patch changes ${size.changedLines} lines; the limit is ${policy.maxChangedLines}`,
      { count: size.changedLines, limit: policy.maxChangedLines },
      `split the change into patches of at most ${policy.maxChangedLines} changed lines (a large new file: create it with its first part, then add the rest); or the human raises maxChangedLines in .hagent/config.json`,
    );
  }
}

/**
 * Why a change needs a human yes (patch-language.md §5b), or an empty list when it does not.
 */
export function confirmationReasons(size: ChangeSize, policy: Policy): string[] {
  const reasons: string[] = [];
  if (policy.confirmDeletes && size.deletes > 0)
    reasons.push(`deletes ${size.deletes} file${size.deletes === 1 ? '' : 's'}`);
  if (size.files >= policy.confirmFiles)
    reasons.push(`touches ${size.files} files (≥ ${policy.confirmFiles})`);
  if (size.changedLines >= policy.confirmChangedLines)
    reasons.push(`changes ${size.changedLines} lines (≥ ${policy.confirmChangedLines})`);
  return reasons;
}

/** Environment variables that override a policy number for one run. */
export const POLICY_ENV = {
  HAGENT_MAX_FILES: 'maxFiles',
  HAGENT_MAX_CHANGED_LINES: 'maxChangedLines',
  HAGENT_CONFIRM_FILES: 'confirmFiles',
  HAGENT_CONFIRM_CHANGED_LINES: 'confirmChangedLines',
} as const;
