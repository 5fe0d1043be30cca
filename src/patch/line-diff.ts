/**
 * Counting the lines a change really adds and removes (patch-language.md §5b: limits are counted
 * from the computed diff, not from the patch's "+" and "-" lines).
 */

/** Above this many cells the LCS is not computed and every differing line counts. */
const MAX_CELLS = 4_000_000;

/**
 * Lines added and removed between `before` and `after` (exact comparison): common prefix and
 * suffix are skipped, the rest is measured by a longest common subsequence.
 */
export function countChanges(
  before: readonly string[],
  after: readonly string[],
): { added: number; removed: number } {
  let p = 0;
  while (p < before.length && p < after.length && before[p] === after[p]) p++;
  let ea = before.length;
  let eb = after.length;
  while (ea > p && eb > p && before[ea - 1] === after[eb - 1]) {
    ea--;
    eb--;
  }
  const a = ea - p;
  const b = eb - p;
  if (a === 0 || b === 0 || a * b > MAX_CELLS) return { added: b, removed: a };
  let prev = new Uint32Array(b + 1);
  let cur = new Uint32Array(b + 1);
  for (let i = 1; i <= a; i++) {
    const x = before[p + i - 1];
    for (let j = 1; j <= b; j++) {
      cur[j] =
        x === after[p + j - 1]
          ? (prev[j - 1] as number) + 1
          : Math.max(prev[j] as number, cur[j - 1] as number);
    }
    [prev, cur] = [cur, prev];
  }
  const lcs = prev[b] as number;
  return { added: b - lcs, removed: a - lcs };
}
