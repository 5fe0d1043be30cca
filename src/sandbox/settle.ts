/**
 * After a sandboxed command: what the session's own commits need leaves the sandbox. New objects
 * move from the session's store into the repository's (each loose object's name checked against
 * its content, each pack verified by git, as git's quarantine migration keeps the store sound);
 * then the session's branch, if the command moved it, moves in the repository with
 * compare-and-swap from the id it held before the command. Nothing else the command wrote in its
 * private folders leaves them.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { isHagentError } from '../errors.js';
import { isOid, objectFormat, runGit } from '../git/index.js';
import { moveRefs } from '../git/ref-transaction.js';
import { entries, type SandboxLaunch } from './launch.js';

/** What {@link settleSandbox} did. */
export interface SettleResult {
  /** Objects moved into the repository's store (loose objects and packs' objects counted as files). */
  objects: number;
  /** The session branch's move, when the command moved it. */
  branch: { old: string | null; new: string } | null;
  /** What was left behind and why (a damaged object, a branch moved by someone else meanwhile…). */
  problems: string[];
}

/** Puts `src` into the store at `dest` unless an object is there already; `src` is gone after. */
function place(src: string, dest: string): boolean {
  let moved = false;
  if (!existsSync(dest)) {
    mkdirSync(path.dirname(dest), { recursive: true });
    try {
      linkSync(src, dest);
      moved = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        renameSync(src, dest);
        return true;
      }
    }
    if (moved) chmodSync(dest, 0o444);
  }
  rmSync(src, { force: true });
  return moved;
}

/**
 * Moves the session store's objects into the repository's. A loose object whose content does not
 * hash to its name, and a pack git does not verify, are dropped (and reported): a wrong object
 * under a name git trusts would corrupt the user's history.
 */
async function migrateObjects(launch: SandboxLaunch, problems: string[]): Promise<number> {
  const store = path.join(launch.stateDir, 'objects');
  const repo = path.join(launch.commonDir, 'objects');
  const algo = objectFormat(launch.commonDir) === 'sha256' ? 'sha256' : 'sha1';
  let moved = 0;
  for (const fan of entries(store)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const rest of entries(path.join(store, fan))) {
      const src = path.join(store, fan, rest);
      const oid = fan + rest;
      let ok = false;
      try {
        ok =
          isOid(oid, objectFormat(launch.commonDir)) &&
          createHash(algo)
            .update(inflateSync(readFileSync(src)))
            .digest('hex') === oid;
      } catch {
        ok = false;
      }
      if (!ok) {
        problems.push(`dropped ${fan}/${rest}: not an object of that name`);
        rmSync(src, { force: true });
        continue;
      }
      if (place(src, path.join(repo, fan, rest))) moved++;
    }
    rmSync(path.join(store, fan), { recursive: true, force: true });
  }
  const packs = path.join(store, 'pack');
  for (const idx of entries(packs).filter((f) => f.endsWith('.idx'))) {
    const base = idx.slice(0, -4);
    const r = await runGit(['verify-pack', path.join(packs, idx)], {
      cwd: launch.worktree,
      allowFailure: true,
    });
    if (r.exitCode !== 0) {
      problems.push(`dropped pack ${base}: git verify-pack refused it`);
      continue;
    }
    // The pack before its index, as git's own migration does: a reader never sees an index
    // without its pack.
    for (const ext of ['.pack', '.rev', '.idx']) {
      const src = path.join(packs, base + ext);
      if (existsSync(src) && place(src, path.join(repo, 'pack', base + ext))) moved++;
    }
  }
  // Whatever else the command left there (commit-graph, a half-written temp file) stays private.
  for (const e of entries(store))
    if (e !== 'info') rmSync(path.join(store, e), { recursive: true, force: true });
  for (const e of entries(path.join(store, 'info')))
    rmSync(path.join(store, 'info', e), { recursive: true, force: true });
  mkdirSync(packs, { recursive: true });
  return moved;
}

/**
 * The id the command left for the session's branch: its loose file in the private branch folder,
 * else its line in a `packed-refs` the command wrote in its private view of the common folder
 * (`git pack-refs`, `git gc`); null when it is neither (deleted, damaged, a symbolic ref).
 */
function branchAfter(launch: SandboxLaunch): string | null {
  const format = objectFormat(launch.commonDir);
  let text: string | null = null;
  try {
    text = readFileSync(path.join(launch.stateDir, 'branch', launch.sessionId), 'utf8').trim();
  } catch {
    try {
      const packed = readFileSync(path.join(launch.stateDir, 'root', 'packed-refs'), 'utf8');
      const line = packed.split('\n').find((l) => l.endsWith(` ${launch.branchRef}`));
      text = line ? line.split(' ')[0]! : null;
    } catch {
      text = null;
    }
  }
  return text !== null && isOid(text, format) ? text : null;
}

/**
 * Brings the session's commits made in the sandbox into the repository: the new objects, then
 * the branch (`refs/heads/hagent/<id>`) with compare-and-swap from its id before the command,
 * when it now names a commit. Call it after every command started with {@link prepareSandbox},
 * before reading the session (a post-command commit, `hagent land`). Never throws: what it
 * could not bring is in `problems`.
 */
export async function settleSandbox(launch: SandboxLaunch): Promise<SettleResult> {
  const problems: string[] = [];
  let objects = 0;
  try {
    objects = await migrateObjects(launch, problems);
  } catch (e) {
    problems.push(`objects not moved: ${(e as Error).message}`);
  }
  const after = branchAfter(launch);
  let branch: SettleResult['branch'] = null;
  if (after === null && launch.branchBefore !== null)
    problems.push(`${launch.branchRef} was deleted or damaged in the sandbox: kept as it was`);
  if (after !== null && after !== launch.branchBefore) {
    const isCommit = await runGit(['cat-file', '-e', `${after}^{commit}`], {
      cwd: launch.worktree,
      allowFailure: true,
    });
    if (isCommit.exitCode !== 0) {
      problems.push(
        `${launch.branchRef} was set to ${after.slice(0, 12)}, not a commit here: kept as it was`,
      );
    } else {
      try {
        await moveRefs(
          launch.worktree,
          [{ ref: launch.branchRef, old: launch.branchBefore, new: after }],
          'hagent: commits made in the sandbox',
        );
        branch = { old: launch.branchBefore, new: after };
      } catch (e) {
        if (!isHagentError(e)) throw e;
        problems.push(`${launch.branchRef} not moved to ${after.slice(0, 12)}: ${e.message}`);
      }
    }
  }
  return { objects, branch, problems };
}
