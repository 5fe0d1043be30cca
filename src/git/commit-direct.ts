/**
 * Writing a commit object in-process, the one `git commit-tree -p <parent> <tree>` writes (git
 * 2.39 commit.c commit_tree_extended, ident.c fmt_ident): `tree`, `parent`, `author` and
 * `committer` lines, a blank line, the message. A `commit-tree` spawn costs ~25 ms on apply's
 * critical path; the object is four header lines and the message.
 *
 * Who the author and committer are is git's to say (configuration files, `GIT_AUTHOR_NAME` and
 * friends, `EMAIL`): git is asked (`git var GIT_AUTHOR_IDENT` / `GIT_COMMITTER_IDENT`, which
 * apply all of those, strictly as commit-tree does), and its answer is kept twice: for the
 * process, and in the repository (`<git-common-dir>/hagent/identity-cache.json`) for the next
 * processes — an agent's hook is a process per tool call, and asking git cost each of them three
 * spawns (~30 ms). A kept answer holds for the same worktree and the same environment (every
 * `GIT_*` variable, `EMAIL`, `HOME`, `XDG_CONFIG_HOME`, `TZ`, `PATH`) while every configuration
 * file git read, or could read, is unchanged (inode, size, change and modification times): the
 * files git named as the origin of a setting, the files they include, and the standard places
 * (system, global, the repository's and the worktree's own). An identity git guessed from the
 * system (no name or email configured or in the environment) is not kept. A date fixed in the
 * environment (`GIT_AUTHOR_DATE`, `GIT_COMMITTER_DATE`) is taken from git's answer as it is;
 * otherwise the commit carries the current time and the local offset as a number (`±hhmm`),
 * which must equal git's own offset at the time git answered.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { trace } from '../trace/index.js';
import { runGit } from './run.js';
import { askGit, traceFastPath, type FastPath } from './fast-path.js';
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { isOid } from './object-format.js';
import { commitTree, worktreeGitDirSync } from './plumbing.js';

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

/** One configuration setting as `git config --list --show-origin -z` prints it. */
interface Setting {
  /** The file it came from (absolute), or null (the command line, a blob). */
  file: string | null;
  key: string;
  value: string;
}

/** Parses `git config --list --show-origin -z` run in `cwd` (`origin\0key\nvalue\0`…). Pure. */
export function parseConfigList(out: string, cwd: string): Setting[] {
  const parts = out.split('\0');
  const settings: Setting[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const origin = parts[i]!;
    const nl = parts[i + 1]!.indexOf('\n');
    const key = nl < 0 ? parts[i + 1]! : parts[i + 1]!.slice(0, nl);
    const value = nl < 0 ? '' : parts[i + 1]!.slice(nl + 1);
    const file = origin.startsWith('file:') ? path.resolve(cwd, origin.slice(5)) : null;
    settings.push({ file, key, value });
  }
  return settings;
}

/**
 * Every file git reads, or would read, configuration from for commits made in `cwd`: the
 * standard places (git-config(1) FILES, each moved or disabled by its variable), the files git
 * named as origins, and the targets of their `include.path` / `includeIf.*.path` (a missing
 * one included later would change the answer). Also the worktree's HEAD, which
 * `includeIf.onbranch:` reads.
 */
function configFiles(cwd: string, commonDir: string, settings: readonly Setting[]): string[] {
  const env = process.env;
  const home = env.HOME ?? os.homedir();
  const files = new Set<string>();
  if (!env.GIT_CONFIG_NOSYSTEM) files.add(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL) files.add(env.GIT_CONFIG_GLOBAL);
  else {
    files.add(path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'config'));
    files.add(path.join(home, '.gitconfig'));
  }
  const gitDir = worktreeGitDirSync(cwd) ?? commonDir;
  for (const f of [
    path.join(commonDir, 'config'),
    path.join(gitDir, 'config.worktree'),
    path.join(gitDir, 'HEAD'),
  ])
    files.add(f);
  for (const s of settings) {
    if (s.file) files.add(s.file);
    if (s.file && /^include(?:if\..*)?\.path$/.test(s.key) && s.value) {
      const target = s.value.startsWith('~/') ? path.join(home, s.value.slice(2)) : s.value;
      files.add(path.resolve(path.dirname(s.file), target));
    }
  }
  return [...files];
}

/** A file's stamp: what any rewrite of it changes (inode, size, times), or `-` when missing. */
function stamp(file: string): string {
  try {
    const st = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (!st) return '-';
    // A device (GIT_CONFIG_GLOBAL=/dev/null) is stamped by its inode: writes elsewhere touch its times.
    return st.isFile() ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : `other:${st.ino}`;
  } catch {
    return '?';
  }
}

/** Whether git takes both roles' name and email from settings or the environment (not guessed). */
function configured(settings: readonly Setting[]): boolean {
  const keys = new Set(settings.map((s) => s.key));
  const env = process.env;
  return (['AUTHOR', 'COMMITTER'] as const).every((role) => {
    const lower = role.toLowerCase();
    const name = env[`GIT_${role}_NAME`] || keys.has(`${lower}.name`) || keys.has('user.name');
    const email =
      env[`GIT_${role}_EMAIL`] || keys.has(`${lower}.email`) || keys.has('user.email') || env.EMAIL;
    return !!name && !!email;
  });
}

/** git's answer, and the stamps of the files it depends on when it may be kept (else null). */
interface Asked {
  identity: Identity;
  stamps: [string, string][] | null;
}

/** Asks git for the identity of commits made in `cwd` (three spawns, side by side). */
async function askIdentity(cwd: string, commonDir: string | null): Promise<Asked> {
  const opts = { cwd, allowFailure: true } as const;
  // Stamped before git reads: a file changed while git reads it is then seen as changed.
  const before = commonDir ? configFiles(cwd, commonDir, []).map((f) => [f, stamp(f)]) : [];
  const [author, committer, config] = await Promise.all([
    runGit(['var', 'GIT_AUTHOR_IDENT'], opts),
    runGit(['var', 'GIT_COMMITTER_IDENT'], opts),
    runGit(['config', '--list', '--show-origin', '-z'], opts),
  ]);
  const fail = (reason: string): Asked => ({ identity: askGit(reason), stamps: null });
  for (const r of [author, committer])
    if (r.exitCode !== 0) return fail(`git var: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  if (config.exitCode !== 0) return fail('git config --list failed');
  const settings = parseConfigList(config.stdout.toString('utf8'), cwd);
  const enc = settings
    .filter((s) => s.key === 'i18n.commitencoding')
    .pop()
    ?.value.trim();
  if (enc !== undefined && !/^utf-?8$/i.test(enc)) return fail(`i18n.commitEncoding is ${enc}`); // git adds an `encoding` header
  const a = parseRole(author.stdout.toString('utf8').trim(), !!process.env.GIT_AUTHOR_DATE);
  const c = parseRole(committer.stdout.toString('utf8').trim(), !!process.env.GIT_COMMITTER_DATE);
  if (typeof a === 'string') return fail(a);
  if (typeof c === 'string') return fail(c);
  const identity: Identity = { kind: 'done', author: a, committer: c };
  if (!commonDir || !configured(settings)) return { identity, stamps: null };
  const stamps = configFiles(cwd, commonDir, settings).map((f): [string, string] => [f, stamp(f)]);
  const changed = before.some(([f, s]) => stamps.find(([g]) => g === f)?.[1] !== s);
  return { identity, stamps: changed ? null : stamps };
}

/** One kept answer of git (`identity-cache.json` holds the newest few). */
interface KeptIdentity {
  /** SHA-256 of {@link identityKey}. */
  key: string;
  stamps: [string, string][];
  author: Role;
  committer: Role;
}

const KEPT_MAX = 8;
const keptFile = (commonDir: string) => path.join(commonDir, 'hagent', 'identity-cache.json');

function readKept(commonDir: string): KeptIdentity[] {
  try {
    const kept = JSON.parse(readFileSync(keptFile(commonDir), 'utf8')) as { entries?: unknown };
    return Array.isArray(kept.entries) ? (kept.entries as KeptIdentity[]) : [];
  } catch {
    return [];
  }
}

/** The kept answer for `key` whose files are all unchanged, or null. */
function keptIdentity(commonDir: string, key: string): Identity | null {
  const hit = readKept(commonDir).find((e) => e.key === key);
  if (!hit || !Array.isArray(hit.stamps) || !hit.author || !hit.committer) return null;
  if (!hit.stamps.every(([f, s]) => stamp(f) === s)) return null;
  return { kind: 'done', author: hit.author, committer: hit.committer };
}

/**
 * Keeps git's answer for the next processes: written whole under a temporary name and renamed
 * (a reader sees the old file or the new one); a writer racing another may drop its entry,
 * which only costs a later process one more question. Only where hagent's folder exists; any
 * failure only means "not kept".
 */
function keepIdentity(commonDir: string, entry: KeptIdentity): void {
  const file = keptFile(commonDir);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    if (!statSync(path.dirname(file), { throwIfNoEntry: false })?.isDirectory()) return;
    const entries = [entry, ...readKept(commonDir).filter((e) => e.key !== entry.key)];
    writeFileSync(tmp, `${JSON.stringify({ entries: entries.slice(0, KEPT_MAX) })}\n`);
    renameSync(tmp, file);
  } catch {
    // not kept: the next process asks git
    rmSync(tmp, { force: true });
  }
}

async function identityOf(cwd: string, commonDir: string | null, key: string): Promise<Identity> {
  const digest = createHash('sha256').update(key).digest('hex');
  const kept = commonDir ? keptIdentity(commonDir, digest) : null;
  if (kept) {
    trace('identity: kept');
    return kept;
  }
  const asked = await askIdentity(cwd, commonDir);
  const id = asked.identity;
  if (commonDir && asked.stamps && id.kind === 'done')
    keepIdentity(commonDir, {
      key: digest,
      stamps: asked.stamps,
      author: id.author,
      committer: id.committer,
    });
  return id;
}

/**
 * git's identity for commits made in the worktree `cwd`, asked once per process and
 * environment ({@link identityKey}) and kept in `commonDir` for the next processes while the
 * configuration files are unchanged (see the file's header); the answer, `askGit` included, is
 * kept for the process: a long-lived server keeps the identity it started with, unless it
 * calls {@link forgetIdentities} (the hook server does, before each request). Never throws (a
 * spawn failure is an `askGit`).
 * @param commonDir the repository's common dir, or null: asked of git in every process.
 */
export function gitIdentity(cwd: string, commonDir: string | null = null): Promise<Identity> {
  const key = identityKey(cwd);
  let got = identities.get(key);
  if (!got) {
    got = identityOf(cwd, commonDir, key).catch((e: unknown) =>
      askGit(`git var: ${(e as Error).message}`),
    );
    identities.set(key, got);
  }
  return got;
}

/**
 * Forgets the identities this process asked for, so the next {@link gitIdentity} is as in a new
 * process (the kept file, checked against its files' stamps, then git). For a long-lived process
 * that must see what a process of its own would (the hook server, agents/hook-server.ts).
 */
export function forgetIdentities(): void {
  identities.clear();
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
  const identity = await gitIdentity(cwd, path.dirname(store.objectsDir));
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
