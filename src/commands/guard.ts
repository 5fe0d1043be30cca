/**
 * `hagent guard [--json] [--session ID | --dir DIR] -- CMD…`: the shell guard's verdict on a
 * command, without running it. Exit 0 allowed, 1 blocked (GUARD_BLOCKED).
 */
import path from 'node:path';
import { HagentError } from '../errors.js';
import {
  guardCommand,
  sessionGuardContext,
  shellQuote,
  type GuardContext,
} from '../guard/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import { palette, printError, printJson, printLines, type Io } from '../output/index.js';
import type { CommonArgs } from './shared.js';

export interface GuardArgs extends CommonArgs {
  dir?: string;
  command?: string[];
  _?: (string | number)[];
}

/**
 * The command after `--` (or the positional words): one word as a shell command, several as a
 * program and its arguments, each quoted for the shell; else stdin's text.
 * @throws HagentError USAGE when there is none.
 */
export async function commandText(
  argv: { command?: string[]; _?: (string | number)[] },
  io: Io,
  verb: string,
): Promise<string> {
  // yargs leaves the words after -- in `_`, after the command's own name. One word is a shell
  // command (`'npm run fmt && npm test'`); several are a program and its arguments, each quoted
  // for the shell, so `-- sh -c 'echo x > f'` or `-- touch 'a b'` mean what they say.
  const words = [...(argv.command ?? []), ...(argv._ ?? []).slice(1)].map(String);
  if (words.length === 1) return words[0]!;
  if (words.length) return words.map(shellQuote).join(' ');
  if (io.stdin.isTTY)
    throw new HagentError(
      'USAGE',
      'no command given',
      {},
      `give it after --: hagent ${verb} -- npm test (or pipe it on stdin)`,
    );
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  const text = Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
  if (text.trim() === '')
    throw new HagentError(
      'USAGE',
      'no command given (stdin was empty)',
      {},
      `give it after --: hagent ${verb} -- npm test`,
    );
  return text;
}

/** --dir DIR (any folder taken as the worktree), else the session (--session, or the one around the current folder). */
async function contextFor(argv: GuardArgs, io: Io): Promise<GuardContext> {
  if (argv.dir !== undefined) {
    if (argv.session !== undefined)
      throw new HagentError(
        'USAGE',
        '--dir and --session cannot be used together',
        {},
        'give one: --session ID, or --dir DIR',
      );
    return { worktree: path.resolve(io.cwd, argv.dir) };
  }
  const ctx = await openRepo(io.cwd);
  return sessionGuardContext(ctx, await resolveSession(ctx, argv.session), io.env);
}

export async function runGuard(argv: GuardArgs, io: Io): Promise<number> {
  const command = await commandText(argv, io, 'guard');
  const ctx = await contextFor(argv, io);
  const v = guardCommand(command, ctx);
  if (v.allowed) {
    if (argv.json) printJson(io, { ok: true, allowed: true, worktree: ctx.worktree, command });
    else printLines(io, [`${palette(io.color).green('allowed')}: ${command}`]);
    return 0;
  }
  const error = new HagentError(
    'GUARD_BLOCKED',
    v.reason,
    { rule: v.rule, command: v.command },
    v.hint,
  );
  printError(io, error, !!argv.json, { allowed: false, worktree: ctx.worktree });
  return error.exitStatus;
}
