/**
 * Every command's arguments, in one table: the yargs definition in cli.ts and the fast-path
 * parser in cli-fast-path.ts are both built from it, so an option cannot exist in one and not in
 * the other, and the help text, the usage checks and the argument object handed to the command
 * all come from the same entry. Plain data only: the fast path loads it on every `hagent apply`.
 */

/** One `--option`, in the terms yargs and `util.parseArgs` share. */
export interface OptionSpec {
  /** `array` is a list of strings (`--approve a b`); only yargs reads a line that has one. */
  readonly type: 'boolean' | 'string' | 'number' | 'array';
  readonly description: string;
  /** A one-letter alias (yargs only: the fast path leaves every short flag to yargs). */
  readonly alias?: string;
  readonly default?: boolean | string | number;
  readonly choices?: readonly string[];
  /** Options (or positionals) that cannot be given together with this one. */
  readonly conflicts?: string | readonly string[];
  /** A value for the "needs a value" hint of a string option (default `fix-login`). */
  readonly example?: string;
}

/** One positional argument, in the order of the command line. */
export interface PositionalSpec {
  readonly name: string;
  readonly type: 'string' | 'number';
  readonly description: string;
  /** `<name>` in the usage line instead of `[name]`. */
  readonly required?: boolean;
  /** Takes every remaining word (`[command..]`). */
  readonly variadic?: boolean;
  readonly choices?: readonly string[];
}

/** One command (or subcommand, keyed as `session start`). */
export interface CommandSpec {
  readonly description: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** `[command line, what it does]`, shown under Examples in `--help`. */
  readonly examples: readonly (readonly [string, string])[];
  /**
   * Read by the fast-path parser (cli-fast-path.ts) when the line is plain: the commands an agent
   * runs hundreds of times a session, and those whose speed is measured against git's.
   */
  readonly fast?: boolean;
}

/** A command that only groups subcommands (`hagent session …`). */
export interface GroupSpec {
  readonly description: string;
  /** The usage error when no subcommand is named. */
  readonly demand: string;
}

const JSON_OPTION = {
  json: { type: 'boolean', description: 'print one JSON object on stdout' },
} as const;

const SESSION_OPTION = {
  session: {
    type: 'string',
    description: 'session id (default: the session whose worktree you are in, or the only one)',
  },
} as const;

/** The PATCH_FILE positional shared by apply and check. */
const PATCH_POSITIONAL = {
  name: 'patch',
  type: 'string',
  description: 'patch file, or - for stdin (default: stdin when piped)',
} as const;

const ID_POSITIONAL = { name: 'id', type: 'string', description: 'session id' } as const;

const COMMAND_WORDS = {
  name: 'command',
  type: 'string',
  variadic: true,
  description:
    'the command after --: one word is shell code, several a program and its arguments; read from stdin when none is given',
} as const;

/** The command groups, in the order `hagent --help` lists them among the commands. */
export const GROUPS = {
  session: {
    description: 'start, list, inspect and end agent sessions',
    demand: 'name a session command: start, list, status, update or end',
  },
  config: {
    description: 'show the effective configuration, or the JSON Schema of .hagent/config.json',
    demand: 'name a config command: show or schema',
  },
} as const satisfies Record<string, GroupSpec>;

/** Every command, in the order `hagent --help` lists them. */
export const COMMANDS = {
  'session start': {
    description:
      'create a worktree and branch hagent/<id> for an agent session (a recycled worktree when ' +
      'the pool has one)',
    fast: true,
    positionals: [],
    options: {
      ...JSON_OPTION,
      name: { type: 'string', description: 'session id (default: date + random)' },
      base: {
        type: 'string',
        description: 'commit to start from (default: HEAD)',
        example: 'main',
      },
    },
    examples: [
      ['$0 session start', 'a session from HEAD; lands on your current branch'],
      ['$0 session start --name fix-login --base main --json', 'named, from main, JSON out'],
    ],
  },
  'session list': {
    description: 'list the sessions of this repository',
    positionals: [],
    options: JSON_OPTION,
    examples: [['$0 session list --json', '']],
  },
  'session status': {
    description: 'base, head, patches, changed files and outside edits of a session',
    positionals: [ID_POSITIONAL],
    options: { ...JSON_OPTION, ...SESSION_OPTION },
    examples: [['$0 session status', 'the session you are in']],
  },
  'session end': {
    description:
      'remove a session (refuses to drop work that has not landed); a landed one leaves its ' +
      'clean worktree to the pool',
    positionals: [ID_POSITIONAL],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      force: {
        type: 'boolean',
        description: 'end it even with work that has not landed (its head stays reachable)',
      },
      yes: { type: 'boolean', description: 'do not ask for confirmation with --force' },
    },
    examples: [
      ['$0 session end fix-login', ''],
      [
        '$0 session end fix-login --force --yes',
        'drop unlanded work (kept as refs/hagent/<id>/ended)',
      ],
      [
        'HAGENT_POOL=0 $0 session end fix-login',
        'remove the worktree instead of keeping it for reuse',
      ],
    ],
  },
  'session update': {
    description:
      'merge the current target branch into the session (the way out of a land conflict)',
    positionals: [ID_POSITIONAL],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      rebase: {
        type: 'boolean',
        description:
          "replay the session's patches on the target instead of merging it (refused on a " +
          'conflict)',
      },
      all: {
        type: 'boolean',
        description:
          'every session with a target, in turn, never stopping at a conflict; one line each ' +
          '(exit 1 when any conflicted or was refused)',
        conflicts: ['session', 'id'],
      },
    },
    examples: [
      [
        '$0 session update --all',
        'after a land: bring every session up to its target; conflicts wait in their worktrees',
      ],
      ['$0 session update --all --json', '{ok, sessions: [{session, outcome, …}]}'],
      [
        '$0 session update --rebase',
        'the session on top of the current target, one commit per patch as before',
      ],
      [
        '$0 session update fix-login',
        'merge main into the session; on conflicts, resolve them in its worktree, then hagent sync',
      ],
      ['$0 session update --json', 'the session you are in'],
    ],
  },
  apply: {
    description:
      'apply a patch (Codex *** Begin Patch or unified diff) all-or-nothing, as one commit',
    fast: true,
    positionals: [PATCH_POSITIONAL],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      yes: {
        type: 'boolean',
        description: 'confirm a risky patch (delete, ≥ 6 files, ≥ 400 lines) without asking',
      },
      'dry-run': { type: 'boolean', description: 'check everything, write nothing' },
      base: {
        type: 'string',
        description:
          'the session head the patch was written against: refuse if a target changed since ' +
          '(compare-and-swap)',
        example: 'main',
      },
      watch: {
        type: 'boolean',
        default: true,
        description:
          'watch the targets for outside writes (--no-watch skips it; recorded in the result)',
      },
      'lock-timeout': {
        type: 'number',
        description: 'seconds to wait for another writer of the session (default 10)',
      },
    },
    examples: [
      ['$0 apply fix.patch', 'inside a session worktree'],
      ['cat fix.patch | $0 apply - --json', 'from stdin, JSON result'],
      ['$0 apply fix.patch --session fix-login --dry-run', 'from your checkout, without writing'],
    ],
  },
  check: {
    description:
      'parse and locate a patch without writing: where each chunk would land, at which level',
    fast: true,
    positionals: [PATCH_POSITIONAL],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      dir: {
        type: 'string',
        description: 'check against this directory instead of a session worktree',
        example: '.',
      },
    },
    examples: [
      ['$0 check fix.patch', 'inside a session worktree'],
      ['$0 check fix.patch --dir . --json', 'against any directory'],
    ],
  },
  review: {
    description: "show a session's changes against its base; approve them",
    positionals: [],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      stat: { type: 'boolean', description: 'files and line counts only' },
      patches: { type: 'boolean', description: 'list the applied patches with their text' },
      approve: {
        type: 'array',
        description:
          'approve the head the last review in this terminal showed: every file, or the PATHs given (relative to the current folder; a folder approves its changed files; added to what is approved already)',
      },
      head: {
        type: 'string',
        description:
          'with --approve: the head to approve (for scripts; refused if the session moved past it)',
        example: 'SHA',
      },
    },
    examples: [
      ['$0 review', 'stat, patches and the coloured diff'],
      ['$0 review --approve', 'approve everything at the head this terminal was shown'],
      ['$0 review --approve --head 3f2a9c1', 'a script approves the head it names'],
      ['$0 review --approve src/a.ts src/b.ts', 'approve two files only'],
      ['$0 review --approve docs/', 'then approve the changed files under docs/ too'],
      ['$0 review --approve -- -notes.txt', 'a path that starts with a dash, after --'],
    ],
  },
  land: {
    description:
      'bring the approved changes onto the target branch (squash by default); several sessions land as a train',
    fast: true,
    positionals: [
      {
        name: 'sessions',
        type: 'string',
        variadic: true,
        description:
          'sessions to land in turn (a train): it stops at the first that cannot go, what landed stays',
      },
    ],
    options: {
      ...JSON_OPTION,
      session: { ...SESSION_OPTION.session, conflicts: ['all'] },
      all: {
        type: 'boolean',
        description:
          'land every approved, unlanded session onto this branch, in the order they were approved',
      },
      'dry-run': {
        type: 'boolean',
        description:
          'predict the land (or train) without writing: clean or conflicting, with the paths',
        conflicts: ['undo'],
      },
      gate: {
        type: 'boolean',
        default: true,
        description:
          'run the configured gate ("land": {"gate"}) on the tree that would land (--no-gate skips it; recorded in the land commit)',
      },
      squash: {
        type: 'boolean',
        description: 'one commit on the target (default)',
        conflicts: 'merge',
      },
      merge: { type: 'boolean', description: 'a merge commit keeping the session history' },
      message: {
        type: 'string',
        alias: 'm',
        description: 'commit message',
        example: '"fix: login"',
      },
      yes: {
        type: 'boolean',
        description: 'land the current head even if not approved or changed since approval',
      },
      'allow-denied': {
        type: 'boolean',
        description:
          'land paths the policy protects (.env, .hagent/, symlinks…) that the session changed',
      },
      verify: {
        type: 'boolean',
        default: true,
        description:
          "run your git commit hooks on the land commit (--no-verify skips pre-commit and commit-msg, as git commit does; recorded in the land's message)",
      },
      undo: {
        type: 'boolean',
        description:
          'take the last land off the target (right after a train: the whole train), while the target still points at it',
        conflicts: ['all'],
      },
    },
    examples: [
      ['$0 land --undo', 'take the last land (or train) back; hagent land lands it again'],
      [
        '$0 land s1 s2 s3',
        'land three sessions in turn, each gated, stopping at the first that cannot go',
      ],
      ['$0 land --all --dry-run', 'which approved sessions would land cleanly, in order'],
      ['$0 land --undo --session s2', "take back only s2's land (when it is on top)"],
      ['$0 land', 'squash the approved work onto your branch'],
      [
        '$0 land --allow-denied',
        'you reviewed the protected paths the session changed and want them',
      ],
      ['$0 land --merge -m "feat: login" --json', ''],
      ['$0 land --no-verify', 'skip your pre-commit and commit-msg hooks, as git commit does'],
    ],
  },
  gate: {
    description:
      'run the land gate ("land": {"gate"} of .hagent/config.json) on the tree a land of the session would bring, without landing',
    positionals: [{ ...ID_POSITIONAL, description: 'session id (default: as --session)' }],
    options: {
      ...JSON_OPTION,
      session: { ...SESSION_OPTION.session, conflicts: ['id'] },
      rerun: {
        type: 'boolean',
        description: 'run it even when it passed on the same tree already',
      },
    },
    examples: [
      ['$0 gate', 'the gate on what the session here would land'],
      ['$0 gate s2 --json', 'exit code, output and tree as JSON'],
    ],
  },
  undo: {
    description: 'move the session back N applied patches (undone patches stay reachable)',
    positionals: [{ name: 'steps', type: 'number', description: 'how many patches (default 1)' }],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      redo: { type: 'boolean', description: 'bring undone patches back instead' },
      land: {
        type: 'boolean',
        description: 'undo the last land instead (as hagent land --undo)',
        conflicts: ['redo', 'steps'],
      },
    },
    examples: [
      ['$0 undo', 'drop the last patch'],
      ['$0 undo 2 --json', ''],
      ['$0 undo --redo', 'bring it back'],
    ],
  },
  status: {
    description:
      "the repository's overview: every session's agent, state, commits, files, drift and " +
      'worktree, one line each',
    positionals: [],
    options: {
      ...JSON_OPTION,
      watch: {
        type: 'boolean',
        description:
          'redraw whenever a session, its refs or a target branch changes (Ctrl-C ends it; in a ' +
          'pipe one frame per change, with --json one line of JSON each)',
      },
    },
    examples: [
      ['$0 status', 'one line per session; * marks the one you are in'],
      ['$0 status --json', '{ok, repository, sessions: [{session, agent, state, …}]}'],
      ['$0 status --watch', 'a live view while agents work and you land'],
    ],
  },
  'config show': {
    description: 'effective values and where each came from (default, config, env)',
    positionals: [],
    options: JSON_OPTION,
    examples: [['$0 config show --json', '']],
  },
  'config schema': {
    description: 'print the JSON Schema of .hagent/config.json (for editors)',
    positionals: [],
    options: JSON_OPTION,
    examples: [
      ['$0 config schema > .hagent/config.schema.json', ''],
      ['$0 config schema --json', '{"ok": true, "schema": …}'],
    ],
  },
  sync: {
    description: 'commit edits made in the session worktree outside hagent, marked as outside',
    positionals: [],
    options: { ...JSON_OPTION, ...SESSION_OPTION },
    examples: [['$0 sync', 'make outside edits reviewable and undoable']],
  },
  exec: {
    description:
      'run a guarded shell command in the session worktree; its file changes become one commit',
    positionals: [COMMAND_WORDS],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      timeout: {
        type: 'number',
        description: 'seconds before its whole process group is killed (default 120; 0: no limit)',
      },
      'max-output': {
        type: 'number',
        description: 'bytes kept of stdout and of stderr, head and tail (default 65536)',
      },
    },
    examples: [
      ['$0 exec -- npm test', 'in the session worktree; exit 0 only if the tests passed in time'],
      [
        "$0 exec --json --timeout 600 -- 'npm run fmt && npm test'",
        'one JSON result: exitCode, timedOut, stdout, stderr, changed, commit',
      ],
    ],
  },
  guard: {
    description: "the shell guard's verdict on a command (not run): exit 0 allowed, 1 blocked",
    positionals: [COMMAND_WORDS],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      dir: {
        type: 'string',
        description: 'take this folder as the worktree instead of a session',
        example: '.',
      },
    },
    examples: [
      ['$0 guard -- rm -rf ~', 'blocked: deletes the home folder'],
      ["$0 guard --json -- 'git push --force'", 'the verdict as JSON'],
      ["echo 'npm test' | $0 guard --dir .", 'from stdin, this folder as the worktree'],
    ],
  },
  log: {
    description: 'the journal: every applied and blocked attempt, with its hint',
    positionals: [],
    options: {
      ...JSON_OPTION,
      session: {
        type: 'string',
        description:
          "only this session's entries, ended sessions included (default: every session)",
      },
      failed: { type: 'boolean', description: 'only refused attempts' },
      n: { type: 'number', description: 'only the last N entries' },
    },
    examples: [['$0 log --failed -n 5', 'the last five refusals with their hints']],
  },
  doctor: {
    description:
      'finish interrupted work, remove stray temp files, report refs and worktrees out of step',
    positionals: [],
    options: {
      ...JSON_OPTION,
      session: { type: 'string', description: 'check only this session (default: every session)' },
      'restore-worktree': {
        type: 'boolean',
        description: 'check a session worktree you removed out again from its branch',
      },
    },
    examples: [
      ['$0 doctor', 'check every session'],
      ['$0 doctor --session fix-login --restore-worktree', 'recreate a removed session worktree'],
      ['$0 doctor --session fix-login', 'check one session'],
    ],
  },
  run: {
    description:
      'start (or resume) a session and launch an agent in its worktree, hagent hooks on for ' +
      'this run',
    positionals: [
      {
        name: 'agent',
        type: 'string',
        required: true,
        choices: ['claude', 'codex', 'gemini', 'cursor-agent', 'copilot'],
        description: 'the agent to launch',
      },
    ],
    options: {
      ...JSON_OPTION,
      name: { type: 'string', description: 'session id of the new session' },
      base: { type: 'string', description: 'commit the new session starts from (default: HEAD)' },
      session: { type: 'string', description: 'resume this session instead of starting one' },
      sandbox: {
        type: 'boolean',
        default: true,
        description:
          "the whole agent inside the session's sandbox (default; --no-sandbox: the guard alone)",
      },
    },
    examples: [
      ['$0 run claude', 'a new session; Claude Code starts inside its worktree'],
      ['$0 run codex -- exec "fix the login bug"', 'arguments after -- go to the agent'],
      ['$0 run claude --session fix-login', 'continue a session'],
    ],
  },
  integrate: {
    description:
      "merge hagent's hooks (or --mcp its MCP server) into the agent's configuration (project " +
      'file, or --user)',
    positionals: [
      {
        name: 'agent',
        type: 'string',
        required: true,
        description: 'claude, codex, gemini, cursor or copilot',
      },
    ],
    options: {
      ...JSON_OPTION,
      user: {
        type: 'boolean',
        description: 'the user file in your home folder instead of the project file',
      },
      remove: {
        type: 'boolean',
        description:
          "take hagent's hooks (or with --mcp its server; with --strict its deny rules too) " +
          'out again (yours stay)',
      },
      print: { type: 'boolean', description: 'show what would be merged; write nothing' },
      mcp: {
        type: 'boolean',
        description: "hagent's MCP server (hagent mcp) instead of the hooks",
      },
      strict: {
        type: 'boolean',
        description: "with --mcp: also the agent's own rule that takes its native edit tools away",
      },
    },
    examples: [
      [
        '$0 integrate claude',
        '.claude/settings.json; claude --worktree NAME then makes hagent sessions',
      ],
      ['$0 integrate codex --user', '~/.codex/hooks.json'],
      [
        '$0 integrate claude --mcp --strict',
        '.mcp.json, and .claude/settings.json denying Edit/Write/NotebookEdit',
      ],
      [
        '$0 integrate copilot --mcp --strict --print',
        'the server entry and the flags strict mode needs',
      ],
      ['$0 integrate cursor --remove', ''],
    ],
  },
  hook: {
    description:
      "an agent's hook handler: reads the event JSON on stdin, answers in the agent's contract",
    positionals: [
      {
        name: 'agent',
        type: 'string',
        required: true,
        choices: ['claude', 'codex', 'gemini', 'cursor', 'copilot'],
        description: 'the agent whose hook this is',
      },
      {
        name: 'event',
        type: 'string',
        description: "the event name, when the agent's payload does not carry it (Copilot)",
      },
    ],
    options: {},
    examples: [
      ['$0 hook claude', 'in .claude/settings.json: PreToolUse, PostToolUse, Stop, SessionEnd'],
      ['$0 hook copilot preToolUse', 'in .github/hooks/hagent.json'],
    ],
  },
  mcp: {
    description:
      "serve the session's tools (read, edit, write, apply_patch, undo, …) over MCP on stdio, " +
      'for an agent',
    positionals: [],
    options: {
      ...JSON_OPTION,
      ...SESSION_OPTION,
      new: { type: 'boolean', description: 'start a new session and serve it' },
      name: { type: 'string', description: 'with --new: the session id' },
      base: {
        type: 'string',
        description: 'with --new: the commit to start from (default: HEAD)',
        example: 'main',
      },
    },
    examples: [
      ['$0 mcp', 'serve the session you are in (or the only one)'],
      ['$0 mcp --session fix-login', 'serve a named session'],
      ['$0 mcp --new --name fix-login', 'start a session and serve it'],
    ],
  },
  gc: {
    description:
      'drop what ended sessions left behind (refs, agent folders) and worktree folders of repositories that are gone',
    positionals: [
      {
        name: 'names',
        type: 'string',
        variadic: true,
        description:
          'gone sessions to drop whole, or worktree folders of a repository that may only be unmounted',
      },
    ],
    options: {
      ...JSON_OPTION,
      'dry-run': { type: 'boolean', description: 'list what would be dropped, drop nothing' },
      yes: { type: 'boolean', description: 'drop without asking (needed without a terminal)' },
      'older-than': {
        type: 'number',
        description:
          'also drop the kept refs of gone sessions (ended, undone, dropped, …) whose commit is older than DAYS',
      },
    },
    examples: [
      ['$0 gc --dry-run', 'what would be dropped, and what is kept and why'],
      ['$0 gc --yes --json', 'drop it without asking'],
      ['$0 gc --older-than 30', 'also the ended work of sessions gone for a month'],
    ],
  },
  demo: {
    description: 'run the whole cycle on a sample project in a temp folder, step by step',
    positionals: [],
    options: { ...JSON_OPTION, keep: { type: 'boolean', description: 'keep the demo folder' } },
    examples: [
      ['$0 demo', ''],
      ['$0 demo --json', 'each step with its exit status, as one JSON object'],
    ],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** `dry-run` → `dryRun`, the key yargs (and the fast path) give the command. */
type CamelCase<S extends string> = S extends `${infer H}-${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S;

type ValueOf<T> = T extends 'boolean'
  ? boolean
  : T extends 'number'
    ? number
    : T extends 'array'
      ? string[]
      : string;

type Spec<C extends CommandName> = (typeof COMMANDS)[C];

/** The argument object a command's handler receives for command `C`, derived from its entry. */
export type ArgsOf<C extends CommandName> = {
  -readonly [K in keyof Spec<C>['options'] & string as CamelCase<K>]?: ValueOf<
    Spec<C>['options'][K] extends { type: infer T } ? T : never
  >;
} & {
  -readonly [P in Spec<C>['positionals'][number] as P['name']]?: P extends { variadic: true }
    ? string[]
    : ValueOf<P['type']>;
};

/** `dry-run` → `dryRun` at run time. */
export function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The example value of a string option's "needs a value" hint. */
export function valueExample(name: string): string {
  for (const spec of Object.values(COMMANDS) as CommandSpec[]) {
    const example = spec.options[name]?.example;
    if (example !== undefined) return example;
  }
  return name === 'message' ? '"fix: login"' : 'fix-login';
}

/**
 * The options that take a single value, across every command (`name`, `base`, `session`, …):
 * given bare (`--name` at the end, or `--name --`) yargs makes them '', given twice an array.
 */
export const VALUE_OPTIONS: readonly string[] = [
  ...new Set(
    (Object.values(COMMANDS) as CommandSpec[]).flatMap((c) =>
      Object.entries(c.options)
        .filter(([, o]) => o.type === 'string')
        .map(([name]) => name),
    ),
  ),
];
