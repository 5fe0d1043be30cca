// The whole test suite: every test/**/*.test.ts through uvu (TypeScript via tsx), in one
// process, then the plain closing line `N passed, N failed`. Exit 1 on any failure.
// A test file is never forgotten: every *.test.ts below test/ is run.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const only = process.argv[2] ? new RegExp(process.argv[2]) : null;

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...find(full));
    else if (name.endsWith('.test.ts') && (!only || only.test(full))) out.push(full);
  }
  return out;
}

const files = find(path.join(root, 'test'));
const script = `
globalThis.UVU_DEFER = 1;
const uvu = await import('uvu');
const files = ${JSON.stringify(files)};
let i = 0;
for (const file of files) {
  globalThis.UVU_INDEX = i++;
  globalThis.UVU_QUEUE.push([file.slice(${root.length + 1})]);
  await import('file://' + file);
}
await uvu.exec(false);
`;
const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
});
let out = '';
child.stdout.on('data', (d) => {
  out += d;
  process.stdout.write(d);
});
child.on('close', (code) => {
  const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  let failed = total - passed - skipped;
  if (code !== 0 && failed === 0) failed = 1; // a crash outside any test still fails the run
  process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  process.exit(failed > 0 || total === 0 ? 1 : 0);
});
