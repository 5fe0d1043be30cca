/**
 * `hagent integrate <agent> [--mcp [--strict]] [--user] [--remove] [--print] [--json]`: hagent's
 * hooks, or its MCP server and strict-mode rules, merged into the agent's own configuration
 * files (agents/integrate.ts, agents/integrate-mcp.ts).
 */
import {
  codexSnippetToml,
  integrateAgent,
  integrateMcp,
  type McpIntegrateResult,
} from '../agents/index.js';
import { refuseForAgent } from '../agents/marker.js';
import { mainCheckoutRoot } from '../config/index.js';
import { HagentError } from '../errors.js';
import { openRepo } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';

type IntegrateArgs = {
  agent?: string;
  user?: boolean;
  remove?: boolean;
  print?: boolean;
  json?: boolean;
  mcp?: boolean;
  strict?: boolean;
};

export async function runIntegrate(argv: IntegrateArgs, io: Io): Promise<number> {
  // Even --print: the agents' configuration is the human's to change, and to plan changing.
  refuseForAgent(io.env, `hagent integrate ${argv.agent ?? ''}`.trimEnd(), io.cwd);
  if (argv.strict && !argv.mcp)
    throw new HagentError(
      'USAGE',
      "--strict needs --mcp: strict mode sends every write through hagent's MCP server",
      {},
      `hagent integrate ${argv.agent ?? 'claude'} --mcp --strict`,
    );
  let root = io.cwd;
  if (!argv.user) {
    const found = await mainCheckoutRoot(await openRepo(io.cwd));
    if (!found)
      throw new HagentError(
        'BARE_REPO',
        'this repository has no main checkout to hold the project hook file',
        {},
        'run it in a checkout, or use --user',
      );
    root = found;
  }
  const flags = {
    root,
    ...(argv.user ? { user: true } : {}),
    ...(argv.remove ? { remove: true } : {}),
    ...(argv.print ? { print: true } : {}),
    env: io.env,
  };
  if (argv.mcp)
    return printMcp(
      await integrateMcp(argv.agent ?? '', { ...flags, ...(argv.strict ? { strict: true } : {}) }),
      argv,
      io,
    );
  const r = await integrateAgent(argv.agent ?? '', flags);
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  if (r.action === 'printed' && r.removal) {
    printLines(
      io,
      r.snippet === null
        ? [
            `# ${r.file} does not exist: hagent integrate ${r.agent}${argv.user ? ' --user' : ''} --remove has nothing to remove`,
          ]
        : [
            `# ${r.file} after: hagent integrate ${r.agent}${argv.user ? ' --user' : ''} --remove (hagent's hooks taken out; nothing written)`,
            JSON.stringify(r.snippet, null, 2),
          ],
    );
    return 0;
  }
  if (r.action === 'printed') {
    printLines(io, [
      `# merged into ${r.file} by: hagent integrate ${r.agent}${argv.user ? ' --user' : ''}`,
      JSON.stringify(r.snippet, null, 2),
    ]);
    return 0;
  }
  const p = palette(io.color);
  const what = {
    added: "added hagent's hooks to",
    updated: "updated hagent's hooks in",
    removed: "removed hagent's hooks from",
    unchanged: 'nothing to change in',
  }[r.action];
  printLines(io, [
    `${p.green(r.agent)}: ${what} ${r.file}`,
    ...(r.action === 'added' || r.action === 'updated'
      ? [
          `The hooks run \`hagent hook ${r.agent}\`: hagent must be on PATH (hagent doctor checks it). Outside a hagent session they do nothing.`,
        ]
      : []),
    ...(r.agent === 'claude' && r.action !== 'removed' && r.action !== 'unchanged'
      ? [
          'Now `claude --worktree NAME` starts a hagent session; or launch any agent with: hagent run claude',
        ]
      : []),
    ...(r.protection
      ? [
          `${p.bold('Protected')} ${r.protection.inSession}.`,
          `${p.bold('Outside a session')} ${r.protection.outsideSession}.`,
          `${p.yellow('Not protected:')} ${r.protection.notProtected}.`,
        ]
      : []),
  ]);
  return 0;
}

/** Output of `--mcp`: each file's action (or, with --print, its snippet), then what strict mode enforces. */
function printMcp(r: McpIntegrateResult, argv: IntegrateArgs, io: Io): number {
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  const p = palette(io.color);
  const lines: string[] = [];
  const invocation = `hagent integrate ${r.agent} --mcp${r.strict ? ' --strict' : ''}${argv.user ? ' --user' : ''}`;
  if (r.action === 'printed') {
    for (const f of r.files)
      lines.push(
        argv.remove
          ? `# taken out of ${f.file} by: ${invocation} --remove (the entries below, where present; nothing written)`
          : `# merged into ${f.file} by: ${invocation}`,
        f.format === 'toml'
          ? codexSnippetToml(f.snippet).trimEnd()
          : JSON.stringify(f.snippet, null, 2),
      );
  } else {
    const verb = {
      added: 'added to',
      updated: 'updated in',
      removed: 'removed from',
      unchanged: 'nothing to change in',
      printed: '',
    };
    for (const f of r.files) lines.push(`${p.green(r.agent)}: ${verb[f.action]} ${f.file}`);
    if (!argv.remove && r.action !== 'unchanged')
      lines.push(
        'The server runs `hagent mcp` in the folder the agent starts in (a session worktree, or the only session): hagent must be on PATH (hagent doctor checks it).',
      );
  }
  if (r.strictMode && !argv.remove) {
    const s = r.strictMode;
    lines.push(
      `Strict mode ${s.failsClosed ? 'fails closed' : 'does not fail closed'} for ${r.agent}.`,
      `  Enforced: ${s.enforced}`,
      `  Not enforced: ${s.notEnforced}`,
    );
    if (s.flags.length) lines.push(`  Start it with: ${r.agent} ${s.flags.join(' ')}`);
  }
  if (!argv.remove) lines.push(...r.notes);
  printLines(io, lines);
  return 0;
}
