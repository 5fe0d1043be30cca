// One apply through hagent's library face (dist/index.js), in a fresh process, for the envelope
// figure of bench/run.ts: `full` = watcher + staleness check (what the CLI does), `bare` = neither.
//   node bench/apply-driver.mjs WORKTREE PATCH_FILE full|bare
// Prints the result's commit id; exits 1 on a refusal.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [worktree, patchFile, mode] = process.argv.slice(2);
if (!worktree || !patchFile || (mode !== 'full' && mode !== 'bare')) {
  console.error('usage: node bench/apply-driver.mjs WORKTREE PATCH_FILE full|bare');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href);
const ctx = await lib.openRepo(worktree);
const session = await lib.resolveSession(ctx, undefined);
const bare = mode === 'bare';
const r = await lib.applyPatch(ctx, session, {
  patchText: readFileSync(patchFile, 'utf8'),
  yes: true,
  env: process.env,
  noWatch: bare,
  skipStalenessCheck: bare,
});
if (r.watched === bare) throw new Error(`the ${mode} apply reported watched: ${r.watched}`);
process.stdout.write(`${r.commit}\n`);
