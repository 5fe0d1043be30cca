/**
 * Applying the same patch twice never applies it twice (issue 3): the second plan, against the
 * result of the first, is refused (with a HagentError code), never a second insertion or edit.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import { guarded } from '../unit/patch/helpers.js';
import { bytesOf, editArb, makeCase, planOne, runs } from './support.js';

const test = guarded(suite('property: twice'));
const dec = new TextDecoder();

test('a patch applied to its own result is refused, never applied a second time', () => {
  let firstApplied = 0;
  const codes = new Map<string, number>();
  fc.assert(
    fc.property(editArb, (p) => {
      const c = makeCase(p);
      let once: Uint8Array | undefined;
      try {
        once = bytesOf(planOne(c.patch, c.path, c.original), c.path);
      } catch (e) {
        if (isHagentError(e)) return; // refused the first time: nothing to re-apply
        throw e;
      }
      firstApplied++;
      try {
        const twice = bytesOf(planOne(c.patch, c.path, once as Uint8Array), c.path);
        throw new Error(`applied twice:\n${dec.decode(twice)}\n--- patch:\n${c.patch}`);
      } catch (e) {
        if (!isHagentError(e)) throw e;
        codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      }
    }),
    runs(2500),
  );
  assert.ok(firstApplied > 2000, `only ${firstApplied} of 2500 patches applied the first time`);
  for (const code of codes.keys()) assert.ok(['CONTEXT_NOT_FOUND', 'NO_CHANGES', 'AMBIGUOUS_MATCH', 'OVERLAPPING_CHUNKS'].includes(code), code);
});

test.run();
