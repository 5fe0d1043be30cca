/**
 * `hagent mcp [--session ID | --new [--name N] [--base REV]]`: serves the session's tools over
 * MCP on stdio. The server lives in its own module (dist/mcp.js), loaded only here, so the
 * MCP SDK never adds to the start-up of the other commands. Inside the sandbox of a `hagent
 * run`, the run serves it from outside and this process only passes the bytes (mcp/proxy.ts).
 */
import { createRequire } from 'node:module';
import { HagentError } from '../errors.js';
import { mcpProxySocket, proxyMcp } from '../mcp/proxy.js';
import type { Io } from '../output/index.js';
import type { CommonArgs } from './shared.js';

type McpModule = typeof import('../mcp/index.js');

/**
 * The server module: `mcp.js` of the library build beside the CLI's bundle (an ES module, which
 * Node ≥ 20.19 requires synchronously: the CLI runs inside a `vm.Script`, where `import()` has
 * no loader), or the source when run unbundled.
 */
function loadServer(): McpModule {
  // A computed name, so the CLI's bundler leaves the server out of the CLI's bundle.
  const file = import.meta.url.endsWith('.cjs') ? './mcp.js' : '../mcp/index.js';
  return createRequire(import.meta.url)(file) as McpModule;
}

/**
 * Serves MCP on stdio until the client closes: through the run's server when inside its sandbox
 * (falling back to serving here when the run starts none), else here. @returns 0 once served.
 * @throws HagentError USAGE (options that exclude each other), and serveMcp's codes.
 */
export async function runMcp(
  argv: CommonArgs & { new?: boolean; name?: string; base?: string },
  io: Io,
  version: string,
): Promise<number> {
  if (argv.session !== undefined && argv.new)
    throw new HagentError(
      'USAGE',
      '--session and --new exclude each other',
      {},
      'serve an existing session with --session ID, or start one with --new [--name N]',
    );
  if (!argv.new && (argv.name !== undefined || argv.base !== undefined))
    throw new HagentError(
      'USAGE',
      '--name and --base start a new session: they need --new',
      {},
      'e.g. hagent mcp --new --name fix-login',
    );
  const socket = mcpProxySocket(io.env);
  if (socket !== null) {
    const proxied = await proxyMcp(
      socket,
      {
        ...(argv.session !== undefined ? { session: argv.session } : {}),
        ...(argv.new ? { new: true } : {}),
        ...(argv.name !== undefined ? { name: argv.name } : {}),
        ...(argv.base !== undefined ? { base: argv.base } : {}),
      },
      { input: process.stdin, output: process.stdout },
    );
    if (proxied.served) return 0;
    io.stderr.write(`hagent mcp: the run serves no MCP server (${proxied.reason}): serving here\n`);
  }
  const { serveMcp } = loadServer();
  await serveMcp({
    cwd: io.cwd,
    env: io.env,
    version,
    ...(argv.session !== undefined ? { session: argv.session } : {}),
    ...(argv.new ? { new: true } : {}),
    ...(argv.name !== undefined ? { name: argv.name } : {}),
    ...(argv.base !== undefined ? { base: argv.base } : {}),
    log: (line) => io.stderr.write(`${line}\n`),
  });
  // The exit status once the client has gone; serving keeps the process alive until then.
  return 0;
}
