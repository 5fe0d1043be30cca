/**
 * A `git config` answer kept between calls of a long-running process (`hagent mcp` reads the
 * conversion keys on every apply), re-asked as soon as any file git reads configuration from
 * may have changed. The check is a stat of each such file (git-config(1) "FILES": the system
 * file, the global ones, the repository's `config`, the worktree's `config.worktree`, and every
 * file git named as an origin), compared on device, inode, size, mtime and ctime; a missing
 * file counts as its own state, so one created later is seen too.
 *
 * Nothing is kept when an answer cannot be trusted to stay as a stat sees it: an `include` or
 * `includeIf` anywhere (its target may depend on the branch or on a file not stat'ed), an origin
 * that is not a file or the command line, or a file written within the last second (git's "racy" rule: a second write
 * in the same clock tick would keep the same mtime; ctime, in the signature, catches a write
 * whose mtime was set back). The process's environment is fixed for its
 * life, so `GIT_CONFIG_*` variables and `-c` options stay as they were; where it is not (the hook
 * server runs each request in the request's environment), they are part of the memo's key.
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runGit } from './run.js';

/** A stat this recent (ms) may be followed by a write git's clock cannot tell apart. */
const RACY_MS = 1000;

interface Kept {
  files: string[];
  signature: string;
  value: Buffer;
}

const kept = new Map<string, Kept>();

/** The configuration files git may read for a repository at `gitDir` / `commonDir` (git-config(1)). */
function candidateFiles(gitDir: string | null, commonDir: string | null): string[] {
  const env = process.env;
  const home = env.HOME ?? os.homedir();
  const files: string[] = [];
  if (!env.GIT_CONFIG_NOSYSTEM) files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL !== undefined) files.push(env.GIT_CONFIG_GLOBAL);
  else
    files.push(
      path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'config'),
      path.join(home, '.gitconfig'),
    );
  if (commonDir) files.push(path.join(commonDir, 'config'));
  if (gitDir) files.push(path.join(gitDir, 'config.worktree'));
  return files;
}

/**
 * The variables that move or add configuration (`GIT_CONFIG_*`, `GIT_CONFIG_PARAMETERS`, HOME,
 * XDG_CONFIG_HOME), part of the memo's key: the hook server changes the environment per request.
 */
function configEnv(): string[] {
  return Object.entries(process.env)
    .filter(([k]) => k.startsWith('GIT_CONFIG') || k === 'HOME' || k === 'XDG_CONFIG_HOME')
    .map(([k, v]) => `${k}=${v}`)
    .sort();
}

/** The stat signature of `files`, or null when one changed too recently to be trusted. */
function signatureOf(files: readonly string[]): string | null {
  const now = Date.now();
  const parts: string[] = [];
  for (const f of files) {
    const st = statSync(f, { bigint: true, throwIfNoEntry: false });
    if (!st) {
      parts.push('-');
      continue;
    }
    if (now - Number(st.mtimeMs) < RACY_MS) return null;
    parts.push(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
  }
  return parts.join('|');
}

/**
 * `git config -z --show-origin --get-regexp <pattern>` run in `cwd`, as key → last value
 * records (`git config -z --get-regexp` output, origins dropped), memoised per `cwd` and pattern
 * (module header). `where`: the repository's git dir and common dir when known (null: nothing
 * is memoised, git is asked every time). Never throws: a failing git answers empty, as
 * `--get-regexp` does when nothing matches.
 */
export async function configRegexpMemo(
  cwd: string,
  pattern: string,
  where: { gitDir: string; commonDir: string } | null,
): Promise<Buffer> {
  const key = [cwd, pattern, ...configEnv()].join('\0');
  const before = kept.get(key);
  if (before && where && signatureOf(before.files) === before.signature) return before.value;
  const files = candidateFiles(where?.gitDir ?? null, where?.commonDir ?? null);
  const signature = where ? signatureOf(files) : null;
  const r = await runGit(
    ['config', '-z', '--show-origin', '--get-regexp', `${pattern}|^include(if)?\\..*$`],
    { cwd, allowFailure: true },
  ).catch(() => null);
  const { value, origins, includes } = splitOrigins(r && r.exitCode === 0 ? r.stdout : null);
  const trusted = signature !== null && !includes && origins.every((o) => o !== null);
  if (trusted) {
    const named = (origins as string[]).filter((o) => o !== '').map((o) => path.resolve(cwd, o));
    const all = [...new Set([...files, ...named])];
    const sig = all.length === files.length ? signature : signatureOf(all);
    if (sig !== null) kept.set(key, { files: all, signature: sig, value });
    else kept.delete(key);
  } else kept.delete(key);
  return value;
}

/**
 * Splits `git config -z --show-origin` output into the records without origins (include keys
 * left out), the origin file of each (as git names it, maybe relative to where it ran; `''`
 * for the command line, fixed for the process's life; null for anything else, such as a blob),
 * and whether an include key was seen. Pure.
 */
export function splitOrigins(out: Buffer | null): {
  value: Buffer;
  origins: (string | null)[];
  includes: boolean;
} {
  if (!out) return { value: Buffer.alloc(0), origins: [], includes: false };
  const fields = out.toString('utf8').split('\0');
  const records: string[] = [];
  const origins: (string | null)[] = [];
  let includes = false;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    const rec = fields[i + 1]!;
    origins.push(
      origin.startsWith('file:') ? origin.slice(5) : origin === 'command line:' ? '' : null,
    );
    const name = (rec.includes('\n') ? rec.slice(0, rec.indexOf('\n')) : rec).toLowerCase();
    if (/^include(if)?\./.test(name)) includes = true;
    else records.push(`${rec}\0`);
  }
  return { value: Buffer.from(records.join(''), 'utf8'), origins, includes };
}
