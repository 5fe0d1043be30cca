/**
 * The repository configuration `.hagent/config.json`: its zod schema, the JSON Schema for
 * editors, and the merge of defaults ← file ← environment with the source of every value.
 * PURE: the caller reads the file (from the user's main checkout, never a session worktree).
 */
import { z } from 'zod';
import { HagentError } from '../errors.js';
import { DEFAULT_POLICY, POLICY_ENV, type Policy } from './rules.js';

const count = z.number().int().min(0);

/** Schema of `.hagent/config.json`. Unknown keys are errors (a typo must not be ignored). */
export const ConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  deniedPaths: z.array(z.string().min(1)).optional().describe('extra globs never written (added to the built-in list)'),
  suffixes: z.strictObject({
    mode: z.enum(['deny', 'allow']),
    list: z.array(z.string().min(1)),
  }).optional().describe('suffix policy: a deny-list (default) or an allow-list of file endings'),
  maxFiles: count.optional().describe('most files one patch may touch (default 10)'),
  maxChangedLines: count.optional().describe('most changed lines one patch may have (default 800)'),
  confirmFiles: count.optional().describe('files from which a patch needs a human yes (default 6)'),
  confirmChangedLines: count.optional().describe('changed lines from which a patch needs a human yes (default 400)'),
  confirmDeletes: z.boolean().optional().describe('a patch that deletes a file needs a human yes (default true)'),
  lockTimeoutMs: count.optional().describe('how long a writing command waits for the session lock (default 10000)'),
  hookTimeoutMs: count.optional().describe('how long a user hook may run (default 30000)'),
  watch: z.boolean().optional().describe('watch the targets for outside writes during an apply (default true)'),
});

export type ConfigFile = z.infer<typeof ConfigSchema>;

/** Settings beyond the patch policy. */
export interface Runtime {
  lockTimeoutMs: number;
  hookTimeoutMs: number;
  watch: boolean;
}

export const DEFAULT_RUNTIME: Runtime = { lockTimeoutMs: 10_000, hookTimeoutMs: 30_000, watch: true };

/** Where a setting's value came from. */
export type Source = 'default' | 'config' | 'env';

/** The effective configuration with the source of each top-level key. */
export interface EffectiveConfig {
  policy: Policy;
  runtime: Runtime;
  sources: Record<string, Source>;
  file: string | null;
}

const RUNTIME_ENV = {
  HAGENT_LOCK_TIMEOUT_MS: 'lockTimeoutMs',
  HAGENT_HOOK_TIMEOUT_MS: 'hookTimeoutMs',
} as const;

/**
 * Validates the text of a config file.
 * @throws HagentError USAGE naming the file, the key and what is wrong.
 */
export function parseConfigText(text: string, file: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new HagentError('CONFIG_INVALID', `${file} is not valid JSON: ${(e as Error).message}`, { path: file }, 'fix the file; hagent config schema prints its JSON Schema');
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.length ? issue.path.join('.') : (issue as { keys?: string[] }).keys?.join(', ') ?? '(top level)';
    throw new HagentError('CONFIG_INVALID', `${file}: invalid value at "${key}": ${issue.message}`, { path: file, key }, 'fix the key; hagent config show prints the effective values, hagent config schema the schema');
  }
  return parsed.data;
}

/**
 * Merges defaults ← config file ← environment (patch-language.md §5b; issue: safety envelope §1).
 * Built-in denied paths always stay; `deniedPaths` adds to them.
 * @throws HagentError USAGE for a malformed environment value.
 */
export function effectiveConfig(file: ConfigFile | null, fileName: string | null, env: Readonly<Record<string, string | undefined>>): EffectiveConfig {
  const sources: Record<string, Source> = {};
  const policy: Policy = { ...DEFAULT_POLICY, deniedPaths: [...DEFAULT_POLICY.deniedPaths] };
  const runtime: Runtime = { ...DEFAULT_RUNTIME };
  for (const key of ['deniedPaths', 'suffixes', 'maxFiles', 'maxChangedLines', 'confirmFiles', 'confirmChangedLines', 'confirmDeletes', 'lockTimeoutMs', 'hookTimeoutMs', 'watch']) sources[key] = 'default';
  if (file) {
    if (file.deniedPaths) { policy.deniedPaths.push(...file.deniedPaths); sources.deniedPaths = 'config'; }
    if (file.suffixes) { policy.suffixes = file.suffixes; sources.suffixes = 'config'; }
    for (const key of ['maxFiles', 'maxChangedLines', 'confirmFiles', 'confirmChangedLines', 'confirmDeletes'] as const) {
      if (file[key] !== undefined) { (policy as unknown as Record<string, unknown>)[key] = file[key]; sources[key] = 'config'; }
    }
    for (const key of ['lockTimeoutMs', 'hookTimeoutMs', 'watch'] as const) {
      if (file[key] !== undefined) { (runtime as unknown as Record<string, unknown>)[key] = file[key]; sources[key] = 'config'; }
    }
  }
  const readCount = (name: string): number | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return null;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new HagentError('USAGE', `${name} must be a whole number, not ${JSON.stringify(raw)}`, { variable: name }, `unset it, or set e.g. ${name}=20`);
    return n;
  };
  for (const [name, key] of Object.entries(POLICY_ENV)) {
    const n = readCount(name);
    if (n !== null) { policy[key] = n; sources[key] = 'env'; }
  }
  for (const [name, key] of Object.entries(RUNTIME_ENV)) {
    const n = readCount(name);
    if (n !== null) { runtime[key] = n; sources[key] = 'env'; }
  }
  if (env.HAGENT_NO_WATCH === '1') { runtime.watch = false; sources.watch = 'env'; }
  return { policy, runtime, sources, file: fileName };
}

/** JSON Schema of `.hagent/config.json`, for editors (`hagent config schema`). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(ConfigSchema);
}
