#!/usr/bin/env node
/**
 * hagent's command line: yargs wiring, lazy import of each command, and the only place where
 * errors become exit statuses (patch-language.md §6: 0 ok, 1 refused, 2 usage, 3 internal).
 */
import { readFileSync, statSync } from 'node:fs';
import type { Argv, Options } from 'yargs';
import { readFastCommand } from './cli-fast-path.js';
import {
  COMMANDS,
  GROUPS,
  VALUE_OPTIONS,
  valueExample,
  type ArgsOf,
  type CommandName,
  type CommandSpec,
  type OptionSpec,
} from './commands/options.js';
import { commandDocsLink } from './commands/docs.js';
import { HagentError, toHagentError } from './errors.js';
import { GUARD_RULE_NAMES } from './guard/rules.js';
import { printError, processIo, type Io } from './output/index.js';
import { trace } from './trace/index.js';

trace('cli: loaded');
process.once('exit', () => trace('exit'));

const io: Io = processIo();

/** `--json` among the options (after `--` it is a path, as in `review --approve -- --json`). */
const beforeDashes =
  process.argv.indexOf('--') < 0 ? process.argv : process.argv.slice(0, process.argv.indexOf('--'));
const wantsJson = beforeDashes.includes('--json');

/** hagent's top-level commands, for the suggestion of an unknown one. */
const TOP_COMMANDS = [...new Set(Object.keys(COMMANDS).map((name) => name.split(' ')[0]!))];

/** Levenshtein distance of two short words (the classic two-row dynamic programme). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length]!;
}

/** Removed under the shell, the current folder fails every call with a bare ENOENT: named here first. @throws HagentError IO_FAILED. */
function assertCurrentFolder(): void {
  if (!statSync(io.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new HagentError(
      'IO_FAILED',
      `the current folder ${io.cwd} does not exist`,
      { path: io.cwd, errno: 'ENOENT' },
      'cd into a folder that exists (it was removed or moved), then run the command again',
    );
}

/** A command's run function, as its module exports it. */
type Runner = (argv: never, io: Io) => Promise<number>;

/**
 * Runs a lazily imported command and records its exit status. A string option given bare (`--name`
 * at the end, or `--name --`, which yargs makes '') or twice (an array) is a usage error here.
 * @throws HagentError USAGE.
 */
/** The commands that read the words after `--`: a command line, or paths to approve. */
const TAKES_WORDS_AFTER_DASHES = new Set<CommandName>(['exec', 'guard', 'review']);

function handler(name: CommandName, load: () => Promise<Runner>) {
  return async (argv: Record<string, unknown>) => {
    for (const key of VALUE_OPTIONS) {
      const value = argv[key];
      const example = `e.g. --${key} ${valueExample(key)}`;
      // '' (bare, or a lone -) and false (--no-<key>) carry no value; an array means it was given twice.
      if (value === '' || typeof value === 'boolean')
        throw new HagentError('USAGE', `--${key} needs a value`, { option: key }, example);
      if (Array.isArray(value))
        throw new HagentError(
          'USAGE',
          `--${key} is given more than once`,
          { option: key },
          `give it once: ${example}`,
        );
    }
    // yargs leaves the words after `--` in `_`, after the command's own words; a command that
    // does not read them must not run as if they were absent (`session end -- typo` would end
    // the default session).
    const extra = ((argv._ as unknown[] | undefined) ?? []).slice(name.split(' ').length);
    if (extra.length && !TAKES_WORDS_AFTER_DASHES.has(name))
      throw new HagentError(
        'USAGE',
        `hagent ${name} takes no words after --: ${extra.join(' ')}`,
        { words: extra.map(String) },
        `give them before --, as its arguments (hagent ${name} --help shows them)`,
      );
    trace('cli: arguments parsed');
    const run = await load();
    trace('cli: command loaded');
    process.exitCode = await run(argv as never, io);
  };
}

/** Where each command of the option table is implemented, imported only when it runs. */
const RUNNERS: Record<CommandName, () => Promise<Runner>> = {
  'session start': async () => (await import('./commands/session.js')).runStart,
  'session list': async () => (await import('./commands/session.js')).runList,
  'session status': async () => (await import('./commands/session.js')).runStatus,
  'session end': async () => (await import('./commands/session.js')).runEnd,
  'session update': async () => (await import('./commands/session.js')).runUpdate,
  apply: async () => (await import('./commands/apply.js')).runApply,
  check: async () => (await import('./commands/check.js')).runCheck,
  review: async () => (await import('./commands/review.js')).runReview,
  land: async () => (await import('./commands/land.js')).runLand,
  gate: async () => (await import('./commands/land.js')).runGate,
  status: async () => (await import('./commands/status.js')).runStatus,
  undo: async () => (await import('./commands/undo.js')).runUndo,
  'config show': async () => (await import('./commands/config.js')).runConfigShow,
  'config schema': async () => (await import('./commands/config.js')).runConfigSchema,
  sync: async () => (await import('./commands/maintenance.js')).runSync,
  exec: async () => (await import('./commands/exec.js')).runExec,
  guard: async () => (await import('./commands/guard.js')).runGuard,
  log: async () => (await import('./commands/log.js')).runLog,
  doctor: async () => (await import('./commands/maintenance.js')).runDoctorCommand,
  run: async () => {
    const { runRun } = await import('./commands/run.js');
    return (a: ArgsOf<'run'>, cliIo: Io) =>
      runRun({ ...a, agent: a.agent ?? '', agentArgs: [] }, cliIo);
  },
  integrate: async () => (await import('./commands/integrate.js')).runIntegrate,
  hook: async () => (await import('./commands/hook.js')).runHook,
  mcp: async () => {
    const { runMcp } = await import('./commands/mcp.js');
    return (argv: Parameters<typeof runMcp>[0], cliIo: Io) => runMcp(argv, cliIo, packageVersion());
  },
  demo: async () => (await import('./commands/demo.js')).runDemo,
  gc: async () => (await import('./commands/gc.js')).runGc,
};

/** Text after a command's examples in its `--help`. */
const EPILOGS: Partial<Record<CommandName, () => string>> = {
  guard: () =>
    `rules (relax one per repository with .hagent/config.json {"guard": {"allow": [RULE]}}):\n  ${GUARD_RULE_NAMES.join(', ')}`,
};

/** An option of the table in yargs' terms (an `array` is a list of strings). */
function yargsOption(o: OptionSpec): Options {
  return {
    type: o.type,
    describe: o.description,
    ...(o.type === 'array' ? { string: true } : {}),
    ...(o.alias !== undefined ? { alias: o.alias } : {}),
    ...(o.default !== undefined ? { default: o.default } : {}),
    ...(o.choices !== undefined ? { choices: [...o.choices] } : {}),
    ...(o.conflicts !== undefined ? { conflicts: o.conflicts as string | string[] } : {}),
  };
}

/** Adds the command `name` of the option table to `y`, as the word `word` (`start` in session). */
function defineCommand(y: Argv, name: CommandName, word: string): Argv {
  const spec: CommandSpec = COMMANDS[name];
  const usage = [
    word,
    ...spec.positionals.map((p) =>
      p.required ? `<${p.name}>` : `[${p.name}${p.variadic ? '..' : ''}]`,
    ),
  ].join(' ');
  return y.command(
    usage,
    spec.description,
    (b) => {
      for (const p of spec.positionals)
        b = b.positional(p.name, {
          type: p.type,
          ...(p.variadic ? { array: true } : {}),
          ...(p.choices !== undefined ? { choices: [...p.choices] } : {}),
          describe: p.description,
        });
      b = b.options(
        Object.fromEntries(Object.entries(spec.options).map(([k, o]) => [k, yargsOption(o)])),
      );
      for (const [line, what] of spec.examples) b = b.example(line, what);
      const docs = `Docs: ${commandDocsLink(name)}`;
      const epilog = EPILOGS[name];
      return b.epilog(epilog ? `${epilog()}\n\n${docs}` : docs);
    },
    handler(name, RUNNERS[name]),
  );
}

/** Adds every command of the option table to `cli`, subcommands under their group. */
function defineCommands(cli: Argv): Argv {
  const names = Object.keys(COMMANDS) as CommandName[];
  for (const name of names) {
    const [word, sub] = name.split(' ') as [string, string | undefined];
    if (sub === undefined) {
      cli = defineCommand(cli, name, word);
      continue;
    }
    if (names.find((n) => n.startsWith(`${word} `)) !== name) continue; // the group is defined
    const group = GROUPS[word as keyof typeof GROUPS];
    cli = cli.command(word, group.description, (y) => {
      for (const n of names)
        if (n.startsWith(`${word} `)) y = defineCommand(y, n, n.slice(word.length + 1));
      return y.demandCommand(1, group.demand);
    });
  }
  return cli;
}

/** hagent's version from its package.json, one folder above this file (src/ or dist/). */
function packageVersion(): string {
  try {
    return (
      (
        JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
          version?: string;
        }
      ).version ?? 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

/**
 * yargs renders the whole help text (the display width of every line of it) each time a command
 * handler starts, in case the handler asks for it later. hagent's handlers never do (`--help` and
 * usage errors render it afresh), and on every `hagent apply` that rendering cost 30–70 ms of CPU.
 * The hook is yargs-internal, so this only takes effect when it is found where expected.
 */
function skipHelpRendering(cli: Argv): void {
  const internal = (
    cli as unknown as {
      getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } };
    }
  ).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function')
    usage.cacheHelpMessage = () => undefined;
}

/**
 * The command lines that never reach an argument parser: the apply_patch bin, the plain hook line
 * (on every tool call of an agent) and `hagent run` (whose words after `--` are the agent's).
 * @returns whether the line was run here.
 */
async function runWithoutParser(argv: readonly string[]): Promise<boolean> {
  // The apply_patch bin: the same bundle, started by its own launcher (scripts/build.mjs).
  if ((globalThis as { hagentEntry?: string }).hagentEntry === 'apply_patch') {
    const { runApplyPatchBin } = await import('./commands/apply-patch-bin.js');
    process.exitCode = await runApplyPatchBin(argv, io);
    return true;
  }
  // Hooks run on every tool call of an agent: no yargs on their way (agents/ answers usage errors).
  if (
    argv[0] === 'hook' &&
    (argv.length === 2 || argv.length === 3) &&
    !argv.slice(1).some((a) => a.startsWith('-'))
  ) {
    const { runHook } = await import('./commands/hook.js');
    process.exitCode = await runHook(
      { agent: argv[1]!, ...(argv[2] !== undefined ? { event: argv[2] } : {}) },
      io,
    );
    return true;
  }
  // `hagent run`: everything after `--` belongs to the agent, so the line is split before parsing.
  if (
    argv[0] === 'run' &&
    !argv
      .slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length)
      .some((a) => a === '--help' || a === '-h')
  ) {
    const { parseRunArgs } = await import('./cli-fast-path.js');
    const { runRun } = await import('./commands/run.js');
    process.exitCode = await runRun(parseRunArgs(argv.slice(1)), io);
    return true;
  }
  return false;
}

/**
 * Reads the line with yargs (help, usage errors, every command the fast path does not take) and
 * runs its command.
 * @throws HagentError USAGE for a line yargs refuses, an unknown command named as such.
 */
async function runWithYargs(argv: readonly string[]): Promise<void> {
  const { default: yargs } = await import('yargs');
  const top = yargs(process.argv.slice(2))
    .scriptName('hagent')
    .usage(
      '$0 <command> [options]\n\nMakes coding agents safe on a real repository: a worktree per session, all-or-nothing patches, a commit per patch, review, land and undo.',
    );
  const cli = defineCommands(top)
    .demandCommand(1, 'name a command (hagent --help lists them)')
    .strict()
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((msg, err) => {
      if (err) throw err;
      // An unknown first word is an unknown command: named so, with a suggestion only when it is a near miss.
      const first = argv.find((a) => !a.startsWith('-'));
      if (
        first !== undefined &&
        argv[0] === first &&
        /^Unknown arguments?: /.test(msg) &&
        !TOP_COMMANDS.includes(first)
      ) {
        const near = TOP_COMMANDS.filter(
          (c) => editDistance(c, first) <= Math.min(2, Math.floor(c.length / 3)),
        );
        throw new HagentError(
          'USAGE',
          `unknown command ${JSON.stringify(first)}`,
          { command: first },
          `${near.length ? `did you mean ${near.map((c) => `hagent ${c}`).join(' or ')}? ` : ''}hagent --help lists the commands`,
        );
      }
      throw new HagentError('USAGE', msg, {}, 'hagent --help lists the commands and their options');
    });
  skipHelpRendering(cli);
  await cli.parseAsync();
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (await runWithoutParser(argv)) return;
  assertCurrentFolder(); // before yargs, which reads process.cwd() too
  const fast = readFastCommand(argv);
  if (!fast) return runWithYargs(argv);
  trace('cli: arguments parsed');
  const run = await RUNNERS[fast.command]();
  trace('cli: command loaded');
  process.exitCode = await run(fast.args as never, io);
}

main().catch((error: unknown) => {
  const e = toHagentError(error);
  if (
    e.code === 'USAGE' &&
    !wantsJson &&
    (globalThis as { hagentEntry?: string }).hagentEntry === 'apply_patch'
  ) {
    process.stderr.write(`Usage: ${e.hint ?? ''}\nerror[USAGE]: ${e.message}\n`);
  } else if (e.code === 'USAGE' && !wantsJson) {
    process.stderr.write(`error[USAGE]: ${e.message}\n  hint: ${e.hint ?? 'hagent --help'}\n`);
  } else {
    printError(io, e, wantsJson);
  }
  process.exitCode = e.exitStatus;
});
