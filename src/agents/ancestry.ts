/**
 * Who is calling: the process ancestry of a hagent command, checked against the processes hagent
 * knows to be agents — the proof behind the human-only commands (docs/human-only.md).
 *
 * The agent marker (marker.ts) is an environment variable, which any process can drop. What a
 * process cannot change is its ancestors: the Linux kernel keeps each process's parent
 * (`/proc/<pid>/stat`), and a process cannot rewrite another's start time, its command line or the
 * environment it was started with (`/proc/<pid>/environ`). A caller is an agent's when one of its
 * ancestors (itself included) is:
 * - a process hagent registered as an agent's (`registerAgentProcess`): the agent `hagent run`
 *   started, the shell of `hagent exec` and of the MCP `exec` while it runs, the agent whose hook
 *   ran (`hagent hook`: the hook's first ancestor that is not a shell). An entry names the pid and
 *   its start time (field 22 of stat, clock ticks since boot), so a reused pid never matches;
 * - in the process session or group of such a process (a background job, `nohup`, a double fork
 *   without `setsid`: re-parented to init, but still in the shell's session);
 * - started with the agent marker in its environment (the marker dropped later does not count);
 * - a hagent process that runs agents' commands (`hagent run`, `exec`, `mcp`), by its command line;
 * - a process detached from its parent (its parent is init or a user manager) that started during
 *   an exec's run (the exec's window is kept for a day): `setsid -f`, or a double fork with
 *   `setsid`.
 * Linux only (`/proc`); elsewhere only the marker counts.
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One process as `/proc/<pid>/stat` gives it. `start`: clock ticks after boot, as text. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
  /** The controlling terminal (`tty_nr`), 0 for none. */
  tty: number;
  start: string;
  comm: string;
}

/** What registered a process as an agent's. */
export type AgentKind = 'run' | 'exec' | 'hook';

/** One registry entry (a file `<pid>-<start>.json`). `since`/`until`: clock ticks after boot. */
interface Entry {
  pid: number;
  start: string;
  kind: AgentKind;
  session: string | null;
  /** The repository's git common dir (exec windows count only for their own repository). */
  repo: string | null;
  since: number;
  until?: number;
}

/** Why the caller is an agent's: the process that proves it and how it was found. */
export interface AgentAncestor {
  pid: number;
  kind: AgentKind | 'marker' | 'hagent';
  how: string;
  session: string | null;
}

/** An exec's window is kept this long after it ended (clock ticks: a day). */
const WINDOW_KEPT_TICKS = 24 * 3600 * 100;
/** Linux's USER_HZ, the unit of stat's start time, is 100 on every architecture hagent runs on. */
const TICKS_PER_SECOND = 100;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish', 'env', 'timeout', 'nice']);

/** The registry folder: under the user's home from the password database, never the environment (which a caller sets). */
export function registryDir(): string {
  let home: string;
  try {
    home = os.userInfo().homedir;
  } catch {
    home = os.tmpdir();
  }
  return path.join(home, '.cache', 'hagent', 'agents');
}

/** `/proc/<pid>/stat` parsed; null when the process is gone or there is no /proc. */
export function procInfo(pid: number): ProcInfo | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  const f = text.slice(close + 2).split(' ');
  if (f.length < 20) return null;
  return {
    pid,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    sid: Number(f[3]),
    tty: Number(f[4]),
    start: f[19]!,
    comm: text.slice(text.indexOf('(') + 1, close),
  };
}

/** `pid` and its ancestors, nearest first, up to (not including) init; at most 64. */
export function ancestry(pid: number = process.pid): ProcInfo[] {
  const chain: ProcInfo[] = [];
  for (let p = procInfo(pid); p && p.pid > 1 && chain.length < 64; p = procInfo(p.ppid))
    chain.push(p);
  return chain;
}

/** Clock ticks since boot now (the unit of stat's start time). */
function nowTicks(): number {
  try {
    return Math.round(
      Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * TICKS_PER_SECOND,
    );
  } catch {
    return 0;
  }
}

/**
 * Records `pid` as an agent's process (`kind`), with its start time; the file's name is returned
 * for {@link endAgentProcess}. Null when the process is gone or nothing could be written (then
 * the other proofs still hold). Never throws.
 */
export function registerAgentProcess(
  pid: number,
  kind: AgentKind,
  session: string | null,
  repo: string | null = null,
): string | null {
  const info = procInfo(pid);
  if (!info) return null;
  const dir = registryDir();
  const file = path.join(dir, `${pid}-${info.start}.json`);
  const entry: Entry = {
    pid,
    start: info.start,
    kind,
    session,
    repo,
    since: Number(info.start),
  };
  try {
    mkdirSync(dir, { recursive: true });
    const fd = openSync(file, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(entry));
    } finally {
      closeSync(fd);
    }
    return file;
  } catch {
    return null;
  }
}

/**
 * The registered process ended: an exec keeps its window (when it ran, for detached processes it
 * started: {@link agentAncestor}) as `<pid>-<start>-<until>.json`, so a check lists windows by
 * name and reads only those that hold its time; any other entry goes. Never throws.
 */
export function endAgentProcess(file: string | null): void {
  if (!file) return;
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8')) as Entry;
    if (entry.kind === 'exec') keepWindow(file, entry, nowTicks());
    else rmSync(file, { force: true });
  } catch {
    // a removed entry: the other proofs still hold
  }
}

/** Rewrites an exec's live entry as its window ending at `until`. */
function keepWindow(file: string, entry: Entry, until: number): void {
  const windowFile = file.replace(/\.json$/, `-${until}.json`);
  const fd = openSync(windowFile, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify({ ...entry, until }));
  } finally {
    closeSync(fd);
  }
  rmSync(file, { force: true });
}

/**
 * Registers the agent a hook process serves: the hook's first ancestor that is not a shell the
 * agent ran the hook command through. Agents run their hook command line with `sh -c` (Claude
 * Code in a process session of its own); such a shell has no controlling terminal or leads no
 * session, where a user's interactive shell has a terminal and leads its session. Nothing is
 * registered for a hook started without such a shell (a program calling it directly) or run by
 * hand from a terminal (the interactive shell comes first). Once per agent process. Never throws.
 */
export function registerHookAgent(session: string | null): void {
  const chain = ancestry().slice(1);
  const agentShell = (p: ProcInfo) => SHELLS.has(p.comm) && (p.tty === 0 || p.sid !== p.pid);
  const at = chain.findIndex((p) => !agentShell(p));
  const agent = chain[at];
  if (at < 1 || !agent || SHELLS.has(agent.comm)) return;
  try {
    readFileSync(path.join(registryDir(), `${agent.pid}-${agent.start}.json`));
    return;
  } catch {
    registerAgentProcess(agent.pid, 'hook', session);
  }
}

/** An exec's window as its file name gives it; the file is read only when a check needs it. */
interface Window {
  file: string;
  start: number;
  until: number;
}

/**
 * The registry: the entries of live processes (read), and the exec windows (by name). Entries
 * of processes gone are removed, or kept as windows for an exec; windows past a day are removed.
 */
function registry(): { live: Entry[]; windows: Window[] } {
  const dir = registryDir();
  const live: Entry[] = [];
  const windows: Window[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { live, windows };
  }
  const now = nowTicks();
  for (const name of names) {
    const file = path.join(dir, name);
    const w = /^\d+-(\d+)-(\d+)\.json$/.exec(name);
    if (w) {
      if (now - Number(w[2]) > WINDOW_KEPT_TICKS) rmSync(file, { force: true });
      else windows.push({ file, start: Number(w[1]), until: Number(w[2]) });
      continue;
    }
    let entry: Entry;
    try {
      entry = JSON.parse(readFileSync(file, 'utf8')) as Entry;
    } catch {
      continue;
    }
    if (procInfo(entry.pid)?.start === entry.start) live.push(entry);
    else if (entry.kind === 'exec') {
      // Its hagent was killed before it could end the entry: the window ends now.
      keepWindow(file, entry, now);
      windows.push({
        file: file.replace(/\.json$/, `-${now}.json`),
        start: Number(entry.start),
        until: now,
      });
    } else rmSync(file, { force: true });
  }
  return { live, windows };
}

/** The environment a process was started with holds a non-empty `name`. */
function startedWith(pid: number, name: string): string | null {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
    for (const kv of env.split('\0'))
      if (kv.startsWith(`${name}=`) && kv.length > name.length + 1)
        return kv.slice(name.length + 1);
  } catch {
    // another user's process, or gone
  }
  return null;
}

/** The hagent subcommand a process runs when it is `hagent run|exec|mcp` (by its command line). */
function hagentHost(pid: number): string | null {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return null;
  }
  const at = argv.findIndex((a) => /(^|\/)(hagent|hagent\.cjs)$/.test(a));
  if (at < 0) return null;
  const verb = argv.slice(at + 1).find((a) => !a.startsWith('-'));
  return verb === 'run' || verb === 'exec' || verb === 'mcp' ? verb : null;
}

/**
 * The process that shows the caller (`pid`, this process by default) works for an agent, or
 * null: see this file's comment for each proof. `marker` names the agent marker variable; `repo`
 * the git common dir the caller works on (exec windows count for their own repository only).
 * Linux only (null without /proc). Never throws.
 */
export function agentAncestor(
  marker: string,
  repo: string | null,
  pid: number = process.pid,
): AgentAncestor | null {
  const chain = ancestry(pid);
  if (chain.length === 0) return null;
  const { live: registered, windows } = registry();
  for (const [i, p] of chain.entries()) {
    for (const e of registered) {
      if (e.pid === p.pid && e.start === p.start)
        return {
          pid: p.pid,
          kind: e.kind,
          how: `process ${p.pid} (${p.comm}) is ${what(e)}`,
          session: e.session,
        };
      if ((p.sid === e.pid || p.pgrp === e.pid) && Number(p.start) >= Number(e.start))
        return {
          pid: p.pid,
          kind: e.kind,
          how: `process ${p.pid} (${p.comm}) is in the process ${p.sid === e.pid ? 'session' : 'group'} of ${what(e)}`,
          session: e.session,
        };
    }
    const session = startedWith(p.pid, marker);
    if (session !== null && i > 0)
      return {
        pid: p.pid,
        kind: 'marker',
        how: `process ${p.pid} (${p.comm}) was started with ${marker}`,
        session,
      };
    const host = i > 0 ? hagentHost(p.pid) : null;
    if (host)
      return {
        pid: p.pid,
        kind: 'hagent',
        how: `process ${p.pid} is hagent ${host}, which runs agents' commands`,
        session: null,
      };
  }
  // Detached: the outermost process whose parent is init or a user manager, started in an exec.
  const top = chain.find((p, i) => p.ppid <= 1 || chain[i + 1]?.comm === 'systemd');
  if (top) {
    const started = Number(top.start);
    let window = registered.find(
      (e) => e.kind === 'exec' && repo !== null && e.repo === repo && started >= Number(e.start),
    );
    for (const w of window ? [] : windows) {
      if (started < w.start || started > w.until || repo === null) continue;
      try {
        const e = JSON.parse(readFileSync(w.file, 'utf8')) as Entry;
        if (e.repo === repo) window = e;
      } catch {
        // removed meanwhile
      }
      if (window) break;
    }
    if (window)
      return {
        pid: top.pid,
        kind: 'exec',
        how: `process ${top.pid} (${top.comm}) detached itself while ${what(window)} ran`,
        session: window.session,
      };
  }
  return null;
}

function what(e: Entry): string {
  const of = e.session ? ` of session ${e.session}` : '';
  if (e.kind === 'run') return `the agent hagent run started${of}`;
  if (e.kind === 'exec') return `the shell of a hagent exec${of}`;
  return `an agent whose hagent hook ran${of}`;
}
