/**
 * git's conversions between a worktree file and its blob (gitattributes(5) "Checking-out and
 * checking-in"): end-of-line conversion (`text`, `eol`, `crlf`, `core.autocrlf`), `ident`,
 * `working-tree-encoding` and filter drivers (`filter=lfs` among them). For a path with none of
 * them the blob is the file's exact bytes and hagent computes its id in-process; for the others
 * git itself converts — `git hash-object --path` (clean: what git would store) and
 * `git cat-file --filters` (smudge: what `git checkout` would write) — since only git knows
 * exactly what its conversions do (safecrlf, the index's CRLF check of `text=auto`, a
 * driver's own program).
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';
import { HagentError } from '../errors.js';
import { blobId } from './objects.js';
import type { ObjectFormat } from './object-format.js';
import { locateWorktreeDirect, type RepoLocation } from './plumbing.js';
import { runGit } from './run.js';
import { configRegexpMemo } from './config-memo.js';

/** How git treats each of a set of worktree paths. */
export interface Conversions {
  /** Paths whose blob differs from the file's bytes in some repository state: git converts them. */
  converted: Set<string>;
  /** Paths whose `filter` attribute names a driver with no `clean` or `process` command: path → driver. */
  missingDriver: Map<string, string>;
}

/** The attributes that can make a blob differ from its file. */
const ATTRIBUTES = ['filter', 'text', 'eol', 'crlf', 'ident', 'working-tree-encoding'];

/** Parses `git check-attr -z` output into path → attribute → value. Pure. */
export function parseCheckAttr(out: Buffer): Map<string, Map<string, string>> {
  const fields = out.toString('utf8').split('\0');
  const byPath = new Map<string, Map<string, string>>();
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [p, attr, value] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    if (!byPath.has(p)) byPath.set(p, new Map());
    byPath.get(p)!.set(attr, value);
  }
  return byPath;
}

/** Parses `git config -z --get-regexp` output into key → last value. Pure. */
export function parseConfigZ(out: Buffer): Map<string, string> {
  const values = new Map<string, string>();
  for (const rec of out.toString('utf8').split('\0')) {
    if (rec === '') continue;
    const nl = rec.indexOf('\n');
    values.set(
      (nl < 0 ? rec : rec.slice(0, nl)).toLowerCase(),
      nl < 0 ? 'true' : rec.slice(nl + 1),
    );
  }
  return values;
}

const given = (v: string | undefined) => v !== undefined && v !== 'unspecified' && v !== 'unset';

/**
 * Which of `paths` git converts, from their attributes and the config (rules of
 * gitattributes(5)): a configured filter driver, `ident`, a `working-tree-encoding`, or
 * end-of-line conversion — `text` set or `auto`, `eol` or legacy `crlf` given, or, with `text`
 * unspecified, `core.autocrlf` true or input. `-text` (or `-crlf`) turns end-of-line conversion
 * off. A `filter` naming a driver with neither `clean` nor `process` configured is reported in
 * `missingDriver`: git would store the raw bytes, which is not what the repository asks for.
 * One `git config` call, then one `git check-attr` for all paths unless no attributes file
 * can apply to them.
 * @param cwd a worktree (its `.gitattributes` files count). Paths relative to its root.
 * @throws HagentError GIT_FAILED.
 */
export async function conversionsOf(cwd: string, paths: readonly string[]): Promise<Conversions> {
  const result: Conversions = { converted: new Set(), missingDriver: new Map() };
  if (paths.length === 0) return result;
  const here = locateWorktreeDirect(cwd);
  const config = await readConversionConfig(cwd, here);
  const noAttributes =
    here?.topLevel != null &&
    !attributeSourcesExist(here.topLevel, here.commonDir, paths, config.get('core.attributesfile'));
  const attrs = noAttributes
    ? new Map<string, Map<string, string>>()
    : parseCheckAttr(
        (
          await runGit(['check-attr', '-z', '--stdin', ...ATTRIBUTES], {
            cwd,
            input: paths.map((p) => `${p}\0`).join(''),
          })
        ).stdout,
      );
  const autocrlf = (config.get('core.autocrlf') ?? 'false').toLowerCase();
  const autoEol = autocrlf === 'input' || ['true', 'yes', 'on', '1'].includes(autocrlf);
  for (const p of paths) {
    const a = attrs.get(p) ?? new Map<string, string>();
    const filter = a.get('filter');
    if (given(filter)) {
      const driver = filter === 'set' ? '' : filter!;
      if (
        config.has(`filter.${driver.toLowerCase()}.clean`) ||
        config.has(`filter.${driver.toLowerCase()}.process`)
      )
        result.converted.add(p);
      else result.missingDriver.set(p, driver);
    }
    const text = a.get('text');
    const crlf = a.get('crlf');
    const eolOff = text === 'unset' || (text === 'unspecified' && crlf === 'unset');
    const eolOn =
      !eolOff &&
      (given(text) || given(a.get('eol')) || given(crlf) || (text !== 'unset' && autoEol));
    if (eolOn || given(a.get('ident')) || given(a.get('working-tree-encoding')))
      result.converted.add(p);
  }
  return result;
}

/**
 * The configuration keys that decide conversions, as `git config -z --get-regexp` lists them;
 * kept between calls while no configuration file changed (config-memo.ts), so a long-running
 * server spawns no git for them on every apply.
 */
async function readConversionConfig(
  cwd: string,
  here: RepoLocation | null,
): Promise<Map<string, string>> {
  const out = await configRegexpMemo(
    cwd,
    '^(core\\.(autocrlf|attributesfile)|filter\\..+\\.(clean|process))$',
    here ? { gitDir: here.gitDir, commonDir: here.commonDir } : null,
  );
  return parseConfigZ(out);
}

/**
 * Whether any file git reads attributes from may exist for `paths` (gitattributes(5) "DESCRIPTION"):
 * a `.gitattributes` in the worktree root or a folder on the way to a path, `info/attributes` of
 * the common dir, `core.attributesFile` (default `$XDG_CONFIG_HOME/git/attributes`, or
 * `~/.config/git/attributes`), and the system file (`/etc/gitattributes`, or `<prefix>/etc/` of
 * a git on PATH). When none exists every attribute is unspecified and `git check-attr` need not
 * run. Conservative: a path it cannot judge counts as existing.
 */
function attributeSourcesExist(
  topLevel: string,
  commonDir: string,
  paths: readonly string[],
  attributesFile: string | undefined,
): boolean {
  // A file where a folder on the way would be (a patch path through a file) holds no
  // attributes file; any other error counts as existing (conservative).
  const exists = (f: string): boolean => {
    try {
      return statSync(f, { throwIfNoEntry: false }) !== undefined;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code !== 'ENOTDIR';
    }
  };
  const dirs = new Set<string>(['']);
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  for (const d of dirs) if (exists(nodePath.join(topLevel, d, '.gitattributes'))) return true;
  if (exists(nodePath.join(commonDir, 'info', 'attributes'))) return true;
  const home = process.env.HOME ?? os.homedir();
  let global =
    attributesFile ??
    nodePath.join(
      process.env.XDG_CONFIG_HOME || nodePath.join(home, '.config'),
      'git',
      'attributes',
    );
  if (global.startsWith('~/')) global = nodePath.join(home, global.slice(2));
  if (!nodePath.isAbsolute(global) || exists(global)) return true;
  const system = ['/etc/gitattributes'];
  for (const dir of (process.env.PATH ?? '').split(nodePath.delimiter)) {
    if (dir && nodePath.isAbsolute(dir) && exists(nodePath.join(dir, 'git')))
      system.push(nodePath.join(nodePath.dirname(dir), 'etc', 'gitattributes'));
  }
  return system.some(exists);
}

/**
 * The blob ids git would store for `files` as they are: in-process (exact bytes) for paths not in
 * `converted`, else git's clean conversion of the bytes on disk (`git hash-object --stdin-paths`,
 * one call, nothing written). Used for staleness: a file is fresh when this id equals its blob.
 * @param cwd the worktree holding the files. @returns path → blob id.
 * @throws HagentError FILTER_FAILED when git's conversion fails (a filter program that fails).
 */
export async function storedBlobIds(
  cwd: string,
  files: readonly { path: string; bytes: Uint8Array }[],
  converted: ReadonlySet<string>,
  format: ObjectFormat,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const viaGit = files.filter((f) => converted.has(f.path));
  for (const f of files) if (!converted.has(f.path)) ids.set(f.path, blobId(f.bytes, format));
  if (viaGit.length === 0) return ids;
  const r = await runGit(['hash-object', '--stdin-paths'], {
    cwd,
    input: viaGit.map((f) => `${f.path}\n`).join(''),
    allowFailure: true,
  });
  if (r.exitCode !== 0)
    throw filterFailed(
      viaGit.map((f) => f.path),
      r.stderr,
    );
  r.stdout
    .toString('latin1')
    .trim()
    .split('\n')
    .forEach((oid, i) => ids.set(viaGit[i]!.path, oid));
  return ids;
}

/**
 * {@link storedBlobIds} with the conversions looked up first ({@link conversionsOf}): for callers
 * that check a few files once (undo, recovery).
 * @throws HagentError GIT_FAILED, FILTER_FAILED.
 */
export async function storedBlobIdsOf(
  cwd: string,
  files: readonly { path: string; bytes: Uint8Array }[],
  format: ObjectFormat,
): Promise<Map<string, string>> {
  if (files.length === 0) return new Map();
  const { converted } = await conversionsOf(
    cwd,
    files.map((f) => f.path),
  );
  return storedBlobIds(cwd, files, converted, format);
}

/**
 * Stores `bytes` as git would store the file `path` holding them (clean conversion,
 * `git hash-object -w --stdin --path`), then reads that blob back as `git checkout` would write
 * it (`git cat-file --filters --path`): the blob id to commit and the bytes to put in the worktree.
 * A filter driver's own store (git-lfs's objects) is written by its clean step.
 * @throws HagentError FILTER_FAILED naming the path when either step fails.
 */
export async function storeConverted(
  cwd: string,
  path: string,
  bytes: Uint8Array,
): Promise<{ oid: string; checkedOut: Buffer }> {
  const clean = await runGit(['hash-object', '-w', '--stdin', `--path=${path}`], {
    cwd,
    input: bytes,
    allowFailure: true,
  });
  if (clean.exitCode !== 0) throw filterFailed([path], clean.stderr);
  const oid = clean.stdout.toString('latin1').trim();
  return { oid, checkedOut: await readBlobCheckedOut(cwd, path, oid) };
}

/**
 * The bytes `git checkout` writes for blob `oid` at `path` (smudge and end-of-line conversion;
 * the blob's exact bytes for a path without such attributes).
 * @throws HagentError FILTER_FAILED when the conversion fails.
 */
export async function readBlobCheckedOut(cwd: string, path: string, oid: string): Promise<Buffer> {
  const r = await runGit(['cat-file', '--filters', `--path=${path}`, oid], {
    cwd,
    allowFailure: true,
  });
  if (r.exitCode !== 0) throw filterFailed([path], r.stderr);
  return r.stdout;
}

function filterFailed(paths: readonly string[], stderr: string): HagentError {
  const last = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
  return new HagentError(
    'FILTER_FAILED',
    `git could not convert ${paths.join(', ')} with its attributes' filters${last ? `: ${last}` : ''}`,
    { path: paths[0]!, files: [...paths], stderr: stderr.trim() },
    'make the filter work in this repository (for git-lfs: install it and run git lfs install), then apply again; nothing was written',
  );
}

/**
 * Refuses paths whose filter driver is not configured, before anything is written.
 * @throws HagentError FILTER_UNAVAILABLE naming the first path and its driver.
 */
export function assertDriversAvailable(conversions: Conversions, paths: readonly string[]): void {
  const missing = paths.filter((p) => conversions.missingDriver.has(p));
  if (missing.length === 0) return;
  const driver = conversions.missingDriver.get(missing[0]!)!;
  throw new HagentError(
    'FILTER_UNAVAILABLE',
    `${missing.join(', ')}: the attribute filter=${driver} names a filter git has no command for here`,
    { path: missing[0]!, files: missing, driver },
    driver === 'lfs'
      ? 'install git-lfs and run git lfs install in this repository, then apply again; nothing was written'
      : `configure filter.${driver}.clean and filter.${driver}.smudge (git config), or remove the attribute, then apply again; nothing was written`,
  );
}
