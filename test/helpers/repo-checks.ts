/**
 * Checks of a repository after a command, shared by the tests and the reliability figures
 * (bench/reliability/): the worktree against a commit, hagent's temp files left behind,
 * `git fsck`, and git run without throwing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { GIT_ENV } from './index.js';

/** Runs git; returns status and output (never throws). */
export function gitRaw(
  cwd: string,
  args: string[],
  input?: string,
): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'utf8',
    input: input ?? '',
    maxBuffer: 1 << 28,
  });
  return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** True when `name` looks like one of hagent's temp files (`.<name>.hagent-<txid>.tmp`). */
export const isTempFile = (name: string) => /\.hagent-.*\.tmp$/.test(name);

/** Every hagent temp file below `dir` (relative paths), `.git` included except object storage. */
export function tempFilesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const abs = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      let st;
      try {
        st = lstatSync(abs);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (name !== 'objects') walk(abs, r);
      } else if (isTempFile(name)) out.push(r);
    }
  };
  walk(dir, '');
  return out;
}

/**
 * Compares a worktree with the tree of `commit`: every blob id (hashed with
 * `git hash-object --no-filters`) and mode, and no extra files (nor symlinks). Empty folders
 * (git does not track them) are returned apart, not as problems.
 */
export function compareWorktreeWithCommit(
  worktree: string,
  commit: string,
): { problems: string[]; emptyDirs: string[] } {
  const problems: string[] = [];
  const emptyDirs: string[] = [];
  const want = new Map<string, { mode: string; oid: string }>();
  const ls = gitRaw(worktree, ['ls-tree', '-r', '-z', '--full-tree', commit]);
  if (ls.status !== 0)
    return { problems: [`git ls-tree ${commit} failed: ${ls.stderr}`], emptyDirs };
  for (const rec of ls.stdout.split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode, , oid] = rec.slice(0, tab).split(' ');
    want.set(rec.slice(tab + 1), { mode: mode!, oid: oid! });
  }
  const disk = new Map<string, { mode: string }>();
  const walk = (d: string, rel: string) => {
    const names = readdirSync(d);
    if (rel && names.length === 0) emptyDirs.push(rel);
    for (const name of names) {
      if (!rel && name === '.git') continue;
      const abs = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) disk.set(r, { mode: '120000' });
      else if (st.isDirectory()) walk(abs, r);
      else disk.set(r, { mode: st.mode & 0o111 ? '100755' : '100644' });
    }
  };
  walk(worktree, '');
  const files = [...disk.keys()].filter((p) => disk.get(p)!.mode !== '120000');
  const hashed = files.length
    ? gitRaw(
        worktree,
        ['hash-object', '--no-filters', '--stdin-paths'],
        files.join('\n') + '\n',
      ).stdout.split('\n')
    : [];
  files.forEach((p, i) => {
    const w = want.get(p);
    if (!w) problems.push(`extra file on disk: ${p}`);
    else if (w.oid !== hashed[i])
      problems.push(`${p}: disk blob ${hashed[i]} ≠ head blob ${w.oid}`);
    else if (w.mode !== disk.get(p)!.mode)
      problems.push(`${p}: disk mode ${disk.get(p)!.mode} ≠ head mode ${w.mode}`);
  });
  for (const p of disk.keys())
    if (disk.get(p)!.mode === '120000') problems.push(`unexpected symlink on disk: ${p}`);
  for (const p of want.keys()) if (!disk.has(p)) problems.push(`missing on disk: ${p}`);
  return { problems, emptyDirs };
}

/** `git fsck --no-dangling`: null when clean, else its complaint. */
export function fsckProblem(repo: string): string | null {
  const r = gitRaw(repo, ['fsck', '--no-dangling', '--no-progress']);
  const noise = (r.stdout + r.stderr).split('\n').filter((l) => l.trim() && !/^Checking /.test(l));
  return r.status === 0 && noise.length === 0
    ? null
    : `git fsck: status ${r.status}: ${noise.slice(0, 5).join(' | ')}`;
}

/**
 * The user's checkout files (not `.git`, which hagent itself writes: its records, the session's
 * refs), each with its content's hash: equal before and after means no byte changed.
 */
export function checkoutHashes(repo: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (d === repo && name === '.git') continue;
      if (statSync(p).isDirectory()) walk(p);
      else out.set(p, createHash('sha1').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(repo);
  return out;
}
