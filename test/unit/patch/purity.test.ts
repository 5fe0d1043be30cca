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

test('only index.ts is imported from outside the folder (its header names the rule)', () => {
  const index = readFileSync(join(srcDir, 'index.ts'), 'utf8');
  assert.ok(/must not import/i.test(index.slice(0, 1200)));
});

test.run();
