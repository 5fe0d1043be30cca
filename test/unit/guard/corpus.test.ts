/**
 * The guard against its corpora: the dangerous commands (every bypass class of the design: quoting,
 * $IFS, ANSI-C quoting, wrappers, launcher prefixes, assignments, flags through variables, +refspecs,
 * git pointed elsewhere, interpreters, xargs, find -exec, substitutions, heredocs fed to shells) must
 * be refused at ≥ 95 % — the misses are printed — and the everyday commands never.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { guardCommand } from '../../../src/guard/index.js';
import { CORPUS_CTX as CTX, MACHINE_CTX, readCorpus } from './corpus.js';

const test = suite('guard corpus');

test('the corpus holds at least 300 dangerous and 300 everyday commands', () => {
  assert.ok(
    readCorpus('dangerous.txt').length >= 300,
    `${readCorpus('dangerous.txt').length} dangerous`,
  );
  assert.ok(
    readCorpus('everyday.txt').length >= 300,
    `${readCorpus('everyday.txt').length} everyday`,
  );
});

test('at least 95 % of the dangerous commands are refused (misses listed)', () => {
  const all = readCorpus('dangerous.txt');
  const misses = all.filter((c) => guardCommand(c, CTX).allowed);
  const rate = (all.length - misses.length) / all.length;
  console.log(
    `  guard corpus: ${all.length - misses.length}/${all.length} dangerous commands refused (${(rate * 100).toFixed(1)} %)`,
  );
  for (const m of misses) console.log(`    missed: ${JSON.stringify(m)}`);
  assert.ok(rate >= 0.95, `only ${(rate * 100).toFixed(1)} % refused`);
});

test('no everyday command is refused', () => {
  const all = readCorpus('everyday.txt');
  const refused = all.map((c) => ({ c, v: guardCommand(c, CTX) })).filter((x) => !x.v.allowed);
  console.log(
    `  guard corpus: ${all.length - refused.length}/${all.length} everyday commands allowed`,
  );
  assert.equal(
    refused.map((x) => `${x.c} → ${x.v.allowed ? '' : `${x.v.rule}: ${x.v.reason}`}`),
    [],
  );
});

test('on a user machine layout: every everyday command allowed, every dangerous one refused with a reason', () => {
  const everyday = readCorpus('machine-everyday.txt');
  const dangerous = readCorpus('machine-dangerous.txt');
  assert.ok(everyday.length >= 150, `${everyday.length} everyday`);
  assert.ok(dangerous.length >= 100, `${dangerous.length} dangerous`);
  const refused = everyday
    .map((c) => ({ c, v: guardCommand(c, MACHINE_CTX) }))
    .filter((x) => !x.v.allowed);
  const verdicts = dangerous.map((c) => ({ c, v: guardCommand(c, MACHINE_CTX) }));
  const missed = verdicts.filter((x) => x.v.allowed).map((x) => x.c);
  console.log(
    `  machine layout: ${everyday.length - refused.length}/${everyday.length} everyday allowed, ` +
      `${dangerous.length - missed.length}/${dangerous.length} dangerous refused`,
  );
  assert.equal(
    refused.map((x) => `${x.c} → ${x.v.allowed ? '' : `${x.v.rule}: ${x.v.reason}`}`),
    [],
  );
  assert.equal(missed, []);
  for (const { c, v } of verdicts) {
    if (v.allowed) continue;
    assert.ok(
      v.reason && v.hint && v.rule && v.command,
      `a refusal of ${c} says why and what to do`,
    );
  }
});

test.run();
