/**
 * The start-up fast path of the commands run most often, `apply` and `check` (hundreds of times
 * an agent session), and of `land` and `session start`, whose speed is measured against git's:
 * their arguments are read with Node's own `util.parseArgs` instead of loading yargs (~25 ms to
 * load even from the code cache, ~12 ms to parse). Both parsers are built from the one option
 * table (commands/options.ts; the entries marked `fast`). Only a plain, valid command line takes
 * this path; anything else — `--help`, a short flag, `--`, an unknown, repeated or empty option, a
 * value option without its value, an extra positional, options that conflict — returns null and
 * goes through yargs, which owns every usage error and help text. So both paths accept the same
 * lines and give the command the same argument object.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { HagentError } from './errors.js';
import {
  camelCase,
  COMMANDS,
  valueExample,
  type ArgsOf,
  type CommandName,
  type CommandSpec,
} from './commands/options.js';

/** The commands the fast path reads (their entries in the option table are marked `fast`). */
type FastName = {
  [C in CommandName]: (typeof COMMANDS)[C] extends { fast: true } ? C : never;
}[CommandName];

/** A command line the fast path took, with the arguments yargs would give the same line. */
export type FastCommand = { [C in FastName]: { command: C; args: ArgsOf<C> } }[FastName];

/** `util.parseArgs` options for a table entry: numbers are read as strings, then converted. */
function parseArgsOptions(spec: CommandSpec): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(spec.options).map(([name, o]) => [
      name,
      {
        type: o.type === 'boolean' ? 'boolean' : 'string',
        ...(o.type === 'array' ? { multiple: true } : {}),
      },
    ]),
  );
}

/** The table entry of the command `argv` names when the fast path reads it, with its words. */
function fastEntry(argv: readonly string[]): [FastName, CommandSpec, number] | null {
  const two = `${argv[0]} ${argv[1]}`;
  for (const [name, words] of [
    [two, 2],
    [argv[0] ?? '', 1],
  ] as const) {
    const spec = (COMMANDS as Record<string, CommandSpec>)[name];
    if (spec) return spec.fast ? [name as FastName, spec, words] : null;
  }
  return null;
}

/**
 * Reads `argv` (the arguments after the script, e.g. `['apply', 'fix.patch', '--json']`) as the
 * command line of a `fast` command of the option table, the way the yargs definition does.
 * @returns the command and its arguments (option names in camelCase, `--no-watch` as
 *   `watch: false`, numbers as numbers, defaults filled in), or null when yargs must read the
 *   line. Never throws.
 */
export function readFastCommand(argv: readonly string[]): FastCommand | null {
  const entry = fastEntry(argv);
  if (!entry) return null;
  const [name, spec, words] = entry;
  const rest = argv.slice(words);
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
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: parseArgsOptions(spec),
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      tokens: true,
    });
  } catch {
    return null;
  }
  if (spec.positionals.some((p) => p.required)) return null;
  // A list of words (`land s1 s2`) is yargs's to read; a line naming none reads here.
  if (spec.positionals.some((p) => p.variadic) && parsed.positionals.length) return null;
  if (parsed.positionals.length > spec.positionals.length) return null;
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue;
    const option = spec.options[t.name]!;
    // Repeated options become arrays in yargs, which reads lists (`array`) its own way too.
    if (seen.has(t.name) || option.type === 'array') return null;
    seen.add(t.name);
    // A negated value option (`--no-session`) means something else in yargs; a negated flag is
    // read here only where the flag has a default to negate (`--no-watch`).
    if (t.rawName.startsWith('--no-') && !(option.type === 'boolean' && 'default' in option))
      return null;
    // yargs reads '' and a separate lone `-` as an empty value (a usage error there).
    if (t.value === '' || (t.value === '-' && !t.inlineValue)) return null;
  }
  const given = parsed.values as Record<string, string | boolean | undefined>;
  const args: Record<string, unknown> = {};
  spec.positionals.forEach((p, i) => {
    const value = parsed.positionals[i];
    if (value !== undefined) args[p.name] = p.type === 'number' ? Number(value) : value;
  });
  for (const [option, o] of Object.entries(spec.options)) {
    const value = given[option] ?? o.default;
    if (value === undefined) continue;
    // yargs: "Arguments a and b are mutually exclusive".
    const conflicts = typeof o.conflicts === 'string' ? [o.conflicts] : (o.conflicts ?? []);
    if (given[option] !== undefined && conflicts.some((c) => given[c] !== undefined || c in args))
      return null;
    args[camelCase(option)] = o.type === 'number' ? Number(value) : value;
  }
  return { command: name, args } as FastCommand;
}

/**
 * The command line of `hagent run AGENT [--name N] [--base REV] [--session ID] [--no-sandbox] [--json]
 * [-- ARGS…]`:
 * options before `--` are hagent's, everything after it the agent's, untouched.
 * @throws HagentError USAGE for an unknown option, a missing value or a missing agent.
 */
export function parseRunArgs(
  args: readonly string[],
): ArgsOf<'run'> & { agent: string; agentArgs: string[] } {
  const cut = args.indexOf('--');
  const all = cut < 0 ? args : args.slice(0, cut);
  // The one negated flag of run (parseArgs of Node 20 has no negation).
  const own = all.filter((a) => a !== '--no-sandbox');
  const noSandbox = own.length !== all.length;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...own],
      allowPositionals: true,
      strict: true,
      options: parseArgsOptions(COMMANDS.run),
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
  const v = parsed.values as Record<string, string | boolean | undefined>;
  const given: Record<string, string | boolean> = {};
  for (const [key, o] of Object.entries(COMMANDS.run.options)) {
    const value = v[key];
    if (value === '' && o.type === 'string')
      throw new HagentError(
        'USAGE',
        `--${key} needs a value`,
        { option: key },
        `e.g. --${key} ${valueExample(key)}`,
      );
    // `--json` counts when given; the other values as they are.
    if (value !== undefined && value !== false) given[camelCase(key)] = value;
  }
  return {
    agent,
    ...(given as ArgsOf<'run'>),
    ...(noSandbox ? { sandbox: false } : {}),
    agentArgs: cut < 0 ? [] : args.slice(cut + 1),
  };
}
