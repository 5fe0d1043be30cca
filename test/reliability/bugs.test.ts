/**
 * Regressions found by the fault-injection runs, each as its minimal repro (all fixed).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, startSession } from '../helpers/index.js';
import { FaultyFileSystem } from '../helpers/faultfs.js';
import { commands, fixture, underFaults } from '../helpers/faultfs-fixture.js';

const t = suite('reliability bugs (repros)');

// Was: an empty patch with the watcher on exited 0 with no output (chokidar's `ready` never
// fires when there is nothing to watch; the event loop drained; nothing was applied).
t('an empty `*** Begin Patch` `*** End Patch` is refused (NO_CHANGES), not a silent exit 0', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** End Patch\n',
  });
  assert.is(r.status, 1, `exit ${r.status}, stdout ${JSON.stringify(r.stdout)}`);
  assert.is(r.json?.error?.code, 'NO_CHANGES');
});

// Was: a patch with one 300,000-character line took ~70 s: the journal's secret redaction
// (ASSIGNMENT regex in src/journal/redact.ts) backtracked quadratically. The bound is loose on
// purpose (a regression is minutes, not seconds).
t('a patch with a 300,000-character line is answered in seconds, not minutes', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  const t0 = Date.now();
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: `*** Begin Patch\n*** Update File: a.txt\n${'x'.repeat(300_000)}\n*** End Patch\n`,
  });
  assert.is(r.json?.error?.code, 'PATCH_SYNTAX');
  assert.ok(Date.now() - t0 < 20_000, `took ${Date.now() - t0} ms`);
});

// Was: INTERNAL (exit 3, "Cannot read properties of undefined"): a unified diff repeating the
// headers of one file, whose first hunk looks applied and is then composed with the later ones,
// left the looks-applied check pointing at a planned file no longer in the plan (R4, patch 1112).
t('a diff repeating one file, its first hunk applied already, is refused, not INTERNAL', () => {
  const repo = makeRepo({ 'moved/m-1048-1.txt': 'a 424\n' });
  const s = startSession(repo);
  const [minus, plus, hunk] = [
    '--- a/moved/m-1048-1.txt\n',
    '+++ b/moved/m-1048-1.txt\n',
    '@@ -1,1 +1,2 @@\n',
  ];
  const input = [
    minus,
    plus,
    hunk,
    ' a 424\n',
    minus,
    minus,
    plus,
    hunk,
    ' a 424\n',
    minus,
    plus,
    hunk,
    plus,
    hunk,
    '+ud 1112\n',
  ].join('');
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], { input });
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.ok(r.json?.error?.code && r.json.error.code !== 'INTERNAL', r.stdout);
});

// Was: an I/O error (EPERM on an immutable folder or file, ENOSPC on a full disk) was exit 3
// INTERNAL; now a refusal (exit 1, IO_FAILED) naming the path and the errno. The disk fills up
// under the first staged write, injected (no root); the CLI maps the error as underFaults does.
t('a full disk is refused with exit 1, not INTERNAL', async () => {
  const fx = await fixture();
  const fs = new FaultyFileSystem([{ op: /^handle\.write$/, errno: 'ENOSPC', nth: 1 }], {
    skipSyncs: true,
  });
  const out = await underFaults(fs, () => commands.apply(fx));
  assert.ok(fs.failed.length > 0, 'the fault was reached');
  assert.equal(out.kind === 'refused' && [out.code, out.errno, out.exit], [
    'IO_FAILED',
    'ENOSPC',
    1,
  ]);
});

t.run();
