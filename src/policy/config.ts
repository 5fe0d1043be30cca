/**
 * The repository configuration `.hagent/config.json`: its shape and the merge of defaults ←
 * file ← environment with the source of every value. The zod schema lives in config-schema.ts,
 * loaded only when a file exists (zod's classic build costs start-up time).
 * PURE: the caller reads the file (from the user's main checkout, never a session worktree).
 */
import { HagentError } from '../errors.js';
import { DEFAULT_POLICY, POLICY_ENV, type Policy } from './rules.js';

/** `.hagent/config.json` as validated by `ConfigSchema` (config-schema.ts). */
export interface ConfigFile {
  $schema?: string;
  deniedPaths?: string[];
  suffixes?: { mode: 'deny' | 'allow'; list: string[] };
  maxFiles?: number;
  maxChangedLines?: number;
  confirmFiles?: number;
  confirmChangedLines?: number;
  confirmDeletes?: boolean;
  lockTimeoutMs?: number;
  hookTimeoutMs?: number;
  watch?: boolean;
  worktreeRoot?: string;
  pool?: number;
  recycleIgnored?: string[];
  /** What an agent wired by `hagent integrate` may do in a checkout that is no session (agents/main-checkout.ts). */
  mainCheckout?: 'refuse' | 'warn';
  mcpMaxRequestBytes?: number;
  /** What an edit that touches lines another unlanded session changed gets (src/radar/): a warning (default), a refusal (OVERLAP), or nothing. */
  overlap?: 'warn' | 'refuse' | 'off';
  /** The shell guard's relaxations for this repository (rule names of the guard). */
  guard?: { allow?: string[] };
  /** The operating-system sandbox of the agent's shell (docs/sandbox.md). */
  sandbox?: SandboxConfig;
  /** What a land checks before it moves the target (docs/commands.md, "The gate"). */
  land?: { gate?: GateCommand; gateTimeoutS?: number };
}

/**
 * The land gate's command: an argv run without a shell (`["npm", "test"]`), or a shell line
 * (`{"shell": "make check && npm test"}`).
 */
export type GateCommand = string[] | { shell: string };

/** The land gate as configured: the command (null: no gate) and its timeout in seconds. */
export interface LandGateConfig {
  gate: GateCommand | null;
  gateTimeoutS: number;
}

/** The gate's timeout when the file names none: 15 minutes. */
export const DEFAULT_GATE_TIMEOUT_S = 900;

/**
 * `"sandbox"` of the config file: a mode (`auto` default, `required`, `off`), or the object form
 * with more writable folders (absolute or `~/`) and whether the network stays reachable.
 */
export type SandboxConfig =
  | 'auto'
  | 'required'
  | 'off'
  | { mode?: 'auto' | 'required' | 'off'; writable?: string[]; network?: boolean };

/** Settings beyond the patch policy. */
export interface Runtime {
  lockTimeoutMs: number;
  hookTimeoutMs: number;
  watch: boolean;
  /**
   * Where session worktrees go, as configured: null for the default (the user's cache folder),
   * `git-dir` for `<git-common-dir>/hagent/worktrees`, else a folder (`~/` and paths relative to
   * the main checkout allowed). Resolved to a folder per repository by session/ (worktreeRootFor).
   */
  worktreeRoot: string | null;
  /** How many clean worktrees of ended sessions are kept for reuse by session start; 0: none. */
  pool: number;
  /**
   * Ignored files a pooled worktree keeps (gitignore patterns); null: `.worktreeinclude`'s plus
   * dependency folders.
   */
  recycleIgnored: string[] | null;
  /**
   * An integrated agent started in the user's checkout (no session): `refuse` its file writes and
   * destructive git with how to start a session, or only `warn` (the agent and the human are told).
   */
  mainCheckout: 'refuse' | 'warn';
  /** The largest JSON-RPC message `hagent mcp` serves, in bytes (a larger one is answered with an error). */
  mcpMaxRequestBytes: number;
  /**
   * An edit (hook, MCP edit/write/apply_patch, apply) touching lines another unlanded session
   * changed: `warn` in the result (default), `refuse` with OVERLAP, or `off` (no check at all).
   */
  overlap: 'warn' | 'refuse' | 'off';
}

export const DEFAULT_RUNTIME: Runtime = {
  lockTimeoutMs: 10_000,
  hookTimeoutMs: 30_000,
  watch: true,
  worktreeRoot: null,
  pool: 2,
  recycleIgnored: null,
  mainCheckout: 'refuse',
  mcpMaxRequestBytes: 10 * 1024 * 1024,
  overlap: 'warn',
};

/** Where a setting's value came from. */
export type Source = 'default' | 'config' | 'env';

/** The effective configuration with the source of each top-level key. */
export interface EffectiveConfig {
  policy: Policy;
  runtime: Runtime;
  /** The shell guard's settings: rules relaxed for this repository (empty by default). */
  guard: { allow: string[] };
  /** The config file's `"sandbox"` as written; null when absent (the sandbox's defaults). */
  sandbox: SandboxConfig | null;
  /** The land gate (`"land"` of the config file); read from the user's checkout only, like the rest. */
  land: LandGateConfig;
  sources: Record<string, Source>;
  file: string | null;
}

const RUNTIME_ENV = {
  HAGENT_LOCK_TIMEOUT_MS: 'lockTimeoutMs',
  HAGENT_HOOK_TIMEOUT_MS: 'hookTimeoutMs',
  HAGENT_POOL: 'pool',
  HAGENT_MCP_MAX_REQUEST_BYTES: 'mcpMaxRequestBytes',
} as const;

/**
 * Merges defaults ← config file ← environment (patch-language.md §5b).
 * Built-in denied paths always stay; `deniedPaths` adds to them.
 * @throws HagentError USAGE for a malformed environment value.
 */
export function effectiveConfig(
  file: ConfigFile | null,
  fileName: string | null,
  env: Readonly<Record<string, string | undefined>>,
): EffectiveConfig {
  const sources: Record<string, Source> = {};
  const policy: Policy = { ...DEFAULT_POLICY, deniedPaths: [...DEFAULT_POLICY.deniedPaths] };
  const runtime: Runtime = { ...DEFAULT_RUNTIME };
  for (const key of [
    'deniedPaths',
    'suffixes',
    'maxFiles',
    'maxChangedLines',
    'confirmFiles',
    'confirmChangedLines',
    'confirmDeletes',
    'lockTimeoutMs',
    'hookTimeoutMs',
    'watch',
    'worktreeRoot',
    'pool',
    'recycleIgnored',
    'mainCheckout',
    'mcpMaxRequestBytes',
    'overlap',
    'guard',
    'sandbox',
    'land',
  ])
    sources[key] = 'default';
  const guard = { allow: [] as string[] };
  if (file) applyFile(file, policy, runtime, guard, sources);
  applyEnv(env, policy, runtime, sources);
  const sandbox = file?.sandbox ?? null;
  if (sandbox !== null) sources.sandbox = 'config';
  const land: LandGateConfig = {
    gate: file?.land?.gate ?? null,
    gateTimeoutS: file?.land?.gateTimeoutS ?? DEFAULT_GATE_TIMEOUT_S,
  };
  if (file?.land !== undefined) sources.land = 'config';
  return { policy, runtime, guard, sandbox, land, sources, file: fileName };
}

/** The config file's settings over the defaults; `deniedPaths` adds to the built-in ones. */
function applyFile(
  file: ConfigFile,
  policy: Policy,
  runtime: Runtime,
  guard: { allow: string[] },
  sources: Record<string, Source>,
): void {
  if (file.deniedPaths) {
    policy.deniedPaths.push(...file.deniedPaths);
    sources.deniedPaths = 'config';
  }
  if (file.suffixes) {
    policy.suffixes = file.suffixes;
    sources.suffixes = 'config';
  }
  for (const key of [
    'maxFiles',
    'maxChangedLines',
    'confirmFiles',
    'confirmChangedLines',
    'confirmDeletes',
  ] as const) {
    if (file[key] !== undefined) {
      (policy as unknown as Record<string, unknown>)[key] = file[key];
      sources[key] = 'config';
    }
  }
  for (const key of [
    'lockTimeoutMs',
    'hookTimeoutMs',
    'watch',
    'worktreeRoot',
    'pool',
    'recycleIgnored',
    'mainCheckout',
    'mcpMaxRequestBytes',
    'overlap',
  ] as const) {
    if (file[key] !== undefined) {
      (runtime as unknown as Record<string, unknown>)[key] = file[key];
      sources[key] = 'config';
    }
  }
  if (file.guard?.allow) {
    guard.allow = [...file.guard.allow];
    sources.guard = 'config';
  }
}

/** The environment's settings over the file's (HAGENT_MAX_FILES, HAGENT_NO_WATCH, …). */
function applyEnv(
  env: Readonly<Record<string, string | undefined>>,
  policy: Policy,
  runtime: Runtime,
  sources: Record<string, Source>,
): void {
  for (const [name, key] of Object.entries(POLICY_ENV)) {
    const n = readCount(env, name);
    if (n !== null) {
      policy[key] = n;
      sources[key] = 'env';
    }
  }
  for (const [name, key] of Object.entries(RUNTIME_ENV)) {
    const n = readCount(env, name);
    if (n !== null) {
      runtime[key] = n;
      sources[key] = 'env';
    }
  }
  if (env.HAGENT_NO_WATCH === '1') {
    runtime.watch = false;
    sources.watch = 'env';
  }
  if (env.HAGENT_WORKTREE_ROOT) {
    runtime.worktreeRoot = env.HAGENT_WORKTREE_ROOT;
    sources.worktreeRoot = 'env';
  }
}

/**
 * A whole-number variable, null when unset or empty.
 * @throws HagentError USAGE for any other value.
 */
function readCount(env: Readonly<Record<string, string | undefined>>, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new HagentError(
      'USAGE',
      `${name} must be a whole number, not ${JSON.stringify(raw)}`,
      { variable: name },
      `unset it, or set e.g. ${name}=20`,
    );
  return n;
}
