/**
 * The guard and hagent's own command line: the human-only verbs are refused under the rule
 * hagent-human-only whatever launcher, path or shell string carries them; dropping the agent
 * marker is refused under agent-marker; the rest of hagent stays allowed.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { guardCommand } from '../../../src/guard/index.js';
import { CORPUS_CTX as CTX } from './corpus.js';

const test = suite('guard: hagent commands');

const rule = (command: string): string | null => {
  const v = guardCommand(command, CTX);
  return v.allowed ? null : v.rule;
};

test('the human-only verbs are refused under hagent-human-only, the reason naming the command', () => {
  for (const c of [
    'hagent review --approve >/dev/null && hagent land --yes',
    'hagent review --approve=src/a.ts',
    'hagent land --undo',
    'hagent undo --land',
    'hagent session end other --force --yes',
    'hagent session update --all',
    'hagent session update --all --json',
    'hagent integrate gemini',
    'hagent -- land',
    'npx hagent land --yes',
    'npm exec hagent -- land --yes',
    'node node_modules/hagent-cli/dist/hagent.cjs land',
    'node ./dist/cli.cjs review --approve',
    '/opt/tools/bin/hagent session end s2',
    'env FOO=1 sudo -E hagent land',
    "bash -c 'hagent land'",
    'echo s2 | xargs hagent session end',
    'hagent exec -- hagent land',
    'python3 -c "import os; os.system(\'hagent land --yes\')"',
  ])
    assert.is(rule(c), 'hagent-human-only', c);
  const v = guardCommand('hagent land --yes', CTX);
  assert.ok(
    !v.allowed &&
      /hagent land is for the human/.test(v.reason) &&
      /review, approve and land/.test(v.hint),
    JSON.stringify(v),
  );
});

test('unsetting or overriding the marker is refused under agent-marker', () => {
  for (const c of [
    'unset HAGENT_AGENT',
    'env -u HAGENT_AGENT hagent land',
    'env --unset=HAGENT_AGENT true',
    'HAGENT_AGENT= hagent land',
    'export HAGENT_AGENT=',
    'env -i hagent status',
    "env -i bash -c 'hagent status'",
    'HAGENT_AGENT=x; true',
  ]) {
    assert.is(rule(c), 'agent-marker', c);
  }
});

test('the rest of hagent runs: status, review, apply, check, undo, sync, log, session status and update', () => {
  for (const c of [
    'hagent status',
    'hagent review',
    'hagent review --no-approve',
    'hagent apply fix.patch',
    'hagent check fix.patch',
    'hagent undo',
    'hagent undo --redo',
    'hagent sync',
    'hagent log',
    'hagent session status',
    'hagent session update --rebase',
    'hagent config show',
    'hagent land --help',
    'npx hagent status',
    'node dist/hagent.cjs review --stat',
    'hagent exec -- npm test',
    'echo $HAGENT_AGENT',
  ]) {
    assert.is(rule(c), null, c);
  }
});

test('a hagent verb only known when it runs is refused (unresolved)', () => {
  assert.is(rule('V=land; hagent $V'), 'hagent-human-only', 'a variable the guard can follow');
  assert.is(rule('read V; hagent $V'), 'unresolved');
  assert.is(rule('hagent session $(cat verb.txt) s2'), 'unresolved');
});

test.run();
