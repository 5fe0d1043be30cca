/**
 * `hagent exec [--session ID] [--timeout S] [--max-output BYTES] [--json] -- CMD…`: a guarded
 * shell command in the session worktree; what it changed becomes one `Hagent-Op: exec` commit.
 * Exit 0 when the command exited 0 in time, 1 when it failed, timed out or was refused.
 */
import { execInSession, type ExecSandbox } from '../exec/index.js';
import { openRepo, resolveSession } from '../session/index.js';
import { palette, printJson, short, type Io } from '../output/index.js';
import { commandText } from './guard.js';
import type { CommonArgs } from './shared.js';

export interface ExecArgs extends CommonArgs {
  timeout?: number;
  'max-output'?: number;
  command?: string[];
  _?: (string | number)[];
}

export async function runExec(argv: ExecArgs, io: Io): Promise<number> {
  const command = await commandText(argv, io, 'exec');
  const ctx = await openRepo(io.cwd);
  const session = await resolveSession(ctx, argv.session);
  let r;
  try {
    r = await execInSession(ctx, session, command, {
      timeoutS: argv.timeout,
      maxOutputBytes: argv['max-output'],
      env: io.env,
    });
  } catch (error) {
    // A failure after the command ran still shows its output (the JSON error carries it as `exec`).
    const ran = (error as { details?: { exec?: { stdout: string; stderr: string } } }).details
      ?.exec;
    if (ran && !argv.json) {
      io.stdout.write(ran.stdout);
      io.stderr.write(ran.stderr);
    }
    throw error;
  }
  if (argv.json) {
    printJson(io, r);
    return r.ok ? 0 : 1;
  }
  io.stdout.write(r.stdout);
  io.stderr.write(r.stderr);
  const p = palette(io.color);
  const lines: string[] = [];
  if (r.adopted)
    lines.push(p.dim(`hagent: first adopted pending outside edits as commit ${short(r.adopted)}`));
  const end = r.timedOut
    ? p.red(`timed out after ${argv.timeout ?? 120} s; its process group was killed`)
    : r.signal
      ? p.red(`ended by ${r.signal}`)
      : r.exitCode === 0
        ? p.green('exit 0')
        : p.red(`exit ${r.exitCode}`);
  const cut = r.truncated
    ? `; output cut (${[r.truncated.stdout ? `stdout ${r.truncated.stdout.bytes} bytes` : '', r.truncated.stderr ? `stderr ${r.truncated.stderr.bytes} bytes` : ''].filter(Boolean).join(', ')})`
    : '';
  const commit = r.commit
    ? `; ${r.changed.length} file${r.changed.length === 1 ? '' : 's'} changed, committed as ${short(r.commit)} (hagent undo drops it)`
    : '; no files changed';
  lines.push(`hagent: ${end} in ${(r.durationMs / 1000).toFixed(1)} s${cut}${commit}`);
  for (const k of r.skipped)
    lines.push(p.yellow(`hagent: left out of the commit: ${k.path}: ${k.reason}`));
  lines.push(...sandboxLines(r.sandbox, p));
  if (r.outside)
    lines.push(p.red(`hagent: warning: ${r.outside.message}`), p.red(`  hint: ${r.outside.hint}`));
  io.stderr.write(`${lines.join('\n')}\n`);
  return r.ok ? 0 : 1;
}

/**
 * What the agent is told of the sandbox: each write it stopped, with the path and why; or, when
 * none could start, that the guard alone checked the command (the configured `off` says nothing).
 */
function sandboxLines(s: ExecSandbox, p: ReturnType<typeof palette>): string[] {
  if (!s.on)
    return s.configured
      ? []
      : [
          p.red(`hagent: warning: ${s.reason}; the shell guard alone checked this command`),
          p.red(`  hint: ${s.hint}`),
        ];
  return [
    ...s.denied.map((d) => p.yellow(`hagent sandbox: ${d.path}: ${d.reason}`)),
    ...s.problems.map((x) => p.yellow(`hagent sandbox: ${x}`)),
  ];
}
