/**
 * Fault-injection scenarios of issue 4 "Proven under faults" (R1–R5 and a real full disk), shared
 * by the uvu tests (test/reliability/, small counts) and the long runs (bench/reliability/run.ts).
 * File-system faults inside hagent's own writes (read-only, immutable, failing fsync, short
 * writes, …) are injected in-process instead, without root: test/reliability/fs-faults.test.ts.
 * Every scenario drives the real CLI (`dist/hagent.cjs`) — R4 also the built library in-process —
 * on real git repositories in temp folders, and returns its figure: counts, a printable line and
 * the list of failures (empty when hagent held up).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BIN,
  GIT_ENV,
  ROOT,
  diffSnapshots,
  git,
  makeRepo,
  snapshotTree,
  startSession,
  tempDir,
  type SnapEntry,
} from './index.js';
import { recordCodes } from './codes.js';
import { prng } from './random.js';

// ---------------------------------------------------------------- common

/** The outcome of one scenario. `failures` empty means hagent held up. */
export interface Figure {
  id: string;
  line: string;
  counts: Record<string, number>;
  failures: string[];
  /** Things worth knowing that are not failures (e.g. a fault that could not be injected here). */
  notes: string[];
  /** Why the scenario could not run here (a tool or privilege missing); nothing was checked. */
  skipped?: string;
}

export type Session = { id: string; worktree: string; branch: string; base: string };

/** A seeded PRNG (mulberry32), so a failing run can be replayed with the same seed. */
export const rng = prng;
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** Result of one asynchronous CLI run. `killed` when it was SIGKILLed by us before it exited. */
export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  json: any;
  killed: boolean;
  startedAt: number;
  endedAt: number;
}

/**
 * Spawns the built CLI (no TTY), without GIT_ENV's fixed dates. `killAfterMs` SIGKILLs the whole process group (hagent and the
 * git processes it started: a crash of the apply) after that delay.
 */
export function cli(
  cwd: string,
  args: string[],
  options: {
    input?: string | Buffer;
    env?: Record<string, string>;
    killAfterMs?: number;
    argv0?: string[];
  } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const cmd = options.argv0 ? options.argv0[0]! : process.execPath;
    const argv = options.argv0
      ? [...options.argv0.slice(1), process.execPath, BIN, ...args]
      : [BIN, ...args];
    // No fixed commit dates, as on a user's machine: apply then writes its commits in-process
    // (git/commit-direct.ts), the path the faults must hit.
    const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV, ...options.env };
    delete env.GIT_AUTHOR_DATE;
    delete env.GIT_COMMITTER_DATE;
    const child: ChildProcess = spawn(cmd, argv, {
      cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
    let timer: NodeJS.Timeout | undefined;
    if (options.killAfterMs !== undefined) {
      timer = setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        killed = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          killed = false;
        }
      }, options.killAfterMs);
    }
    child.on('close', (status, signal) => {
      if (timer) clearTimeout(timer);
      recordCodes(stdout, stderr);
      let json: any = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = null;
      }
      resolve({
        status,
        signal,
        stdout,
        stderr,
        json,
        killed: killed && signal === 'SIGKILL',
        startedAt,
        endedAt: Date.now(),
      });
    });
  });
}

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

/** The commit the session branch points at. */
export function headOf(repo: string, s: Session): string {
  return git(repo, 'rev-parse', `refs/heads/${s.branch}`);
}

/** The session head read from its loose ref file (falls back to git when the ref is packed). */
export function headFast(repo: string, common: string, s: Session): string {
  try {
    return readFileSync(path.join(common, 'refs', 'heads', s.branch), 'utf8').trim();
  } catch {
    return headOf(repo, s);
  }
}

/** `<git-common-dir>` of a repository (absolute). */
export function commonDirOf(repo: string): string {
  return path.resolve(repo, git(repo, 'rev-parse', '--git-common-dir'));
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

/** Whether the CLI has a command (doctor, sync), read from `hagent --help`. Cached. */
const commandCache = new Map<string, boolean>();
export function cliHas(command: string): boolean {
  if (!commandCache.has(command)) {
    const r = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    commandCache.set(command, new RegExp(`^\\s+hagent ${command}\\b`, 'm').test(r.stdout));
  }
  return commandCache.get(command)!;
}

/** A patch that parses but never applies (its context is nowhere): the "next command" that recovers. */
export const PROBE_PATCH =
  '*** Begin Patch\n*** Update File: probe.txt\n-this line is not in the file\n+x\n*** End Patch\n';

/**
 * The next command on the session after a crash, which must recover it: `hagent doctor
 * --session ID` when it exists, on odd calls, and otherwise an apply of {@link PROBE_PATCH}
 * (refused with CONTEXT_NOT_FOUND after recovering). Returns the run and what ran.
 */
let recoverCalls = 0;
export async function recoverSession(
  repo: string,
  s: Session,
): Promise<{ run: Run; via: 'doctor' | 'apply' }> {
  recoverCalls++;
  if (cliHas('doctor') && recoverCalls % 2 === 1) {
    return { run: await cli(repo, ['doctor', '--session', s.id, '--json']), via: 'doctor' };
  }
  return {
    run: await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH }),
    via: 'apply',
  };
}

/** The error code of a refused run, or a description of what else happened. */
export function codeOf(r: Run): string {
  if (r.status === 0) return 'OK';
  if (r.json?.error?.code) return String(r.json.error.code);
  return `exit ${r.status}${r.signal ? ` ${r.signal}` : ''} (no JSON error)`;
}

function tally(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function fmtTally(map: Record<string, number>): string {
  return Object.entries(map)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

const sha1 = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

/** Lines `anchor-0 … anchor-(n-1)` separated by filler: a file every scenario can insert into by context. */
function anchoredFile(tag: string, anchors: number): string {
  const lines: string[] = [];
  for (let i = 0; i < anchors; i++)
    lines.push(`${tag} filler ${i}`, `anchor-${i}`, `${tag} tail ${i}`);
  return lines.join('\n') + '\n';
}

/** An update chunk inserting `line` after `anchor-k`. One context line: unique in its file. */
const insertAfter = (file: string, k: number, line: string) =>
  `*** Update File: ${file}\n@@\n anchor-${k}\n+${line}\n`;

function lineCount(text: string, line: string): number {
  let n = 0;
  for (const l of text.split('\n')) if (l === line) n++;
  return n;
}

// ---------------------------------------------------------------- R1 kill -9

export interface R1Options {
  applies: number;
  seed?: number;
  fsckEvery?: number;
}

/**
 * R1: N applies, each SIGKILLed (with the git processes it started) after a random delay; then
 * the next command on the session recovers it. After every recovery: the worktree equals the
 * session head's tree, no temp files, no intent record; every patch so far is all-or-none in the
 * head. Every quarter of the kills is followed directly by another killed apply, so recovery
 * itself gets killed too.
 */
export async function runR1(o: R1Options): Promise<Figure> {
  const r = rng(o.seed ?? 1);
  const files = ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'dir/g0.txt', 'dir/sub/g1.txt'];
  const init: Record<string, string> = { 'probe.txt': 'probe\n' };
  for (const f of files) init[f] = anchoredFile(f, 4);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const common = commonDirOf(repo);
  const intentFile = path.join(common, 'hagent', 'tx', `${s.id}.json`);
  const failures: string[] = [];
  const counts = {
    applies: 0,
    finishedBeforeKill: 0,
    killedMidTransaction: 0,
    killedBefore: 0,
    recoveries: 0,
    applied: 0,
    absent: 0,
    halfApplied: 0,
    tempFilesLeft: 0,
    fsckRuns: 0,
    fsckProblems: 0,
    exit3: 0,
    emptyDirsLeft: 0,
  };
  // Calibrate: how long an unkilled apply takes here (the kill window covers it).
  const t0 = Date.now();
  await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH });
  const calib = Date.now() - t0;
  const windowMs = Math.max(400, Math.round(calib * 1.2));

  interface P {
    i: number;
    parts: { file: string; line: string }[];
    added: string | null;
    deleted: string | null;
    checked: boolean;
  }
  const patches: P[] = [];
  const liveAdded = new Set<string>(); // added files known to be in the head
  let stateKnown = true;

  const verify = async (label: string) => {
    const { run, via } = await recoverSession(repo, s);
    counts.recoveries++;
    if (run.status === 3 || (via === 'apply' && codeOf(run) !== 'CONTEXT_NOT_FOUND')) {
      if (run.status === 3) counts.exit3++;
      failures.push(
        `${label}: recovery via ${via} gave ${codeOf(run)}: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 300)}`,
      );
    }
    if (existsSync(intentFile))
      failures.push(`${label}: the intent record is still there after recovery`);
    const head = headOf(repo, s);
    const cmp = compareWorktreeWithCommit(s.worktree, head);
    for (const p of cmp.problems)
      failures.push(`${label}: worktree ≠ head ${head.slice(0, 10)}: ${p}`);
    counts.emptyDirsLeft = cmp.emptyDirs.length;
    const temps = tempFilesUnder(s.worktree);
    counts.tempFilesLeft += temps.length;
    for (const t of temps) failures.push(`${label}: temp file left: ${t}`);
    // All-or-none for every patch not yet judged (read from disk: it equals the head, checked above).
    const read = (f: string) =>
      existsSync(path.join(s.worktree, f)) ? readFileSync(path.join(s.worktree, f), 'utf8') : null;
    for (const p of patches) {
      if (p.checked) continue;
      p.checked = true;
      const present: boolean[] = [];
      for (const part of p.parts) {
        const n = lineCount(read(part.file) ?? '', part.line);
        if (n > 1)
          failures.push(`${label}: patch ${p.i}: ${part.line} is in ${part.file} ${n} times`);
        present.push(n >= 1);
      }
      if (p.added) present.push(read(p.added) === `added by ${p.i}\n`);
      if (p.deleted) present.push(read(p.deleted) === null);
      const all = present.every(Boolean);
      const none = present.every((x) => !x);
      if (all) {
        counts.applied++;
        if (p.added) liveAdded.add(p.added);
        if (p.deleted) liveAdded.delete(p.deleted);
      } else if (none) counts.absent++;
      else {
        counts.halfApplied++;
        failures.push(
          `${label}: patch ${p.i} is half-applied in head ${head.slice(0, 10)}: parts present ${JSON.stringify(present)}`,
        );
      }
    }
    stateKnown = true;
  };

  for (let i = 0; i < o.applies; i++) {
    const parts: { file: string; line: string }[] = [];
    const chosen = [...files].sort(() => r() - 0.5).slice(0, int(r, 2, 3));
    let text = '*** Begin Patch\n';
    for (const f of chosen) {
      const line = `r1-marker-${i}-${f}`;
      parts.push({ file: f, line });
      text += insertAfter(f, int(r, 0, 3), line);
    }
    let added: string | null = null;
    if (r() < 0.5) {
      added = r() < 0.5 ? `added/new-${i}.txt` : `added/d${i}/deep/new.txt`;
      text += `*** Add File: ${added}\n+added by ${i}\n`;
    }
    let deleted: string | null = null;
    if (stateKnown && liveAdded.size && r() < 0.3) {
      deleted = pick(r, [...liveAdded]);
      text += `*** Delete File: ${deleted}\n`;
    }
    text += '*** End Patch\n';
    patches.push({ i, parts, added, deleted, checked: false });
    const delay = Math.floor(r() * windowMs);
    const run = await cli(s.worktree, ['apply', '-', '--json', '--yes'], {
      input: text,
      killAfterMs: delay,
    });
    counts.applies++;
    if (!run.killed) {
      counts.finishedBeforeKill++;
      if (run.status === 3) {
        counts.exit3++;
        failures.push(`apply ${i}: exit 3: ${run.stdout}${run.stderr}`.slice(0, 400));
      }
    } else if (existsSync(intentFile)) counts.killedMidTransaction++;
    else counts.killedBefore++;
    stateKnown = false;
    if (i === o.applies - 1 || r() < 0.75)
      await verify(`after apply ${i} (killed at ${delay} ms${run.killed ? '' : ', had finished'})`);
    if (o.fsckEvery && (i + 1) % o.fsckEvery === 0) {
      counts.fsckRuns++;
      const f = fsckProblem(repo);
      if (f) {
        counts.fsckProblems++;
        failures.push(`after apply ${i}: ${f}`);
      }
    }
  }
  counts.fsckRuns++;
  const f = fsckProblem(repo);
  if (f) {
    counts.fsckProblems++;
    failures.push(`at the end: ${f}`);
  }
  const line = `R1 kill -9: ${counts.applies} applies (${counts.killedMidTransaction} killed mid-transaction, ${counts.killedBefore} before it, ${counts.finishedBeforeKill} finished first; ${counts.recoveries} recoveries), ${counts.halfApplied} half-applied (${counts.applied} fully in, ${counts.absent} fully absent), ${counts.tempFilesLeft} temp files left, fsck ${counts.fsckProblems ? `${counts.fsckProblems} problems` : 'clean'} (${counts.fsckRuns} runs), ${counts.exit3} exit 3`;
  const notes = counts.emptyDirsLeft
    ? [
        `R1: ${counts.emptyDirsLeft} empty folder(s) left in the worktree by killed adds (git does not track them; not counted as a failure)`,
      ]
    : [];
  return {
    id: 'R1',
    line,
    counts,
    failures,
    notes: [...notes, `R1: kill window 0–${windowMs} ms (an unkilled apply took ${calib} ms)`],
  };
}

// ---------------------------------------------------------------- R2 concurrent writers

export interface R2Options {
  processes: number;
  patchesEach: number;
  seed?: number;
}

/**
 * R2: P processes each applying K patches to one session at once. Worker w's patches insert
 * `r2-w-k` after an anchor of its own file, and a third of them also after worker w's own anchor
 * of a shared file (distinct lines, same file): no patch can miss its context whatever order the
 * lock gives them. Every success must be in the final head (exactly once, its commit an ancestor),
 * every failure LOCKED or STALE_FILE and absent from the head.
 */
export async function runR2(o: R2Options): Promise<Figure> {
  const r = rng(o.seed ?? 2);
  const init: Record<string, string> = {
    'probe.txt': 'probe\n',
    'r2/shared.txt': anchoredFile('shared', o.processes),
  };
  for (let w = 0; w < o.processes; w++) init[`r2/own-${w}.txt`] = anchoredFile(`own ${w}`, 3);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { applies: 0, ok: 0, locked: 0, stale: 0, other: 0, silent: 0, exit3: 0, lost: 0 };
  const results: { w: number; k: number; lines: { file: string; line: string }[]; run: Run }[] = [];
  const plans = Array.from({ length: o.processes }, (_, w) =>
    Array.from({ length: o.patchesEach }, (_, k) => {
      const line = `r2-${w}-${k}`;
      const lines = [{ file: `r2/own-${w}.txt`, line }];
      let text = `*** Begin Patch\n${insertAfter(`r2/own-${w}.txt`, int(r, 0, 2), line)}`;
      if (r() < 0.33) {
        lines.push({ file: 'r2/shared.txt', line: `${line}-shared` });
        text += insertAfter('r2/shared.txt', w, `${line}-shared`);
      }
      return { text: `${text}*** End Patch\n`, lines };
    }),
  );
  await Promise.all(
    plans.map(async (patches, w) => {
      for (const [k, p] of patches.entries()) {
        const run = await cli(s.worktree, ['apply', '-', '--json'], { input: p.text });
        results.push({ w, k, lines: p.lines, run });
      }
    }),
  );
  const head = headOf(repo, s);
  const contents = new Map<string, string>();
  for (const f of Object.keys(init)) contents.set(f, git(repo, 'show', `${head}:${f}`) + '\n');
  for (const { w, k, lines, run } of results) {
    counts.applies++;
    const code = codeOf(run);
    tally(codes, code);
    const inHead = lines.map((l) => lineCount(contents.get(l.file)!, l.line));
    if (run.status === 0) {
      if (run.json?.ok !== true || typeof run.json.commit !== 'string') {
        counts.silent++;
        failures.push(
          `worker ${w} patch ${k}: exit 0 without an ok JSON result: ${run.stdout.slice(0, 200)}`,
        );
        continue;
      }
      counts.ok++;
      if (inHead.some((n) => n !== 1)) {
        counts.lost++;
        failures.push(
          `worker ${w} patch ${k}: applied as ${run.json.commit.slice(0, 10)} but its lines are in the final head ${JSON.stringify(inHead)} times`,
        );
      }
      if (gitRaw(repo, ['merge-base', '--is-ancestor', run.json.commit, head]).status !== 0) {
        counts.lost++;
        failures.push(
          `worker ${w} patch ${k}: its commit ${run.json.commit.slice(0, 10)} is not in the final head's history`,
        );
      }
    } else {
      if (run.status === 3) counts.exit3++;
      if (code === 'LOCKED') counts.locked++;
      else if (code === 'STALE_FILE') counts.stale++;
      else {
        counts.other++;
        if (!run.json?.error?.code) counts.silent++;
        failures.push(
          `worker ${w} patch ${k}: refused with ${code} (only LOCKED or STALE_FILE expected): ${(run.json?.error?.message ?? run.stderr).slice(0, 300)}`,
        );
      }
      if (inHead.some((n) => n !== 0))
        failures.push(
          `worker ${w} patch ${k}: refused with ${code} but its lines are in the final head`,
        );
    }
  }
  const cmp = compareWorktreeWithCommit(s.worktree, head);
  for (const p of cmp.problems) failures.push(`at the end: worktree ≠ head: ${p}`);
  const temps = tempFilesUnder(s.worktree);
  for (const t of temps) failures.push(`temp file left: ${t}`);
  const commits = Number(git(repo, 'rev-list', '--count', `${s.base}..${head}`));
  if (commits !== counts.ok)
    failures.push(`${counts.ok} applies succeeded but the session has ${commits} commits`);
  const f = fsckProblem(repo);
  if (f) failures.push(f);
  const line = `R2 concurrent writers: ${o.processes} processes × ${o.patchesEach} patches, ${counts.ok} applied (${commits} commits, all in the final head: ${counts.lost === 0 ? 'yes' : `no, ${counts.lost} lost`}), ${counts.locked} LOCKED, ${counts.stale} STALE_FILE, ${counts.other} other refusals, ${counts.silent} silent, ${counts.exit3} exit 3`;
  return { id: 'R2', line, counts, failures, notes: [`R2 codes: ${fmtTally(codes)}`] };
}

// ---------------------------------------------------------------- R3 outside writer

export interface R3Options {
  applies: number;
  seed?: number;
}

/** The outside writer: a separate node process; per round it gets `{round, writes:[{file, delay}]}`, appends a line to each file at its time (reading again while the file is absent for a moment) and logs what it wrote. */
const WRITER_SRC = `
const fs = require('node:fs');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const m = JSON.parse(l);
  let left = m.writes.length;
  if (!left) { process.stdout.write(JSON.stringify({ round: m.round, done: true }) + '\\n'); return; }
  m.writes.forEach((w, n) => setTimeout(function write(tries = 0) {
    // hagent's publish moves a target aside before linking the new file in (its compare-and-swap
    // on the bytes), so for a moment the path is absent: read again, as an editor would.
    let prev;
    try {
      prev = fs.readFileSync(w.file);
    } catch (e) {
      if (e.code === 'ENOENT' && tries < 1000) return void setTimeout(write, 1, tries + 1);
      throw e;
    }
    const bytes = Buffer.concat([prev, Buffer.from('outside-' + m.round + '-' + n + '\\n')]);
    fs.writeFileSync(w.file, bytes);
    process.stdout.write(JSON.stringify({ round: m.round, file: w.rel, t: Date.now(), b64: bytes.toString('base64') }) + '\\n');
    if (--left === 0) process.stdout.write(JSON.stringify({ round: m.round, done: true }) + '\\n');
  }, w.delay));
});
`;

/**
 * R3: one outside writer process appends lines to files (mostly the patch's targets) at random
 * moments during each of N applies. After each round: every file the writer wrote holds the
 * writer's last bytes (an outside write is never lost, whether hagent refused or applied first);
 * a successful apply's commit holds its change; a refused one leaves its other targets as in the
 * head; refusals are EXTERNAL_EDIT or STALE_FILE. The outside edits are then adopted (hagent sync
 * when it exists, else a plain git commit in the worktree) before the next round.
 */
export async function runR3(o: R3Options): Promise<Figure> {
  const r = rng(o.seed ?? 3);
  const files = ['r3/t0.txt', 'r3/t1.txt', 'r3/t2.txt', 'r3/t3.txt', 'r3/other.txt'];
  const init: Record<string, string> = { 'probe.txt': 'probe\n' };
  for (const f of files) init[f] = anchoredFile(f, 3);
  const repo = makeRepo(init);
  const s = startSession(repo);
  const failures: string[] = [];
  const notes: string[] = [];
  const codes: Record<string, number> = {};
  const counts = {
    applies: 0,
    outsideWrites: 0,
    overlaps: 0,
    detected: 0,
    appliedBeforeOutsideWrite: 0,
    externalEdit: 0,
    stale: 0,
    outsideLost: 0,
    hagentLost: 0,
    exit3: 0,
    other: 0,
  };
  const writer = spawn(process.execPath, ['-e', WRITER_SRC], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const pending: string[] = [];
  let wake: (() => void) | null = null;
  let buf = '';
  writer.stdout!.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      pending.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    wake?.();
  });
  const roundLog = async (round: number) => {
    const logs: { file: string; t: number; bytes: Buffer }[] = [];
    for (;;) {
      while (pending.length) {
        const m = JSON.parse(pending.shift()!);
        if (m.round !== round) continue;
        if (m.done) return logs;
        logs.push({ file: m.file, t: m.t, bytes: Buffer.from(m.b64, 'base64') });
      }
      await new Promise<void>((res) => (wake = res));
    }
  };
  const t0 = Date.now();
  await cli(s.worktree, ['apply', '-', '--json'], { input: PROBE_PATCH });
  const windowMs = Math.max(300, Math.round((Date.now() - t0) * 1.3));
  const useSync = cliHas('sync');
  try {
    for (let i = 0; i < o.applies; i++) {
      const targets = [...files.slice(0, 4)].sort(() => r() - 0.5).slice(0, int(r, 1, 2));
      let text = '*** Begin Patch\n';
      const lines = targets.map((f) => ({ file: f, line: `r3-${i}-${f}` }));
      for (const l of lines) text += insertAfter(l.file, int(r, 0, 2), l.line);
      text += '*** End Patch\n';
      const nWrites = r() < 0.15 ? 0 : r() < 0.7 ? 1 : 2;
      const writes = Array.from({ length: nWrites }, () => {
        const rel = r() < 0.8 ? pick(r, targets) : pick(r, files);
        return { rel, file: path.join(s.worktree, rel), delay: Math.floor(r() * windowMs) };
      });
      const headBefore = headOf(repo, s);
      const logP = roundLog(i);
      writer.stdin!.write(JSON.stringify({ round: i, writes }) + '\n');
      const run = await cli(s.worktree, ['apply', '-', '--json'], { input: text });
      const logs = await logP;
      counts.applies++;
      counts.outsideWrites += logs.length;
      const code = codeOf(run);
      tally(codes, code);
      const label = `round ${i} (${code}; writer: ${logs.map((l) => `${l.file} at +${l.t - run.startedAt} ms`).join(', ') || 'none'}; apply took ${run.endedAt - run.startedAt} ms)`;
      const overlap = logs.some(
        (l) => targets.includes(l.file) && l.t >= run.startedAt && l.t <= run.endedAt,
      );
      if (overlap) counts.overlaps++;
      // The outside bytes survive: each written file holds the writer's last bytes.
      const last = new Map<string, Buffer>();
      for (const l of logs) last.set(l.file, l.bytes);
      for (const [f, bytes] of last) {
        const disk = readFileSync(path.join(s.worktree, f));
        if (!disk.equals(bytes)) {
          counts.outsideLost++;
          failures.push(
            `${label}: the outside write to ${f} was lost (disk holds ${sha1(disk).slice(0, 10)}, the writer wrote ${sha1(bytes).slice(0, 10)}${disk.includes(`r3-${i}-${f}`) ? "; the disk holds hagent's change instead" : ''})`,
          );
        }
      }
      if (run.status === 0 && run.json?.ok) {
        for (const l of lines) {
          const inCommit = gitRaw(repo, ['show', `${run.json.commit}:${l.file}`]).stdout;
          if (lineCount(inCommit, l.line) !== 1) {
            counts.hagentLost++;
            failures.push(
              `${label}: the commit ${run.json.commit.slice(0, 10)} does not hold ${l.line}`,
            );
          }
        }
        if (headOf(repo, s) !== run.json.commit)
          failures.push(
            `${label}: applied as ${run.json.commit.slice(0, 10)} but the session head is ${headOf(repo, s).slice(0, 10)}`,
          );
        if (overlap) counts.appliedBeforeOutsideWrite++;
      } else {
        if (run.status === 3) counts.exit3++;
        if (code === 'EXTERNAL_EDIT') counts.externalEdit++;
        else if (code === 'STALE_FILE') counts.stale++;
        else {
          counts.other++;
          failures.push(
            `${label}: refused with ${code}, expected EXTERNAL_EDIT or STALE_FILE: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 300)}`,
          );
        }
        if (overlap) counts.detected++;
        if (headOf(repo, s) !== headBefore)
          failures.push(`${label}: refused but the session head moved`);
        for (const l of lines) {
          if (last.has(l.file)) continue;
          const disk = readFileSync(path.join(s.worktree, l.file));
          const inHead = Buffer.from(gitRaw(repo, ['show', `${headBefore}:${l.file}`]).stdout);
          if (!disk.equals(inHead))
            failures.push(
              `${label}: refused but ${l.file} (not written from outside) differs from the head`,
            );
        }
      }
      const temps = tempFilesUnder(s.worktree);
      for (const t of temps) failures.push(`${label}: temp file left: ${t}`);
      // Adopt the outside edits so the next round starts clean.
      const dirty = gitRaw(s.worktree, [
        'status',
        '--porcelain',
        '--untracked-files=all',
      ]).stdout.trim();
      if (dirty) {
        if (useSync) {
          const sync = await cli(s.worktree, ['sync', '--json']);
          if (sync.status !== 0)
            failures.push(
              `${label}: hagent sync failed: ${sync.stdout}${sync.stderr}`.slice(0, 300),
            );
        } else {
          git(s.worktree, 'add', '--', ...files);
          git(s.worktree, 'commit', '-q', '-m', `outside edits of round ${i}`);
        }
      }
    }
  } finally {
    writer.stdin!.end();
    writer.kill();
  }
  const f = fsckProblem(repo);
  if (f) failures.push(f);
  notes.push(
    `R3 codes: ${fmtTally(codes)}; outside edits adopted with ${useSync ? 'hagent sync' : 'git commit in the worktree (hagent sync not available)'}; writer window 0–${windowMs} ms`,
  );
  const line = `R3 outside writer: ${counts.applies} applies, ${counts.outsideWrites} outside writes, ${counts.overlaps} overlapping an apply (${counts.detected} refused: EXTERNAL_EDIT ${counts.externalEdit}, STALE_FILE ${counts.stale} in all; ${counts.appliedBeforeOutsideWrite} applied before the outside write landed), ${counts.outsideLost} outside writes lost, ${counts.hagentLost} hagent writes lost, ${counts.other} other refusals, ${counts.exit3} exit 3`;
  return { id: 'R3', line, counts, failures, notes };
}

// ---------------------------------------------------------------- R4 hostile patches

export interface R4Options {
  patches: number;
  seed?: number;
  cliEvery?: number;
  parallel?: number;
  /** Share of in-process applies run with the watcher on (default 0.1). */
  watchShare?: number;
}

const SOUP = [
  '*** Begin Patch',
  '*** End Patch',
  '*** Add File: ',
  '*** Delete File: ',
  '*** Update File: ',
  '*** Move to: ',
  '*** End of File',
  '@@',
  '@@ anchor-1',
  '@@ -1,3 +1,4 @@',
  '--- a/x',
  '+++ b/x',
  'diff --git a/x b/x',
  '\\ No newline at end of file',
  '',
  ' ',
  '+',
  '-',
  '<<<<<<< HEAD',
  "cat <<'EOF'",
  'EOF',
  'apply_patch <<"EOF"',
  '```',
  '```diff',
];

/** One valid patch against the current worktree state (the seed a hostile patch is fuzzed from). */
function seedPatch(r: () => number, state: Map<string, string>, n: number): string {
  const names = [...state.keys()].filter((p) => p !== 'probe.txt');
  const ops: string[] = [];
  const used = new Set<string>();
  const nOps = int(r, 1, 3);
  for (let k = 0; k < nOps; k++) {
    const kind = r();
    const f = names.length ? pick(r, names) : null;
    if (kind < 0.55 && f && !used.has(f)) {
      used.add(f);
      const lines = state.get(f)!.split('\n').slice(0, -1);
      if (!lines.length) continue;
      const at = int(r, 0, lines.length - 1);
      const ctx = lines.slice(Math.max(0, at - 2), at + 1);
      const rm = r() < 0.4 && ctx.length > 1;
      let chunk = `*** Update File: ${f}\n`;
      if (r() < 0.3) chunk += `@@ ${lines[0]}\n`;
      ctx.forEach((l, j) => (chunk += rm && j === ctx.length - 1 ? `-${l}\n` : ` ${l}\n`));
      chunk += `+fuzz ${n} ${k}\n`;
      if (r() < 0.2) {
        const to = `moved/m-${n}-${k}.txt`;
        chunk = chunk.replace('\n', `\n*** Move to: ${to}\n`);
        used.add(to);
      }
      ops.push(chunk);
    } else if (kind < 0.85) {
      const p = `new/n-${n}-${k}.txt`;
      used.add(p);
      ops.push(`*** Add File: ${p}\n+a ${n}\n+b ${n}\n`);
    } else if (f && !used.has(f)) {
      used.add(f);
      ops.push(`*** Delete File: ${f}\n`);
    }
  }
  if (r() < 0.15 && names.length) {
    // The same thing as a unified diff.
    const f = pick(r, names);
    const first = state.get(f)!.split('\n')[0]!;
    return `--- a/${f}\n+++ b/${f}\n@@ -1,1 +1,2 @@\n ${first}\n+ud ${n}\n`;
  }
  return `*** Begin Patch\n${ops.join('')}*** End Patch\n`;
}

/** Breaks a patch: 1–3 of the mutations of issue 4 R4. */
function mutate(r: () => number, text: string): string {
  let lines = text.split('\n');
  const muts = int(r, 1, 4);
  for (let m = 0; m < muts; m++) {
    const at = Math.floor(r() * Math.max(1, lines.length));
    const kind = Math.floor(r() * 12);
    switch (kind) {
      case 0:
        lines.splice(at, 1);
        break; // drop a line
      case 1:
        lines.splice(at, 0, lines[at] ?? '');
        break; // duplicate
      case 2: {
        const b = Math.floor(r() * lines.length);
        [lines[at], lines[b]] = [lines[b] ?? '', lines[at] ?? ''];
        break;
      } // swap
      case 3: {
        const s = lines.join('\n');
        lines = s.slice(0, Math.floor(r() * s.length)).split('\n');
        break;
      } // truncate
      case 4:
        lines.splice(at, 0, randomBytes(int(r, 1, 64)).toString('latin1'));
        break; // random bytes
      case 5:
        lines.splice(
          at,
          0,
          pick(r, ['+', ' ', '-', '']) +
            pick(r, ['x', 'ab=', 'é', ' ']).repeat(int(r, 1_000, r() < 0.2 ? 20_000 : 5_000)),
        );
        break; // huge line (kept ≤ 80 KB: see hugeLineSeconds)
      case 6:
        for (let k = int(r, 1, 8); k > 0; k--)
          lines.splice(Math.floor(r() * lines.length), 0, pick(r, SOUP));
        break; // marker soup
      case 7:
        lines[at] = (lines[at] ?? '').replace(/^./, pick(r, ['+', '-', ' ', '@', '*', '\\', '\t']));
        break; // flip the prefix
      case 8:
        lines[at] = (lines[at] ?? '').replace(
          /(File|to): .*/,
          `$1: ${pick(r, ['f0.txt', 'gone.txt', 'new', 'a/../f1.txt', './f2.txt', 'dir/', '', ' f0.txt', 'f0.txt ', 'F0.TXT', 'probe.txt/x', 'f0.txt/sub'])}`,
        );
        break; // path swap
      case 9:
        lines = lines.map((l) => (r() < 0.3 ? l.replace(/\n?$/, '\r') : l));
        break; // CRLF soup
      case 10:
        lines.splice(at, 0, ...lines.slice(0, int(r, 1, lines.length)));
        break; // repeated block (double patches)
      default:
        lines[at] = Buffer.from(
          Buffer.from(lines[at] ?? '').map((c) => (r() < 0.1 ? Math.floor(r() * 256) : c)),
        ).toString('latin1');
        break; // bit flips
    }
  }
  return lines.join('\n');
}

function readState(worktree: string): Map<string, string> {
  const state = new Map<string, string>();
  for (const [p, e] of snapshotTree(worktree))
    if (e.kind === 'file') state.set(p, e.bytes.toString('utf8'));
  return state;
}

/**
 * R4: N hostile patches fuzzed from valid ones, fed to `applyPatch` of the built library in this
 * one process (every `cliEvery`th through the CLI instead, as raw bytes), by `parallel` loops
 * each on its own session of one repository. Each patch must either apply (then it is one commit
 * and the worktree equals the head) or be refused with a stable code other than INTERNAL, writing
 * nothing (worktree snapshot and head unchanged).
 */
export async function runR4(o: R4Options): Promise<Figure> {
  const init: Record<string, string> = { 'probe.txt': 'probe\n' };
  for (const f of ['f0.txt', 'f1.txt', 'f2.txt', 'dir/g.txt']) init[f] = anchoredFile(f, 3);
  const repo = makeRepo(init);
  const lib: any = await import(pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href);
  const common = commonDirOf(repo);
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  const counts = {
    patches: 0,
    viaCli: 0,
    applied: 0,
    refused: 0,
    internal: 0,
    writesOnRefusal: 0,
    slow: 0,
  };
  const slow: string[] = [];
  const every = o.cliEvery ?? 50;
  const loops = Math.max(1, o.parallel ?? 1);
  const sessions = Array.from({ length: loops }, () => startSession(repo));
  const inFlight = new Map<number, { n: number; text: string; watch: boolean }>();
  const onExit = () => {
    if (inFlight.size)
      process.stderr.write(
        `R4: the process is exiting with applies still pending (a promise that never settles): ${JSON.stringify([...inFlight.values()])}\n`,
      );
  };
  process.on('exit', onExit);
  const loop = async (s: Session, k: number, count: number) => {
    const r = rng((o.seed ?? 4) * 1000 + k);
    const ctx = await lib.openRepo(s.worktree);
    const session = await lib.resolveSession(ctx, s.id);
    let snap = snapshotTree(s.worktree);
    let head = headFast(repo, common, s);
    let state = readState(s.worktree);
    for (let i = 0; i < count; i++) {
      const n = i * loops + k;
      const extra = [...state.keys()].filter((p) => !(p in init));
      if (extra.length > 30 || [...state.values()].some((v) => v.length > 200_000)) {
        // Keep the worktree small: delete what the fuzz added, up to 9 files a commit.
        const reset = `*** Begin Patch\n${extra
          .slice(0, 9)
          .map((p) => `*** Delete File: ${p}\n`)
          .join('')}*** End Patch\n`;
        if (extra.length)
          await lib
            .applyPatch(ctx, session, { patchText: reset, yes: true, noWatch: true })
            .catch(() => undefined);
        snap = snapshotTree(s.worktree);
        head = headFast(repo, common, s);
        state = readState(s.worktree);
      }
      const text = mutate(r, seedPatch(r, state, n));
      const yes = r() < 0.8;
      counts.patches++;
      let ok = false;
      let code = 'OK';
      let detail = '';
      const tStart = performance.now();
      inFlight.set(k, { n, text, watch: false });
      if (n % every === every - 1) {
        counts.viaCli++;
        const run = await cli(s.worktree, ['apply', '-', '--json', ...(yes ? ['--yes'] : [])], {
          input: Buffer.from(text, 'latin1'),
        });
        ok = run.status === 0 && run.json?.ok === true;
        code =
          run.status === 3
            ? 'INTERNAL'
            : run.status === 0 && !ok
              ? 'exit 0 without a result'
              : codeOf(run);
        if (run.status !== 0 && run.status !== 1) code = `exit ${run.status}: ${code}`;
        detail = run.stdout + run.stderr;
      } else {
        try {
          const noWatch = r() >= (o.watchShare ?? 0.1);
          inFlight.get(k)!.watch = !noWatch;
          // A promise that never settles must not end this process silently (exit 13).
          let timer: NodeJS.Timeout | undefined;
          const hung = new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(Object.assign(new Error('applyPatch never settled (20 s)'), { hung: true })),
              20_000,
            );
          });
          try {
            await Promise.race([
              lib.applyPatch(ctx, session, { patchText: text, yes, noWatch }),
              hung,
            ]);
          } finally {
            clearTimeout(timer);
          }
          ok = true;
        } catch (e: any) {
          code = e?.hung ? 'NEVER_SETTLED' : lib.isHagentError(e) ? e.code : 'INTERNAL';
          if (code === 'INTERNAL') detail = `${e?.message}\n${e?.stack ?? ''}`;
        }
      }
      inFlight.delete(k);
      tally(codes, code);
      const took = performance.now() - tStart;
      if (took > 5000) {
        counts.slow++;
        slow.push(`patch ${n} took ${Math.round(took)} ms (${code}; ${text.length} chars)`);
      }
      if (ok) {
        counts.applied++;
        const newHead = headFast(repo, common, s);
        if (gitRaw(repo, ['rev-parse', `${newHead}^`]).stdout.trim() !== head)
          failures.push(`patch ${n}: applied but the head did not move by one commit`);
        head = newHead;
        const cmp = compareWorktreeWithCommit(s.worktree, head);
        for (const p of cmp.problems)
          failures.push(`patch ${n}: applied but worktree ≠ head: ${p}`);
        snap = snapshotTree(s.worktree);
        state = readState(s.worktree);
        continue;
      }
      counts.refused++;
      if (code === 'INTERNAL' || code === 'NEVER_SETTLED' || code.startsWith('exit')) {
        counts.internal++;
        if (failures.length < 50)
          failures.push(
            `patch ${n}: ${code}: ${detail.slice(0, 500)}\n--- patch (JSON) ---\n${JSON.stringify(text.length > 2000 ? text.slice(0, 2000) + '…' : text)}`,
          );
      }
      const now = snapshotTree(s.worktree);
      const d = diffSnapshots(now, snap);
      const h = headFast(repo, common, s);
      if (d || h !== head) {
        counts.writesOnRefusal++;
        failures.push(
          `patch ${n}: refused with ${code} but ${d ? `the worktree changed (${d.split('\n')[0]})` : 'the head moved'}\n${JSON.stringify(text.slice(0, 1000))}`,
        );
        snap = now;
        head = h;
        state = readState(s.worktree);
      }
    }
  };
  const t0 = Date.now();
  await Promise.all(
    sessions.map((s, k) =>
      loop(s, k, Math.floor(o.patches / loops) + (k < o.patches % loops ? 1 : 0)),
    ),
  );
  const secs = (Date.now() - t0) / 1000;
  process.off('exit', onExit);
  for (const s of sessions)
    for (const t of tempFilesUnder(s.worktree)) failures.push(`temp file left: ${t}`);
  const f = fsckProblem(repo);
  if (f) failures.push(f);
  const line = `R4 hostile patches: ${counts.patches} fuzzed patches (${counts.viaCli} through the CLI), ${counts.applied} applied, ${counts.refused} refused, ${counts.internal} internal errors, ${counts.writesOnRefusal} writes on refusal`;
  const notes = [
    `R4 codes: ${fmtTally(codes)}; ${loops} sessions fuzzed at once; ${secs.toFixed(0)} s (${((secs * 1000) / Math.max(1, counts.patches)).toFixed(1)} ms a patch)`,
  ];
  if (slow.length)
    notes.push(`R4: ${slow.length} patches took over 5 s: ${slow.slice(0, 5).join('; ')}`);
  return { id: 'R4', line, counts, failures, notes };
}

// ---------------------------------------------------------------- R5 hostile paths

/** The hostile paths of R5 (symlinked ones are created in the worktree by {@link runR5}). */
export function hostilePaths(outside: string): string[] {
  const long = 'd'.repeat(200);
  return [
    // `..` in every position
    '../x.txt',
    '../../x.txt',
    '..',
    'a/..',
    'a/../../x.txt',
    'a/b/../../../x.txt',
    'dir/../../x.txt',
    './../x.txt',
    'a/./../../x.txt',
    'a//../../x.txt',
    'dir/..',
    '../dir/x.txt',
    // absolute, home, drive letters, UNC, backslashes
    `${outside}/abs.txt`,
    '/x.txt',
    '//server/share/x.txt',
    '~/x.txt',
    '~',
    '~root/x.txt',
    'C:/x.txt',
    'C:\\x.txt',
    'c:x.txt',
    'D:\\a\\b.txt',
    '\\\\server\\share\\x.txt',
    '..\\x.txt',
    'a\\..\\..\\x.txt',
    '\\x.txt',
    // .git in any case and component, .hagent
    '.git/config',
    '.GIT/config',
    '.Git/HEAD',
    '.git',
    'a/.git/x',
    'dir/.GiT/hooks/pre-commit',
    'a/.git',
    '.hagent/config.json',
    '.hagent/hooks/pre-apply',
    '.HAGENT/hooks/post-apply',
    // secret names
    '.env',
    '.env.local',
    'dir/.env',
    '.ENV.production',
    'id_rsa',
    'keys/id_rsa.pub',
    'id_ed25519',
    'x.pem',
    'certs/server.key',
    '.npmrc',
    'dir/.netrc',
    // NUL bytes, over-long
    'a\0b.txt',
    'dir/\0',
    `${'n'.repeat(300)}.txt`,
    `${`${long}/`.repeat(25)}x.txt`,
    // symlinked folders and files at every depth (created by runR5)
    'lnkdir/x.txt',
    'lnkdir/new.txt',
    'dir/lnkdir2/x.txt',
    'dir/sub/lnkdir3/deep/x.txt',
    'outlnk/abs.txt',
    'lnkfile.txt',
    'dir/lnkfile2.txt',
    'dir/sub/outfile.txt',
    'lnkdir',
  ];
}

export interface R5Options {
  moveAndDeleteAll?: boolean;
  concurrency?: number;
}

/**
 * R5: every hostile path as Add File, and as Delete File and Move to (all of them, or every
 * third with `moveAndDeleteAll: false`), through the CLI → PATH_DENIED, and nothing written: the
 * worktree (symlinks included), the main checkout, the folder outside the repository, HOME and
 * the head are as before.
 */
export async function runR5(o: R5Options = {}): Promise<Figure> {
  const repo = makeRepo({
    'probe.txt': 'probe\n',
    'f1.txt': 'one\n',
    'dir/x.txt': 'x\n',
    'dir/sub/y.txt': 'y\n',
  });
  const s = startSession(repo);
  const outside = tempDir('hagent-outside-');
  const home = tempDir('hagent-home-');
  writeFileSync(path.join(outside, 'abs.txt'), 'outside\n');
  writeFileSync(path.join(outside, 'x.txt'), 'outside x\n');
  mkdirSync(path.join(s.worktree, 'realdir'));
  writeFileSync(path.join(s.worktree, 'realdir', 'x.txt'), 'real\n');
  symlinkSync('realdir', path.join(s.worktree, 'lnkdir'));
  symlinkSync('../realdir', path.join(s.worktree, 'dir', 'lnkdir2'));
  mkdirSync(path.join(s.worktree, 'realdir', 'deep'));
  writeFileSync(path.join(s.worktree, 'realdir', 'deep', 'x.txt'), 'deep\n');
  symlinkSync('../../realdir', path.join(s.worktree, 'dir', 'sub', 'lnkdir3'));
  symlinkSync(outside, path.join(s.worktree, 'outlnk'));
  symlinkSync('f1.txt', path.join(s.worktree, 'lnkfile.txt'));
  symlinkSync('../f1.txt', path.join(s.worktree, 'dir', 'lnkfile2.txt'));
  symlinkSync(path.join(outside, 'x.txt'), path.join(s.worktree, 'dir', 'sub', 'outfile.txt'));
  const paths = hostilePaths(outside);
  const before = {
    wt: snapshotTree(s.worktree),
    main: snapshotTree(repo),
    out: snapshotTree(outside),
    home: snapshotTree(home),
    head: headOf(repo, s),
  };
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { paths: paths.length, attempts: 0, denied: 0, other: 0, written: 0 };
  const jobs: { what: string; text: string }[] = [];
  paths.forEach((p, i) => {
    jobs.push({
      what: `Add ${JSON.stringify(p)}`,
      text: `*** Begin Patch\n*** Add File: ${p}\n+hostile\n*** End Patch\n`,
    });
    if (o.moveAndDeleteAll !== false || i % 3 === 0) {
      jobs.push({
        what: `Delete ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Delete File: ${p}\n*** End Patch\n`,
      });
      jobs.push({
        what: `Move f1.txt to ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Update File: f1.txt\n*** Move to: ${p}\n-one\n+moved\n*** End Patch\n`,
      });
    }
    if (/lnk|outfile/.test(p) && !p.endsWith('new.txt'))
      jobs.push({
        what: `Update ${JSON.stringify(p)}`,
        text: `*** Begin Patch\n*** Update File: ${p}\n@@\n+hostile\n*** End Patch\n`,
      });
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency ?? 3 }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const run = await cli(s.worktree, ['apply', '-', '--json', '--yes'], {
          input: job.text,
          env: { HOME: home },
        });
        counts.attempts++;
        const code = codeOf(run);
        tally(codes, code);
        if (code === 'PATH_DENIED') counts.denied++;
        else {
          counts.other++;
          failures.push(
            `${job.what}: ${code} instead of PATH_DENIED: ${(run.json?.error?.message ?? run.stdout + run.stderr).slice(0, 200)}`,
          );
        }
      }
    }),
  );
  const after = {
    wt: snapshotTree(s.worktree),
    main: snapshotTree(repo),
    out: snapshotTree(outside),
    home: snapshotTree(home),
    head: headOf(repo, s),
  };
  for (const k of ['wt', 'main', 'out', 'home'] as const) {
    const d = diffSnapshots(after[k], before[k]);
    if (d) {
      counts.written++;
      failures.push(`something was written in ${k}: ${d.split('\n')[0]}`);
    }
  }
  if (after.head !== before.head) failures.push('the session head moved');
  if (existsSync('/x.txt')) failures.push('/x.txt exists');
  for (const t of tempFilesUnder(s.worktree)) failures.push(`temp file left: ${t}`);
  const line = `R5 hostile paths: ${paths.length} paths, ${counts.attempts} patches (Add, Delete, Move to, Update through symlinks), ${counts.denied} PATH_DENIED, ${counts.other} other outcomes, ${counts.written} places written`;
  return { id: 'R5', line, counts, failures, notes: [`R5 codes: ${fmtTally(codes)}`] };
}

// ---------------------------------------------------------------- I/O faults

/** State that a refused apply must leave exactly as it was. */
function stateOf(repo: string, s: Session) {
  return { snap: snapshotTree(s.worktree), head: headOf(repo, s) };
}

function checkUnchanged(
  label: string,
  repo: string,
  s: Session,
  before: ReturnType<typeof stateOf>,
  failures: string[],
): boolean {
  const now = stateOf(repo, s);
  const d = diffSnapshots(now.snap, before.snap);
  let ok = true;
  if (d) {
    ok = false;
    failures.push(`${label}: refused but the worktree changed: ${d.split('\n')[0]}`);
  }
  if (now.head !== before.head) {
    ok = false;
    failures.push(`${label}: refused but the head moved`);
  }
  for (const t of tempFilesUnder(s.worktree)) {
    ok = false;
    failures.push(`${label}: temp file left: ${t}`);
  }
  return ok;
}

/**
 * Disk full: the repository (and its session worktree, inside .git) on a small tmpfs; before each
 * apply a filler file leaves only F bytes free, F swept from 0 up, so ENOSPC strikes at every
 * stage (staging, blobs, index, commit, ref, journal). Each apply must either apply fully
 * (worktree = head, one commit) or be refused with everything restored and no temp files.
 * What the injected file system cannot reach is the point: git's own processes and hagent's
 * in-process writes into .git (objects, index, refs, journal) hit the real full disk.
 * Needs root and mount; returns `skipped` (the reason) when tmpfs cannot be mounted.
 */
export async function runDiskFull(
  o: { steps: number; stepBytes?: number } = { steps: 24 },
): Promise<Figure> {
  const failures: string[] = [];
  const notes: string[] = [];
  const codes: Record<string, number> = {};
  const counts = { applies: 0, applied: 0, refused: 0, restored: 0, exit3: 0 };
  const mnt = tempDir('hagent-tmpfs-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], {
    encoding: 'utf8',
  });
  if (m.status !== 0) {
    return {
      id: 'IO-diskfull',
      line: 'I/O disk full: skipped (cannot mount a tmpfs here)',
      counts,
      failures,
      notes: [`mount failed: ${m.stderr.trim()}`],
      skipped: `a tmpfs cannot be mounted here (needs root and mount): ${m.stderr.trim()}`,
    };
  }
  try {
    const repo = path.join(mnt, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '--template=', '--initial-branch=main');
    const files: Record<string, string> = {
      'probe.txt': 'probe\n',
      'a.txt': anchoredFile('a', 2),
      'b.txt': anchoredFile('b', 2),
    };
    for (const [p, t] of Object.entries(files)) writeFileSync(path.join(repo, p), t);
    git(repo, 'add', '--', ...Object.keys(files));
    git(repo, 'commit', '-q', '-m', 'initial');
    const s = startSession(repo);
    const filler = path.join(mnt, 'filler');
    const stepBytes = o.stepBytes ?? 4096;
    const free = () => {
      const st = statfsSync(mnt);
      return st.bavail * st.bsize;
    };
    for (let k = 0; k < o.steps; k++) {
      // ~24 KB of incompressible text over three files (zlib cannot shrink random base64 much).
      const rnd = (n: number) =>
        Array.from({ length: n }, () => `+${randomBytes(60).toString('base64')}`).join('\n') + '\n';
      const text = `*** Begin Patch\n*** Update File: a.txt\n@@\n anchor-0\n+df-${k}\n${rnd(100)}*** Update File: b.txt\n@@\n anchor-1\n+df-${k}\n${rnd(100)}*** Add File: new/df-${k}.txt\n${rnd(100)}*** End Patch\n`;
      const before = stateOf(repo, s);
      rmSync(filler, { force: true });
      const leave = k * stepBytes;
      const room = free() - leave;
      if (room > 0) writeFileSync(filler, Buffer.alloc(room));
      let run: Run;
      try {
        run = await cli(s.worktree, ['apply', '-', '--json', '--yes', '--no-watch'], {
          input: text,
        });
      } finally {
        rmSync(filler, { force: true });
      }
      counts.applies++;
      const code = codeOf(run);
      tally(codes, code);
      const label = `disk full with ${leave} bytes free`;
      if (run.status === 0) {
        counts.applied++;
        const head = headOf(repo, s);
        if (head !== run.json?.commit)
          failures.push(`${label}: applied as ${run.json?.commit} but the head is ${head}`);
        for (const p of compareWorktreeWithCommit(s.worktree, head).problems)
          failures.push(`${label}: applied but worktree ≠ head: ${p}`);
        for (const t of tempFilesUnder(s.worktree)) failures.push(`${label}: temp file left: ${t}`);
      } else {
        counts.refused++;
        if (run.status === 3) {
          counts.exit3++;
          failures.push(
            `${label}: exit 3 (INTERNAL) instead of a refusal: ${(run.json?.error?.message ?? run.stderr).slice(0, 300)}`,
          );
        } else if (run.status !== 1) failures.push(`${label}: exit ${run.status} (${code})`);
        if (checkUnchanged(label, repo, s, before, failures)) counts.restored++;
        // A later command must not find anything to recover either.
        const intent = path.join(repo, '.git', 'hagent', 'tx', `${s.id}.json`);
        if (existsSync(intent)) failures.push(`${label}: an intent record was left behind`);
      }
    }
    const f = fsckProblem(repo);
    if (f) failures.push(f);
    const line = `I/O disk full (tmpfs, free space swept 0–${(o.steps - 1) * stepBytes} bytes): ${counts.applies} applies, ${counts.applied} applied whole, ${counts.refused} refused (${counts.restored} fully restored), ${counts.exit3} exit 3, fsck ${f ? 'NOT clean' : 'clean'} (codes: ${fmtTally(codes)})`;
    return { id: 'IO-diskfull', line, counts, failures, notes };
  } finally {
    spawnSync('umount', ['-l', mnt]);
  }
}

export type { SnapEntry };
