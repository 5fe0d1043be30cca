/**
 * End-to-end on real code: three consecutive published versions each of three npm packages
 * (`npm pack`, cached outside the repository in $TMPDIR/hagent-e2e-cache), committed as
 * consecutive commits of a temp repository; every version-to-version `git diff` is replayed
 * through the real CLI as a unified diff and in the Codex language (test/helpers/replay.ts), the
 * session head and the landed branch must hold exactly the newer tree.
 *
 * Run: npm run e2e:real. Prints the counts, then `N passed, N failed` (N = pair×form checks);
 * exits 1 on any failure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, tempDir } from '../helpers/index.js';
import { replayAll, summarize, type FormResult, type Pair } from '../helpers/replay.js';

/** Pinned versions: several text files each, real changes between versions (checked with npm view / git diff --stat). */
const PACKAGES: { name: string; versions: [string, string, string] }[] = [
  { name: 'semver', versions: ['7.6.0', '7.6.1', '7.6.2'] }, // internal/lrucache.js added then trimmed, ranges, package.json
  { name: 'kleur', versions: ['4.1.3', '4.1.4', '4.1.5'] }, // readme, index.js/index.mjs, colors.*, package.json
  { name: 'yargs-parser', versions: ['21.0.0', '21.0.1', '21.1.0'] }, // CHANGELOG, build/lib/*.js, browser.js, package.json
];

const CACHE = process.env.HAGENT_E2E_CACHE ?? path.join(os.tmpdir(), 'hagent-e2e-cache');

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} failed (exit ${r.status}): ${r.stderr || r.error?.message}`,
    );
  return r.stdout;
}

/** The tarball of name@version in the cache, fetched with `npm pack` when missing. */
function tarball(name: string, version: string): string {
  mkdirSync(CACHE, { recursive: true });
  const file = path.join(CACHE, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  if (!existsSync(file))
    run('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', CACHE], CACHE);
  if (!existsSync(file)) throw new Error(`npm pack ${name}@${version} did not produce ${file}`);
  return file;
}

/** A temp repository whose first-parent history is the package's versions, oldest first. */
function packageHistory(
  name: string,
  versions: readonly string[],
): { repo: string; pairs: Pair[] } {
  const repo = tempDir(`hagent-e2e-${name}-`);
  git(repo, 'init', '-q', '--initial-branch=main');
  git(repo, 'config', 'core.autocrlf', 'false');
  const commits: string[] = [];
  for (const v of versions) {
    const dir = tempDir(`hagent-e2e-${name}-${v}-`);
    run('tar', ['-xzf', tarball(name, v), '-C', dir], dir);
    const root = path.join(dir, 'package');
    if (!existsSync(root) || readdirSync(root).length === 0)
      throw new Error(`${name}@${v}: the tarball holds no package/ folder`);
    // The index tracks exactly the extracted tree: clear it, then add everything (ignored files too).
    git(repo, 'rm', '-rq', '--cached', '--ignore-unmatch', '.');
    git(repo, `--work-tree=${root}`, 'add', '-A', '-f', '.');
    git(repo, 'commit', '-q', '--allow-empty', '--no-verify', '-m', `${name}@${v}`);
    commits.push(git(repo, 'rev-parse', 'HEAD'));
  }
  const pairs: Pair[] = [];
  for (let k = 0; k + 1 < commits.length; k++) {
    pairs.push({
      older: commits[k]!,
      newer: commits[k + 1]!,
      label: `${name} ${versions[k]}→${versions[k + 1]}`,
    });
  }
  return { repo, pairs };
}

const all: FormResult[] = [];
let setupFailures = 0;
for (const p of PACKAGES) {
  let history: { repo: string; pairs: Pair[] };
  try {
    history = packageHistory(p.name, p.versions);
  } catch (e) {
    setupFailures++;
    process.stdout.write(`FAIL setup of ${p.name}: ${(e as Error).message}\n`);
    continue;
  }
  replayAll(history.repo, history.pairs, (r) => {
    all.push(r);
    const mark =
      r.outcome === 'passed' ? 'ok  ' : r.outcome === 'failed' ? 'FAIL' : r.outcome.toUpperCase();
    process.stdout.write(
      `${mark} [${r.form}] ${r.pair.label} (${r.files} files, ${r.hunks} hunks)${r.outcome === 'passed' ? '' : `: ${r.reason}`}${r.patchFile ? `\n     patch saved at ${r.patchFile}` : ''}\n`,
    );
  });
}

const s = summarize(all, 'replay of real npm package versions');
process.stdout.write(`\n${s.lines.join('\n')}\n`);
const failed = s.failed + setupFailures;
const passed = s.checks - s.failed;
if (s.checks === 0) process.stdout.write('no pair was replayed\n');
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed > 0 || s.checks === 0 ? 1 : 0);
