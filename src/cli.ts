#!/usr/bin/env node
/**
 * hagent's command line: yargs wiring, lazy import of each command, and the only place where
 * errors become exit statuses (patch-language.md §6: 0 ok, 1 refused, 2 usage, 3 internal).
 */
import { readFileSync, statSync } from 'node:fs';
import type { Argv } from 'yargs';
import { readFastCommand } from './cli-fast-path.js';
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
const TOP_COMMANDS = [
  'session',
  'apply',
  'check',
  'review',
  'land',
  'undo',
  'config',
  'sync',
  'exec',
  'guard',
  'log',
  'doctor',
  'run',
  'integrate',
  'hook',
  'mcp',
  'demo',
];

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

/** Runs a lazily imported command and records its exit status. */
/** Options that take a value: given bare (`--name` at the end, or `--name --`) yargs makes them ''. */
const VALUE_OPTIONS = ['name', 'base', 'session', 'message', 'dir'] as const;

function handler<A>(load: () => Promise<(argv: A, io: Io) => Promise<number>>) {
  return async (argv: A) => {
    for (const key of VALUE_OPTIONS) {
      const value = (argv as Record<string, unknown>)[key];
      const example = `e.g. --${key} ${key === 'message' ? '"fix: login"' : key === 'base' ? 'main' : key === 'dir' ? '.' : 'fix-login'}`;
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
    trace('cli: arguments parsed');
    const run = await load();
    trace('cli: command loaded');
    process.exitCode = await run(argv, io);
  };
}

const json = { json: { type: 'boolean', describe: 'print one JSON object on stdout' } } as const;
/** The PATCH_FILE positional shared by apply and check. */
const patchArg = {
  type: 'string',
  describe: 'patch file, or - for stdin (default: stdin when piped)',
} as const;
const sessionOpt = {
  session: {
    type: 'string',
    describe: 'session id (default: the session whose worktree you are in, or the only one)',
  },
} as const;

function sessionCommands(y: Argv): Argv {
  return y
    .command(
      'start',
      'create a worktree and branch hagent/<id> for an agent session (a recycled worktree when the pool has one)',
      (b) =>
        b
          .options({
            ...json,
            name: { type: 'string', describe: 'session id (default: date + random)' },
            base: { type: 'string', describe: 'commit to start from (default: HEAD)' },
          })
          .example('$0 session start', 'a session from HEAD; lands on your current branch')
          .example(
            '$0 session start --name fix-login --base main --json',
            'named, from main, JSON out',
          ),
      handler(async () => (await import('./commands/session.js')).runStart),
    )
    .command(
      'list',
      'list the sessions of this repository',
      (b) => b.options(json).example('$0 session list --json', ''),
      handler(async () => (await import('./commands/session.js')).runList),
    )
    .command(
      'status [id]',
      'base, head, patches, changed files and outside edits of a session',
      (b) =>
        b
          .positional('id', { type: 'string', describe: 'session id' })
          .options({ ...json, ...sessionOpt })
          .example('$0 session status', 'the session you are in'),
      handler(async () => (await import('./commands/session.js')).runStatus),
    )
    .command(
      'end [id]',
      'remove a session (refuses to drop work that has not landed); a landed one leaves its clean worktree to the pool',
      (b) =>
        b
          .positional('id', { type: 'string', describe: 'session id' })
          .options({
            ...json,
            ...sessionOpt,
            force: {
              type: 'boolean',
              describe: 'end it even with work that has not landed (its head stays reachable)',
            },
            yes: { type: 'boolean', describe: 'do not ask for confirmation with --force' },
          })
          .example('$0 session end fix-login', '')
          .example(
            '$0 session end fix-login --force --yes',
            'drop unlanded work (kept as refs/hagent/<id>/ended)',
          )
          .example(
            'HAGENT_POOL=0 $0 session end fix-login',
            'remove the worktree instead of keeping it for reuse',
          ),
      handler(async () => (await import('./commands/session.js')).runEnd),
    )
    .command(
      'update [id]',
      'merge the current target branch into the session (the way out of a land conflict)',
      (b) =>
        b
          .positional('id', { type: 'string', describe: 'session id' })
          .options({
            ...json,
            ...sessionOpt,
            rebase: {
              type: 'boolean',
              describe:
                "replay the session's patches on the target instead of merging it (refused on a conflict)",
            },
          })
          .example(
            '$0 session update --rebase',
            'the session on top of the current target, one commit per patch as before',
          )
          .example(
            '$0 session update fix-login',
            'merge main into the session; on conflicts, resolve them in its worktree, then hagent sync',
          )
          .example('$0 session update --json', 'the session you are in'),
      handler(async () => (await import('./commands/session.js')).runUpdate),
    )
    .demandCommand(1, 'name a session command: start, list, status, update or end');
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

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // The apply_patch bin: the same bundle, started by its own launcher (scripts/build.mjs).
  if ((globalThis as { hagentEntry?: string }).hagentEntry === 'apply_patch') {
    const { runApplyPatchBin } = await import('./commands/apply-patch-bin.js');
    process.exitCode = await runApplyPatchBin(argv, io);
    return;
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
    return;
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
    return;
  }
  assertCurrentFolder(); // before yargs, which reads process.cwd() too
  const fast = readFastCommand(argv);
  if (fast) {
    trace('cli: arguments parsed');
    if (fast.command === 'apply') {
      const { runApply } = await import('./commands/apply.js');
      trace('cli: command loaded');
      process.exitCode = await runApply(fast.args, io);
    } else if (fast.command === 'session start') {
      const { runStart } = await import('./commands/session.js');
      trace('cli: command loaded');
      process.exitCode = await runStart(fast.args, io);
    } else if (fast.command === 'land') {
      const { runLand } = await import('./commands/land.js');
      trace('cli: command loaded');
      process.exitCode = await runLand(fast.args, io);
    } else {
      const { runCheck } = await import('./commands/check.js');
      trace('cli: command loaded');
      process.exitCode = await runCheck(fast.args, io);
    }
    return;
  }
  const { default: yargs } = await import('yargs');
  const cli = yargs(process.argv.slice(2))
    .scriptName('hagent')
    .usage(
      '$0 <command> [options]\n\nMakes coding agents safe on a real repository: a worktree per session, all-or-nothing patches, a commit per patch, review, land and undo.',
    )
    .command('session', 'start, list, inspect and end agent sessions', sessionCommands)
    .command(
      'apply [patch]',
      'apply a patch (Codex *** Begin Patch or unified diff) all-or-nothing, as one commit',
      (b) =>
        b
          .positional('patch', patchArg)
          .options({
            ...json,
            ...sessionOpt,
            yes: {
              type: 'boolean',
              describe: 'confirm a risky patch (delete, ≥ 6 files, ≥ 400 lines) without asking',
            },
            'dry-run': { type: 'boolean', describe: 'check everything, write nothing' },
            base: {
              type: 'string',
              describe:
                'the session head the patch was written against: refuse if a target changed since (compare-and-swap)',
            },
            watch: {
              type: 'boolean',
              default: true,
              describe:
                'watch the targets for outside writes (--no-watch skips it; recorded in the result)',
            },
            'lock-timeout': {
              type: 'number',
              describe: 'seconds to wait for another writer of the session (default 10)',
            },
          })
          .example('$0 apply fix.patch', 'inside a session worktree')
          .example('cat fix.patch | $0 apply - --json', 'from stdin, JSON result')
          .example(
            '$0 apply fix.patch --session fix-login --dry-run',
            'from your checkout, without writing',
          ),
      handler(async () => (await import('./commands/apply.js')).runApply),
    )
    .command(
      'check [patch]',
      'parse and locate a patch without writing: where each chunk would land, at which level',
      (b) =>
        b
          .positional('patch', patchArg)
          .options({
            ...json,
            ...sessionOpt,
            dir: {
              type: 'string',
              describe: 'check against this directory instead of a session worktree',
            },
          })
          .example('$0 check fix.patch', 'inside a session worktree')
          .example('$0 check fix.patch --dir . --json', 'against any directory'),
      handler(async () => (await import('./commands/check.js')).runCheck),
    )
    .command(
      'review',
      "show a session's changes against its base; approve them",
      (b) =>
        b
          .options({
            ...json,
            ...sessionOpt,
            stat: { type: 'boolean', describe: 'files and line counts only' },
            patches: { type: 'boolean', describe: 'list the applied patches with their text' },
            approve: {
              type: 'array',
              string: true,
              describe: 'approve the current head: every file, or the PATHs given',
            },
          })
          .example('$0 review', 'stat, patches and the coloured diff')
          .example('$0 review --approve', 'approve everything at the current head')
          .example('$0 review --approve src/a.ts src/b.ts', 'approve two files only')
          .example('$0 review --approve -- -notes.txt', 'a path that starts with a dash, after --'),
      handler(async () => (await import('./commands/review.js')).runReview),
    )
    .command(
      'land',
      'bring the approved changes onto the target branch (squash by default)',
      (b) =>
        b
          .options({
            ...json,
            ...sessionOpt,
            squash: {
              type: 'boolean',
              describe: 'one commit on the target (default)',
              conflicts: 'merge',
            },
            merge: { type: 'boolean', describe: 'a merge commit keeping the session history' },
            message: { type: 'string', alias: 'm', describe: 'commit message' },
            yes: {
              type: 'boolean',
              describe: 'land the current head even if not approved or changed since approval',
            },
            'allow-denied': {
              type: 'boolean',
              describe:
                'land paths the policy protects (.env, .hagent/, symlinks…) that the session changed',
            },
            undo: {
              type: 'boolean',
              describe:
                'take the last land of the session off the target (while the target still points at it)',
            },
          })
          .example('$0 land --undo', 'take the last land back; hagent land lands it again')
          .example('$0 land', 'squash the approved work onto your branch')
          .example(
            '$0 land --allow-denied',
            'you reviewed the protected paths the session changed and want them',
          )
          .example('$0 land --merge -m "feat: login" --json', ''),
      handler(async () => (await import('./commands/land.js')).runLand),
    )
    .command(
      'undo [steps]',
      'move the session back N applied patches (undone patches stay reachable)',
      (b) =>
        b
          .positional('steps', { type: 'number', describe: 'how many patches (default 1)' })
          .options({
            ...json,
            ...sessionOpt,
            redo: { type: 'boolean', describe: 'bring undone patches back instead' },
            land: {
              type: 'boolean',
              describe: 'undo the last land instead (as hagent land --undo)',
              conflicts: ['redo', 'steps'],
            },
          })
          .example('$0 undo', 'drop the last patch')
          .example('$0 undo 2 --json', '')
          .example('$0 undo --redo', 'bring it back'),
      handler(async () => (await import('./commands/undo.js')).runUndo),
    )
    .command(
      'config',
      'show the effective configuration, or the JSON Schema of .hagent/config.json',
      (y) =>
        y
          .command(
            'show',
            'effective values and where each came from (default, config, env)',
            (b) => b.options(json).example('$0 config show --json', ''),
            handler(async () => (await import('./commands/config.js')).runConfigShow),
          )
          .command(
            'schema',
            'print the JSON Schema of .hagent/config.json (for editors)',
            (b) =>
              b
                .options(json)
                .example('$0 config schema > .hagent/config.schema.json', '')
                .example('$0 config schema --json', '{"ok": true, "schema": …}'),
            handler(async () => (await import('./commands/config.js')).runConfigSchema),
          )
          .demandCommand(1, 'name a config command: show or schema'),
    )
    .command(
      'sync',
      'commit edits made in the session worktree outside hagent, marked as outside',
      (b) =>
        b
          .options({ ...json, ...sessionOpt })
          .example('$0 sync', 'make outside edits reviewable and undoable'),
      handler(async () => (await import('./commands/maintenance.js')).runSync),
    )
    .command(
      'exec [command..]',
      'run a guarded shell command in the session worktree; its file changes become one commit',
      (b) =>
        b
          .positional('command', {
            type: 'string',
            array: true,
            describe:
              'the command, after -- (joined by blanks); read from stdin when none is given',
          })
          .options({
            ...json,
            ...sessionOpt,
            timeout: {
              type: 'number',
              describe:
                'seconds before its whole process group is killed (default 120; 0: no limit)',
            },
            'max-output': {
              type: 'number',
              describe: 'bytes kept of stdout and of stderr, head and tail (default 65536)',
            },
          })
          .example(
            '$0 exec -- npm test',
            'in the session worktree; exit 0 only if the tests passed in time',
          )
          .example(
            "$0 exec --json --timeout 600 -- 'npm run fmt && npm test'",
            'one JSON result: exitCode, timedOut, stdout, stderr, changed, commit',
          ),
      handler(async () => (await import('./commands/exec.js')).runExec),
    )
    .command(
      'guard [command..]',
      "the shell guard's verdict on a command (not run): exit 0 allowed, 1 blocked",
      (b) =>
        b
          .positional('command', {
            type: 'string',
            array: true,
            describe:
              'the command, after -- (joined by blanks); read from stdin when none is given',
          })
          .options({
            ...json,
            ...sessionOpt,
            dir: {
              type: 'string',
              describe: 'take this folder as the worktree instead of a session',
            },
          })
          .example('$0 guard -- rm -rf ~', 'blocked: deletes the home folder')
          .example("$0 guard --json -- 'git push --force'", 'the verdict as JSON')
          .example("echo 'npm test' | $0 guard --dir .", 'from stdin, this folder as the worktree')
          .epilog(
            `rules (relax one per repository with .hagent/config.json {"guard": {"allow": [RULE]}}):\n  ${GUARD_RULE_NAMES.join(', ')}`,
          ),
      handler(async () => (await import('./commands/guard.js')).runGuard),
    )
    .command(
      'log',
      'the journal: every applied and blocked attempt, with its hint',
      (b) =>
        b
          .options({
            ...json,
            session: {
              type: 'string',
              describe:
                "only this session's entries, ended sessions included (default: every session)",
            },
            failed: { type: 'boolean', describe: 'only refused attempts' },
            n: { type: 'number', describe: 'only the last N entries' },
          })
          .example('$0 log --failed -n 5', 'the last five refusals with their hints'),
      handler(async () => (await import('./commands/log.js')).runLog),
    )
    .command(
      'doctor',
      'finish interrupted work, remove stray temp files, report refs and worktrees out of step',
      (b) => b.options({ ...json, ...sessionOpt }).example('$0 doctor', 'check every session'),
      handler(async () => (await import('./commands/maintenance.js')).runDoctorCommand),
    )
    .command(
      'run <agent>',
      'start (or resume) a session and launch an agent in its worktree, hagent hooks on for this run',
      (b) =>
        b
          .positional('agent', {
            type: 'string',
            choices: ['claude', 'codex', 'gemini', 'cursor-agent', 'copilot'],
            describe: 'the agent to launch',
          })
          .options({
            ...json,
            name: { type: 'string', describe: 'session id of the new session' },
            base: {
              type: 'string',
              describe: 'commit the new session starts from (default: HEAD)',
            },
            session: { type: 'string', describe: 'resume this session instead of starting one' },
          })
          .example('$0 run claude', 'a new session; Claude Code starts inside its worktree')
          .example('$0 run codex -- exec "fix the login bug"', 'arguments after -- go to the agent')
          .example('$0 run claude --session fix-login', 'continue a session'),
      handler(async () => {
        const { runRun } = await import('./commands/run.js');
        return (
          a: { agent?: string; name?: string; base?: string; session?: string; json?: boolean },
          cliIo: Io,
        ) => runRun({ ...a, agent: a.agent ?? '', agentArgs: [] }, cliIo);
      }),
    )
    .command(
      'integrate <agent>',
      "merge hagent's hooks (or --mcp its MCP server) into the agent's configuration (project file, or --user)",
      (b) =>
        b
          .positional('agent', {
            type: 'string',
            describe: 'claude, codex, gemini, cursor or copilot',
          })
          .options({
            ...json,
            user: {
              type: 'boolean',
              describe: 'the user file in your home folder instead of the project file',
            },
            remove: {
              type: 'boolean',
              describe:
                "take hagent's hooks (or with --mcp its server; with --strict its deny rules too) out again (yours stay)",
            },
            print: { type: 'boolean', describe: 'show what would be merged; write nothing' },
            mcp: {
              type: 'boolean',
              describe: "hagent's MCP server (hagent mcp) instead of the hooks",
            },
            strict: {
              type: 'boolean',
              describe:
                "with --mcp: also the agent's own rule that takes its native edit tools away",
            },
          })
          .example(
            '$0 integrate claude',
            '.claude/settings.json; claude --worktree NAME then makes hagent sessions',
          )
          .example('$0 integrate codex --user', '~/.codex/hooks.json')
          .example(
            '$0 integrate claude --mcp --strict',
            '.mcp.json, and .claude/settings.json denying Edit/Write/NotebookEdit',
          )
          .example(
            '$0 integrate copilot --mcp --strict --print',
            'the server entry and the flags strict mode needs',
          )
          .example('$0 integrate cursor --remove', ''),
      handler(async () => (await import('./commands/integrate.js')).runIntegrate),
    )
    .command(
      'hook <agent> [event]',
      "an agent's hook handler: reads the event JSON on stdin, answers in the agent's contract",
      (b) =>
        b
          .positional('agent', {
            type: 'string',
            choices: ['claude', 'codex', 'gemini', 'cursor', 'copilot'],
            describe: 'the agent whose hook this is',
          })
          .positional('event', {
            type: 'string',
            describe: "the event name, when the agent's payload does not carry it (Copilot)",
          })
          .example(
            '$0 hook claude',
            'in .claude/settings.json: PreToolUse, PostToolUse, Stop, SessionEnd',
          )
          .example('$0 hook copilot preToolUse', 'in .github/hooks/hagent.json'),
      handler(async () => (await import('./commands/hook.js')).runHook),
    )
    .command(
      'mcp',
      "serve the session's tools (read, edit, write, apply_patch, undo, …) over MCP on stdio, for an agent",
      (b) =>
        b
          .options({
            ...json,
            ...sessionOpt,
            new: { type: 'boolean', describe: 'start a new session and serve it' },
            name: { type: 'string', describe: 'with --new: the session id' },
            base: {
              type: 'string',
              describe: 'with --new: the commit to start from (default: HEAD)',
            },
          })
          .example('$0 mcp', 'serve the session you are in (or the only one)')
          .example('$0 mcp --session fix-login', 'serve a named session')
          .example('$0 mcp --new --name fix-login', 'start a session and serve it'),
      handler(async () => {
        const { runMcp } = await import('./commands/mcp.js');
        return (argv: Parameters<typeof runMcp>[0], cliIo: Io) =>
          runMcp(argv, cliIo, packageVersion());
      }),
    )
    .command(
      'demo',
      'run the whole cycle on a sample project in a temp folder, step by step',
      (b) =>
        b
          .options({ ...json, keep: { type: 'boolean', describe: 'keep the demo folder' } })
          .example('$0 demo', '')
          .example('$0 demo --json', 'each step with its exit status, as one JSON object'),
      handler(async () => (await import('./commands/demo.js')).runDemo),
    )
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
