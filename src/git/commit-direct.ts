/**
 * Writing apply's commit object without spawning git. A `git commit-tree` spawn costs ~25 ms on
 * apply's critical path, plus the fork's copy-on-write faults that slow this process for a while
 * after it; the commit object itself is four header lines and the message.
 *
 * What git alone knows is who the author and committer are: `user.name`, `user.email`,
 * `author.*`, `committer.*` from four configuration files, `GIT_AUTHOR_NAME` and friends, `EMAIL`,
 * and the host name and password entry when nothing is configured. So git stays the authority:
 * after git has made a commit for hagent, the identity it wrote is recorded
 * ({@link recordCommitIdentity}) together with a key of everything it was derived from (the
 * identity variables of the environment, `PATH`, the time zone, and the size, times and inode of
 * every file git reads for it), taken before git ran and checked again after. A commit is written
 * here ({@link writeCommitDirect}) only while that key is unchanged; any change, or anything this
 * file does not judge (a fixed `GIT_COMMITTER_DATE`, configuration given in the environment, an
 * include, a relative config path, a `TZ` rule string, a message git would re-encode), leaves
 * the commit to git, which records the identity afresh.
 *
 * The object is the one `git commit-tree -p <parent> <tree>` writes (git 2.39 commit.c
 * commit_tree_extended, ident.c fmt_ident): `tree`, `parent`, `author` and `committer` lines,
 * each identity followed by the time in seconds and the local offset `±hhmm`, a blank line,
 * the message. A record is kept only when git's commit had exactly those lines (no `encoding`
 * from i18n.commitEncoding, no signature) and git's offset equals the one computed here.
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readLooseObject, writeLooseObject, type LooseObjectStore } from './loose.js';
import { isOid } from './object-format.js';
import { commitTree } from './plumbing.js';
import { looseCommitIdents, userConfigFiles } from './commit-idents.js';

/**
 * Variables whose values decide git's identity (ident.c, config.c) or which git runs (`PATH`),
 * or the local offset (`TZ`); part of the key.
 */
const IDENTITY_ENV = [
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'EMAIL',
  'HOME',
  'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'PATH',
  'TZ',
];
/** Variables naming files: git reads a relative (or empty) one from its own folder; git is asked then. */
const PATH_ENV = ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM'];
/** Variables that make git's answer something this file does not reproduce: git writes the commit. */
const ENV_ASK_GIT = [
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_DATE',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_DIR',
  'GIT_COMMON_DIR',
  'GIT_WORK_TREE',
  'TZDIR',
];
/** Where the C library looks up a `TZ` name (no TZDIR: see ENV_ASK_GIT). */
const ZONEINFO = '/usr/share/zoneinfo';
/** An include can pull in any file: the key could not cover it. */
const CONFIG_ASK_GIT = /\[\s*include/i;
/** Files git's default identity reads when nothing is configured (ident.c: mailname, passwd, hosts). */
const SYSTEM_IDENTITY_FILES = ['/etc/mailname', '/etc/passwd', '/etc/hosts', '/etc/resolv.conf'];
const RECORD_VERSION = 1;

/** What {@link recordCommitIdentity} keeps: `Name <email>` of each role, and the key. */
interface IdentityRecord {
  version: number;
  key: string;
  author: string;
  committer: string;
}

/** Where the record of a repository lives. */
function recordPath(commonDir: string): string {
  return path.join(commonDir, 'hagent', 'commit-identity.json');
}

/**
 * `size:mtime:ctime:inode` of `file`, or '-' when absent; null when it holds an include. The
 * ctime catches an edit whose mtime was put back (`touch -r`, `cp -p`, `rsync -a --inplace`).
 */
function fileStamp(file: string, checkIncludes: boolean): string | null {
  const st = statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!st) return '-';
  if (checkIncludes) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return null; // unreadable: git may read it, this file cannot judge it
    }
    if (CONFIG_ASK_GIT.test(text)) return null;
  }
  return `${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
}

/**
 * The key of everything git's identity for a commit made in the worktree with git dir `gitDir`
 * depends on: the identity variables of the environment, `PATH`, the host name, the user id,
 * the local time zone ({@link localZone}), and the stamp (size, mtime, ctime, inode) of the
 * repository's, the worktree's, the user's and the system's configuration files (for each git
 * on `PATH` too) and of /etc/mailname and /etc/passwd.
 * @returns the key (a string), or null when git must be asked: a date fixed in the environment,
 *   configuration given in the environment, a relative path in HOME, XDG_CONFIG_HOME or
 *   GIT_CONFIG_GLOBAL/SYSTEM, a time zone not surely read alike, an include in any
 *   configuration file, or an unreadable one. Never throws.
 */
export function commitIdentityKey(commonDir: string, gitDir: string): string | null {
  try {
    if (ENV_ASK_GIT.some((k) => process.env[k] !== undefined)) return null;
    if (PATH_ENV.some((k) => process.env[k] !== undefined && !path.isAbsolute(process.env[k]!)))
      return null;
    const zone = localZone();
    if (zone === null) return null;
    const parts: string[] = [os.hostname(), String(process.getuid?.() ?? ''), `zone=${zone}`];
    for (const k of IDENTITY_ENV) parts.push(`${k}=${process.env[k] ?? '\0'}`);
    // The worktree's own file is named without its folder: worktrees that have none share a key.
    const files: [string, string][] = [
      ['config', path.join(commonDir, 'config')],
      ['config.worktree', path.join(gitDir, 'config.worktree')],
      ...[...userConfigFiles(), ...prefixConfigFiles()].map((f): [string, string] => [f, f]),
    ];
    for (const [name, file] of files) {
      const stamp = fileStamp(file, true);
      if (stamp === null) return null;
      parts.push(`${name}=${stamp}`);
    }
    for (const file of SYSTEM_IDENTITY_FILES) parts.push(`${file}=${fileStamp(file, false)}`);
    return parts.join('\n');
  } catch {
    return null;
  }
}

/**
 * The system configuration file of each `git` on `PATH` built with its own prefix
 * (`<prefix>/etc/gitconfig`, prefix = the folder above `bin/git`), e.g. a git built into `$HOME`.
 * Reading one too many only makes the key stricter.
 */
function prefixConfigFiles(): string[] {
  const out = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    if (statSync(path.join(dir, 'git'), { throwIfNoEntry: false })?.isFile())
      out.add(path.join(path.dirname(dir), 'etc', 'gitconfig'));
  }
  return [...out];
}

/**
 * The local time zone and the stamp of its zone file, when this process's clock library and
 * git's C library surely read the same zone: `TZ` names a file of the zone database
 * (`Europe/Paris`, `:Asia/Kolkata`), or `TZ` is unset and /etc/localtime is a link into it; and
 * ICU resolves the process's zone to that same name ({@link icuUsesZone}, checked when git's
 * identity is recorded: the key holds this Node, its ICU and zone data versions). A rule string (`CET-1CEST,M3.5.0,M10.5.0/3`,
 * `IST-5:30`), which Node's ICU reads as UTC, an absolute path or `posixrules` (ICU falls back
 * to a fixed offset), or a copied /etc/localtime gives null: git writes the commit. (ICU's own
 * copy of the zone rules could still lag the system's for a future change of rules.)
 */
function localZone(): string | null {
  const tz = process.env.TZ;
  let name: string;
  if (tz !== undefined) {
    name = tz.startsWith(':') ? tz.slice(1) : tz;
  } else {
    if (!lstatSync('/etc/localtime', { throwIfNoEntry: false })?.isSymbolicLink()) return null;
    const target = readlinkSync('/etc/localtime');
    const at = target.lastIndexOf('zoneinfo/');
    if (at < 0) return null;
    name = target.slice(at + 'zoneinfo/'.length);
  }
  if (
    name === '' ||
    /\s/.test(name) ||
    path.isAbsolute(name) ||
    name.split('/').includes('..') ||
    name === 'posixrules'
  )
    return null;
  const file = path.join(ZONEINFO, name);
  const stamp = fileStamp(file, false);
  if (stamp === null || stamp === '-') return null;
  // Which zone ICU resolves is fixed by these inputs and by this Node's ICU and its zone data:
  // checked once, when a commit by git is recorded (icuUsesZone), not at every commit (~26 ms).
  return `${name} ${stamp} node=${process.execPath} ${process.version} icu=${process.versions.icu ?? '-'} tz=${process.versions.tz ?? '-'}`;
}

/**
 * True when ICU (Node's clock library for local time) resolves this process's zone to `zoneKey`'s
 * zone, with its rules, not a fallback offset. Costs ~26 ms (ICU's first DateTimeFormat), so it
 * runs only when git's identity is recorded; the key ({@link localZone}) holds everything its
 * answer depends on. Never throws.
 */
function icuUsesZone(zoneKey: string): boolean {
  const name = zoneKey.slice(0, zoneKey.indexOf(' '));
  try {
    const zone = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
    return !!zone && zone === Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return false;
  }
}

/** The local offset git writes after a time (`±hhmm`), for `seconds` since the epoch. */
export function timezoneOffset(seconds: number): string {
  const minutes = -new Date(seconds * 1000).getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

const HEADER_LINE = /^(tree|parent|author|committer) (.*)$/;
const IDENT = /^(.* <[^<>\n]*>) (\d+) ([+-]\d{4})$/;

/**
 * Records the identity git wrote into `commit` (a loose commit git has just made for hagent in
 * the worktree with git dir `gitDir`), so that the next commits can be written in-process.
 * `keyBefore` is the {@link commitIdentityKey} taken before git ran: the record is kept only when
 * the key is still the same now (nothing git read for the identity changed while it ran).
 * Keeps nothing either when the key is null, the commit is not loose, its header has any line
 * besides tree / parent / author / committer, or git's offset differs from
 * {@link timezoneOffset}'s. Writes the record atomically (it is a cache: no fsync), and removes
 * temp files of the record that a killed writer left. Never throws.
 */
export function recordCommitIdentity(
  commonDir: string,
  gitDir: string,
  store: LooseObjectStore,
  commit: string,
  keyBefore: string | null,
): void {
  try {
    const key = commitIdentityKey(commonDir, gitDir);
    if (key === null || key !== keyBefore) return;
    const zone = /^zone=(.*)$/m.exec(key)?.[1];
    if (!zone || !icuUsesZone(zone)) return;
    const object = readLooseObject(store, commit);
    if (object?.type !== 'commit') return;
    const text = Buffer.from(object.content).toString('utf8');
    const end = text.indexOf('\n\n');
    if (end < 0) return;
    const ids: Record<string, string> = {};
    for (const line of text.slice(0, end).split('\n')) {
      const m = HEADER_LINE.exec(line);
      if (!m) return; // encoding, gpgsig, mergetag, or a continuation line
      if (m[1] === 'author' || m[1] === 'committer') {
        const id = IDENT.exec(m[2]!);
        if (!id || id[3] !== timezoneOffset(Number(id[2]))) return;
        ids[m[1]] = id[1]!;
      }
    }
    if (!ids.author || !ids.committer || autoEmail(ids.author) || autoEmail(ids.committer)) return;
    const record: IdentityRecord = {
      version: RECORD_VERSION,
      key,
      author: ids.author,
      committer: ids.committer,
    };
    const file = recordPath(commonDir);
    mkdirSync(path.dirname(file), { recursive: true });
    removeStaleTemps(file);
    const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(record)}\n`, { flag: 'wx' });
      renameSync(tmp, file);
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch {
    // a cache: the next commit goes through git again
  }
}

/**
 * Whether `ident` (`Name <email>`) has the email git makes up when none is configured
 * (`<user>@<host name>[.<domain>]`, ident.c): the domain may come from DNS, which no file stamp
 * covers, so such an identity is never recorded.
 */
function autoEmail(ident: string): boolean {
  const email = /<([^<>]*)>$/.exec(ident)?.[1] ?? '';
  const at = email.lastIndexOf('@');
  const host = os.hostname().split('.')[0]!.toLowerCase();
  return (
    at > 0 &&
    email.slice(0, at) === os.userInfo().username &&
    email
      .slice(at + 1)
      .toLowerCase()
      .split('.')[0] === host
  );
}

/** Removes `<file>.<pid>-<random>.tmp` files older than a minute (their writer was killed). */
function removeStaleTemps(file: string): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const st = statSync(path.join(dir, name), { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > 60_000) rmSync(path.join(dir, name), { force: true });
  }
}

/** The recorded identity when its key equals `key` (the current one; null: none), else null. */
function currentIdentity(commonDir: string, key: string | null): IdentityRecord | null {
  if (key === null) return null;
  let record: IdentityRecord;
  try {
    record = JSON.parse(readFileSync(recordPath(commonDir), 'utf8')) as IdentityRecord;
  } catch {
    return null;
  }
  if (
    record?.version !== RECORD_VERSION ||
    typeof record.author !== 'string' ||
    typeof record.committer !== 'string'
  )
    return null;
  if (!IDENT.test(`${record.author} 0 +0000`) || !IDENT.test(`${record.committer} 0 +0000`))
    return null;
  return record.key === key ? record : null;
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
 * Writes the commit `git commit-tree <tree> -p <parent>…` would write now with `message`, as a
 * loose object, with the identity git last gave hagent in this repository
 * ({@link recordCommitIdentity}) and the current time.
 * @param tree, parents full object ids of the store's format.
 * @param message the whole message, stored byte for byte (UTF-8).
 * @returns the commit and its identity lines, or null when git must write it: no record, its
 *   key changed (configuration, environment), a malformed id, or a message git would re-encode.
 * @throws the file system's error when writing the object fails.
 */
export async function writeCommitDirect(
  commonDir: string,
  gitDir: string,
  store: LooseObjectStore,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<DirectCommit | null> {
  return writeCommitWithKey(
    commonDir,
    commitIdentityKey(commonDir, gitDir),
    store,
    tree,
    parents,
    message,
  );
}

/** {@link writeCommitDirect} with the current key already taken. */
async function writeCommitWithKey(
  commonDir: string,
  key: string | null,
  store: LooseObjectStore,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<DirectCommit | null> {
  if (![tree, ...parents].every((id) => isOid(id, store.format))) return null;
  if (hasNoncharacter(message) || message.includes('\0')) return null; // git re-encodes the first, refuses the second
  const identity = currentIdentity(commonDir, key);
  if (!identity) return null;
  const seconds = Math.floor(Date.now() / 1000);
  const when = `${seconds} ${timezoneOffset(seconds)}`;
  const author = `${identity.author} ${when}`;
  const committer = `${identity.committer} ${when}`;
  const header = [
    `tree ${tree}`,
    ...parents.map((p) => `parent ${p}`),
    `author ${author}`,
    `committer ${committer}`,
  ].join('\n');
  const oid = await writeLooseObject(
    store,
    'commit',
    Buffer.from(`${header}\n\n${message}`, 'utf8'),
  );
  return { oid, author, committer };
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
 * byte): written in-process ({@link writeCommitDirect}) while the identity git last gave hagent
 * here still holds, else made by `git commit-tree` in `cwd`, whose identity is then recorded.
 * @param gitDir git dir of the worktree the commit is made from (its `config.worktree`).
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
  // One key for both ways: the in-process commit's check, and the record's "before".
  const keyBefore = store && gitDir ? commitIdentityKey(commonDir, gitDir) : null;
  if (store && keyBefore !== null) {
    const made = await writeCommitWithKey(commonDir, keyBefore, store, tree, parents, message);
    if (made) return { ...made, inProcess: true };
  }
  const oid = await commitTree(cwd, tree, parents, message);
  if (!store) return { oid, author: null, committer: null, inProcess: false };
  if (gitDir) recordCommitIdentity(commonDir, gitDir, store, oid, keyBefore);
  const idents = looseCommitIdents(store, oid);
  return {
    oid,
    author: idents?.author ?? null,
    committer: idents?.committer ?? null,
    inProcess: false,
  };
}
