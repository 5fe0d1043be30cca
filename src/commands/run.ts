/**
 * `hagent run <agent> [--name N] [--base REV] [--session ID] [--json] [-- AGENT_ARGS…]`: the agent in
 * a session worktree with hagent's hooks for this run only; exits with the agent's status.
 */
import { LAUNCHABLE, runAgent, shellQuote, type LaunchName } from '../agents/index.js';
import { HagentError } from '../errors.js';
import { openRepo } from '../session/index.js';
import {
  cappedLines,
  cappedList,
  palette,
  printJson,
  printLines,
  type Io,
} from '../output/index.js';

export interface RunArgs {
  agent: string;
  name?: string;
  base?: string;
  session?: string;
  json?: boolean;
  /** False with --no-sandbox. */
  sandbox?: boolean;
  /** Everything after `--`, for the agent. */
  agentArgs: string[];
}

/** How the agent starts this same hagent: the running Node and this CLI's entry file. */
export function selfHookCommand(): string {
  return `${shellQuote(process.execPath)} ${shellQuote(process.argv[1] ?? 'hagent')} hook`;
}

export async function runRun(argv: RunArgs, io: Io): Promise<number> {
  // The agent's name as integrate and hook take it: cursor is cursor-agent's.
  if (argv.agent === 'cursor') argv = { ...argv, agent: 'cursor-agent' };
  if (!(argv.agent in LAUNCHABLE))
    throw new HagentError(
      'USAGE',
      `hagent run cannot launch ${JSON.stringify(argv.agent)}`,
      { agent: argv.agent },
      `name one of: ${Object.keys(LAUNCHABLE).join(', ')}`,
    );
  if (argv.session !== undefined && (argv.name !== undefined || argv.base !== undefined))
    throw new HagentError(
      'USAGE',
      '--session resumes a session; --name and --base start a new one',
      {},
      'give either --session ID, or --name/--base',
    );
  const ctx = await openRepo(io.cwd);
  const r = await runAgent(ctx, argv.agent as LaunchName, {
    ...(argv.name !== undefined ? { name: argv.name } : {}),
    ...(argv.base !== undefined ? { base: argv.base } : {}),
    ...(argv.session !== undefined ? { session: argv.session } : {}),
    args: argv.agentArgs,
    hookCommand: selfHookCommand(),
    selfCommand: [process.execPath, process.argv[1] ?? 'hagent'],
    env: io.env,
    sandbox: argv.sandbox !== false,
    warn: (text) => io.stderr.write(`${palette(io.color).red(text)}\n`),
  });
  if (argv.json) {
    printJson(io, r);
    return r.exitCode;
  }
  const p = palette(io.color);
  if (r.removed) {
    printLines(io, [
      '',
      `${p.bold(`hagent session ${r.session}`)}: ${LAUNCHABLE[r.agent].binary} exited with status ${r.exitCode} before changing anything; the empty session was removed (its worktree and branch).`,
      `Fix what the agent said above, then run: hagent run ${r.agent}`,
    ]);
    return r.exitCode;
  }
  const lines = [
    '',
    `${p.bold(`hagent session ${r.session}`)}: ${r.commits} commit${r.commits === 1 ? '' : 's'}, ${r.files.length} file${r.files.length === 1 ? '' : 's'} changed${r.blocked.length ? `, ${r.blocked.length} attempt${r.blocked.length === 1 ? '' : 's'} blocked` : ''} (${LAUNCHABLE[r.agent].binary} exited ${r.exitCode})`,
    ...cappedLines(r.files, (f) => `  ${f.status} ${f.path}`),
    ...r.blocked.map((b) => `  ${p.yellow('blocked')} ${b.code}: ${b.message}`),
    ...r.outsideChanged.map((o) => `  ${p.red('warning')} ${o.message}\n    hint: ${o.hint}`),
    ...(r.drift?.kind === 'other-branch' || r.drift?.kind === 'detached'
      ? [
          `  ${p.red('warning')} the worktree is off hagent/${r.session} (${r.drift.kind}): work made there is not in the session; ${r.drift.hint}, then hagent sync --session ${r.session}`,
        ]
      : []),
    ...(r.outsideEdits.length
      ? [
          `  ${p.yellow('not yet committed:')} ${cappedList(r.outsideEdits)} (hagent sync --session ${r.session})`,
        ]
      : []),
    'Next: hagent review, then hagent review --approve, then hagent land:',
    `  hagent review --session ${r.session}             see the changes`,
    `  hagent review --session ${r.session} --approve   approve what you saw`,
    `  hagent land --session ${r.session}               bring them onto your branch`,
    `  hagent run ${r.agent} --session ${r.session}   continue this session`,
  ];
  printLines(io, lines);
  return r.exitCode;
}
