/**
 * Running one shell command the way an agent needs it run: in a folder, standard input closed,
 * in a process group of its own (killed whole on timeout), stdout and stderr kept apart and
 * capped (head and tail kept), and one result whatever happened — a timeout is never an exit
 * code 0 (the shape follows execa's: every outcome is a result, not an exception).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { procInfo } from '../agents/ancestry.js';

/** How a stream was cut: its full size and how many bytes of it were left out. */
export interface Cut {
  bytes: number;
  omittedBytes: number;
}

/** What happened to one command. */
export interface RunOutcome {
  /** The exit code; null when a signal ended it (a timeout among them). */
  exitCode: number | null;
  /** The signal that ended it (`SIGKILL` after a timeout), else null. */
  signal: string | null;
  /** It ran past the timeout and its process group was killed. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** false, or the sizes of the streams that were cut (null for a stream kept whole). */
  truncated: false | { stdout: Cut | null; stderr: Cut | null };
  /** Wall time from spawn to the end, in milliseconds. */
  durationMs: number;
}

/** Options of {@link runShell}. */
export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Milliseconds before the process group is killed; 0 waits for ever. */
  timeoutMs: number;
  /** Bytes kept of each stream: the first half and the last half. */
  maxOutputBytes: number;
  /** A program and its options the shell runs under (a sandbox's argv prefix, ending with `--`). */
  wrap?: readonly string[];
  /** Called with the shell's pid as soon as it is spawned, and once more (null) when it ended. */
  onSpawn?: (pid: number | null) => void;
}

/** Grace between SIGTERM and SIGKILL of a timed-out group, and how long the pipes may stay open after the shell exits. */
const KILL_GRACE_MS = 2000;
const DRAIN_MS = 250;

/** Keeps the first and the last `max / 2` bytes of a stream and counts the rest. */
class Capped {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  bytes = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    const headRoom = Math.ceil(this.max / 2) - this.headLen;
    if (headRoom > 0) {
      const part = chunk.subarray(0, headRoom);
      this.head.push(part);
      this.headLen += part.length;
      chunk = chunk.subarray(part.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    const keep = Math.floor(this.max / 2);
    while (this.tailLen - (this.tail[0]?.length ?? 0) >= keep && this.tail.length > 1)
      this.tailLen -= this.tail.shift()!.length;
  }

  /** The kept text, with a line where bytes were left out; and the cut, or null when whole. */
  result(name: string): { text: string; cut: Cut | null } {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    const keep = Math.floor(this.max / 2);
    if (this.bytes <= this.max)
      return { text: Buffer.concat([head, tail]).toString('utf8'), cut: null };
    tail = tail.subarray(tail.length - keep);
    const omitted = this.bytes - head.length - tail.length;
    const text = `${decodeHead(head)}\n[hagent: ${omitted} bytes of ${name} left out here; ${this.bytes} bytes in all]\n${decodeTail(tail)}`;
    return { text, cut: { bytes: this.bytes, omittedBytes: omitted } };
  }
}

/** UTF-8 text of a head cut at any byte: a partial last character is dropped. */
function decodeHead(b: Buffer): string {
  let end = b.length;
  for (let k = 1; k <= 3 && end - k >= 0; k++) {
    const c = b[end - k]!;
    if ((c & 0xc0) === 0xc0) {
      end -= k;
      break;
    } // a lead byte whose character is cut
    if ((c & 0x80) === 0) break;
  }
  return b.subarray(0, end).toString('utf8');
}

/** UTF-8 text of a tail cut at any byte: leading continuation bytes are dropped. */
function decodeTail(b: Buffer): string {
  let start = 0;
  while (start < b.length && start < 3 && (b[start]! & 0xc0) === 0x80) start++;
  return b.subarray(start).toString('utf8');
}

/** bash when the machine has it (the guard reads bash syntax), else sh. */
function shellPath(): string {
  for (const p of ['/bin/bash', '/usr/bin/bash']) if (existsSync(p)) return p;
  return '/bin/sh';
}

/**
 * Runs `command` with `bash -c` (or `sh -c`) in `options.cwd`, stdin on /dev/null, in a new
 * process group (no controlling terminal, so a password prompt fails at once). After
 * `timeoutMs` the whole group gets SIGTERM, then SIGKILL 2 s later. When the shell exits while
 * background jobs still hold its pipes, their output stops being collected after 250 ms. Then
 * nothing the command started outlives it: its process group and every process still in its
 * process session (a `nohup`, a double fork) get SIGKILL.
 * Never rejects: a spawn failure is an outcome with exit code 127 and the error on stderr.
 */
export function runShell(command: string, options: RunOptions): Promise<RunOutcome> {
  const started = performance.now();
  const out = new Capped(options.maxOutputBytes);
  const err = new Capped(options.maxOutputBytes);
  return new Promise((resolve) => {
    let timedOut = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const argv = [...(options.wrap ?? []), shellPath(), '-c', command];
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const finish = (exitCode: number | null, signal: string | null): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      child.stdout.destroy();
      child.stderr.destroy();
      killGroup('SIGKILL');
      if (child.pid !== undefined) killSession(child.pid);
      options.onSpawn?.(null);
      const o = out.result('stdout');
      const e = err.result('stderr');
      resolve({
        exitCode: timedOut ? null : exitCode,
        signal: timedOut ? (signal ?? 'SIGKILL') : signal,
        timedOut,
        stdout: o.text,
        stderr: e.text,
        truncated: o.cut || e.cut ? { stdout: o.cut, stderr: e.cut } : false,
        durationMs: performance.now() - started,
      });
    };
    if (options.timeoutMs > 0) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          killGroup('SIGTERM');
          timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS));
        }, options.timeoutMs),
      );
    }
    child.on('error', (e) => {
      err.push(Buffer.from(`hagent: cannot start the shell: ${e.message}\n`));
      finish(127, null);
    });
    child.on('exit', (code, signal) => {
      // The pipes close when every process holding them is done; background jobs may keep them.
      const drain = setTimeout(() => finish(code, signal), timedOut ? 0 : DRAIN_MS);
      timers.push(drain);
      child.on('close', () => finish(code, signal));
    });
  });
}

/**
 * SIGKILL to every process left in the process session `sid` (the shell was its leader: spawned
 * detached, so `setsid`): background jobs that moved to a group of their own. Linux (`/proc`);
 * a no-op elsewhere.
 */
function killSession(sid: number): void {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return;
  }
  for (const name of pids) {
    const p = procInfo(Number(name));
    if (p?.sid !== sid) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
