/**
 * zod schemas of the MCP tools: what each takes, and what each returns — the `--json` shapes of
 * the matching CLI commands (docs/commands.md), so an agent reads one vocabulary whether it
 * calls `hagent apply --json` or the `apply_patch` tool. The TypeScript types of those shapes
 * live beside their commands; `tools.ts` checks each result against them at compile time.
 */
import * as z from 'zod';

const oid = z.string().regex(/^[0-9a-f]{40}$/, 'a full 40-hex git object id');
const relPath = z
  .string()
  .min(1)
  .describe(
    'worktree-relative path, "/"-separated (as git and review list it); an absolute path inside the session worktree or the main checkout is accepted',
  );
const changed = z.object({ path: z.string(), status: z.string() });
const recovery = z.object({
  txid: z.string(),
  command: z.string(),
  action: z.enum(['completed', 'restored', 'discarded']),
  commit: oid.nullable(),
  files: z.array(z.string()),
  outside: z.array(z.string()),
});

// ---- inputs -------------------------------------------------------------------------------

export const StatusInput = z.object({});

export const ReadInput = z.object({
  path: relPath,
  offset: z.number().int().min(1).optional().describe('first line to return, 1-based (default 1)'),
  limit: z.number().int().min(1).optional().describe('how many lines (default 2000)'),
});

const yes = z
  .boolean()
  .optional()
  .describe(
    'the human confirmed a risky change (a delete, ≥ 6 files, ≥ 400 changed lines); never set it on your own',
  );

export const ApplyPatchInput = z.object({
  patch: z
    .string()
    .min(1)
    .describe('the patch: Codex "*** Begin Patch" language or a unified diff'),
  base: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the session head the patch was written against: refused (STALE_FILE) if a target changed since',
    ),
  base_blobs: z
    .record(z.string().min(1), oid.nullable())
    .optional()
    .describe(
      'path → the blob id read returned for it (null: must not exist); refused (STALE_FILE) if a file changed since',
    ),
  dry_run: z.boolean().optional().describe('check everything, write nothing'),
  yes,
});

export const EditInput = z.object({
  path: relPath,
  old_string: z
    .string()
    .describe(
      'the exact text to replace (whitespace and line breaks included); empty creates the file',
    ),
  new_string: z.string().describe('the text that replaces it'),
  replace_all: z
    .boolean()
    .optional()
    .describe('replace every occurrence (default: old_string must occur exactly once)'),
  expected_blob: oid
    .optional()
    .describe('the blob id read returned: refused (STALE_FILE) if the file changed since'),
  yes,
});

export const WriteInput = z.object({
  path: relPath,
  content: z.string().describe('the whole new content of the file'),
  expected_blob: oid
    .optional()
    .describe('the blob id read returned; needed to replace a file this server has not read'),
  yes,
});

export const CheckInput = z.object({
  patch: z.string().min(1).describe('the patch to locate, written nowhere'),
});

export const StepsInput = z.object({
  steps: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe('how many applied patches (default 1)'),
});

export const SyncInput = z.object({});

export const ReviewInput = z.object({
  stat: z.boolean().optional().describe('files and line counts only (no diff)'),
  patches: z.boolean().optional().describe('each applied patch with its text (no diff)'),
});

export const LogInput = z.object({
  failed: z.boolean().optional().describe('only refused attempts'),
  n: z.number().int().min(0).optional().describe('only the newest N entries'),
});

export const ExecInput = z.object({
  command: z
    .string()
    .min(1)
    .describe('the shell command (bash -c), run in the session worktree with stdin closed'),
  timeout: z
    .number()
    .min(0)
    .max(3600)
    .optional()
    .describe('seconds before its whole process group is killed (default 120; 0: no limit)'),
  max_output: z
    .number()
    .int()
    .min(2)
    .optional()
    .describe('bytes kept of stdout and of stderr, head and tail (default 65536)'),
});

// ---- outputs ------------------------------------------------------------------------------

const fileResult = z.object({
  path: z.string(),
  op: z.enum(['add', 'update', 'delete', 'move']),
  from: z.string().optional(),
  added: z.number().int(),
  removed: z.number().int(),
  level: z.enum(['exact', 'trim-end', 'trim', 'unicode']).optional(),
});

/** `hagent apply --json`, plus `blobs` (path → new blob id; null: deleted). */
export const ApplyOutput = z.object({
  ok: z.literal(true),
  session: z.string(),
  commit: oid.nullable(),
  parent: oid,
  dryRun: z.boolean(),
  format: z.enum(['codex', 'unified']),
  files: z.array(fileResult),
  leniencies: z.array(z.string()),
  warnings: z.array(z.string()),
  watched: z.boolean(),
  blobs: z.record(z.string(), oid.nullable()).optional(),
  merge: z
    .object({ concluded: z.boolean(), target: z.string().nullable(), merged: oid })
    .optional()
    .describe(
      'the patch resolved every conflict of the merge in progress: its commit is the merge commit',
    ),
  recovery: recovery.optional(),
  postApply: z
    .object({
      exitCode: z.number().nullable(),
      stdout: z.string(),
      stderr: z.string(),
      timedOut: z.boolean(),
    })
    .optional(),
});

/** `hagent check --json`. */
export const CheckOutput = z.object({
  ok: z.literal(true),
  dir: z.string(),
  format: z.enum(['codex', 'unified']),
  files: z.array(
    fileResult.extend({
      chunks: z.array(
        z.object({
          chunk: z.number().int(),
          level: z.string(),
          startLine: z.number().int(),
          oldCount: z.number().int(),
          newCount: z.number().int(),
        }),
      ),
      noop: z.boolean(),
    }),
  ),
  leniencies: z.array(z.string()),
  warnings: z.array(z.string()),
});

/** How the session branch moved without hagent (`session status --json` `drift`). */
const sessionDrift = z
  .looseObject({
    kind: z.enum(['detached', 'other-branch', 'outside-commits', 'rewound']),
    hint: z.string(),
  })
  .nullable()
  .describe('how the session branch moved without hagent');

/** `hagent session status --json`, plus `targetDrift`: how far the target branch moved since the session's base. */
export const StatusOutput = z.object({
  ok: z.literal(true),
  sandbox: z
    .union([
      z.object({
        on: z.literal(true),
        bwrap: z.string(),
        network: z.boolean(),
        writable: z.array(z.string()),
      }),
      z.object({
        on: z.literal(false),
        configured: z.boolean(),
        required: z.boolean(),
        reason: z.string(),
        hint: z.string(),
      }),
    ])
    .describe('whether exec runs in the operating-system sandbox here, and why not'),
  id: z.string(),
  worktree: z.string(),
  branch: z.string(),
  base: oid,
  head: oid.nullable(),
  target: z.string().nullable(),
  commits: z.number().int(),
  createdAt: z.string(),
  approved: z.boolean(),
  landed: z.boolean(),
  state: z.enum(['empty', 'open', 'approved', 'landed', 'drifted']),
  changed: z.array(changed),
  outsideEdits: z.array(changed),
  worktreeExists: z.boolean(),
  interrupted: z
    .object({
      command: z.string(),
      txid: z.string(),
      startedAt: z.string(),
      files: z.array(z.string()),
    })
    .nullable(),
  drift: sessionDrift,
  outsideChanged: z
    .array(
      z.object({ time: z.string(), command: z.string(), message: z.string(), hint: z.string() }),
    )
    .describe(
      "changes of the user's main checkout seen after this session's shell commands (never undone)",
    ),
  targetDrift: z
    .object({
      targetHead: oid,
      commits: z.number().int().describe('commits on the target since the base'),
    })
    .nullable(),
  merge: z
    .object({
      mergeHead: oid,
      byUpdate: z
        .boolean()
        .describe('left by hagent session update (false: a git merge of the agent)'),
      conflicted: z.array(z.string()),
      unresolved: z
        .array(z.string())
        .describe('still unmerged in the index or holding a conflict block'),
      hint: z.string(),
    })
    .nullable()
    .describe(
      'a merge waiting in the worktree (as hagent session status shows it); null when none',
    ),
});

/** The `read` tool's structured result: the numbered lines, the blob id of the bytes on disk (the staleness token) and the line counts. */
export const ReadOutput = z.object({
  ok: z.literal(true),
  session: z.string(),
  path: z.string(),
  head: oid,
  blob: oid.describe('blob id of the file as it is on disk: pass it as expected_blob / base_blobs'),
  headBlob: oid.nullable().describe('blob id in the session head (null: not committed)'),
  outsideEdit: z
    .boolean()
    .describe(
      'the file on disk differs from the session head (an edit made outside hagent; sync adopts it)',
    ),
  conflicted: z
    .boolean()
    .optional()
    .describe(
      'a merge is in progress and this file is conflicted: one edit, write or apply_patch that resolves every conflicted file concludes it',
    ),
  totalLines: z.number().int(),
  startLine: z.number().int(),
  endLine: z.number().int(),
  truncated: z.boolean(),
  cutLines: z
    .number()
    .int()
    .optional()
    .describe('how many shown lines were longer than 2,000 characters and are shown cut'),
  warnings: z
    .array(z.string())
    .optional()
    .describe("a path in the main checkout was read as the session's copy"),
  text: z
    .string()
    .describe('the lines startLine to endLine, each "<n>\\t<line>", joined by newlines'),
});

/** `hagent undo --json` / `hagent undo --redo --json`. */
export const UndoOutput = z.object({
  ok: z.literal(true),
  session: z.string(),
  direction: z.enum(['undo', 'redo']),
  from: oid,
  to: oid,
  steps: z.number().int(),
  commits: z.array(oid),
  files: z.array(changed),
  redoable: z.number().int(),
  recovery: recovery.optional(),
});

/** `hagent sync --json`. */
export const SyncOutput = z.object({
  ok: z.literal(true),
  session: z.string(),
  commit: oid.nullable(),
  parent: oid,
  files: z.array(changed),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  recovery: recovery.optional(),
});

/** `hagent review --json` (approval is read-only here). */
export const ReviewOutput = z.object({
  ok: z.literal(true),
  session: z.string(),
  base: oid,
  since: z.enum(['base', 'landed', 'target']).describe('what files and diff are against'),
  head: oid,
  target: z.string().nullable(),
  files: z.array(
    z.object({
      path: z.string(),
      status: z.string(),
      added: z.number().int().nullable(),
      removed: z.number().int().nullable(),
    }),
  ),
  patches: z.array(
    z.object({
      commit: oid,
      time: z.string(),
      subject: z.string(),
      files: z.array(changed),
      outside: z.boolean().describe('not made by hagent from a patch'),
      patch: z.string().optional(),
    }),
  ),
  drift: sessionDrift,
  diff: z.string().optional(),
  approval: z
    .object({ head: z.string(), paths: z.array(z.string()).nullable(), at: z.string() })
    .nullable(),
  approvedNow: z.boolean(),
  coverage: z
    .object({
      current: z.boolean(),
      toLand: z.array(z.string()),
      landed: z.array(z.string()),
      notApproved: z.array(z.string()),
    })
    .describe('what the approval covers of files: to land, landed already, not approved yet'),
  renames: z
    .array(z.object({ from: z.string(), to: z.string(), similarity: z.number() }))
    .describe('files moved (each also a D and an A entry of files); approved as one move'),
});

/** `hagent log --json`, this session's entries only. */
export const LogOutput = z.object({
  ok: z.literal(true),
  entries: z.array(
    z.looseObject({
      time: z.string(),
      session: z.string(),
      command: z.string(),
      ok: z.boolean(),
      code: z.string().optional(),
      message: z.string().optional(),
      hint: z.string().optional(),
      files: z.array(z.string()).optional(),
    }),
  ),
  damaged: z.number().int(),
});

/** The `structuredContent` of every refusal (isError): the `--json` failure of the CLI. */
export const ErrorOutput = z.object({
  ok: z.literal(false),
  error: z.looseObject({ code: z.string(), message: z.string(), hint: z.string().optional() }),
});

const cut = z.object({ bytes: z.number().int(), omittedBytes: z.number().int() });

/** `hagent exec --json`: the command's outcome (a timeout is never exit code 0) and the commit of what it changed. */
export const ExecOutput = z.object({
  ok: z.boolean().describe('exit code 0 within the time'),
  session: z.string(),
  command: z.string(),
  exitCode: z
    .number()
    .int()
    .nullable()
    .describe('null when a signal ended it (a timeout always does)'),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.union([
    z.literal(false),
    z.object({ stdout: cut.nullable(), stderr: cut.nullable() }),
  ]),
  durationMs: z.number(),
  changed: z.array(changed),
  commit: oid.nullable(),
  adopted: oid.nullable(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  outside: z
    .object({
      checkout: z.string(),
      refs: z.array(
        z.object({ ref: z.string(), before: z.string().nullable(), after: z.string().nullable() }),
      ),
      paths: z.array(z.string()),
      others: z.array(z.string()).describe('untracked or ignored files changed or removed'),
      staged: z.array(z.string()),
      gitFiles: z.array(z.string()).describe("git's own files changed (.git/config, hooks)"),
      restored: z.array(z.string()).describe('what hagent put back as it was'),
      restore: z.array(z.string()).describe('commands that put the rest back (refs, .git/config)'),
      message: z.string(),
      hint: z.string(),
    })
    .nullable()
    .describe(
      'what changed outside the session while the command ran (docs/human-only.md), or null',
    ),
  sandbox: z
    .union([
      z.object({
        on: z.literal(true),
        denied: z.array(
          z.object({ code: z.literal('SANDBOX_DENIED'), path: z.string(), reason: z.string() }),
        ),
        objects: z.number().int(),
        branch: z.object({ old: oid.nullable(), new: oid }).nullable(),
        problems: z.array(z.string()),
      }),
      z.object({
        on: z.literal(false),
        configured: z.boolean(),
        reason: z.string(),
        hint: z.string(),
      }),
    ])
    .describe(
      'whether the command ran in the operating-system sandbox, and each write it stopped (path and why)',
    ),
});
