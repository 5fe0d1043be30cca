/**
 * R4, hostile patches fuzzed from valid ones: a figure of bench/reliability/run.ts (short
 * version in test/reliability/faults.test.ts).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT,
  diffSnapshots,
  makeRepo,
  snapshotTree,
  startSession,
} from '../../test/helpers/index.js';
import {
  compareWorktreeWithCommit,
  fsckProblem,
  gitRaw,
  tempFilesUnder,
} from '../../test/helpers/repo-checks.js';
import {
  anchoredFile,
  cli,
  codeOf,
  commonDirOf,
  fmtTally,
  headFast,
  int,
  pick,
  rng,
  tally,
  type Figure,
  type Session,
} from './common.js';

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

/** Breaks a patch: 1–3 of the mutations of the fuzz figure R4. */
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
