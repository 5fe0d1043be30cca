/**
 * Writing a commit object in-process, the one `git commit-tree -p <parent> <tree>` writes (git
 * 2.39 commit.c commit_tree_extended, ident.c fmt_ident): `tree`, `parent`, `author` and
 * `committer` lines, a blank line, the message. A `commit-tree` spawn costs ~25 ms on apply's
 * critical path; the object is four header lines and the message.
 *
 * Who the author and committer are is git's to say (configuration files, `GIT_AUTHOR_NAME` and
 * friends, `EMAIL`, the system's user and host): git is asked once per process and repository
 * (`git var GIT_AUTHOR_IDENT` / `GIT_COMMITTER_IDENT`, which apply all of those, strictly as
 * commit-tree does), memoised under the worktree and every environment variable that can change
 * the answer. A date fixed in the environment (`GIT_AUTHOR_DATE`, `GIT_COMMITTER_DATE`) is
 * taken from git's answer as it is; otherwise the commit carries the current time and the local
 * offset as a number (`±hhmm`), which must equal git's own offset at the time git answered.
 */
import { runGit } from './run.js';
import { askGit, traceFastPath, type FastPath } from './fast-path.js';
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { isOid } from './object-format.js';
import { commitTree } from './plumbing.js';

/** Environment variables besides `GIT_*` that git's identity or date can depend on. */
const IDENTITY_ENV = ['EMAIL', 'HOME', 'XDG_CONFIG_HOME', 'TZ', 'PATH'];

/** `Name <email> <seconds> <±hhmm>`, as git writes an identity line. */
const IDENT = /^(.* <[^<>\n]*>) (\d+) ([+-]\d{4})$/;

/** One role's identity: `Name <email>`, and the date git was told to use (null: now). */
interface Role {
  who: string;
  fixedWhen: string | null;
}

/** What git said about identity for commits made from one worktree, in this environment. */
type Identity = FastPath<{ author: Role; committer: Role }>;

const identities = new Map<string, Promise<Identity>>();

/** The memo key: the worktree and every variable git's answer may depend on. */
function identityKey(cwd: string): string {
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('GIT_') || IDENTITY_ENV.includes(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return [cwd, ...env].join('\0');
}

/** The local offset written after a time (`±hhmm`), for `seconds` since the epoch. */
export function timezoneOffset(seconds: number): string {
  const minutes = -new Date(seconds * 1000).getTimezoneOffset();
  const abs = Math.abs(minutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  return `${minutes < 0 ? '-' : '+'}${hh}${String(abs % 60).padStart(2, '0')}`;
}

/** Parses one `git var` identity line of `role` (`GIT_AUTHOR_DATE` fixed or not). */
function parseRole(line: string, fixed: boolean): Role | string {
  const m = IDENT.exec(line);
  if (!m) return `git var printed an identity this file does not parse: ${line}`;
  const [, who, seconds, offset] = m;
  if (fixed) return { who: who!, fixedWhen: `${seconds} ${offset}` };
  if (timezoneOffset(Number(seconds)) !== offset)
    return `git's local offset ${offset} differs from this process's (TZ)`;
  return { who: who!, fixedWhen: null };
}

/** Asks git for the identity of commits made in `cwd` (three spawns, side by side). */
async function askIdentity(cwd: string): Promise<Identity> {
  const opts = { cwd, allowFailure: true } as const;
  const [author, committer, encoding] = await Promise.all([
    runGit(['var', 'GIT_AUTHOR_IDENT'], opts),
    runGit(['var', 'GIT_COMMITTER_IDENT'], opts),
    runGit(['config', '--get', 'i18n.commitEncoding'], opts),
  ]);
  for (const r of [author, committer])
    if (r.exitCode !== 0) return askGit(`git var: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  const enc = encoding.stdout.toString('utf8').trim();
  if (encoding.exitCode === 0 && !/^utf-?8$/i.test(enc))
    return askGit(`i18n.commitEncoding is ${enc}`); // git adds an `encoding` header
  const a = parseRole(author.stdout.toString('utf8').trim(), !!process.env.GIT_AUTHOR_DATE);
  const c = parseRole(committer.stdout.toString('utf8').trim(), !!process.env.GIT_COMMITTER_DATE);
  if (typeof a === 'string') return askGit(a);
  if (typeof c === 'string') return askGit(c);
  return { kind: 'done', author: a, committer: c };
}

/**
 * git's identity for commits made in the worktree `cwd`, asked once per process and
 * environment ({@link identityKey}); the answer, `askGit` included, is kept for the process:
 * a long-lived server keeps the identity it started with. Never throws (a spawn failure is an
 * `askGit`).
 */
export function gitIdentity(cwd: string): Promise<Identity> {
  const key = identityKey(cwd);
  let got = identities.get(key);
  if (!got) {
    got = askIdentity(cwd).catch((e: unknown) => askGit(`git var: ${(e as Error).message}`));
    identities.set(key, got);
  }
  return got;
}

/**
 * Whether `text` holds a Unicode noncharacter (U+FDD0–U+FDEF, U+xxFFFE, U+xxFFFF): git's
 * verify_utf8 (commit.c, utf8.c find_invalid_utf8) calls those invalid and re-encodes the
 * message as if it were Latin-1, so git must write such a commit. Nothing else a JavaScript
 * string encodes to is invalid for git (a lone surrogate becomes U+FFFD on both paths).
 */
function hasNoncharacter(text: string): boolean {
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) === 0xfffe) return true;
  }
  return false;
}

/** A commit written in-process: its id and its identity lines, for the reflog and the note. */
export interface DirectCommit {
  oid: string;
  /** `Name <email> <seconds> <±hhmm>`, as written in the commit. */
  author: string;
  committer: string;
}

/**
 * Writes, as a loose object, the commit `git commit-tree <tree> -p <parent>…` run in `cwd`
 * would write now with `message` (stored byte for byte, UTF-8), with git's identity
 * ({@link gitIdentity}) and the current time.
 * @returns `done` with the commit and its identity lines, or `askGit` with the reason: a
 *   malformed id, a message git would re-encode or refuse, no identity from git, a commit
 *   encoding other than UTF-8, or an offset git and this process disagree on.
 * @throws the file system's error when writing the object fails.
 */
export async function writeCommitDirect(
  cwd: string,
  store: LooseObjectStore,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<FastPath<DirectCommit>> {
  if (![tree, ...parents].every((id) => isOid(id, store.format)))
    return askGit('an object id of another shape');
  if (hasNoncharacter(message)) return askGit('a Unicode noncharacter in the message');
  if (message.includes('\0')) return askGit('a NUL in the message');
  const identity = await gitIdentity(cwd);
  if (identity.kind === 'askGit') return identity;
  const seconds = Math.floor(Date.now() / 1000);
  const now = `${seconds} ${timezoneOffset(seconds)}`;
  const author = `${identity.author.who} ${identity.author.fixedWhen ?? now}`;
  const committer = `${identity.committer.who} ${identity.committer.fixedWhen ?? now}`;
  const header = [
    `tree ${tree}`,
    ...parents.map((p) => `parent ${p}`),
    `author ${author}`,
    `committer ${committer}`,
  ].join('\n');
  const body = Buffer.from(`${header}\n\n${message}`, 'utf8');
  return { kind: 'done', oid: await writeLooseObject(store, 'commit', body), author, committer };
}

/** The author and committer lines of the loose commit `oid`, or null when not at hand. */
export function looseCommitIdentities(
  store: LooseObjectStore,
  oid: string,
): { author: string; committer: string } | null {
  const object = readLooseObject(store, oid);
  if (object?.type !== 'commit') return null;
  const text = Buffer.from(object.content).toString('utf8');
  const header = text.slice(0, Math.max(0, text.indexOf('\n\n')));
  const author = /^author (.*)$/m.exec(header)?.[1];
  const committer = /^committer (.*)$/m.exec(header)?.[1];
  return author && committer ? { author, committer } : null;
}

/** A commit made by {@link writeCommit}. */
export interface MadeCommit {
  oid: string;
  /** Its identity lines (`Name <email> <seconds> <±hhmm>`), or null when they cannot be read. */
  author: string | null;
  committer: string | null;
  /** Whether it was written in-process. */
  inProcess: boolean;
}

/**
 * The commit of `tree` with `parents` and `message` (ending with a newline, stored byte for
 * byte): written in-process ({@link writeCommitDirect}) when the store is at hand and git's
 * identity allows, else made by `git commit-tree` in `cwd`. Traced as `commit: in-process` or
 * `commit: git (<reason>)`.
 * @param commonDir, gitDir kept for the callers' shape; the identity is git's for `cwd`.
 * @param store the loose object store, or null (a shared repository): git makes it.
 * @throws HagentError GIT_FAILED from git; the file system's error writing the object.
 */
export async function writeCommit(
  cwd: string,
  commonDir: string,
  gitDir: string | null,
  store: LooseObjectStore | null,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<MadeCommit> {
  void commonDir;
  void gitDir;
  const made = traceFastPath(
    'commit',
    store
      ? await writeCommitDirect(cwd, store, tree, parents, message)
      : askGit('no loose object store'),
  );
  if (made.kind === 'done') {
    const { oid, author, committer } = made;
    return { oid, author, committer, inProcess: true };
  }
  const oid = await commitTree(cwd, tree, parents, message);
  const idents = store ? looseCommitIdentities(store, oid) : null;
  return {
    oid,
    author: idents?.author ?? null,
    committer: idents?.committer ?? null,
    inProcess: false,
  };
}
