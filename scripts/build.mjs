// Bundles the CLI and the library with esbuild (start-up matters: design.md measured ~120 ms
// bundled vs ~250 ms unbundled). Commands load lazily through code splitting.
import { build } from 'esbuild';
import { rmSync, chmodSync, renameSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

// Build beside dist/ and swap it in, so a CLI already running keeps a whole bundle.
const out = `dist.tmp-${process.pid}`;
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: { hagent: 'src/cli.ts', index: 'src/index.ts' },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.js' },
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS dependencies (write-file-atomic) expect require, __filename and __dirname.
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
chmodSync(`${out}/hagent.js`, 0o755);
// Type declarations of the library face (dist/types/index.d.ts), from the TypeScript compiler.
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', `${out}/types`], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const old = `dist.old-${process.pid}`;
if (existsSync('dist')) renameSync('dist', old);
renameSync(out, 'dist');
rmSync(old, { recursive: true, force: true });
