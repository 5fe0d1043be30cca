/**
 * Differential test of hagent's patch engine against the real Codex `apply_patch` engine
 * (tests whose answers no one here wrote).
 *
 * Generates COUNT (default 2,000) patches from seeded random edits of real files (this repo's
 * sources; the npm packages of the replay cache when present), applies each with hagent's pure
 * engine in-process (parsePatch + planPatch on a snapshot) and with `codex
 * --codex-run-as-apply-patch PATCH` spawned in a scratch copy of the same files, and compares the
 * resulting trees byte for byte. A difference is explained only by a documented deviation
 * (patch-language.md "Beyond Codex", prior-art.md §2), checked against the case itself; any other
 * difference fails. Prints the table of outcomes and a closing `N passed, N failed` line.
 *
 *   node --import tsx test/codex/differential.ts [--count N] [--seed S] [--jobs J] [--verbose]
 *
 * Then the `apply_patch` bin (dist/apply_patch.cjs, built first) against the same Codex binary
 * on every shared conformance case (../shared/cases, or $HAGENT_CASES): each patch.txt is given
 * as the one argument to both, in a copy of the case's input/ (hagent's inside a session
 * worktree); where both succeed their stdout must be identical, byte for byte. `--bin-only` runs
 * just this part.
 *
 * Codex is the pinned one of the agent tests (`$HAGENT_AGENTS_CACHE`), else installed on first use
 * into `$TMPDIR/hagent-codex-cache` (never a repo dependency); `CODEX_BIN` overrides the binary.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHagentError } from '../../src/errors.js';
import {
  parsePatch,
  pathsToRead,
  planPatch,
  type FileState,
  type MatchLevel,
  type Plan,
} from '../../src/patch/index.js';
import { normalizeLine } from '../../src/patch/seek.js';
import { AGENTS_CACHE, PACKAGES } from '../helpers/agents.js';
import { CASES_DIR, git, GIT_ENV } from '../helpers/index.js';
import {
  applyEdits,
  chunksFor,
  degradations,
  encodeLike,
  linesOf,
  loadPool,
  prng,
  putsBackFinalNewline,
  Rand,
  randomEdits,
  type PoolFile,
} from './edits.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const COUNT = arg('count', 2000);
const SEED = arg('seed', 20260801);
const JOBS = arg('jobs', Math.max(2, Math.min(8, os.cpus().length * 2)));
const VERBOSE = process.argv.includes('--verbose');
const BIN_ONLY = process.argv.includes('--bin-only');

// ── Codex ───────────────────────────────────────────────────────────────────────────────────────

function findBinary(dir: string): string | undefined {
  const scope = path.join(dir, 'node_modules', '@openai');
  if (!existsSync(scope)) return undefined;
  for (const pkg of readdirSync(scope)) {
    const vendor = path.join(scope, pkg, 'vendor');
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      for (const name of ['codex', 'codex.exe']) {
        const bin = path.join(vendor, triple, 'bin', name);
        if (existsSync(bin)) return bin;
        const flat = path.join(vendor, triple, 'codex', name);
        if (existsSync(flat)) return flat;
      }
    }
  }
  return undefined;
}

function codexBinary(): string {
  if (process.env.CODEX_BIN) return process.env.CODEX_BIN;
  // The pinned Codex the agent tests use (.ci/run installs it there), else our own cache.
  const pinned = findBinary(AGENTS_CACHE);
  if (pinned) return pinned;
  const cache = path.join(os.tmpdir(), 'hagent-codex-cache');
  let bin = findBinary(cache);
  if (!bin) {
    process.stderr.write(`installing ${PACKAGES.codex} into ${cache} …\n`);
    const r = spawnSync(
      'npm',
      ['install', '--prefix', cache, '--no-save', '--no-audit', '--no-fund', PACKAGES.codex],
      { stdio: 'inherit' },
    );
    if (r.status !== 0) throw new Error('npm install @openai/codex failed');
    bin = findBinary(cache);
  }
  if (!bin) throw new Error(`no codex binary under ${cache}/node_modules/@openai/*/vendor`);
  return bin;
}

type Tree = Map<string, Uint8Array>;

interface CodexOutcome {
  ok: boolean;
  tree: Tree;
  output: string;
}

function readTree(dir: string, rel = '', out: Tree = new Map()): Tree {
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const st = statSync(path.join(dir, r));
    if (st.isDirectory()) readTree(dir, r, out);
    else out.set(r, new Uint8Array(readFileSync(path.join(dir, r))));
  }
  return out;
}

function writeTree(dir: string, tree: Tree): void {
  for (const [p, bytes] of tree) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), bytes);
  }
}

function runCodex(bin: string, scratch: string, tree: Tree, patch: string): Promise<CodexOutcome> {
  const dir = mkdtempSync(path.join(scratch, 'c-'));
  writeTree(dir, tree);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--codex-run-as-apply-patch', patch], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const out = readTree(dir);
      rmSync(dir, { recursive: true, force: true });
      resolve({ ok: code === 0, tree: out, output });
    });
  });
}

// ── hagent ─────────────────────────────────────────────────────────────────────────────────────

type HagentOutcome =
  | { ok: true; tree: Tree; plan: Plan }
  | { ok: false; code: string; message: string; alreadyApplied: boolean };

function runHagent(tree: Tree, patch: string): HagentOutcome {
  try {
    const parsed = parsePatch(patch);
    const snapshot = new Map<string, FileState>();
    for (const p of pathsToRead(parsed)) {
      const bytes = tree.get(p);
      const isDir = [...tree.keys()].some((k) => k.startsWith(`${p}/`));
      snapshot.set(
        p,
        bytes
          ? { kind: 'file', bytes, mode: '100644' }
          : isDir
            ? { kind: 'directory' }
            : { kind: 'missing' },
      );
    }
    const plan = planPatch(parsed, snapshot);
    const out: Tree = new Map(tree);
    for (const f of plan.files) {
      if (f.from !== undefined && f.op === 'move') out.delete(f.from);
      if (f.op === 'delete') out.delete(f.path);
      else if (f.bytes) out.set(f.path, f.bytes);
    }
    return { ok: true, tree: out, plan };
  } catch (e) {
    if (isHagentError(e))
      return {
        ok: false,
        code: e.code,
        message: `${e.message} (${e.hint ?? ''})`,
        alreadyApplied: e.details['alreadyApplied'] === true,
      };
    throw e;
  }
}

// ── cases ──────────────────────────────────────────────────────────────────────────────────────

/** What a case exercises; deviations are accepted only when the case can show them. */
interface Case {
  id: number;
  kind: string;
  tree: Tree;
  patch: string;
  /** The tree the edit meant (hagent must produce exactly this when it succeeds). */
  intended?: Tree;
  /** Paths whose original bytes lack a final newline, end with a blank line, or hold CR / BOM. */
  flags: Set<string>;
}

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { ignoreBOM: true });

/** Variants of a real file's bytes: CRLF, no final newline, a final blank line, a BOM. */
function variant(r: Rand, bytes: Uint8Array, flags: Set<string>): Uint8Array {
  let text = dec.decode(bytes);
  const roll = r.next();
  if (roll < 0.06) {
    text = text.replace(/\r?\n/g, '\r\n');
    flags.add('crlf');
  } else if (roll < 0.14) {
    text = text.replace(/(\r?\n)+$/, '');
    flags.add('no-final-newline');
  } else if (roll < 0.18) {
    text = text.endsWith('\n') ? `${text}\n` : `${text}\n\n`;
    flags.add('final-blank-line');
  } else if (roll < 0.2) {
    text = `\uFEFF${text}`;
    flags.add('bom');
  }
  return enc.encode(text);
}

/** A mixed-endings copy of a real file: every third line ends in CRLF, the others in LF. */
function mixedEndings(bytes: Uint8Array, flags: Set<string>): Uint8Array {
  let k = 0;
  flags.add('mixed');
  return enc.encode(dec.decode(bytes).replace(/\r?\n/g, () => (k++ % 3 === 0 ? '\r\n' : '\n')));
}

function makeUpdate(
  r: Rand,
  file: PoolFile,
  donor: readonly string[],
  tree: Tree,
  intended: Tree,
  flags: Set<string>,
  kind: string,
  target: string,
): string[] {
  const bytes =
    kind === 'mixed-endings' ? mixedEndings(file.bytes, flags) : variant(r, file.bytes, flags);
  tree.set(target, bytes);
  const tf = linesOf(bytes);
  if (kind === 'eof-edit') {
    // An edit that ends at the end of the file (replacing, deleting or appending its last lines),
    // marked *** End of File half the time; the file may lack its final newline (variant).
    const n = tf.texts.length;
    const del = Math.min(n, r.int(0, 2));
    const ins =
      r.chance(0.2) && del > 0 ? [] : [r.pick(donor), ...(r.chance(0.5) ? [r.pick(donor)] : [])];
    const edits = [{ at: n - del, del, ins }];
    const options = {
      context: r.pick([1, 2, 3]),
      anchors: false,
      bareFirst: r.chance(0.3),
      eofMarker: r.chance(0.5),
    };
    intended.set(
      target,
      encodeLike(tf, edits, { addFinalNewline: putsBackFinalNewline(tf, edits, options) }),
    );
    return chunksFor(tf.texts, edits, options);
  }
  if (kind === 'noop') {
    const at = r.int(0, Math.max(0, tf.texts.length - 1));
    const line = tf.texts[at] ?? '';
    intended.set(target, bytes);
    return chunksFor(tf.texts, [{ at, del: 1, ins: [line] }], {
      context: r.int(1, 3),
      bareFirst: r.chance(0.3),
    });
  }
  if (kind === 'anchored-insertion') {
    // A pure insertion right after a unique, non-blank line named by @@ (Codex appends at the end).
    const uniques = tf.texts
      .map((l, i) => [l, i] as const)
      .filter(
        ([l]) =>
          l.trim().length > 3 &&
          !l.startsWith('*** ') &&
          tf.texts.filter((x) => x.trim() === l.trim()).length === 1,
      );
    if (uniques.length === 0 || tf.texts.length < 4)
      return makeUpdate(r, file, donor, tree, intended, flags, 'update', target);
    const [anchorLine, i] = r.pick(uniques);
    if (i === tf.texts.length - 1)
      return makeUpdate(r, file, donor, tree, intended, flags, 'update', target);
    const ins = [r.pick(donor), r.pick(donor)];
    const edits = [{ at: i + 1, del: 0, ins }];
    intended.set(target, encodeLike(tf, edits));
    return [`@@ ${anchorLine}`, ...ins.map((l) => `+${l}`)];
  }
  const count = kind === 'multi-chunk' ? r.int(2, 6) : 1;
  const edits = randomEdits(r, tf.texts, donor, count, r.pick([1, 2, 4, 8]), 1);
  if (edits.length === 0) edits.push({ at: 0, del: 0, ins: ['// inserted'] });
  intended.set(target, encodeLike(tf, edits));
  // A degradation that really changes some context or removed line (else the case is a plain update).
  let degrade: ((l: string) => string) | undefined;
  if (kind === 'degraded') {
    const touched = new Set(
      edits.flatMap((e) => tf.texts.slice(Math.max(0, e.at - 3), e.at + e.del + 3)),
    );
    const all = [...Object.values(degradations), (l: string) => (l.trim() === '' ? l : `${l}  `)];
    for (let k = all.length - 1; k > 0; k--) {
      const j = r.int(0, k);
      [all[k], all[j]] = [all[j] as (l: string) => string, all[k] as (l: string) => string];
    }
    degrade = all.find((d) => [...touched].some((l) => d(l) !== l));
  }
  const chunkOptions = {
    context: kind === 'small-context' ? 1 : r.pick([1, 2, 3, 3, 3]),
    anchors: kind === 'anchored' || r.chance(0.15),
    bareFirst: r.chance(0.3),
    eofMarker: r.chance(0.5),
    ...(degrade ? { degrade } : {}),
  };
  if (putsBackFinalNewline(tf, edits, chunkOptions))
    intended.set(target, encodeLike(tf, edits, { addFinalNewline: true }));
  return chunksFor(tf.texts, edits, chunkOptions);
}

const KINDS: [string, number][] = [
  ['update', 30],
  ['multi-chunk', 20],
  ['small-context', 6],
  ['anchored', 6],
  ['degraded', 8],
  ['anchored-insertion', 3],
  ['add', 6],
  ['add-existing', 2],
  ['delete', 5],
  ['move', 6],
  ['pure-move', 2],
  ['move-existing', 2],
  ['multi-op', 10],
  ['noop', 2],
  ['eof-edit', 8],
  ['mixed-endings', 6],
  ['retry', 10],
];

/** Kinds a retried patch is made of: applied once to make the case's tree, then sent again. */
const RETRIED = [
  'update',
  'multi-chunk',
  'anchored-insertion',
  'eof-edit',
  'add',
  'delete',
  'move',
  'multi-op',
];

function pickKind(r: Rand): string {
  const total = KINDS.reduce((s, [, w]) => s + w, 0);
  let x = r.next() * total;
  for (const [k, w] of KINDS) if ((x -= w) < 0) return k;
  return 'update';
}

function makeCase(
  id: number,
  r: Rand,
  pool: readonly PoolFile[],
  donor: readonly string[],
  forced?: string,
): Case {
  const kind = forced ?? pickKind(r);
  if (kind === 'retry') {
    // An agent retrying its last patch: the files already hold what the patch made of them.
    const first = makeCase(id, r, pool, donor, r.pick(RETRIED));
    if (!first.intended) return first;
    return {
      id,
      kind: `retry of ${first.kind}`,
      tree: first.intended,
      patch: first.patch,
      flags: new Set([...first.flags, 'retry']),
    };
  }
  const tree: Tree = new Map();
  const intended: Tree = new Map();
  const flags = new Set<string>();
  const ops: string[] = [];
  const used = new Set<string>();
  const pickFile = (): PoolFile => {
    for (;;) {
      const f = r.pick(pool);
      if (!used.has(f.path)) {
        used.add(f.path);
        return f;
      }
    }
  };
  const addBody = (): string[] => {
    const n = r.int(0, 30);
    const start = r.int(0, Math.max(0, donor.length - n));
    return donor.slice(start, start + n);
  };
  const one = (k: string): void => {
    switch (k) {
      case 'add': {
        let p = `new/${id}/${r.int(0, 99)}-file.txt`;
        while (used.has(p)) p = `new/${id}/${r.int(0, 99)}-file.txt`; // two Adds of one path are DUPLICATE_PATH, another case
        const body = addBody();
        used.add(p);
        ops.push(`*** Add File: ${p}`, ...body.map((l) => `+${l}`));
        intended.set(p, enc.encode(body.length === 0 ? '' : `${body.join('\n')}\n`));
        return;
      }
      case 'add-existing': {
        const f = pickFile();
        tree.set(f.path, f.bytes);
        const body = addBody();
        ops.push(`*** Add File: ${f.path}`, ...body.map((l) => `+${l}`));
        flags.add('overwrite');
        return;
      }
      case 'delete': {
        const f = pickFile();
        tree.set(f.path, f.bytes);
        ops.push(`*** Delete File: ${f.path}`);
        intended.set(f.path, new Uint8Array()); // marker: deleted
        flags.add(`deleted:${f.path}`);
        return;
      }
      case 'move':
      case 'pure-move':
      case 'move-existing': {
        const f = pickFile();
        let dest = r.chance(0.5)
          ? `moved/${id}/deep/${path.posix.basename(f.path)}`
          : `${f.path}.moved`;
        if (k === 'move-existing') {
          const other = pickFile();
          tree.set(other.path, other.bytes);
          dest = other.path;
          flags.add('overwrite');
        }
        const chunkLines =
          k === 'pure-move' ? [] : makeUpdate(r, f, donor, tree, intended, flags, 'update', f.path);
        if (k === 'pure-move') {
          tree.set(f.path, f.bytes);
          intended.set(f.path, f.bytes);
        }
        const content = intended.get(f.path) as Uint8Array;
        intended.delete(f.path);
        flags.add(`deleted:${f.path}`);
        intended.set(dest, content);
        used.add(dest);
        ops.push(`*** Update File: ${f.path}`, `*** Move to: ${dest}`, ...chunkLines);
        return;
      }
      default: {
        const f = pickFile();
        ops.push(
          `*** Update File: ${f.path}`,
          ...makeUpdate(r, f, donor, tree, intended, flags, k, f.path),
        );
      }
    }
  };
  if (kind === 'multi-op') {
    const n = r.int(2, 4);
    for (let q = 0; q < n; q++)
      one(r.pick(['update', 'multi-chunk', 'add', 'delete', 'move', 'anchored']));
  } else one(kind);
  // Intended tree = original tree with the intended files replaced / deleted.
  const full: Tree = new Map(tree);
  for (const [p, b] of intended) {
    if (flags.has(`deleted:${p}`)) full.delete(p);
    else full.set(p, b);
  }
  for (const fl of flags)
    if (fl.startsWith('deleted:') && !intended.has(fl.slice(8))) full.delete(fl.slice(8));
  const patch =
    ['*** Begin Patch', ...ops, '*** End Patch'].join('\n') + (r.chance(0.5) ? '\n' : '');
  const c: Case = { id, kind, tree, patch, flags };
  if (!flags.has('overwrite')) c.intended = full;
  return c;
}

// ── classification ─────────────────────────────────────────────────────────────────────────────

function same(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameTree(a: Tree, b: Tree): boolean {
  if (a.size !== b.size) return false;
  for (const [p, bytes] of a) if (!same(bytes, b.get(p))) return false;
  return true;
}

function differingPaths(a: Tree, b: Tree): string[] {
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((p) => !same(a.get(p), b.get(p))).sort();
}

/** Codex's final-newline rule: an updated file always ends with a line break (a final blank line stays). */
function codexFinalNewline(text: string): string {
  return /\n$/.test(text) ? text : `${text}${text.includes('\r\n') ? '\r\n' : '\n'}`;
}

/**
 * Why hagent's file differs from Codex's, if the difference is a documented deviation; undefined
 * otherwise. Rules: patch-language.md §4 (fidelity), prior-art.md §2 (Codex's failures).
 */
function explainFile(
  c: Case,
  p: string,
  h: Uint8Array,
  x: Uint8Array,
  plan: Plan,
): string | undefined {
  const orig =
    c.tree.get(p) ??
    [...c.tree.entries()].find(([src]) =>
      plan.files.some((f) => f.op === 'move' && f.from === src && f.path === p),
    )?.[1];
  if (!orig) return undefined;
  const ht = dec.decode(h);
  const xt = dec.decode(x);
  const ot = dec.decode(orig);
  // Final-newline state: hagent keeps a missing final newline; Codex adds one.
  const noFinalNewline = !/\n$/.test(ot);
  if (noFinalNewline && codexFinalNewline(ht) === xt)
    return 'final-newline state kept (no final newline)';
  // A result ending in a blank line: Codex joins the lines and adds one break, losing the blank line.
  const blank = /(\r?\n)(\r?\n)$/.exec(ht);
  if (blank && ht.slice(0, ht.length - (blank[2] as string).length) === xt)
    return 'final-newline state kept (final blank line; Codex drops it)';
  // Mixed endings (§4): a replaced line keeps the ending of the line it replaces, an inserted one
  // the ending of the line before it (hagent's result equals the intended edit, checked first).
  const lf = (t: string): string => t.replace(/\r\n/g, '\n');
  if (c.flags.has('mixed') && (lf(ht) === lf(xt) || lf(codexFinalNewline(ht)) === lf(xt)))
    return 'mixed endings: each new line takes the ending of the line it replaces';
  // Fuzzy match: hagent keeps the file's bytes on context lines; Codex writes the patch's spelling.
  const file = plan.files.find((f) => f.path === p);
  const level: MatchLevel | undefined = file?.level;
  if (level && level !== 'exact') {
    const hl = (noFinalNewline ? codexFinalNewline(ht) : ht).split('\n');
    const cl = xt.split('\n');
    if (
      hl.length === cl.length &&
      hl.every(
        (l, i) => l === cl[i] || normalizeLine(l, level) === normalizeLine(cl[i] as string, level),
      )
    ) {
      return `context bytes kept (matched at level ${level})${noFinalNewline && ht !== codexFinalNewline(ht) ? ' + final-newline state kept' : ''}`;
    }
  }
  return undefined;
}

function classify(
  c: Case,
  h: HagentOutcome,
  x: CodexOutcome,
): { category: string; explained: boolean; detail?: string } {
  if (h.ok && c.intended && !sameTree(h.tree, c.intended)) {
    return {
      category: 'hagent differs from the intended edit',
      explained: false,
      detail: differingPaths(h.tree, c.intended).join(', '),
    };
  }
  if (h.ok && x.ok) {
    if (sameTree(h.tree, x.tree)) {
      if (c.flags.has('retry'))
        return {
          category: sameTree(h.tree, c.tree)
            ? 'retried patch: both rewrote the same bytes'
            : 'retried patch applied again by both (its old side is still in the file)',
          explained: true,
        };
      const loosest = h.plan.files
        .map((f) => f.level)
        .filter((l) => l !== undefined && l !== 'exact');
      return {
        category: loosest.length > 0 ? `identical (fuzzy match, level ${loosest[0]})` : 'identical',
        explained: true,
      };
    }
    if (h.plan.files.some((f) => f.noop) && differingPaths(h.tree, x.tree).length === 0)
      return { category: 'identical', explained: true };
    const reasons = new Set<string>();
    for (const p of differingPaths(h.tree, x.tree)) {
      const hb = h.tree.get(p);
      const xb = x.tree.get(p);
      const why = hb && xb ? explainFile(c, p, hb, xb, h.plan) : undefined;
      if (!why) return { category: 'both applied, trees differ', explained: false, detail: p };
      reasons.add(why);
    }
    return { category: `deviation: ${[...reasons].sort().join(' + ')}`, explained: true };
  }
  if (!h.ok && x.ok) {
    const codexIntended = c.intended && sameTree(x.tree, c.intended);
    switch (h.code) {
      case 'AMBIGUOUS_MATCH':
        return {
          category: `deviation: AMBIGUOUS_MATCH refused (Codex edits the first match${codexIntended ? ', here the intended one' : ', here the WRONG one'})`,
          explained: true,
        };
      case 'FILE_EXISTS':
        if (c.flags.has('overwrite'))
          return { category: 'deviation: FILE_EXISTS refused (Codex overwrites)', explained: true };
        // A retried patch whose Add already happened, beside a change that would apply twice.
        if (c.flags.has('retry'))
          return {
            category:
              'deviation: retried patch refused FILE_EXISTS on its own Add (Codex overwrites it)',
            explained: true,
          };
        break;
      case 'NO_CHANGES':
        // patch-language.md §4 "Already applied": a retried patch, whose every change is in the files.
        if (h.alreadyApplied && c.flags.has('retry'))
          return {
            category: `deviation: retried patch refused NO_CHANGES, looks applied already (Codex ${sameTree(x.tree, c.tree) ? 'rewrote the same bytes' : 'applied it again'})`,
            explained: true,
          };
        if (h.alreadyApplied)
          return {
            category: 'deviation: NO_CHANGES refused (the added lines are already in place)',
            explained: true,
          };
        if (
          differingPaths(x.tree, c.tree).every(
            (p) =>
              !/\n$/.test(dec.decode(c.tree.get(p) ?? new Uint8Array())) &&
              dec.decode(x.tree.get(p) ?? new Uint8Array()) ===
                codexFinalNewline(dec.decode(c.tree.get(p) ?? new Uint8Array())),
          )
        )
          return { category: 'deviation: NO_CHANGES refused (Codex reports M)', explained: true };
        // patch-language.md §4: a replaced line keeps its own ending. A patch whose - and + lines
        // are the same text changes nothing there; Codex rewrites such a CRLF line as LF.
        if (
          differingPaths(x.tree, c.tree).every(
            (p) =>
              dec.decode(x.tree.get(p) ?? new Uint8Array()).replace(/\r\n/g, '\n') ===
              dec.decode(c.tree.get(p) ?? new Uint8Array()).replace(/\r\n/g, '\n'),
          )
        )
          return {
            category:
              'deviation: NO_CHANGES refused (only line endings would change: Codex rewrites the replaced CRLF line as LF)',
            explained: true,
          };
        break;
    }
    return {
      category: `hagent refused ${h.code}, Codex applied`,
      explained: false,
      detail: h.message,
    };
  }
  if (h.ok && !x.ok) {
    // patch-language.md §1: "An update with a Move and no chunks is a pure rename."
    if (
      /hunk for path .* is empty/.test(x.output) &&
      /\*\*\* Move to: .*\n(\*\*\* |$)/.test(c.patch)
    )
      return { category: 'deviation: pure rename (Codex requires a chunk)', explained: true };
    // §4 "A BOM stays": Codex reads the BOM as part of the first line, so context naming it is not found.
    if (c.flags.has('bom') && /Failed to find (expected lines|context)/.test(x.output))
      return {
        category: 'deviation: BOM file (Codex cannot match its first line)',
        explained: true,
      };
    return {
      category: 'hagent applied, Codex refused',
      explained: false,
      detail: x.output.trim().split('\n')[0],
    };
  }
  // Both refused.
  if (!h.ok && !x.ok) {
    if (h.alreadyApplied && c.flags.has('retry'))
      return {
        category: 'retried patch: hagent NO_CHANGES (looks applied already), Codex refused',
        explained: true,
      };
    if (!sameTree(x.tree, c.tree))
      return {
        category: `both refused (${h.code}); Codex left a partial write (not atomic)`,
        explained: true,
      };
    return { category: `both refused (${h.code})`, explained: true };
  }
  return { category: 'unreachable', explained: false };
}

/** Codex puts a pure insertion with an @@ anchor at the end of the file; hagent after the anchor. */
function classifyAnchoredInsertion(
  c: Case,
  h: HagentOutcome,
  x: CodexOutcome,
): { category: string; explained: boolean } | undefined {
  if (c.kind !== 'anchored-insertion' || !h.ok || !x.ok || sameTree(h.tree, x.tree))
    return undefined;
  for (const p of differingPaths(h.tree, x.tree)) {
    const orig = c.tree.get(p);
    const xb = x.tree.get(p);
    if (!orig || !xb) return undefined;
    const body = c.patch
      .split('\n')
      .filter((l) => l.startsWith('+'))
      .map((l) => l.slice(1));
    const plain = (t: string): string => t.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
    const appended =
      plain(codexFinalNewline(dec.decode(orig))) + body.map((l) => `${l}\n`).join('');
    if (plain(dec.decode(xb)) !== appended) return undefined;
  }
  return {
    category: 'deviation: anchored insertion (Codex appends at the end of the file)',
    explained: true,
  };
}

// ── the apply_patch bin on the shared cases ─────────────────────────────────────────────────────

interface BinOutcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

function runProgram(
  bin: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): BinOutcome {
  const r = spawnSync(bin, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs hagent's `apply_patch` bin and Codex on every shared case; where both exit 0, their stdout
 * must be the same text. hagent's risky-patch confirmation is switched off in the case's
 * repository (`.hagent/config.json`): Codex has none, and the bin has no `--yes`.
 * @returns the counts of the table and the cases whose texts differ.
 */
function compareBinOnSharedCases(codex: string): {
  table: Map<string, number>;
  failures: string[];
  compared: number;
} {
  const applyPatchBin = path.join(root, 'dist', 'apply_patch.cjs');
  const hagentBin = path.join(root, 'dist', 'hagent.cjs');
  if (!existsSync(applyPatchBin))
    throw new Error(`${applyPatchBin} is missing: run npm run build first`);
  const names = existsSync(CASES_DIR)
    ? readdirSync(CASES_DIR)
        .filter((n) => /^\d{3}_/.test(n))
        .sort()
    : [];
  if (names.length === 0) throw new Error(`no shared cases at ${CASES_DIR}`);
  const table = new Map<string, number>();
  const failures: string[] = [];
  const count = (k: string) => table.set(k, (table.get(k) ?? 0) + 1);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hagent-codex-bin-'));
  const env = { ...process.env, ...GIT_ENV };
  let compared = 0;
  try {
    for (const name of names) {
      const dir = path.join(CASES_DIR, name);
      const patch = readFileSync(path.join(dir, 'patch.txt'), 'utf8');
      const codexDir = path.join(scratch, `${name}-codex`);
      const repo = path.join(scratch, `${name}-hagent`);
      cpSync(path.join(dir, 'input'), codexDir, { recursive: true, verbatimSymlinks: true });
      cpSync(path.join(dir, 'input'), repo, { recursive: true, verbatimSymlinks: true });
      git(repo, 'init', '-q', '--initial-branch=main');
      git(repo, 'config', 'core.autocrlf', 'false');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'input');
      mkdirSync(path.join(repo, '.hagent'));
      writeFileSync(
        path.join(repo, '.hagent', 'config.json'),
        JSON.stringify({
          confirmDeletes: false,
          confirmFiles: 1000,
          confirmChangedLines: 1_000_000,
        }),
      );
      const started = runProgram(
        hagentBin,
        ['session', 'start', '--name', 'diff', '--json'],
        repo,
        env,
      );
      if (started.status !== 0) throw new Error(`${name}: session start failed: ${started.stderr}`);
      const worktree = (JSON.parse(started.stdout) as { worktree: string }).worktree;
      const x = runProgram(codex, ['--codex-run-as-apply-patch', patch], codexDir);
      const h = runProgram(applyPatchBin, [patch], worktree, env);
      if (h.status === 0 && x.status === 0) {
        compared++;
        if (h.stdout === x.stdout) count('both applied, same text');
        else {
          count('both applied, texts differ');
          failures.push(
            `${name}: apply_patch printed ${JSON.stringify(h.stdout)}, codex ${JSON.stringify(x.stdout)}`,
          );
        }
      } else if (h.status === 0) count('only hagent applied (documented deviations)');
      else if (x.status === 0)
        count(
          `only codex applied (hagent refused: ${/error\[(\w+)\]/.exec(h.stderr)?.[1] ?? h.status})`,
        );
      else count('both refused');
      if (h.status !== 0 && !/^error\[[A-Z_]+\]: .+\n(.*\n)*  hint: /.test(h.stderr))
        failures.push(
          `${name}: apply_patch exited ${h.status} without hagent's teaching error: ${JSON.stringify(h.stderr)}`,
        );
      if (h.status !== 0 && h.status !== 1)
        failures.push(`${name}: apply_patch exited ${h.status} (expected 0 or 1)`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { table, failures, compared };
}

function printTable(table: ReadonlyMap<string, number>): void {
  const width = Math.max(...[...table.keys()].map((k) => k.length));
  for (const [k, n] of [...table].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
    process.stdout.write(`${k.padEnd(width)}  ${String(n).padStart(5)}\n`);
}

// ── main ───────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  const started = performance.now();
  const bin = codexBinary();
  const codexVersion = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const binPart = (): number => {
    const b = compareBinOnSharedCases(bin);
    process.stdout.write(
      `\napply_patch bin vs ${codexVersion || 'codex'} on the shared cases (${b.compared} where both applied):\n`,
    );
    printTable(b.table);
    for (const f of b.failures) process.stdout.write(`  ${f}\n`);
    return b.failures.length;
  };
  if (BIN_ONLY) {
    const failed = binPart();
    process.stdout.write(`${failed === 0 ? 1 : 0} passed, ${failed} failed\n`);
    process.exit(failed > 0 ? 1 : 0);
  }
  const pool = loadPool(root);
  if (pool.length < 10) throw new Error(`only ${pool.length} files to edit`);
  const donor = pool
    .flatMap((f) => linesOf(f.bytes).texts.slice(0, 200))
    .filter((l) => !l.startsWith('*** ') && !l.includes('\r'));
  const r = new Rand(prng(SEED));
  const cases: Case[] = [];
  for (let id = 1; cases.length < COUNT; id++) {
    const c = makeCase(id, r, pool, donor);
    if (Buffer.byteLength(c.patch) > 100_000) continue; // one argv string must stay under 128 KiB
    cases.push(c);
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hagent-codex-diff-'));
  const table = new Map<string, number>();
  const failures: string[] = [];
  let passed = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const c = cases[next++] as Case;
      const h = runHagent(c.tree, c.patch);
      const x = await runCodex(bin, scratch, c.tree, c.patch);
      const verdict = classifyAnchoredInsertion(c, h, x) ?? classify(c, h, x);
      table.set(verdict.category, (table.get(verdict.category) ?? 0) + 1);
      if (verdict.explained) passed++;
      else {
        const detail = 'detail' in verdict && verdict.detail ? `: ${verdict.detail}` : '';
        failures.push(`case ${c.id} (${c.kind}): ${verdict.category}${detail}`);
        if (VERBOSE)
          process.stderr.write(
            `\n--- case ${c.id} ${verdict.category}${detail} [${[...c.flags].join(' ')}]\n${c.patch}\n--- codex: ${x.output}\n--- hagent: ${h.ok ? 'ok' : `${h.code} ${h.message}`}\n`,
          );
      }
    }
  };
  await Promise.all(Array.from({ length: JOBS }, worker));
  rmSync(scratch, { recursive: true, force: true });

  const kinds = new Map<string, number>();
  for (const c of cases) kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
  process.stdout.write(
    `differential: ${cases.length} patches from ${pool.length} real files, seed ${SEED}, ${codexVersion || 'codex'}\n`,
  );
  process.stdout.write(
    `patch kinds: ${[...kinds]
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}\n\n`,
  );
  printTable(table);
  if (failures.length > 0) {
    process.stdout.write(`\nunexplained differences:\n`);
    for (const f of failures.slice(0, 30)) process.stdout.write(`  ${f}\n`);
  }
  const binFailed = binPart();
  process.stdout.write(`\ntime: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  process.stdout.write(
    `${passed + (binFailed === 0 ? 1 : 0)} passed, ${failures.length + binFailed} failed\n`,
  );
  process.exit(failures.length + binFailed > 0 ? 1 : 0);
}

await main();
