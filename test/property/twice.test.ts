/**
 * Applying the same patch twice never applies it twice: the second plan, against the result of
 * the first, is refused (with a HagentError code) — except a patch whose every chunk only inserts
 * lines, whose context still matches after the first time: patch-language.md §4 concludes "already
 * applied" only when a chunk's old side is not found, so such a patch applies again by rule (a
 * retry of the session's last patch is caught by apply from the session head instead).
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isHagentError } from '../../src/errors.js';
import { guarded } from '../unit/patch/helpers.js';
import { parsePatch } from '../../src/patch/index.js';
import { countChanges } from '../../src/patch/line-diff.js';
import { bytesOf, editArb, makeCase, planOne, runs } from './support.js';

/** Every chunk of the patch only inserts lines (its old side stays inside its new side). */
function insertionsOnly(patch: string): boolean {
  return parsePatch(patch).ops.every(
    (op) =>
      op.kind === 'update' &&
      op.chunks.every(
        (c) => c.oldLines.length > 0 && countChanges(c.oldLines, c.newLines).removed === 0,
      ),
  );
}

const test = guarded(suite('property: twice'));
const dec = new TextDecoder();

test('a patch applied to its own result is refused, never applied a second time (but an insertion-only patch whose context still matches, §4)', () => {
  let firstApplied = 0;
  let insertedAgain = 0;
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
        if (insertionsOnly(c.patch)) {
          insertedAgain++;
          return;
        }
        throw new Error(`applied twice:\n${dec.decode(twice)}\n--- patch:\n${c.patch}`);
      } catch (e) {
        if (!isHagentError(e)) throw e;
        codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      }
    }),
    runs(2500),
  );
  assert.ok(firstApplied > 2000, `only ${firstApplied} of 2500 patches applied the first time`);
  assert.ok(
    insertedAgain < firstApplied / 5,
    `${insertedAgain} insertion-only patches applied again`,
  );
  process.stdout.write(
    `\n${insertedAgain} of ${firstApplied} patches were insertion-only and applied again by §4; the rest refused: ${[...codes].map(([k, n]) => `${k} ${n}`).join(', ')}\n`,
  );
  for (const code of codes.keys())
    assert.ok(
      ['CONTEXT_NOT_FOUND', 'NO_CHANGES', 'AMBIGUOUS_MATCH', 'OVERLAPPING_CHUNKS'].includes(code),
      code,
    );
});

test.run();
