/**
 * Self-check of the pure engine against every shared conformance case: a Snapshot is built from
 * input/, planPatch's bytes must equal expected/ (or the thrown code expected_error). Cases whose
 * code belongs to policy (PATH_DENIED, CONFIRMATION_REQUIRED) are skipped here; CLI args are ignored.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../../src/errors.js';
import { parsePatch, pathsToRead, planPatch, type FileState } from '../../../src/patch/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const casesDir = process.env['HAGENT_CASES'] ?? resolve(here, '../../../../shared/cases');
const NOT_PLANNER = new Set(['PATH_DENIED', 'CONFIRMATION_REQUIRED']);

interface Tree {
  files: Map<string, { bytes: Buffer; mode: '100644' | '100755' }>;
  links: Set<string>;
}

function readTree(root: string): Tree {
  const tree: Tree = { files: new Map(), links: new Set() };
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const rel = relative(root, full).split(sep).join('/');
      const st = lstatSync(full);
      if (st.isSymbolicLink()) tree.links.add(rel);
      else if (st.isDirectory()) walk(full);
      else if (name !== '.keep')
        tree.files.set(rel, {
          bytes: readFileSync(full),
          mode: st.mode & 0o111 ? '100755' : '100644',
        });
    }
  };
  if (existsSync(root)) walk(root);
  return tree;
}

function stateOf(root: string, path: string): FileState {
  const full = join(root, ...path.split('/'));
  let st;
  try {
    st = lstatSync(full);
  } catch {
    return { kind: 'missing' };
  }
  if (st.isSymbolicLink()) return { kind: 'other' };
  if (st.isDirectory()) return { kind: 'directory' };
  if (!st.isFile()) return { kind: 'other' };
  return {
    kind: 'file',
    bytes: new Uint8Array(readFileSync(full)),
    mode: st.mode & 0o111 ? '100755' : '100644',
  };
}

const test = suite('shared conformance cases');
const names = existsSync(casesDir)
  ? readdirSync(casesDir)
      .filter((n) => statSync(join(casesDir, n)).isDirectory())
      .sort()
  : [];

test('the shared cases folder is found and holds cases', () => {
  assert.ok(names.length > 0, `no cases in ${casesDir}`);
});

test('every case holds patch.txt and exactly one of expected/ or expected_error', () => {
  for (const name of names) {
    const dir = join(casesDir, name);
    assert.ok(existsSync(join(dir, 'patch.txt')), `${name}: patch.txt`);
    assert.ok(
      existsSync(join(dir, 'expected')) !== existsSync(join(dir, 'expected_error')),
      `${name}: expected/ xor expected_error`,
    );
  }
});

for (const name of names) {
  const dir = join(casesDir, name);
  const errFile = join(dir, 'expected_error');
  const expectedCode = existsSync(errFile) ? readFileSync(errFile, 'utf8').trim() : undefined;
  if (expectedCode !== undefined && NOT_PLANNER.has(expectedCode)) continue;
  test(`case ${name} gives ${expectedCode ?? 'the expected tree'}`, () => {
    const input = join(dir, 'input');
    let outcome: { code: string } | { tree: Tree };
    try {
      const parsed = parsePatch(readFileSync(join(dir, 'patch.txt'), 'utf8'));
      const snapshot = new Map(pathsToRead(parsed).map((p) => [p, stateOf(input, p)] as const));
      const plan = planPatch(parsed, snapshot);
      const tree = readTree(input);
      for (const f of plan.files) {
        if (f.noop) continue;
        if (f.op === 'delete') tree.files.delete(f.path);
        else {
          if (f.op === 'move' && f.from !== undefined) tree.files.delete(f.from);
          tree.links.delete(f.path);
          tree.files.set(f.path, { bytes: Buffer.from(f.bytes as Uint8Array), mode: f.mode });
        }
      }
      outcome = { tree };
    } catch (e) {
      if (!isHagentError(e)) throw e;
      outcome = { code: e.code };
    }
    if (expectedCode !== undefined) {
      assert.equal('code' in outcome ? outcome.code : 'success', expectedCode);
      return;
    }
    assert.ok('tree' in outcome, `expected success, got ${'code' in outcome ? outcome.code : ''}`);
    if (!('tree' in outcome)) return;
    const want = readTree(join(dir, 'expected'));
    assert.equal(
      [...outcome.tree.files.keys()].sort(),
      [...want.files.keys()].sort(),
      'same file list',
    );
    assert.equal([...outcome.tree.links].sort(), [...want.links].sort(), 'same symlinks');
    for (const [path, w] of want.files) {
      const got = outcome.tree.files.get(path);
      assert.ok(got, path);
      assert.equal(
        JSON.stringify(got?.bytes.toString('latin1')),
        JSON.stringify(w.bytes.toString('latin1')),
        `bytes of ${path}`,
      );
      assert.equal(got?.mode, w.mode, `mode of ${path}`);
    }
  });
}

test.run();
