/**
 * Real-history replay: the last 30 first-parent commit pairs of THIS repository, each applied to
 * a fresh repository holding the older tree, as a unified diff and in the Codex language, through
 * the real CLI (`apply - --json --yes`, `review --approve`, `land --json`). The session head and
 * the landed target must hold exactly the newer tree (same tree id). Changes Codex cannot express
 * are skipped and counted with their reason; denied paths must be refused with PATH_DENIED.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { historyPairs, replayPair, summarize, type FormResult } from './helpers/replay.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { pairs, note } = historyPairs(REPO, 30);
const results: FormResult[] = [];

const replay = suite("replay of this repository's own history");

for (const pair of pairs) {
  replay(
    `commit pair ${pair.label.slice(0, 90)} replays to the same tree as a unified diff and in the Codex language`,
    () => {
      const rs = replayPair(REPO, pair);
      results.push(...rs);
      const failed = rs.filter((r) => r.outcome === 'failed');
      assert.ok(
        failed.length === 0,
        failed
          .map(
            (r) =>
              `[${r.form}] ${r.reason}${r.patchFile ? `\n(patch saved at ${r.patchFile})` : ''}`,
          )
          .join('\n\n'),
      );
    },
  );
}

replay('the history holds at least one pair, and the totals are printed', () => {
  const s = summarize(results, 'replay of this repository');
  process.stdout.write(`\nnote: ${note}\n${s.lines.join('\n')}\n`);
  assert.ok(pairs.length >= 1, `no commit pair to replay: ${note}`);
});

replay.run();
