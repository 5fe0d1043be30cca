/**
 * `hagent integrate <agent> [--user] [--remove] [--print] [--json]`: hagent's hooks merged into
 * the agent's own configuration file (agents/integrate.ts).
 */
import { integrateAgent } from '../agents/index.js';
import { mainCheckoutRoot } from '../config/index.js';
import { HagentError } from '../errors.js';
import { openRepo } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';

export async function runIntegrate(argv: { agent?: string; user?: boolean; remove?: boolean; print?: boolean; json?: boolean }, io: Io): Promise<number> {
  let root = io.cwd;
  if (!argv.user) {
    const found = await mainCheckoutRoot(await openRepo(io.cwd));
    if (!found) throw new HagentError('BARE_REPO', 'this repository has no main checkout to hold the project hook file', {}, 'run it in a checkout, or use --user');
    root = found;
  }
  const r = await integrateAgent(argv.agent ?? '', { root, ...(argv.user ? { user: true } : {}), ...(argv.remove ? { remove: true } : {}), ...(argv.print ? { print: true } : {}), env: io.env });
  if (argv.json) {
    printJson(io, r);
    return 0;
  }
  if (r.action === 'printed') {
    printLines(io, [`# merged into ${r.file} by: hagent integrate ${r.agent}${argv.user ? ' --user' : ''}`, JSON.stringify(r.snippet, null, 2)]);
    return 0;
  }
  const p = palette(io.color);
  const what = { added: 'added hagent\'s hooks to', updated: 'updated hagent\'s hooks in', removed: 'removed hagent\'s hooks from', unchanged: 'nothing to change in' }[r.action];
  printLines(io, [
    `${p.green(r.agent)}: ${what} ${r.file}`,
    ...(r.action === 'added' || r.action === 'updated' ? [`The hooks run \`hagent hook ${r.agent}\`: hagent must be on PATH (hagent doctor checks it). Outside a hagent session they do nothing.`] : []),
    ...(r.agent === 'claude' && r.action !== 'removed' && r.action !== 'unchanged' ? ['Now `claude --worktree NAME` starts a hagent session; or launch any agent with: hagent run claude'] : []),
  ]);
  return 0;
}
