/**
 * `hagent hook <agent> [event]`: the hook handler an agent's configuration runs. Reads the
 * event's JSON on stdin, answers in the agent's own output contract (agents/respond.ts).
 */
import { writeSync } from 'node:fs';
// Not agents/index.js: the launcher and installer modules it also holds are not a hook's to load.
import { registerHookAgent } from '../agents/ancestry.js';
import { handleHook } from '../agents/hook.js';
import { AGENTS, agentName, type AgentName } from '../agents/normalize.js';
import { HagentError } from '../errors.js';
import type { Io } from '../output/index.js';

export async function runHook(argv: { agent?: string; event?: string }, io: Io): Promise<number> {
  const agent = agentName(argv.agent ?? '') as AgentName;
  if (!AGENTS.includes(agent))
    throw new HagentError(
      'USAGE',
      `unknown agent ${JSON.stringify(argv.agent)}`,
      { agent: argv.agent },
      `name one of: ${AGENTS.join(', ')}`,
    );
  // The launcher may have read the event already (its fast answer outside any session).
  const early = (globalThis as { __hagentHookInput?: unknown }).__hagentHookInput;
  let input: string;
  if (typeof early === 'string') input = early;
  else {
    const chunks: Buffer[] = [];
    if (!io.stdin.isTTY)
      for await (const c of io.stdin)
        chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    input = Buffer.concat(chunks).toString('utf8');
  }
  // The agent running this hook cannot run the human's commands from its shell (ancestry.ts).
  registerHookAgent(null);
  const answer = await handleHook(agent, argv.event, input, { cwd: io.cwd, env: io.env });
  if (answer.stdout) writeOut(io, 1, answer.stdout);
  if (answer.stderr) writeOut(io, 2, answer.stderr);
  return answer.exitCode;
}

/**
 * Writes the answer straight to the descriptor (io's streams are the process's own): a hook
 * answers with one short write, and building process.stdout for it (Node's stream and net
 * modules) cost ~2 ms of every hook. What a non-blocking pipe does not take at once goes
 * through io's stream as before.
 */
function writeOut(io: Io, fd: 1 | 2, text: string): void {
  let bytes = Buffer.from(text, 'utf8');
  try {
    while (bytes.length) bytes = bytes.subarray(writeSync(fd, bytes));
    return;
  } catch {
    // EAGAIN on a non-blocking pipe, or no such descriptor: the stream takes the rest
  }
  (fd === 1 ? io.stdout : io.stderr).write(bytes);
}
