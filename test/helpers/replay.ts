/**
 * Replays real history through the built CLI: for a pair of commits (older, newer) of a source
 * repository, a fresh repository holding the older tree gets a session, the `git diff` between
 * the two is applied with `hagent apply - --json --yes` (as a unified diff, and converted to the
 * Codex language), and the session head's tree id must equal the newer tree id. The session is
 * then approved and landed, and the target branch and its checkout must hold the newer tree.
 *
 * Shared by test/replay.test.ts (this repository's own history) and test/e2e/real-packages.ts
 * (consecutive versions of npm packages).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  GIT_ENV,
  diffSnapshots,
  git,
  hagent,
  snapshotTree,
  startSession,
  tempDir,
  type CliResult,
  look,
} from './index.js';
import {
  countHunks,
  disambiguate,
  parseGitDiff,
  splitLines,
  toCodex,
  type DiffFile,
} from './udiff-to-codex.js';

/** git's empty tree: the "older" side of a root commit. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Policy overrides so that large real diffs fit (the limits are not what is tested here). */
export const REPLAY_ENV: Record<string, string> = {
  HAGENT_MAX_FILES: '100000',
  HAGENT_MAX_CHANGED_LINES: '100000000',
};

/** Two commits (or the empty tree and a commit) of a source repository. */
export interface Pair {
  older: string;
  newer: string;
  label: string;
}

/**
 * `udiff`: `git diff --binary --no-renames`; `udiff-M`: `git diff --binary -M` (only for pairs
 * with renames, where it differs); `codex`: the `-M` diff converted to the Codex language;
 * `format-patch`: `git format-patch -1 -M --stdout` of the newer commit (when its parent is the
 * older one), mail headers, diffstat and, for every other pair, the `-- ` signature included.
 */
export type Form = 'udiff' | 'udiff-M' | 'codex' | 'format-patch';

/**
 * `policy-refused`: PATH_DENIED on a denied path; `unsupported`: UNSUPPORTED_FILE (or PATH_DENIED
 * for a symlink) on a binary/symlink/non-UTF-8 file; `ambiguous`: AMBIGUOUS_MATCH on a unified-diff
 * hunk whose old side occurs more than once by content (the contract locates hunks by content
 * only, patch-language.md §2 "A unified diff", §3.3).
 */
export type Outcome =
  'passed' | 'failed' | 'skipped' | 'policy-refused' | 'unsupported' | 'ambiguous';

export interface FormResult {
  pair: Pair;
  form: Form;
  outcome: Outcome;
  /** Why it failed, was skipped or refused. */
  reason?: string;
  files: number;
  hunks: number;
  /** Where the patch of a failed check was saved. */
  patchFile?: string;
}

/** Runs git and returns raw stdout; throws with stderr on failure. */
export function gitBytes(
  cwd: string,
  args: string[],
  options: { input?: string | Buffer; env?: Record<string, string> } = {},
): Buffer {
  const r = spawnSync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV, ...options.env },
    input: options.input ?? '',
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0)
    throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr?.toString('utf8')}`);
  return r.stdout;
}

/** Tree id of a commit or tree. */
export function treeOf(repo: string, rev: string): string {
  return rev === EMPTY_TREE ? EMPTY_TREE : git(repo, 'rev-parse', `${rev}^{tree}`);
}

/**
 * The last `count` first-parent pairs of `repo`'s HEAD, oldest first. When the history is shorter,
 * every pair there is, plus (root commit ← empty tree). `note` says which.
 */
export function historyPairs(repo: string, count = 30): { pairs: Pair[]; note: string } {
  let shas: string[];
  try {
    shas = git(repo, 'rev-list', '--first-parent', `--max-count=${count + 1}`, 'HEAD')
      .split('\n')
      .filter(Boolean)
      .reverse();
  } catch {
    return { pairs: [], note: `${repo} has no commits yet: nothing to replay` };
  }
  const subject = (sha: string) => git(repo, 'log', '-1', '--format=%s', sha);
  const pairs: Pair[] = [];
  let note = `the last ${count} first-parent pairs of ${repo}`;
  if (shas.length < count + 1 && shas.length > 0) {
    note = `${repo} has only ${shas.length} commit${shas.length === 1 ? '' : 's'} on its first-parent line: replaying all ${shas.length - 1} pair${shas.length === 2 ? '' : 's'} plus the root commit against the empty tree`;
    pairs.push({
      older: EMPTY_TREE,
      newer: shas[0]!,
      label: `∅→${shas[0]!.slice(0, 7)} ${subject(shas[0]!)}`,
    });
  }
  for (let k = 0; k + 1 < shas.length; k++) {
    pairs.push({
      older: shas[k]!,
      newer: shas[k + 1]!,
      label: `${shas[k]!.slice(0, 7)}→${shas[k + 1]!.slice(0, 7)} ${subject(shas[k + 1]!)}`,
    });
  }
  return { pairs, note };
}

/** One entry of `git diff --raw -z`. */
interface RawEntry {
  oldMode: string;
  newMode: string;
  oldId: string;
  newId: string;
  status: string;
  oldPath: string;
  newPath: string;
}

function rawDiff(repo: string, older: string, newer: string): RawEntry[] {
  const parts = gitBytes(repo, ['diff', '--raw', '-z', '--no-abbrev', '-M', older, newer])
    .toString('utf8')
    .split('\0');
  const out: RawEntry[] = [];
  for (let k = 0; k < parts.length - 1;) {
    const head = parts[k++]!;
    if (!head.startsWith(':')) continue;
    const [oldMode, newMode, oldId, newId, status] = head.slice(1).split(' ') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const p1 = parts[k++]!;
    const p2 = /^[RC]/.test(status) ? parts[k++]! : p1;
    out.push({ oldMode, newMode, oldId, newId, status, oldPath: p1, newPath: p2 });
  }
  return out;
}

/** Contents of blobs by id, read with one `git cat-file --batch`. */
function readBlobs(repo: string, ids: string[]): Map<string, Buffer> {
  const want = [...new Set(ids.filter((id) => !/^0+$/.test(id)))];
  const map = new Map<string, Buffer>();
  if (want.length === 0) return map;
  const out = gitBytes(repo, ['cat-file', '--batch'], { input: `${want.join('\n')}\n` });
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(10, at);
    const header = out.subarray(at, nl).toString('utf8');
    const [id, type, size] = header.split(' ');
    at = nl + 1;
    if (type === 'missing' || size === undefined) continue;
    const n = Number(size);
    map.set(id!, out.subarray(at, at + n));
    at += n + 1;
  }
  return map;
}

const DENIED_SUFFIXES = [
  '.exe',
  '.dll',
  '.so',
  '.dylib',
  '.bin',
  '.o',
  '.a',
  '.class',
  '.jar',
  '.pyc',
  '.p12',
  '.pfx',
  '.keystore',
  '.jks',
  '.der',
  '.crt',
  '.sqlite',
  '.db',
  '.pem',
  '.key',
];

/**
 * Why hagent's default policy must refuse to write `p` (patch-language.md §5b), or null.
 * Written independently of src/policy so that a policy bug shows up here.
 */
export function policyDenied(p: string): string | null {
  const parts = p.toLowerCase().split('/');
  const base = parts[parts.length - 1]!;
  if (parts.includes('.git')) return '.git';
  if (parts[0] === '.hagent') return '.hagent/';
  if (base === '.env' || base.startsWith('.env.')) return '.env';
  if (base.startsWith('id_rsa') || base.startsWith('id_ed25519')) return 'ssh key';
  if (base === '.npmrc' || base === '.netrc') return base;
  const suffix = DENIED_SUFFIXES.find((s) => base.endsWith(s));
  return suffix ? `*${suffix}` : null;
}

/** Everything known about a pair before applying it. */
export interface PairPlan {
  pair: Pair;
  olderTree: string;
  newerTree: string;
  /** Number of changed files and hunks (from the no-renames diff). */
  files: number;
  hunks: number;
  /** Policy reasons (path: reason) — hagent must answer PATH_DENIED. */
  denied: string[];
  /** Files hagent cannot patch by contract — UNSUPPORTED_FILE. */
  unsupported: string[];
  /** True when some path of the pair is a symlink (hagent may answer PATH_DENIED for it). */
  symlinks: boolean;
  /** `patch`: the exact bytes sent on stdin. `ambiguous`: hunks whose old side is not unique by content. */
  forms: {
    form: Form;
    patch: Buffer | null;
    skip?: string;
    files: number;
    hunks: number;
    ambiguous: string[];
  }[];
}

/** Computes the diffs, their Codex form and the expected refusals of a pair. */
export function planPair(source: string, pair: Pair): PairPlan {
  const olderTree = treeOf(source, pair.older);
  const newerTree = treeOf(source, pair.newer);
  const diffArgs = [
    '-c',
    'diff.noprefix=false',
    '-c',
    'diff.mnemonicPrefix=false',
    '-c',
    'core.quotePath=true',
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--binary',
    '--full-index',
  ];
  const plain = gitBytes(source, [...diffArgs, '--no-renames', pair.older, pair.newer]);
  const renamed = gitBytes(source, [...diffArgs, '-M', pair.older, pair.newer]);
  const plainFiles = parseGitDiff(plain.toString('utf8'));
  const renamedFiles = parseGitDiff(renamed.toString('utf8'));
  const raw = rawDiff(source, pair.older, pair.newer);
  const blobs = readBlobs(
    source,
    raw.flatMap((e) => [
      e.oldMode === '160000' ? '0' : e.oldId,
      e.newMode === '160000' ? '0' : e.newId,
    ]),
  );

  const denied: string[] = [];
  const unsupported: string[] = [];
  const codexExtra: string[] = [];
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (const e of raw) {
    for (const p of new Set([e.oldPath, e.newPath])) {
      const why = policyDenied(p);
      if (why) denied.push(`${p} (${why})`);
    }
    for (const m of [e.oldMode, e.newMode]) {
      if (m === '120000') unsupported.push(`symlink ${e.newPath}`);
      if (m === '160000') unsupported.push(`submodule ${e.newPath}`);
    }
    for (const id of [e.oldId, e.newId]) {
      const b = blobs.get(id);
      if (!b || e.oldMode === '120000' || e.newMode === '120000') continue;
      if (b.includes(0)) {
        unsupported.push(`binary (NUL bytes) ${e.newPath}`);
        codexExtra.push(`binary (${e.newPath})`);
      } else {
        try {
          decoder.decode(b);
        } catch {
          unsupported.push(`not UTF-8 ${e.newPath}`);
          codexExtra.push(`not UTF-8 (${e.newPath})`);
        }
      }
    }
  }
  const oldText = (p: string): string | undefined => {
    const e = raw.find((x) => x.oldPath === p);
    const b = e ? blobs.get(e.oldId) : undefined;
    return b ? b.toString('utf8') : undefined;
  };
  const ambiguous = (files: DiffFile[]): string[] =>
    files.flatMap((f) => {
      if (f.status === 'add' || f.status === 'delete' || f.binary || f.oldPath === null) return [];
      const text = oldText(f.oldPath);
      return text !== undefined && disambiguate(f.hunks, splitLines(text)).widened > 0
        ? [f.oldPath]
        : [];
    });
  const forms: PairPlan['forms'] = [
    {
      form: 'udiff',
      patch: plain,
      files: plainFiles.length,
      hunks: countHunks(plainFiles),
      ambiguous: ambiguous(plainFiles),
    },
  ];
  if (renamedFiles.some((f) => f.status === 'rename' || f.status === 'copy')) {
    forms.push({
      form: 'udiff-M',
      patch: renamed,
      files: renamedFiles.length,
      hunks: countHunks(renamedFiles),
      ambiguous: ambiguous(renamedFiles),
    });
  }
  const parents =
    pair.older === EMPTY_TREE
      ? []
      : git(source, 'rev-list', '--parents', '-n1', pair.newer).split(' ');
  if (parents.length === 2 && parents[1] === pair.older) {
    const signature = parseInt(pair.newer.slice(-1), 16) % 2 === 0 ? [] : ['--no-signature'];
    const mbox = gitBytes(source, [
      '-c',
      'diff.noprefix=false',
      '-c',
      'diff.mnemonicPrefix=false',
      '-c',
      'core.quotePath=true',
      'format-patch',
      '-1',
      '-M',
      '--stdout',
      '--no-color',
      '--binary',
      '--full-index',
      ...signature,
      pair.newer,
    ]);
    forms.push({
      form: 'format-patch',
      patch: mbox,
      files: renamedFiles.length,
      hunks: countHunks(renamedFiles),
      ambiguous: ambiguous(renamedFiles),
    });
  }
  const codex = toCodex(renamedFiles, oldText);
  const reasons = [...codex.inexpressible, ...codexExtra];
  forms.push({
    form: 'codex',
    patch: reasons.length || codex.patch === null ? null : Buffer.from(codex.patch, 'utf8'),
    ambiguous: [],
    files: renamedFiles.length,
    hunks: countHunks(renamedFiles),
    ...(reasons.length
      ? { skip: `inexpressible in Codex: ${[...new Set(reasons)].join('; ')}` }
      : {}),
  });
  return {
    pair,
    olderTree,
    newerTree,
    files: plainFiles.length,
    hunks: countHunks(plainFiles),
    denied: [...new Set(denied)],
    unsupported: [...new Set(unsupported)],
    symlinks: raw.some((e) => e.oldMode === '120000' || e.newMode === '120000'),
    forms,
  };
}

/** A fresh repository on `main` whose only commit holds `tree` of `source` (objects shared by alternates). */
export function repoWithTree(source: string, tree: string): string {
  const repo = tempDir('hagent-replay-');
  git(repo, 'init', '-q', '--initial-branch=main');
  git(repo, 'config', 'core.autocrlf', 'false');
  const objects = path.join(
    git(source, 'rev-parse', '--path-format=absolute', '--git-common-dir'),
    'objects',
  );
  writeFileSync(path.join(repo, '.git', 'objects', 'info', 'alternates'), `${objects}\n`);
  git(repo, 'read-tree', '--reset', '-u', tree);
  git(repo, 'commit', '-q', '--allow-empty', '--no-verify', '-m', 'older tree');
  const got = treeOf(repo, 'HEAD');
  if (got !== tree) throw new Error(`setup: the fresh repository holds tree ${got}, not ${tree}`);
  return repo;
}

/** Files of `tree` written to a fresh folder (through a throw-away index). */
function materialize(repo: string, tree: string): string {
  const dir = tempDir('hagent-replay-expected-');
  const index = path.join(tempDir('hagent-replay-index-'), 'index');
  gitBytes(repo, [`--work-tree=${dir}`, 'read-tree', '--reset', '-u', tree], {
    env: { GIT_INDEX_FILE: index },
  });
  return dir;
}

function savePatch(label: string, form: Form, patch: Buffer): string {
  const dir = path.join(os.tmpdir(), 'hagent-replay-failures');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${label.replace(/[^\w.-]+/g, '_').slice(0, 80)}.${form}.patch`);
  writeFileSync(file, patch);
  return file;
}

function brief(r: { status: number; stdout: string; stderr: string }): string {
  return `exit ${r.status}: ${(r.stdout + r.stderr).trim().slice(0, 1500)}`;
}

/** `hagent apply - --json --yes` in `cwd` with the patch bytes on stdin (exactly as git produced them). */
export function applyBytes(cwd: string, patch: Buffer): CliResult {
  return hagent(cwd, ['apply', '-', '--json', '--yes'], { input: patch, env: REPLAY_ENV });
}

/** Applies one form of a planned pair in a fresh repository, lands it, and checks every tree. */
export function replayForm(
  source: string,
  plan: PairPlan,
  f: PairPlan['forms'][number],
): FormResult {
  const base = { pair: plan.pair, form: f.form, files: f.files, hunks: f.hunks };
  if (plan.olderTree === plan.newerTree)
    return { ...base, outcome: 'skipped', reason: 'the two trees are identical (empty diff)' };
  if (f.patch === null) return { ...base, outcome: 'skipped', reason: f.skip ?? 'no patch' };
  const fail = (reason: string): FormResult => ({
    ...base,
    outcome: 'failed',
    reason,
    patchFile: savePatch(plan.pair.label, f.form, f.patch!),
  });

  const repo = repoWithTree(source, plan.olderTree);
  const s = startSession(repo);
  const before = git(repo, 'rev-parse', s.branch);
  const r = applyBytes(s.worktree, f.patch);
  const after = git(repo, 'rev-parse', s.branch);

  const expectCodes = [
    ...(plan.denied.length || (plan.symlinks && f.form !== 'codex') ? ['PATH_DENIED'] : []),
    ...(plan.unsupported.length && f.form !== 'codex' ? ['UNSUPPORTED_FILE'] : []),
  ];
  if (expectCodes.length) {
    const code = r.json?.error?.code as string | undefined;
    if (r.status !== 1 || r.json?.ok !== false || !code || !expectCodes.includes(code)) {
      return fail(
        `expected a refusal ${expectCodes.join(' or ')} (denied: ${plan.denied.join(', ') || '-'}; unsupported: ${plan.unsupported.join(', ') || '-'}), got ${brief(r)}`,
      );
    }
    if (after !== before) return fail(`refused with ${code} but the session branch moved`);
    return code === 'PATH_DENIED' && plan.denied.length
      ? { ...base, outcome: 'policy-refused', reason: `PATH_DENIED: ${plan.denied.join(', ')}` }
      : {
          ...base,
          outcome: 'unsupported',
          reason: `UNSUPPORTED_FILE: ${plan.unsupported.join(', ')}`,
        };
  }
  if (
    f.ambiguous.length &&
    r.status === 1 &&
    r.json?.error?.code === 'AMBIGUOUS_MATCH' &&
    after === before
  ) {
    return {
      ...base,
      outcome: 'ambiguous',
      reason: `AMBIGUOUS_MATCH: a hunk's old side occurs more than once in ${f.ambiguous.join(', ')} (line numbers are only hints)`,
    };
  }
  if (r.status !== 0 || r.json?.ok !== true) return fail(`apply refused: ${brief(r)}`);
  const headTree = git(repo, 'rev-parse', `${s.branch}^{tree}`);
  if (headTree !== plan.newerTree) {
    const diff = git(repo, 'diff', '--stat', '--no-renames', plan.newerTree, headTree);
    const full = gitBytes(repo, ['diff', '--no-renames', plan.newerTree, headTree])
      .toString('utf8')
      .slice(0, 3000);
    return fail(
      `session head tree ${headTree} is not the newer tree ${plan.newerTree}:\n${diff}\n${full}`,
    );
  }
  const count = git(repo, 'rev-list', '--count', `${before}..${after}`);
  if (count !== '1' || git(repo, 'rev-parse', `${after}^`) !== before)
    return fail(`expected exactly one new commit on ${s.branch}, got ${count}`);

  look(repo);
  const rv = hagent(repo, ['review', '--stat', '--json', '--approve']);
  if (rv.status !== 0 || rv.json?.ok !== true) return fail(`review --approve failed: ${brief(rv)}`);
  const land = hagent(repo, ['land', '--json']);
  if (land.status !== 0 || land.json?.ok !== true) return fail(`land failed: ${brief(land)}`);
  const mainTree = git(repo, 'rev-parse', 'main^{tree}');
  if (mainTree !== plan.newerTree)
    return fail(`after land, main holds tree ${mainTree}, not the newer tree ${plan.newerTree}`);
  const snapDiff = diffSnapshots(
    snapshotTree(repo, ['.git']),
    snapshotTree(materialize(repo, plan.newerTree), ['.git']),
  );
  if (snapDiff)
    return fail(
      `after land, the main checkout's files differ from the newer tree: ${snapDiff.slice(0, 1500)}`,
    );
  const status = git(repo, 'status', '--porcelain', '--untracked-files=all');
  if (status !== '')
    return fail(
      `after land, git status of the main checkout is not clean:\n${status.slice(0, 1500)}`,
    );
  return { ...base, outcome: 'passed' };
}

/** Replays every form of one pair. */
export function replayPair(source: string, pair: Pair): FormResult[] {
  const plan = planPair(source, pair);
  return plan.forms.map((f) => replayForm(source, plan, f));
}

/** Totals over results. */
export interface ReplaySummary {
  pairs: number;
  checks: number;
  passed: number;
  failed: number;
  skipped: number;
  policyRefused: number;
  ambiguous: number;
  unsupported: number;
  files: number;
  hunks: number;
  lines: string[];
}

/** Counts results and renders the printed report (pairs, files, hunks, skipped with reasons…). */
export function summarize(results: readonly FormResult[], title: string): ReplaySummary {
  const pairs = new Set(results.map((r) => r.pair.label)).size;
  const by = (o: Outcome) => results.filter((r) => r.outcome === o);
  const replayed = by('passed');
  const sum: ReplaySummary = {
    pairs,
    checks: results.length,
    passed: replayed.length,
    failed: by('failed').length,
    skipped: by('skipped').length,
    policyRefused: by('policy-refused').length,
    ambiguous: by('ambiguous').length,
    unsupported: by('unsupported').length,
    files: replayed.reduce((n, r) => n + r.files, 0),
    hunks: replayed.reduce((n, r) => n + r.hunks, 0),
    lines: [],
  };
  const forms = (['udiff', 'udiff-M', 'format-patch', 'codex'] as Form[]).map((f) => {
    const rs = results.filter((r) => r.form === f);
    const ok = rs.filter((r) => r.outcome === 'passed');
    return `  ${f.padEnd(8)} ${ok.length}/${rs.length} replayed exactly, ${ok.reduce((n, r) => n + r.files, 0)} files, ${ok.reduce((n, r) => n + r.hunks, 0)} hunks`;
  });
  sum.lines.push(
    `${title}: ${pairs} pairs, ${sum.checks} pair×form checks — ${sum.passed} replayed exactly (${sum.files} files, ${sum.hunks} hunks), ${sum.failed} failed, ${sum.skipped} skipped, ${sum.policyRefused} policy-refused, ${sum.unsupported} refused as unsupported files, ${sum.ambiguous} unified-diff hunks refused as ambiguous by content`,
    ...forms,
  );
  for (const r of results) {
    if (r.outcome === 'passed') continue;
    sum.lines.push(
      `  ${r.outcome.toUpperCase()} [${r.form}] ${r.pair.label}: ${(r.reason ?? '').split('\n')[0]}${r.patchFile ? ` (patch: ${r.patchFile})` : ''}`,
    );
  }
  return sum;
}

/** The replay loop: every form of every pair, with a callback per result. */
export function replayAll(
  source: string,
  pairs: readonly Pair[],
  onResult?: (r: FormResult) => void,
): FormResult[] {
  const results: FormResult[] = [];
  for (const pair of pairs) {
    let rs: FormResult[];
    try {
      rs = replayPair(source, pair);
    } catch (e) {
      rs = [
        {
          pair,
          form: 'udiff',
          outcome: 'failed',
          reason: `setup error: ${(e as Error).message}`,
          files: 0,
          hunks: 0,
        },
      ];
    }
    for (const r of rs) {
      results.push(r);
      onResult?.(r);
    }
  }
  return results;
}

/** Convenience: the type of a parsed diff file, re-exported for scripts. */
export type { DiffFile };
