/**
 * HagentError and the table of stable error codes.
 *
 * Every refusal in hagent is a `HagentError` with a `code` from {@link EXIT_STATUS}, a one-line
 * `message`, `details` naming the path / chunk / line it concerns, and a `hint` the caller can act
 * on (design.md invariant 6, patch-language.md §6). Only `cli.ts` turns codes into exit statuses.
 */

/**
 * Exit status per code. Rule: patch-language.md §6 (0 ok, 1 refused, 2 usage, 3 internal).
 * Codes beyond §6 cover the session cycle (unknown session, land/undo refusals, git failures).
 */
export const EXIT_STATUS = {
  // patch-language.md §6
  PATCH_SYNTAX: 1,
  MULTIPLE_PATCHES: 1,
  CONTEXT_NOT_FOUND: 1,
  AMBIGUOUS_MATCH: 1,
  OVERLAPPING_CHUNKS: 1,
  FILE_EXISTS: 1,
  FILE_NOT_FOUND: 1,
  DUPLICATE_PATH: 1,
  UNSUPPORTED_FILE: 1,
  NO_CHANGES: 1,
  PATH_DENIED: 1,
  LIMIT_EXCEEDED: 1,
  CONFIRMATION_REQUIRED: 1,
  STALE_FILE: 1,
  EXTERNAL_EDIT: 1,
  LOCKED: 1,
  HOOK_REJECTED: 1,
  // session cycle
  NOT_A_GIT_REPO: 1,
  BARE_REPO: 1,
  GIT_TOO_OLD: 1,
  UNKNOWN_REV: 1,
  SESSION_NOT_FOUND: 1,
  /** A session record under <git-common-dir>/hagent/sessions/ is not JSON or not a session. */
  SESSION_CORRUPT: 1,
  SESSION_AMBIGUOUS: 1,
  SESSION_EXISTS: 1,
  NOT_IN_SESSION: 1,
  PATCH_NOT_FOUND: 1,
  EMPTY_PATCH: 1,
  UNLANDED_WORK: 1,
  NOT_APPROVED: 1,
  APPROVAL_OUTDATED: 1,
  /** `review --approve`: the session's head is not the one the review in this terminal showed (or `--head` named). */
  HEAD_MOVED: 1,
  /** `review --approve` with no `--head` in a terminal where no review of the session was shown. */
  NOT_REVIEWED: 1,
  /** A user's git hook (pre-commit, commit-msg, reference-transaction…) refused the land commit. */
  HOOK_REFUSED: 1,
  LAND_CONFLICT: 1,
  /** The land gate (`"land": {"gate"}` of the config) failed or timed out on the tree that would land. */
  GATE_FAILED: 1,
  /** `hagent gate` with no gate configured. */
  NO_GATE: 1,
  LAND_DENIED: 1,
  SESSION_DRIFTED: 1,
  MERGE_IN_PROGRESS: 1,
  MERGE_UNRESOLVED: 1,
  CONFLICT_MARKERS: 1,
  LAND_PUSHED: 1,
  DIRTY_TARGET: 1,
  TARGET_MOVED: 1,
  NOTHING_TO_LAND: 1,
  UNDO_PAST_BASE: 1,
  NOTHING_TO_REDO: 1,
  DETACHED_TARGET: 1,
  CONFIG_INVALID: 1,
  WATCH_FAILED: 1,
  IO_FAILED: 1,
  WORKTREE_BROKEN: 1,
  GIT_FAILED: 1,
  /** A git lock file (index.lock, HEAD.lock) in a session worktree that a live process may hold. */
  GIT_LOCKED: 1,
  // repository kinds: content filters, submodules, sparse checkouts
  FILTER_UNAVAILABLE: 1,
  FILTER_FAILED: 1,
  SUBMODULE_PATH: 1,
  OUTSIDE_SPARSE: 1,
  // shell guard and hagent exec
  GUARD_BLOCKED: 1,
  // a human-only command (approve, land, land --undo, session end, integrate) run for an agent
  HUMAN_ONLY: 1,
  /** A journal code, not a refusal: the user's main checkout or target branch changed while a guarded shell command ran. */
  OUTSIDE_CHANGED: 1,
  /** `"sandbox": "required"` and no sandbox can start here: nothing ran. */
  SANDBOX_UNAVAILABLE: 1,
  /** A journal code, not a refusal: the sandbox stopped a write of a command (path and why). */
  SANDBOX_DENIED: 1,
  // agents
  OUTSIDE_WORKTREE: 1,
  /** An agent wired by `hagent integrate` wrote, or ran destructive git, in a checkout that is no hagent session. */
  MAIN_CHECKOUT: 1,
  /** `"overlap": "refuse"`: the edit touches lines another unlanded session changed (src/radar/). */
  OVERLAP: 1,
  AGENT_NOT_INSTALLED: 1,
  // hagent mcp: a JSON-RPC line over the size limit, or one that is not a valid message
  MCP_REQUEST_TOO_LARGE: 1,
  MCP_MALFORMED_REQUEST: 1,
  // usage and bugs
  USAGE: 2,
  INTERNAL: 3,
} as const;

/** A stable error code; agents and JSON readers switch on it. */
export type ErrorCode = keyof typeof EXIT_STATUS;

/** What a refusal concerns. `line` is 1-based; `chunk` is 1-based in patch order. */
export interface ErrorDetails {
  path?: string;
  line?: number;
  chunk?: number;
  candidates?: number[];
  files?: string[];
  [key: string]: unknown;
}

const BRAND = Symbol.for('hagent.error');

/** The JSON `error` object of patch-language.md §7. */
export interface ErrorJson extends ErrorDetails {
  code: ErrorCode;
  message: string;
  hint?: string;
}

/**
 * The one error class of hagent. `code` is stable; `message` is one line; `hint` says what to do.
 * @example throw new HagentError('FILE_EXISTS', 'a.txt already exists', { path: 'a.txt' }, 'use Update File')
 */
export class HagentError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  hint: string | undefined;
  readonly [BRAND] = true;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HagentError';
    this.code = code;
    this.details = details;
    this.hint = hint;
  }

  /** Adds a hint while the error climbs (kept if one is already set). Returns `this`. */
  hinted(hint: string): this {
    this.hint ??= hint;
    return this;
  }

  /** The process exit status for this error (patch-language.md §6). */
  get exitStatus(): number {
    return EXIT_STATUS[this.code];
  }

  /** `{code, message, ...details, hint}`: the `error` field of every `--json` failure. */
  toJSON(): ErrorJson {
    const out: ErrorJson = { code: this.code, message: this.message, ...this.details };
    if (this.hint !== undefined) out.hint = this.hint;
    return out;
  }
}

/** True for a HagentError, even one from another copy of this module (brand check). */
export function isHagentError(value: unknown): value is HagentError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/** File-system errors that are the machine's state, not hagent's bug: refused as `IO_FAILED`. */
const IO_ERRNOS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted (read-only or immutable)',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EIO: 'an I/O error',
  EBUSY: 'the file is busy',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  ENAMETOOLONG: 'the name is too long',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'the path is a folder',
  ETXTBSY: 'the file is busy',
  EXDEV: 'a rename crossed file systems (a mount point inside the folder)',
  ENOENT: 'a file or folder vanished while hagent was working (another process removed it)',
};

/**
 * Wraps anything thrown into a HagentError: a file-system error of the machine's state
 * (EACCES, EPERM, EROFS, ENOSPC, …) becomes `IO_FAILED` naming the path and errno (exit 1);
 * anything else that is not a HagentError becomes `INTERNAL` (exit 3).
 */
export function toHagentError(value: unknown): HagentError {
  if (isHagentError(value)) return value;
  const errno = (value as NodeJS.ErrnoException | null)?.code;
  if (typeof errno === 'string' && IO_ERRNOS[errno]) {
    const file = (value as NodeJS.ErrnoException).path;
    return new HagentError(
      'IO_FAILED',
      `${file ? `${file}: ` : ''}${IO_ERRNOS[errno]} (${errno})`,
      { ...(file ? { path: file } : {}), errno },
      'fix the file system (permissions, space, immutable flags), then run the command again; files were restored to what they were',
      { cause: value },
    );
  }
  const message = value instanceof Error ? value.message : String(value);
  return new HagentError(
    'INTERNAL',
    `internal error: ${message}`,
    {},
    'this is a bug in hagent; nothing was half-written. Please report it with the command you ran.',
    { cause: value },
  );
}
