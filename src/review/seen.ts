/**
 * What `hagent review` showed, per terminal: the head whose changes a human read, so that a later
 * `hagent review --approve` in the same terminal approves that head and not whatever the agent
 * applied meanwhile (docs/approval-and-hooks.md).
 *
 * "The terminal" is keyed by the process's controlling terminal and its session (POSIX process
 * session: the shell a terminal runs and everything started from it, `/proc/self/stat` fields 6
 * and 7), with the session leader's start time, so a pseudo-terminal number reused by a new
 * window after the old one closed is not taken for it. A process without a terminal (a script, CI)
 * is keyed by its session alone; where `/proc` is missing, by the parent process (the shell that
 * ran hagent). Records live under the git common folder, `hagent/seen/<session>/<key>.json`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readJsonFile, writeJsonFile } from '../fsx/index.js';

/** One review shown in a terminal: the session head it showed and the files it listed, ISO time. */
export interface SeenReview {
  head: string;
  files: string[];
  at: string;
  terminal: string;
}

/** The fields of `/proc/<pid>/stat` after the command name, from field 3 on. Null when unreadable. */
function statFields(pid: number | 'self'): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(' ');
  } catch {
    return null;
  }
}

/**
 * The key of the terminal this process runs in: `tty<device>-s<session>-<start>` with a
 * controlling terminal, `s<session>-<start>` without one (Linux), `p<parent pid>` elsewhere. Pure
 * apart from reading `/proc`.
 */
export function terminalKey(): string {
  const self = statFields('self');
  if (!self) return `p${process.ppid}`;
  // Field 6 (index 3 here) is the session id, field 7 the controlling terminal's device number.
  const sid = Number(self[3]);
  const tty = Number(self[4]);
  // Field 22 of the session leader: its start time (clock ticks after boot).
  const start = statFields(sid)?.[19] ?? '0';
  return `${tty ? `tty${tty}-` : ''}s${sid}-${start}`;
}

function seenFile(commonDir: string, session: string, terminal: string): string {
  return path.join(commonDir, 'hagent', 'seen', session, `${terminal}.json`);
}

/**
 * Records that `review` showed `head` (with `files`) of `session` in this terminal, replacing the
 * terminal's earlier record. @throws the file system's error.
 */
export async function recordSeen(
  commonDir: string,
  session: string,
  head: string,
  files: readonly string[],
): Promise<SeenReview> {
  const terminal = terminalKey();
  const seen = { head, files: [...files], at: new Date().toISOString(), terminal };
  await writeJsonFile(seenFile(commonDir, session, terminal), seen, { durable: false });
  return seen;
}

/** The last review of `session` shown in this terminal, or null when there was none. */
export async function readSeen(commonDir: string, session: string): Promise<SeenReview | null> {
  const v = (await readJsonFile(seenFile(commonDir, session, terminalKey()))) as {
    head?: unknown;
  } | null;
  return v && typeof v.head === 'string' ? (v as SeenReview) : null;
}
