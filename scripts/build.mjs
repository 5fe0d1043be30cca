// Bundles the CLI and the library with esbuild (start-up matters: design.md measured ~120 ms
// bundled vs ~250 ms unbundled). Commands load lazily through code splitting.
import { build } from 'esbuild';
import { rmSync, chmodSync, renameSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';

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
await build({
  entryPoints: ['src/cli.ts'],
  outfile: `${out}/cli.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  banner: { js: "const __hagentImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__hagentImportMetaUrl' },
  // No whitespace or comments: a smaller source reads, hashes and deserializes faster, and an
  // all-ASCII source stays a one-byte string in V8 (three non-ASCII characters in comments made
  // the whole 785 KB source two-byte: +9 ms per start). Names are kept for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const cli = readFileSync(`${out}/cli.cjs`, 'utf8').replace(/^#!.*\n/, '');
writeFileSync(`${out}/cli.cjs`, cli);
const hash = createHash('sha256').update(cli).digest('hex').slice(0, 16);
// Two programs start the one bundle (and share its code cache): hagent, and the apply_patch
// drop-in for agent loops that shell out to Codex's tool.
for (const entry of ['hagent', 'apply_patch']) {
  writeFileSync(`${out}/${entry}.cjs`, readFileSync('scripts/launcher.cjs', 'utf8').replace('__BUNDLE_HASH__', hash).replace('__ENTRY__', entry));
  chmodSync(`${out}/${entry}.cjs`, 0o755);
}
// Type declarations of the library face (dist/types/index.d.ts), from the TypeScript compiler.
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', `${out}/types`], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const old = `dist.old-${process.pid}`;
if (existsSync('dist')) renameSync('dist', old);
renameSync(out, 'dist');
rmSync(old, { recursive: true, force: true });
// A first code cache, from a run of the whole cycle (the demo), so the first real command
// already starts fast. Best effort: without it the first command writes one.
spawnSync(process.execPath, ['dist/hagent.cjs', 'demo'], { stdio: 'ignore', env: { ...process.env, HAGENT_WRITE_CODE_CACHE: '1', NO_COLOR: '1' } });
