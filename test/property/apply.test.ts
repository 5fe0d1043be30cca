/**
 * Properties of applying a patch made from an edit of a real file:
 * it gives exactly the edited file, also when its context was degraded the way models degrade it,
 * as long as the degraded context is still unique.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import { guarded } from '../unit/patch/helpers.js';
import {
  bytesOf,
  editArb,
  fold,
  makeCase,
  occurrences,
  oldSides,
  planOne,
  pool,
  refusalIsAlreadyApplied,
  runs,
  sameBytes,
  type DegradeName,
} from './support.js';

const test = guarded(suite('property: apply'));
const dec = new TextDecoder();

test('the pool of real files is not empty', () => {
  assert.ok(pool.length >= 20, `only ${pool.length} files`);
});

test('a patch made from any edit of a real file applies to exactly the edited file (or is refused as ambiguous)', () => {
  let applied = 0;
  fc.assert(
    fc.property(editArb, (p) => {
      const c = makeCase(p);
      // Oracle: every chunk's old side occurs exactly once in the whole file → the patch must apply.
      const unique = oldSides(c.patch).every(
        (old) => occurrences(c.file.texts, old, (a, b) => a === b) === 1,
      );
      try {
        const plan = planOne(c.patch, c.path, c.original);
        const out = bytesOf(plan, c.path);
        if (!sameBytes(out, c.expected))
          throw new Error(
            `wrong result:\n${dec.decode(out)}\n--- expected:\n${dec.decode(c.expected)}\n--- patch:\n${c.patch}`,
          );
        applied++;
      } catch (e) {
        if (!isHagentError(e)) throw e;
        if (
          e.code === 'NO_CHANGES' &&
          (sameBytes(c.expected, c.original) || refusalIsAlreadyApplied(e, c))
        )
          return;
        if (e.code === 'AMBIGUOUS_MATCH' && !unique) return;
        throw new Error(
          `refused ${e.code}: ${e.message} (${e.hint}); unique=${unique}\n${c.patch}`,
        );
      }
    }),
    runs(3000),
  );
  assert.ok(applied > 2400, `only ${applied} of 3000 patches applied`);
});

const DEGRADATIONS: DegradeName[] = [
  'trailingWhitespace',
  'tabsToSpaces',
  'straightQuotes',
  'curlyQuotes',
];

test('with degraded context (trailing whitespace stripped, tabs to spaces, quotes changed) the patch still gives exactly the edited file', () => {
  let meaningful = 0;
  fc.assert(
    fc.property(editArb, fc.constantFrom(...DEGRADATIONS), (p, how) => {
      const c = makeCase(p, how);
      // Precondition: each degraded old side is unique in the file even at the loosest comparison.
      if (
        !oldSides(c.patch).every(
          (old) => occurrences(c.file.texts, old, (a, b) => fold(a) === fold(b)) === 1,
        )
      )
        return;
      meaningful++;
      try {
        const out = bytesOf(planOne(c.patch, c.path, c.original), c.path);
        if (!sameBytes(out, c.expected))
          throw new Error(
            `wrong result (${how}):\n${dec.decode(out)}\n--- expected:\n${dec.decode(c.expected)}\n--- patch:\n${c.patch}`,
          );
      } catch (e) {
        if (!isHagentError(e)) throw e;
        if (
          e.code === 'NO_CHANGES' &&
          (sameBytes(c.expected, c.original) || refusalIsAlreadyApplied(e, c))
        )
          return;
        throw new Error(`refused ${e.code} (${how}): ${e.message} (${e.hint})\n${c.patch}`);
      }
    }),
    runs(2500),
  );
  assert.ok(meaningful > 1000, `only ${meaningful} of 2500 degraded patches had unique context`);
});

test.run();
