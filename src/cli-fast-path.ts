/**
 * The start-up fast path of the commands run most often, `apply` and `check` (hundreds of times
 * an agent session), and of `land` and `session start`, whose speed is measured against git's: their arguments are read with Node's own `util.parseArgs` instead of loading yargs
 * (~25 ms to load even from the code cache, ~12 ms to parse). Only a plain, valid command line
 * takes this path; anything else — `--help`, a short flag, `--`, an unknown, repeated or empty
 * option, a value option without its value, an extra positional — returns null and goes through
 * yargs, which owns every usage error and help text. So both paths accept the same lines and give
 * the command the same argument object.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { HagentError } from './errors.js';

/** The arguments yargs would give `runApply` for the same command line. */
export interface FastApplyArgs {
  patch?: string;
  json?: boolean;
  session?: string;
  yes?: boolean;
  dryRun?: boolean;
  base?: string;
  watch?: boolean;
  lockTimeout?: number;
}

/** The arguments yargs would give `runCheck` for the same command line. */
export interface FastCheckArgs {
  patch?: string;
  json?: boolean;
  session?: string;
  dir?: string;
}

/** The arguments yargs would give `runLand` for the same command line. */
export interface FastLandArgs {
  json?: boolean;
  session?: string;
  squash?: boolean;
  merge?: boolean;
  message?: string;
  yes?: boolean;
}

/** The arguments yargs would give `runStart` for the same command line. */
export interface FastStartArgs {
  json?: boolean;
  name?: string;
  base?: string;
}

/** A command line the fast path took. */
export type FastCommand =
  | { command: 'apply'; args: FastApplyArgs }
  | { command: 'check'; args: FastCheckArgs }
  | { command: 'land'; args: FastLandArgs }
  | { command: 'session start'; args: FastStartArgs };

const APPLY_OPTIONS = {
  json: { type: 'boolean' },
  session: { type: 'string' },
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  base: { type: 'string' },
  watch: { type: 'boolean' },
  'lock-timeout': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const LAND_OPTIONS = {
  json: { type: 'boolean' },
  session: { type: 'string' },
  squash: { type: 'boolean' },
  merge: { type: 'boolean' },
  message: { type: 'string' },
  yes: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

const START_OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  base: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const CHECK_OPTIONS = {
  json: { type: 'boolean' },
  session: { type: 'string' },
  dir: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/**
 * Reads `argv` (the arguments after the script, e.g. `['apply', 'fix.patch', '--json']`) as an
 * `apply`, `check`, `land` or `session start` command line, the way the yargs definition in cli.ts does.
 * @returns the command and its arguments (option names in camelCase, `--no-watch` as
 *   `watch: false`, `--lock-timeout` as a number), or null when yargs must read the line. Never throws.
 */
export function readFastCommand(argv: readonly string[]): FastCommand | null {
  const name = argv[0] === 'session' && argv[1] === 'start' ? 'session start' : argv[0];
  if (name !== 'apply' && name !== 'check' && name !== 'land' && name !== 'session start')
    return null;
  const rest = argv.slice(name === 'session start' ? 2 : 1);
  // yargs reads these its own way (help, version, end of options, short flags, `-` alone is fine).
  if (
    rest.some(
      (a) =>
        a === '--' ||
        a === '--help' ||
        a === '--version' ||
        (a.startsWith('-') && !a.startsWith('--') && a !== '-'),
    )
  )
    return null;
  const options: ParseArgsConfig['options'] =
    name === 'apply'
      ? APPLY_OPTIONS
      : name === 'land'
        ? LAND_OPTIONS
        : name === 'session start'
          ? START_OPTIONS
          : CHECK_OPTIONS;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options,
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      tokens: true,
    });
  } catch {
    return null;
  }
  if (parsed.positionals.length > (name === 'land' || name === 'session start' ? 0 : 1))
    return null;
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue;
    // Repeated options become arrays in yargs; a negated value option (`--no-session`) means something else there.
    if (seen.has(t.name)) return null;
    seen.add(t.name);
    if (t.rawName.startsWith('--no-') && (t.name as string) !== 'watch') return null;
    // yargs reads '' and a separate lone `-` as an empty value (a usage error there).
    if (t.value === '' || (t.value === '-' && !t.inlineValue)) return null;
  }
  const v = parsed.values as Record<string, string | boolean | undefined>;
  if (name === 'land') {
    if (v.squash !== undefined && v.merge !== undefined) return null; // yargs: "mutually exclusive"
    const { json, session, squash, merge, message, yes } = v;
    return {
      command: 'land',
      args: {
        ...(json !== undefined ? { json: json as boolean } : {}),
        ...(session !== undefined ? { session: session as string } : {}),
        ...(squash !== undefined ? { squash: squash as boolean } : {}),
        ...(merge !== undefined ? { merge: merge as boolean } : {}),
        ...(message !== undefined ? { message: message as string } : {}),
        ...(yes !== undefined ? { yes: yes as boolean } : {}),
      },
    };
  }
  if (name === 'session start') {
    const { json, name: id, base } = v;
    return {
      command: 'session start',
      args: {
        ...(json !== undefined ? { json: json as boolean } : {}),
        ...(id !== undefined ? { name: id as string } : {}),
        ...(base !== undefined ? { base: base as string } : {}),
      },
    };
  }
  const patch = parsed.positionals[0];
  const common = {
    ...(patch !== undefined ? { patch } : {}),
    ...(v.json !== undefined ? { json: v.json as boolean } : {}),
    ...(v.session !== undefined ? { session: v.session as string } : {}),
  };
  if (name === 'check')
    return {
      command: 'check',
      args: { ...common, ...(v.dir !== undefined ? { dir: v.dir as string } : {}) },
    };
  return {
    command: 'apply',
    args: {
      ...common,
      ...(v.yes !== undefined ? { yes: v.yes as boolean } : {}),
      ...(v['dry-run'] !== undefined ? { dryRun: v['dry-run'] as boolean } : {}),
      ...(v.base !== undefined ? { base: v.base as string } : {}),
      watch: v.watch === undefined ? true : (v.watch as boolean),
      ...(v['lock-timeout'] !== undefined ? { lockTimeout: Number(v['lock-timeout']) } : {}),
    },
  };
}

/**
 * The command line of `hagent run AGENT [--name N] [--base REV] [--session ID] [--json] [-- ARGS…]`:
 * options before `--` are hagent's, everything after it the agent's, untouched.
 * @throws HagentError USAGE for an unknown option, a missing value or a missing agent.
 */
export function parseRunArgs(args: readonly string[]): {
  agent: string;
  name?: string;
  base?: string;
  session?: string;
  json?: boolean;
  agentArgs: string[];
} {
  const cut = args.indexOf('--');
  const own = cut < 0 ? args : args.slice(0, cut);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...own],
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        base: { type: 'string' },
        session: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
  } catch (e) {
    throw new HagentError(
      'USAGE',
      (e as Error).message.split('\n')[0]!,
      {},
      'hagent run --help shows the options; arguments for the agent go after --',
    );
  }
  const [agent, ...extra] = parsed.positionals;
  if (!agent) throw new HagentError('USAGE', 'name the agent to run', {}, 'e.g. hagent run claude');
  if (extra.length)
    throw new HagentError(
      'USAGE',
      `unexpected argument ${JSON.stringify(extra[0])}`,
      {},
      `arguments for the agent go after --: hagent run ${agent} -- ${extra.join(' ')}`,
    );
  const v = parsed.values;
  for (const key of ['name', 'base', 'session'] as const)
    if (v[key] === '')
      throw new HagentError(
        'USAGE',
        `--${key} needs a value`,
        { option: key },
        `e.g. --${key} fix-login`,
      );
  return {
    agent,
    ...(v.name !== undefined ? { name: v.name } : {}),
    ...(v.base !== undefined ? { base: v.base } : {}),
    ...(v.session !== undefined ? { session: v.session } : {}),
    ...(v.json ? { json: true } : {}),
    agentArgs: cut < 0 ? [] : args.slice(cut + 1),
  };
}
