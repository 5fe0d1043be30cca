/**
 * A real gate (issue 24 §3): `npm test` of a real package — kleur 4.1.5, one of the packages the
 * replay uses (test/e2e/real-packages.ts), taken from node_modules so it runs offline — with a
 * test file run by node's own runner (`node --test`). Three sessions land in one train through
 * the CLI; the second breaks a test: the train stops there with GATE_FAILED, the first landed
 * (its land commit records the gate's pass), the third was not tried, and the refusal's output
 * names the failing test.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, look, makeRepo, ROOT, startSession, writeFiles } from '../helpers/index.js';

const t = suite('land-train-gate');

const KLEUR = path.join(ROOT, 'node_modules', 'kleur');

const TESTS = `'use strict';
const { test } = require('node:test');
const assert = require('node:assert');
const kleur = require('..');
kleur.enabled = true;

test('red wraps text in 31m and 39m', () => {
  assert.strictEqual(kleur.red('hi'), '\\x1b[31mhi\\x1b[39m');
});

test('bold and green nest', () => {
  assert.strictEqual(kleur.bold().green('x'), '\\x1b[1m\\x1b[32mx\\x1b[22m\\x1b[39m');
});
`;

t('npm test as the gate: the train stops at the session that breaks a test', () => {
  const pkg = JSON.parse(readFileSync(path.join(KLEUR, 'package.json'), 'utf8'));
  assert.is(pkg.name, 'kleur');
  pkg.scripts = { test: 'node --test' };
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'test/colors.js': TESTS,
  };
  for (const f of ['index.js', 'index.mjs', 'colors.js', 'colors.mjs', 'readme.md', 'license'])
    files[f] = readFileSync(path.join(KLEUR, f), 'utf8');
  const repo = makeRepo(files);
  // The gate, in the user's checkout only.
  writeFiles(repo, {
    '.hagent/config.json': JSON.stringify({ land: { gate: ['npm', 'test'], gateTimeoutS: 120 } }),
  });
  const env = { NPM_CONFIG_UPDATE_NOTIFIER: 'false', NPM_CONFIG_OFFLINE: 'true' };
  const patches: Record<string, string> = {
    // Harmless: a new export beside the colors.
    g1: '*** Begin Patch\n*** Add File: version.js\n+module.exports = "4.1.5";\n*** End Patch\n',
    // Breaks the red test: bright red instead of red.
    g2: '*** Begin Patch\n*** Update File: index.js\n-\tred: init(31, 39),\n+\tred: init(91, 39),\n*** End Patch\n',
    g3: '*** Begin Patch\n*** Update File: readme.md\n-  <img src="shots/logo.png" alt="kleur" height="120" />\n+  <img src="shots/logo.png" alt="kleur" height="60" />\n*** End Patch\n',
  };
  for (const [id, patch] of Object.entries(patches)) {
    const s = startSession(repo, ['--name', id]);
    const a = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(a.status, 0, a.stdout + a.stderr);
    look(repo, id);
    const r = hagent(repo, ['review', '--session', id, '--approve', '--json'], {
      unsetEnv: ['HAGENT_AGENT'],
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
  }
  const before = git(repo, 'rev-parse', 'main');
  const r = hagent(repo, ['land', 'g1', 'g2', 'g3', '--json'], { env, timeoutMs: 300_000 });
  assert.is(r.status, 1, r.stdout + r.stderr);
  const train = r.json;
  assert.equal(
    train.landed.map((l: { session: string }) => l.session),
    ['g1'],
  );
  assert.is(train.landed[0].gate.skipped, false);
  assert.is(train.landed[0].gate.command.join(' '), 'npm test');
  assert.match(
    git(repo, 'log', '-1', '--format=%B', 'main'),
    /Hagent-Gate: passed \(npm test\)/,
    'the land commit records the gate',
  );
  assert.is(train.stopped.session, 'g2');
  assert.is(train.stopped.code, 'GATE_FAILED', train.stopped.message);
  assert.equal(train.notTried, ['g3']);
  assert.is(train.stopped.details.exitCode, 1);
  assert.is(train.stopped.details.timedOut, false);
  // The failing test is named: in the refusal's message (the output's tail) and its output.
  const output = `${train.stopped.details.stdout}\n${train.stopped.details.stderr}`;
  assert.match(output, /not ok \d+ - red wraps text in 31m and 39m/);
  assert.match(train.stopped.message, /red wraps text in 31m and 39m/, train.stopped.message);
  assert.match(train.stopped.hint, /npm test/);
  // The target holds g1 only; the checkout too, nothing of g2 or g3.
  assert.is(git(repo, 'rev-parse', 'main^'), before);
  assert.is(readFileSync(path.join(repo, 'version.js'), 'utf8'), 'module.exports = "4.1.5";\n');
  assert.match(readFileSync(path.join(repo, 'index.js'), 'utf8'), /red: init\(31, 39\)/);
  assert.is(git(repo, 'status', '--porcelain'), '?? .hagent/');
});

t.run();
