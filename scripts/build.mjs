// Bundles the CLI and the library with esbuild (start-up matters: design.md measured ~120 ms
// bundled vs ~250 ms unbundled). Commands load lazily through code splitting.
import {
  rmSync,
  chmodSync,
  renameSync,
  existsSync,
  readFileSync,
  writeFileSync,
  mkdtempSync,
  mkdirSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';

// esbuild is a dev dependency: `npm install -g .` on a clone nobody ran `npm install` in starts
// this build (npm's prepare) without it. A bundle already built is then used as it is; without
// one, say what to run instead of a module-resolution stack.
let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  if (existsSync('dist/hagent.cjs')) {
    console.error(
      'hagent build: esbuild is not installed here; using the bundle in dist/ as it is',
    );
    process.exit(0);
  }
  console.error(
    'hagent build: esbuild (a dev dependency) is not installed in this folder, so hagent cannot be built.\n' +
      '  hint: run `npm install` in the clone first, then `npm install -g .` (or `npm link`)',
  );
  process.exit(1);
}

// Build beside dist/ and swap it in, so a CLI already running keeps a whole bundle.
const out = `dist.tmp-${process.pid}`;
rmSync(out, { recursive: true, force: true });
// The library face: ESM, each lazily imported module in a chunk of its own. The MCP server
// (`hagent mcp`) is an entry point of this build, not of the CLI's bundle: loaded by that command
// only, so the MCP SDK (~0.5 MB) is never read or compiled by the other commands. (In one
// CommonJS bundle, esbuild's lazy module wrappers also initialise zod after the SDK's schemas
// that use it.)
await build({
  entryPoints: { index: 'src/index.ts', mcp: 'src/mcp/index.ts' },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.js' },
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS code in dependencies expects require, __filename and __dirname.
  banner: {
    js: [
      "import { createRequire as __hagentCreateRequire } from 'node:module';",
      "import { fileURLToPath as __hagentFileURLToPath } from 'node:url';",
      'const require = __hagentCreateRequire(import.meta.url);',
      'const __hagentFilename = __hagentFileURLToPath(import.meta.url);',
      "const __hagentDirname = __hagentFilename.slice(0, __hagentFilename.lastIndexOf('/'));",
    ].join(' '),
  },
  define: { __filename: '__hagentFilename', __dirname: '__hagentDirname' },
  legalComments: 'none',
  logLevel: 'warning',
});
// The command line: one CommonJS bundle (commands stay lazily initialised inside it), started by
// dist/hagent.cjs with a V8 code cache (scripts/launcher.cjs says how). Node 20 has no code cache
// for ES modules; a vm.Script has one.
// `hagent hook` has a bundle of its own (src/hook-cli.ts says why), built the same way.
const programs = { cli: 'src/cli.ts', hook: 'src/hook-cli.ts' };
for (const [name, entry] of Object.entries(programs))
  await build({
    entryPoints: [entry],
    outfile: `${out}/${name}.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    banner: {
      js: "const __hagentImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    define: { 'import.meta.url': '__hagentImportMetaUrl' },
    // No whitespace or comments: a smaller source reads, hashes and deserializes faster, and an
    // all-ASCII source stays a one-byte string in V8 (three non-ASCII characters in comments made
    // the whole 785 KB source two-byte: +9 ms per start). Names are kept for stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
const hashes = {};
for (const name of Object.keys(programs)) {
  const source = readFileSync(`${out}/${name}.cjs`, 'utf8').replace(/^#!.*\n/, '');
  writeFileSync(`${out}/${name}.cjs`, source);
  hashes[name] = createHash('sha256').update(source).digest('hex').slice(0, 16);
}
// Two programs start the CLI bundle (and share its code cache): hagent, and the apply_patch
// drop-in for agent loops that shell out to Codex's tool. hagent's launcher starts hook.cjs for `hagent hook`.
for (const entry of ['hagent', 'apply_patch']) {
  writeFileSync(
    `${out}/${entry}.cjs`,
    readFileSync('scripts/launcher.cjs', 'utf8')
      .replace('__BUNDLE_HASHES__', JSON.stringify(hashes))
      .replaceAll('__ENTRY__', entry),
  );
  chmodSync(`${out}/${entry}.cjs`, 0o755);
}
// Type declarations of the library face (dist/types/index.d.ts), from the TypeScript compiler.
const tsc = spawnSync(
  process.execPath,
  ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', `${out}/types`],
  { stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const old = `dist.old-${process.pid}`;
if (existsSync('dist')) renameSync('dist', old);
renameSync(out, 'dist');
rmSync(old, { recursive: true, force: true });
// A first code cache, from a run of the whole cycle (the demo), so the first real command
// already starts fast. Best effort: without it the first command writes one.
const cacheEnv = { ...process.env, HAGENT_WRITE_CODE_CACHE: '1', NO_COLOR: '1' };
spawnSync(process.execPath, ['dist/hagent.cjs', 'demo'], { stdio: 'ignore', env: cacheEnv });
warmHookCache();

/**
 * The demo never runs `hagent hook`, which an agent runs twice per tool call: each hook process
 * compiled its own functions afresh (~6 ms of a ~40 ms hook). One native edit and one shell
 * command through Claude's hooks, in a throwaway repository, add them to the same cache (a
 * forced write keeps what the cache already held). Best effort, like the demo.
 */
function warmHookCache() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hagent-build-'));
  const env = {
    ...cacheEnv,
    GIT_AUTHOR_NAME: 'hagent',
    GIT_AUTHOR_EMAIL: 'hagent@example.com',
    GIT_COMMITTER_NAME: 'hagent',
    GIT_COMMITTER_EMAIL: 'hagent@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    HAGENT_WORKTREE_ROOT: path.join(dir, 'worktrees'),
  };
  const repo = path.join(dir, 'repo');
  const run = (args, cwd, input) =>
    spawnSync(args[0], args.slice(1), { cwd, env, input, encoding: 'utf8' });
  try {
    mkdirSync(repo);
    run(['git', 'init', '-q', '-b', 'main'], repo);
    writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    run(['git', 'add', '-A'], repo);
    run(['git', 'commit', '-q', '-m', 'init'], repo);
    const started = run(
      [process.execPath, path.resolve('dist/hagent.cjs'), 'session', 'start', '--json'],
      repo,
    );
    const wt = JSON.parse(started.stdout).worktree;
    const file = path.join(wt, 'a.txt');
    const hook = (event, toolName, toolInput) =>
      run(
        [process.execPath, path.resolve('dist/hagent.cjs'), 'hook', 'claude'],
        wt,
        JSON.stringify({
          hook_event_name: event,
          cwd: wt,
          tool_name: toolName,
          tool_use_id: `toolu_${toolName}`,
          tool_input: toolInput,
        }),
      );
    hook('PreToolUse', 'Write', { file_path: file, content: 'b\n' });
    writeFileSync(file, 'b\n');
    hook('PostToolUse', 'Write', { file_path: file, content: 'b\n' });
    hook('PreToolUse', 'Bash', { command: 'echo c > a.txt' });
    writeFileSync(file, 'c\n');
    hook('PostToolUse', 'Bash', { command: 'echo c > a.txt' });
  } catch {
    // no cache for hooks: they compile as before
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
