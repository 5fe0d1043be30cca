/**
 * `hagent hook <agent> [event]`: the hook handler an agent's configuration runs. Reads the
 * event's JSON on stdin, answers in the agent's own output contract (agents/respond.ts).
 */
import { AGENTS, handleHook, type AgentName } from '../agents/index.js';
import { HagentError } from '../errors.js';
import type { Io } from '../output/index.js';

export async function runHook(argv: { agent?: string; event?: string }, io: Io): Promise<number> {
  const agent = argv.agent as AgentName;
  if (!AGENTS.includes(agent)) throw new HagentError('USAGE', `unknown agent ${JSON.stringify(argv.agent)}`, { agent: argv.agent }, `name one of: ${AGENTS.join(', ')}`);
  // The launcher may have read the event already (its fast answer outside any session).
  const early = (globalThis as { __hagentHookInput?: unknown }).__hagentHookInput;
  let input: string;
  if (typeof early === 'string') input = early;
  else {
    const chunks: Buffer[] = [];
    if (!io.stdin.isTTY) for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    input = Buffer.concat(chunks).toString('utf8');
  }
  const answer = await handleHook(agent, argv.event, input, { cwd: io.cwd, env: io.env });
  if (answer.stdout) io.stdout.write(answer.stdout);
  if (answer.stderr) io.stderr.write(answer.stderr);
  return answer.exitCode;
}
