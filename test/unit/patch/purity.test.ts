import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from './helpers.js';

const test = guarded(suite('purity of src/patch'));
const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../../src/patch');
const files = readdirSync(srcDir).filter((f) => f.endsWith('.ts'));

test('src/patch imports no fs, child_process, chokidar, git, fsx or transaction module', () => {
  assert.ok(files.length > 0);
  for (const f of files) {
    const text = readFileSync(join(srcDir, f), 'utf8');
    const imports = [
      ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*from\s*['"]([^'"]+)['"]/g),
    ].map((m) => m[1] as string);
    for (const spec of imports) {
      assert.not.ok(
        /^(node:)?(fs|fs\/promises|child_process|path|os)$/.test(spec),
        `${f} imports ${spec}`,
      );
      assert.not.ok(/chokidar|\/git\/|\/fsx\/|\/transaction\//.test(spec), `${f} imports ${spec}`);
      assert.ok(
        spec.startsWith('./') || spec === '../errors.js',
        `${f} imports ${spec} (only siblings and ../errors.js)`,
      );
    }
  }
});

test('src/patch reads no clock, cwd or environment', () => {
  for (const f of files) {
    const text = readFileSync(join(srcDir, f), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    assert.not.ok(/Date\.now|new Date\(|process\.cwd|process\.env|performance\.now/.test(text), f);
  }
});

test('outside the folder, src/patch is imported only through index.ts (types.ts for types)', () => {
  const src = resolve(srcDir, '..');
  const outside = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.startsWith('patch/'))
    .map((f) => join(src, f));
  assert.ok(outside.length > 0);
  const seen: string[] = [];
  for (const file of outside) {
    const text = readFileSync(file, 'utf8');
    const specs = [
      ...text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?[^'"]*from\s*['"]([^'"]+)['"]/g),
      ...text.matchAll(/import\((\s*)()['"]([^'"]+)['"]\)/g),
    ];
    for (const m of specs) {
      const spec = m[3] as string;
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      if (dirname(target) !== srcDir) continue;
      seen.push(spec);
      const name = target.slice(srcDir.length + 1);
      // Types are erased: naming one from types.ts reaches into no implementation.
      const typeOnly = m[2] !== undefined && m[2] !== '';
      assert.ok(
        name === 'index.js' || (typeOnly && name === 'types.js'),
        `${file.slice(src.length + 1)} imports ${spec}: outside src/patch, use ../patch/index.js`,
      );
    }
  }
  assert.ok(seen.length > 0, 'src/ imports src/patch somewhere');
});

test.run();
