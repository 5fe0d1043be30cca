/**
 * Writes docs/performance.md from a fresh run of the benches: each bench runs as a process of its
 * own, one after the other (never two at once: they would measure each other), and every figure
 * line it prints (`name: measured (target …) PASS|MISS`) becomes a row of its table, beside the
 * machine the figures come from and the date. Nothing in the file is typed by hand, so the
 * figures in the docs are always ones a run printed.
 *
 *   node --import tsx bench/docs.ts [--sizes 1000,20000,100000] [--runs N] [--only FIGURE,…]
 *     [--skip NAME,…] [--out docs/performance.md]
 *
 * `--sizes`, `--runs` and `--only` go to bench/run.ts (the session cycle against git), `--sizes`
 * also to bench/mcp.ts; `--skip` leaves out benches by name (patch, lock, guard, cycle, mcp).
 * `npm run bench:docs` builds first: the cycle and MCP benches drive dist/hagent.cjs.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Bench {
  name: string;
  title: string;
  /** The script under bench/ and its arguments. */
  argv: string[];
  /** How to reproduce it from the repository (an npm script where there is one). */
  command: string;
  /** Only the lines after the first one matching this are figures (run.ts ends with a summary). */
  after?: RegExp;
  /** A sentence before the table: what the figures must be read with. */
  note?: string;
}

/** `measured (target ≤ T) PASS more`, the target and verdict optional. */
const MEASURED =
  /^(.*?)(?:\s*\((?:target\s+)?([^()]*(?:≤|<=)[^()]*)\):?\s*(PASS|MISS|ok|OVER)\b(.*))?$/;

/** One figure line, split into its parts. */
export interface Figure {
  name: string;
  measured: string;
  target: string;
  verdict: string;
}

/**
 * Reads a bench's figure line: `name: measured (target T) PASS|MISS [more]`, where the target
 * and verdict are optional and `more` joins the measured text. A name may hold `: ` itself
 * (`50 chunks: 200,000-line file (median of 9)`): a name that ends in a parenthesis ends there.
 */
export function readFigure(line: string): Figure | undefined {
  const text = line.trim();
  const paren = text.indexOf('): ');
  const target = text.search(/\((?:target\s+)?[^()]*(?:≤|<=)/);
  const cut = paren >= 0 && (target < 0 || paren < target) ? paren + 1 : text.indexOf(': ');
  if (cut <= 0) return undefined;
  const m = MEASURED.exec(text.slice(cut + 2));
  if (!m) return undefined;
  const [, measured, limit, verdict, more] = m;
  return {
    name: text.slice(0, cut),
    measured: [measured, more?.trim()].filter(Boolean).join('; '),
    target: limit?.replace(/<=/g, '≤').trim() ?? '',
    verdict: verdict === 'ok' ? 'PASS' : verdict === 'OVER' ? 'MISS' : (verdict ?? 'reported'),
  };
}

interface DocsArgs {
  sizes?: string;
  runs?: string;
  only?: string;
  skip: Set<string>;
  out: string;
}

function parseArgs(argv: string[]): DocsArgs {
  const out: DocsArgs = { skip: new Set<string>(), out: path.join(ROOT, 'docs', 'performance.md') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--sizes') out.sizes = value();
    else if (a === '--only') out.only = value();
    else if (a === '--runs') out.runs = value();
    else if (a === '--skip') for (const s of value().split(',')) out.skip.add(s.trim());
    else if (a === '--out') out.out = path.resolve(value());
    else throw new Error(`unknown argument ${a} (see the comment at the top of bench/docs.ts)`);
  }
  return out;
}

function gib(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(1);
}

/** The machine, in the words a reader needs to weigh the figures. */
function machine(): string[] {
  const cpus = os.cpus();
  const gitVersion = spawnSync('git', ['version'], { encoding: 'utf8' }).stdout.trim();
  return [
    `- ${os.type()} ${os.release()} (${os.arch()}), ${cpus.length} × ` +
      `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${gib(os.totalmem())} GiB memory`,
    `- Node ${process.version}, ${gitVersion}`,
    `- load average at the start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (1, 5, 15 min)`,
  ];
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const cycleArgs = [
    ...(args.sizes ? ['--sizes', args.sizes] : []),
    ...(args.runs ? ['--runs', args.runs] : []),
    ...(args.only ? ['--only', args.only] : []),
  ];
  const benches: Bench[] = [
    {
      name: 'patch',
      title: 'Patch engine',
      argv: ['patch-engine.ts'],
      command: 'npm run bench:patch',
    },
    { name: 'lock', title: 'Session lock', argv: ['lock.ts'], command: 'npm run bench:lock' },
    { name: 'guard', title: 'Shell guard', argv: ['guard.ts'], command: 'npm run bench:guard' },
    {
      name: 'cycle',
      title: 'Session cycle against git',
      argv: ['run.ts', ...cycleArgs],
      command: `npm run bench${cycleArgs.length ? ` -- ${cycleArgs.join(' ')}` : ''}`,
      after: /^summary \(/,
      note:
        "The targets are set for 20,000 and 100,000 files: at 1,000 files Node's own start " +
        "(`node -e 0`) outweighs git's whole job, so the 1k figures show where the time goes. " +
        'Every figure is noisy when the load average is above the number of CPUs.',
    },
    {
      name: 'mcp',
      title: 'MCP server',
      argv: ['mcp.ts', ...(args.sizes ? ['--sizes', args.sizes] : [])],
      command: `npm run bench:mcp${args.sizes ? ` -- --sizes ${args.sizes}` : ''}`,
      after: /^summary:/,
      note:
        'The server is the built one, spawned and driven by the official SDK client over stdio; ' +
        "git's side is `git apply --index` + `git commit` of the same change, in the same rounds.",
    },
  ];
  const started = new Date();
  const lines = [
    '# Performance',
    '',
    '<!-- Generated by bench/docs.ts (npm run bench:docs): do not edit by hand. -->',
    '',
    `Figures of one run of the benches on ${started.toISOString().slice(0, 16).replace('T', ' ')}`,
    'UTC, each bench in a process of its own, one after the other. Every figure is measured side',
    'by side with what it is compared to in the same run (interleaved, medians); the targets',
    "are the project's. How each figure is taken, and what past runs found, is in",
    '[performance-notes.md](performance-notes.md) and the [decision records](decisions/).',
    '',
    '## Machine',
    '',
    ...machine(),
  ];
  for (const bench of benches) {
    if (args.skip.has(bench.name)) continue;
    process.stderr.write(`bench/docs: running ${bench.argv.join(' ')}\n`);
    const t0 = performance.now();
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        path.join('bench', bench.argv[0]!),
        ...bench.argv.slice(1),
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        maxBuffer: 64 * 2 ** 20,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const seconds = ((performance.now() - t0) / 1000).toFixed(0);
    let out = child.stdout.split('\n');
    if (bench.after) {
      const at = out.findIndex((l) => bench.after!.test(l));
      out = at < 0 ? [] : out.slice(at + 1);
    }
    const figures = out.map(readFigure).filter((f): f is Figure => f !== undefined);
    lines.push('', `## ${bench.title}`, '', `\`${bench.command}\` (${seconds} s here).`, '');
    if (child.status !== 0 && figures.length === 0) {
      lines.push(`Not measured: the bench exited with status ${child.status}.`);
      continue;
    }
    if (bench.note) lines.push(bench.note, '');
    lines.push('| figure | measured | target | verdict |', '|---|---|---|---|');
    for (const f of figures)
      lines.push(
        `| ${cell(f.name)} | ${cell(f.measured)} | ${cell(f.target || '—')} | ${f.verdict} |`,
      );
  }
  lines.push('');
  writeFileSync(args.out, lines.join('\n'));
  process.stderr.write(`bench/docs: wrote ${path.relative(ROOT, args.out)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
