/**
 * The zod schema of `.hagent/config.json`, its validation and its JSON Schema for editors.
 * Loaded lazily: only when a config file exists or `hagent config schema` runs.
 */
import * as z from 'zod';
import { HagentError } from '../errors.js';
import { GUARD_RULE_NAMES } from '../guard/rules.js';
import type { ConfigFile } from './config.js';

const count = z.number().int().min(0);
const sandboxMode = z.enum(['auto', 'required', 'off']);

/** Schema of `.hagent/config.json`. Unknown keys are errors (a typo must not be ignored). */
export const ConfigSchema: z.ZodType<ConfigFile> = z.strictObject({
  $schema: z.string().optional(),
  deniedPaths: z
    .array(z.string().min(1))
    .optional()
    .describe('extra globs never written (added to the built-in list)'),
  suffixes: z
    .strictObject({
      mode: z.enum(['deny', 'allow']),
      list: z.array(z.string().min(1)),
    })
    .optional()
    .describe('suffix policy: a deny-list (default) or an allow-list of file endings'),
  maxFiles: count.optional().describe('most files one patch may touch (default 10)'),
  maxChangedLines: count.optional().describe('most changed lines one patch may have (default 800)'),
  confirmFiles: count.optional().describe('files from which a patch needs a human yes (default 6)'),
  confirmChangedLines: count
    .optional()
    .describe('changed lines from which a patch needs a human yes (default 400)'),
  confirmDeletes: z
    .boolean()
    .optional()
    .describe('a patch that deletes a file needs a human yes (default true)'),
  lockTimeoutMs: count
    .optional()
    .describe('how long a writing command waits for the session lock (default 10000)'),
  hookTimeoutMs: count.optional().describe('how long a user hook may run (default 30000)'),
  watch: z
    .boolean()
    .optional()
    .describe('watch the targets for outside writes during an apply (default true)'),
  worktreeRoot: z
    .string()
    .min(1)
    .optional()
    .describe(
      'folder for session worktrees, one sub-folder per repository ("~/" and paths relative to the main checkout allowed; "git-dir": inside the git folder); default: the user cache folder, hagent/worktrees',
    ),
  pool: count
    .optional()
    .describe(
      'clean worktrees of ended sessions kept for the next session start (default 2; 0 disables)',
    ),
  recycleIgnored: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'ignored files a pooled worktree keeps, as gitignore patterns (default: what .worktreeinclude names, plus node_modules/, .venv/, venv/, target/, vendor/)',
    ),
  mainCheckout: z
    .enum(['refuse', 'warn'])
    .optional()
    .describe(
      'an agent wired by hagent integrate, started in a checkout that is no hagent session: "refuse" its file writes and destructive git (default), or only "warn" it and the human',
    ),
  mcpMaxRequestBytes: z
    .number()
    .int()
    .min(1024)
    .optional()
    .describe(
      'the largest JSON-RPC message hagent mcp serves, in bytes (default 10485760); a larger one is answered with MCP_REQUEST_TOO_LARGE',
    ),
  overlap: z
    .enum(['warn', 'refuse', 'off'])
    .optional()
    .describe(
      'an edit touching lines another unlanded session changed: "warn" in the tool result (default), "refuse" it with OVERLAP, or "off"',
    ),
  guard: z
    .strictObject({
      allow: z
        .array(z.enum(GUARD_RULE_NAMES as [string, ...string[]]))
        .optional()
        .describe(
          'shell-guard rules relaxed for this repository, e.g. ["git-push"] (hagent guard --help lists them)',
        ),
    })
    .optional()
    .describe('the shell guard of hagent exec and the agent hooks'),
  sandbox: z
    .union([
      sandboxMode,
      z.strictObject({
        mode: sandboxMode.optional(),
        writable: z
          .array(
            z
              .string()
              .regex(/^(\/|~\/)/, 'an absolute path or one under "~/"')
              .describe('a folder writable in the sandbox'),
          )
          .optional()
          .describe('folders writable in the sandbox besides the default caches'),
        network: z
          .boolean()
          .optional()
          .describe('whether sandboxed commands reach the network (default true)'),
      }),
    ])
    .optional()
    .describe(
      'the operating-system sandbox of hagent exec and the MCP exec tool: "auto" (default: on where one can start), "required" (refuse where none can), "off", or {mode, writable, network}',
    ),
  land: z
    .strictObject({
      gate: z
        .union([
          z.array(z.string().min(1)).min(1),
          z.strictObject({ shell: z.string().min(1).describe('a bash line') }),
        ])
        .optional()
        .describe(
          'the command every land runs on the exact tree that would land, in a scratch worktree (argv, e.g. ["npm", "test"], or {"shell": "…"}); a failure refuses the land with GATE_FAILED',
        ),
      gateTimeoutS: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('seconds before the gate is killed and counted as failed (default 900)'),
    })
    .optional()
    .describe('what a land checks before it moves the target branch'),
});

/**
 * Validates the text of a config file.
 * @throws HagentError CONFIG_INVALID naming the file, the key, its line (when found) and what is wrong.
 */
export function parseConfigText(text: string, file: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const at = /position (\d+)/.exec((e as Error).message);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : undefined;
    throw new HagentError(
      'CONFIG_INVALID',
      `${file}${line ? `:${line}` : ''} is not valid JSON: ${(e as Error).message}`,
      { path: file, ...(line ? { line } : {}) },
      `fix the JSON${line ? ` at line ${line}` : ''} of ${file} (commands that read it refuse until then); hagent config schema prints what the file may hold`,
    );
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.length
      ? issue.path.join('.')
      : ((issue as { keys?: string[] }).keys?.join(', ') ?? '(top level)');
    // The line of the key's first mention: where the editor should go (a JSON parser keeps no positions).
    const name =
      [...issue.path].reverse().find((k) => typeof k === 'string') ??
      (issue as { keys?: string[] }).keys?.[0] ??
      null;
    const offset = name ? text.indexOf(JSON.stringify(name)) : -1;
    const line = offset >= 0 ? text.slice(0, offset).split('\n').length : undefined;
    throw new HagentError(
      'CONFIG_INVALID',
      `${file}${line ? `:${line}` : ''}: invalid value at "${key}": ${issue.message}`,
      { path: file, key, ...(line ? { line } : {}) },
      `fix "${key}"${line ? ` at line ${line}` : ''} of ${file} (commands that read it refuse until then); hagent config schema prints what each key takes`,
    );
  }
  return parsed.data;
}

/** JSON Schema of `.hagent/config.json`, for editors (`hagent config schema`). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(ConfigSchema);
}
