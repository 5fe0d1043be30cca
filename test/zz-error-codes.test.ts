/**
 * Every error code of src/errors.ts is produced through the real CLI by some test: the helpers
 * that spawn hagent record each code it prints (test/helpers/codes.ts) and this file, last in
 * sorted order, compares that set with the table. Only a run of every test file can say so
 * (test/run.mjs sets HAGENT_ALL_TESTS); run alone, or on a subset, it reports itself skipped.
 * INTERNAL (exit 3) is the code of hagent's own bugs: no test may produce it, so it must be absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EXIT_STATUS } from '../src/errors.js';
import { testOrSkip } from './helpers/skip.js';

const t = suite('error codes');
const log = process.env.HAGENT_CODES_LOG;
const why =
  process.env.HAGENT_ALL_TESTS && log
    ? undefined
    : 'only a run of every test file (node test/run.mjs, no REGEX) produces every code';

testOrSkip(
  t,
  'error codes',
  why,
)('every code of src/errors.ts but INTERNAL is produced through the CLI by some test', () => {
  const seen = new Set(existsSync(log!) ? readFileSync(log!, 'utf8').split('\n') : []);
  const missing = Object.keys(EXIT_STATUS).filter((c) => c !== 'INTERNAL' && !seen.has(c));
  assert.equal(missing, [], `never produced through the CLI: ${missing.join(', ')}`);
  assert.not.ok(seen.has('INTERNAL'), 'a test saw INTERNAL (a bug of hagent) and let it pass');
});

t.run();
