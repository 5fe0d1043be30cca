/**
 * Session metadata on disk: one JSON file per session under `<git-common-dir>/hagent/sessions/`,
 * validated with zod on every read (design.md "Where things live").
 */
import { promises as fs, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { HagentError } from '../errors.js';
import { writeJsonFile } from '../fsx/index.js';
import { worktreeGitDirSync, worktreeRepair } from '../git/index.js';

/** Approval of a session head, recorded by `hagent review --approve`. */
export const ApprovalSchema = z.object({
  head: z.string(),
  /** null: every path; otherwise only these paths. */
  paths: z.nullable(z.array(z.string())),
  at: z.string(),
});

/** One land of a session onto its target. */
export const LandRecordSchema = z.object({
  head: z.string(),
  commit: z.string(),
  target: z.string(),
  mode: z.enum(['squash', 'merge']),
  at: z.string(),
});

export const SessionSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  worktree: z.string(),
  branch: z.string(),
  base: z.string(),
  /** Full ref of the branch the user had checked out (the land target); null when detached. */
  target: z.nullable(z.string()),
  createdAt: z.string(),
  approval: z._default(z.nullable(ApprovalSchema), null),
  lands: z._default(z.array(LandRecordSchema), []),
  /**
   * The agent `hagent run` last launched in the session (`claude`, `codex`, `gemini`,
   * `cursor-agent`, `copilot`), recorded when the run starts; absent for a session no run has
   * launched an agent in (started by `session start`, an agent's own hook, `mcp --new`).
   */
  agent: z.optional(z.string()),
});

export type Session = z.infer<typeof SessionSchema>;
export type Approval = z.infer<typeof ApprovalSchema>;

/** `<git-common-dir>/hagent`: hagent's own folder in a repository. */
export function hagentDir(commonDir: string): string {
  return path.join(commonDir, 'hagent');
}

function sessionFile(commonDir: string, id: string): string {
  return path.join(hagentDir(commonDir), 'sessions', `${id}.json`);
}

/**
 * A session's worktree folder inside the git folder, `<git-common-dir>/hagent/worktrees/<id>`:
 * the default of earlier versions and `worktreeRoot: "git-dir"` now (session start uses
 * worktreeRootFor; sessions made here keep working, their record names the folder).
 */
export function defaultWorktreePath(commonDir: string, id: string): string {
  return path.join(hagentDir(commonDir), 'worktrees', id);
}

/** Session ids: 1–64 of [A-Za-z0-9._-], not starting with `.` or `-`, no `..`, not ending in `.lock`. */
export const SESSION_ID = /^(?![.-])(?!.*\.\.)(?!.*\.lock$)[A-Za-z0-9._-]{1,64}$/;

/**
 * Reads one session. @throws HagentError SESSION_NOT_FOUND (no such file), SESSION_CORRUPT (the
 * file is not JSON or not a session record: it names the file and the fault; nothing is changed).
 */
export async function readSession(commonDir: string, id: string): Promise<Session> {
  return followMove(commonDir, await readSessionRecord(commonDir, id));
}

/**
 * The session's metadata file as it is now, checked, without {@link followMove} (the long-lived
 * MCP server keeps the record while one stat shows the file unchanged; every write of it is a
 * rename, so a new inode). @throws HagentError SESSION_NOT_FOUND.
 */
export async function readSessionRecord(commonDir: string, id: string): Promise<Session> {
  if (!SESSION_ID.test(id))
    throw new HagentError(
      'SESSION_NOT_FOUND',
      `no session named ${JSON.stringify(id)}`,
      { session: id },
      'hagent session list shows the sessions of this repository',
    );
  const parsed = await parseSessionFile(commonDir, id);
  if (parsed === null)
    throw new HagentError(
      'SESSION_NOT_FOUND',
      `no session named ${JSON.stringify(id)}`,
      { session: id },
      'hagent session list shows the sessions of this repository',
    );
  if ('problem' in parsed) throw corruptError(parsed);
  return followMove(commonDir, parsed.session);
}

/** A session file that cannot be read as a session record: its id, file and what is wrong with it. */
export interface BrokenSession {
  id: string;
  file: string;
  problem: string;
}

/** The SESSION_CORRUPT refusal of a broken record; its hint is what to do (doctor, or move it away). */
export function corruptError(b: BrokenSession): HagentError {
  return new HagentError(
    'SESSION_CORRUPT',
    `session ${b.id}: its record ${b.file} is damaged (${b.problem})`,
    { session: b.id, file: b.file, problem: b.problem },
    corruptHint(b),
  );
}

/** What to do about a broken record: doctor rebuilds it when the branch and worktree are there; else move the file away. */
export function corruptHint(b: BrokenSession): string {
  return `run hagent doctor: it rebuilds the record from branch hagent/${b.id} and its worktree; if it cannot, move the file away (mv ${JSON.stringify(b.file)} ${JSON.stringify(`${b.file}.damaged`)}) — the branch and worktree are left as they are`;
}

/** Reads and validates one session file: null when it does not exist, else the session or what is wrong. */
async function parseSessionFile(
  commonDir: string,
  id: string,
): Promise<{ session: Session } | BrokenSession | null> {
  const file = sessionFile(commonDir, id);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { id, file, problem: `not valid JSON: ${(e as Error).message}` };
  }
  const parsed = SessionSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `field ${issue.path.join('.')}: ` : '';
    return { id, file, problem: `not a session record: ${where}${issue?.message ?? 'invalid'}` };
  }
  if (parsed.data.id !== id)
    return {
      id,
      file,
      problem: `not a session record: field id is ${JSON.stringify(parsed.data.id)}, not ${JSON.stringify(id)}`,
    };
  return { session: parsed.data };
}

/** The metadata file of session `id` (`<git-common-dir>/hagent/sessions/<id>.json`). */
export function sessionFilePath(commonDir: string, id: string): string {
  return sessionFile(commonDir, id);
}

/** {@link followMove} for a record read by {@link readSessionRecord}. */
export function sessionAsFound(commonDir: string, record: Session): Promise<Session> {
  return followMove(commonDir, record);
}

/** Sessions whose worktree {@link followMove} found moved with the repository, by common dir. */
const moved = new Map<string, Set<string>>();

/** Forgets the moves seen so far: a long-lived process's fresh start (agents/hook-server.ts). */
export function forgetMovedSessions(): void {
  moved.clear();
}

/** Ids of the sessions of `commonDir` that this process found moved and repaired. */
export function movedSessions(commonDir: string): string[] {
  return [...(moved.get(commonDir) ?? [])];
}

/**
 * A session whose repository folder was moved (`mv repo repo2`): its recorded worktree path is
 * gone, but its worktree is at the default place inside the moved common dir. git's links both
 * ways (the worktree's `.git` file, the common dir's `worktrees/<id>/gitdir`) still name the old
 * place, so they are mended with `git worktree repair <new path>` — git's own repair for moved
 * worktrees — and the session record is rewritten. Every command reads sessions through here,
 * so each keeps working after a move. Anything else is returned as it is.
 */
async function followMove(commonDir: string, session: Session): Promise<Session> {
  if (existsSync(session.worktree)) {
    // A worktree outside the repository stays where it is when the repository moves, but its
    // `.git` file still names the old git dir: git's repair mends that link.
    const linked = worktreeGitDirSync(session.worktree);
    if (!linked || existsSync(linked)) return session;
    if (await worktreeRepair(commonDir, session.worktree)) {
      if (!moved.has(commonDir)) moved.set(commonDir, new Set());
      moved.get(commonDir)!.add(session.id);
    }
    return session;
  }
  const here = defaultWorktreePath(commonDir, session.id);
  if (
    path.resolve(here) === path.resolve(session.worktree) ||
    !statSync(path.join(here, '.git'), { throwIfNoEntry: false })?.isFile()
  )
    return session;
  if (!(await worktreeRepair(commonDir, here))) return session;
  const relocated = { ...session, worktree: here };
  await writeSession(commonDir, relocated);
  if (!moved.has(commonDir)) moved.set(commonDir, new Set());
  moved.get(commonDir)!.add(session.id);
  return relocated;
}

/**
 * Writes a session's metadata atomically (temp file + rename), and durably (fsync of the file and
 * its folder) unless `durable` is false: session start writes it so, as nothing else of a fresh
 * session is on disk yet (git does not fsync the checkout), and an fsync right after a checkout
 * waits for the journal to take in every file git made (1-27 ms measured at 20k files).
 */
export async function writeSession(
  commonDir: string,
  session: Session,
  options: { durable?: boolean } = {},
): Promise<void> {
  await writeJsonFile(sessionFile(commonDir, session.id), session, options);
}

/** Removes a session's metadata file (missing is fine). */
export async function removeSession(commonDir: string, id: string): Promise<void> {
  await fs.rm(sessionFile(commonDir, id), { force: true });
}

/** Every readable session of the repository, oldest first. Broken records are left out: {@link listBrokenSessions} names them. */
export async function listSessions(commonDir: string): Promise<Session[]> {
  return (await scanSessions(commonDir)).sessions;
}

/** The session files of the repository that cannot be read as session records, by id. */
export async function listBrokenSessions(commonDir: string): Promise<BrokenSession[]> {
  return (await scanSessions(commonDir)).broken;
}

async function scanSessions(
  commonDir: string,
): Promise<{ sessions: Session[]; broken: BrokenSession[] }> {
  let names: string[];
  try {
    names = await fs.readdir(path.join(hagentDir(commonDir), 'sessions'));
  } catch {
    return { sessions: [], broken: [] };
  }
  const sessions: Session[] = [];
  const broken: BrokenSession[] = [];
  for (const name of names.sort()) {
    const id = name.slice(0, -5);
    if (!name.endsWith('.json') || !SESSION_ID.test(id)) continue;
    const parsed = await parseSessionFile(commonDir, id);
    if (parsed === null) continue;
    if ('problem' in parsed) broken.push(parsed);
    else sessions.push(await followMove(commonDir, parsed.session));
  }
  return { sessions: sessions.sort((a, b) => a.createdAt.localeCompare(b.createdAt)), broken };
}

/** Branch of a session: `hagent/<id>`; its full ref is `refs/heads/hagent/<id>`. */
export function sessionBranch(id: string): string {
  return `hagent/${id}`;
}

/** Full ref of a session's branch. */
export function sessionRef(session: Pick<Session, 'id'>): string {
  return `refs/heads/${sessionBranch(session.id)}`;
}
