/**
 * The overlap radar (src/radar/) through the real CLI on real repositories: `session list`,
 * `session status` and `review` (text and --json) show each unlanded session's overlaps with the
 * others and with the target, and the predicted outcome of landing it now; the pre-tool hook of
 * a native edit, the MCP `edit`/`write`/`apply_patch` and `hagent apply` warn, refuse (OVERLAP)
 * or stay silent as `"overlap"` says.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('radar');

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}`).join('\n') + '\n';
const patch = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

/** A repository with a.txt (30 numbered lines) and sessions s1, s2 on main. */
function twoSessions() {
  const repo = makeRepo({ 'a.txt': numbered(30), 'b.txt': 'bee\n' });
  const s1 = startSession(repo, ['--name', 's1']);
  const s2 = startSession(repo, ['--name', 's2']);
  return { repo, s1, s2 };
}

function apply(worktree: string, text: string) {
  const r = hagent(worktree, ['apply', '--json', '-'], { input: text });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return r.json;
}

function listed(repo: string): Record<string, any> {
  const r = hagent(repo, ['session', 'list', '--json']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  return Object.fromEntries(r.json.sessions.map((s: any) => [s.id, s]));
}

function setOverlap(repo: string, mode: string): void {
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(path.join(repo, '.hagent', 'config.json'), JSON.stringify({ overlap: mode }));
}

t(
  'two sessions changing the same lines both show the overlap; after one lands the other predicts a conflict',
  () => {
    const { repo, s1, s2 } = twoSessions();
    apply(s1.worktree, patch('a.txt', '10', 'TEN'));
    apply(s2.worktree, patch('a.txt', '10', 'ten') + '');
    const before = listed(repo);
    for (const [me, other] of [
      ['s1', 's2'],
      ['s2', 's1'],
    ] as const) {
      assert.equal(before[me].overlaps, [
        {
          session: other,
          path: 'a.txt',
          lines: [[10, 10]],
          otherLines: [[10, 10]],
          linesOverlap: true,
        },
      ]);
      assert.equal(before[me].targetOverlaps, []);
      assert.equal(before[me].prediction, { outcome: 'clean', paths: [] }, 'main has not moved');
      // Every field that was there stays.
      for (const k of [
        'id',
        'worktree',
        'branch',
        'base',
        'head',
        'target',
        'commits',
        'state',
        'drift',
      ])
        assert.ok(k in before[me], k);
    }
    const text = hagent(repo, ['session', 'list']);
    assert.match(
      text.stdout,
      /overlap: session s2 also changes a\.txt \(line 10 here, line 10 there\): landing both will conflict/,
    );
    assert.not.match(text.stdout, /\x1b\[/, 'no colour without a TTY');

    assert.is(hagent(repo, ['land', '--session', 's1', '--yes', '--json']).status, 0);
    const after = listed(repo);
    assert.equal(after.s1.overlaps, [], 'a landed session takes no part');
    assert.is(after.s1.prediction, null);
    assert.equal(after.s2.overlaps, []);
    assert.equal(after.s2.prediction, { outcome: 'conflict', paths: ['a.txt'] });
    assert.is(after.s2.targetOverlaps.length, 1);
    assert.equal(after.s2.targetOverlaps[0].path, 'a.txt');
    assert.equal(after.s2.targetOverlaps[0].targetLines, [[10, 10]]);
    assert.is(after.s2.targetOverlaps[0].linesOverlap, true);
    assert.equal(after.s2.targetOverlaps[0].commits, [git(repo, 'rev-parse', 'main')]);
    // status and review carry the same fields, as JSON and as text.
    const status = hagent(repo, ['session', 'status', 's2', '--json']);
    assert.equal(status.json.prediction, { outcome: 'conflict', paths: ['a.txt'] });
    assert.equal(status.json.targetOverlaps, after.s2.targetOverlaps);
    assert.ok('changed' in status.json && 'merge' in status.json, 'existing fields kept');
    const review = hagent(repo, ['review', '--session', 's2', '--json']);
    assert.equal(review.json.prediction, { outcome: 'conflict', paths: ['a.txt'] });
    assert.ok('files' in review.json && 'coverage' in review.json, 'existing fields kept');
    assert.match(
      hagent(repo, ['session', 'status', 's2']).stdout,
      /landing now: conflict in a\.txt/,
    );
    assert.match(
      hagent(repo, ['review', '--session', 's2', '--stat']).stdout,
      /landing now: conflict in a\.txt/,
    );
    // The prediction is land's own: landing now is refused for exactly that conflict.
    const land = hagent(repo, ['land', '--session', 's2', '--yes', '--json']);
    assert.is(land.json.error.code, 'LAND_CONFLICT');
    assert.equal(land.json.error.files, ['a.txt']);
  },
);

t(
  'disjoint lines of one file overlap on the file, not on lines, and predict clean even after a land',
  () => {
    const { repo, s1, s2 } = twoSessions();
    apply(s1.worktree, patch('a.txt', '3', 'three'));
    apply(s2.worktree, patch('a.txt', '20', 'twenty'));
    const l = listed(repo);
    assert.equal(l.s1.overlaps, [
      {
        session: 's2',
        path: 'a.txt',
        lines: [[3, 3]],
        otherLines: [[20, 20]],
        linesOverlap: false,
      },
    ]);
    assert.is(l.s2.overlaps[0].linesOverlap, false);
    assert.match(hagent(repo, ['session', 'list']).stdout, /also changes a\.txt, other lines/);
    assert.is(hagent(repo, ['land', '--session', 's1', '--yes', '--json']).status, 0);
    const after = listed(repo);
    assert.equal(after.s2.prediction, { outcome: 'clean', paths: [] });
    assert.is(after.s2.targetOverlaps[0].linesOverlap, false);
    assert.is(
      hagent(repo, ['land', '--session', 's2', '--yes', '--json']).status,
      0,
      'and it lands',
    );
  },
);

t(
  "a commit on the target touching the session's lines is a target overlap and a predicted conflict",
  () => {
    const { repo, s1 } = twoSessions();
    apply(s1.worktree, patch('a.txt', '10', 'TEN'));
    writeFileSync(path.join(repo, 'a.txt'), numbered(30).replace('11\n', 'eleven\n'));
    git(repo, 'commit', '-qam', 'user changes line 11');
    const user = git(repo, 'rev-parse', 'HEAD');
    const s = listed(repo).s1;
    assert.equal(s.targetOverlaps, [
      {
        path: 'a.txt',
        lines: [[10, 10]],
        targetLines: [[11, 11]],
        linesOverlap: true,
        commits: [user],
      },
    ]);
    assert.equal(s.prediction, { outcome: 'conflict', paths: ['a.txt'] });
    assert.match(
      hagent(repo, ['session', 'status', 's1']).stdout,
      /target: a\.txt changed on the target/,
    );
  },
);

const claudeEdit = (wt: string, from: string, to: string) => ({
  hook_event_name: 'PreToolUse',
  session_id: 'c',
  cwd: wt,
  tool_name: 'Edit',
  tool_use_id: 'toolu_radar',
  tool_input: { file_path: path.join(wt, 'a.txt'), old_string: from, new_string: to },
});

t(
  'the pre-tool hook of a native edit warns, refuses with OVERLAP, or stays silent, as "overlap" says',
  () => {
    const { repo, s1, s2 } = twoSessions();
    apply(s1.worktree, patch('a.txt', '10', 'TEN'));
    const hook = (payload: unknown) =>
      hagent(s2.worktree, ['hook', 'claude'], { input: JSON.stringify(payload) });
    // warn (the default): the call goes on, the model and the human are told.
    const warned = hook(claudeEdit(s2.worktree, '\n10\n', '\nten\n'));
    assert.is(warned.status, 0, warned.stderr);
    const out = JSON.parse(warned.stdout);
    assert.match(
      out.hookSpecificOutput.additionalContext,
      /session s1 also changed a\.txt line 10: landing both will conflict/,
    );
    assert.is(
      out.hookSpecificOutput.permissionDecision,
      undefined,
      'no decision: the call goes on',
    );
    // Lines away from s1's change: nothing.
    const far = hook(claudeEdit(s2.worktree, '\n25\n', '\nxxv\n'));
    assert.is(far.status, 0);
    assert.is(far.stdout, '');
    setOverlap(repo, 'refuse');
    const refused = hook(claudeEdit(s2.worktree, '\n11\n', '\neleven\n'));
    assert.is(refused.status, 2, 'line 11 touches line 10: refused');
    assert.match(refused.stderr, /error\[OVERLAP\]: session s1 also changed a\.txt line 10/);
    assert.match(refused.stderr, /hint: .*hagent land --session s1.*hagent session update/);
    setOverlap(repo, 'off');
    const off = hook(claudeEdit(s2.worktree, '\n10\n', '\nten\n'));
    assert.is(off.status, 0);
    assert.is(off.stdout, '');
    assert.is(off.stderr, '');
  },
);

t('hagent apply refuses with OVERLAP in refuse mode (nothing written) and warns otherwise', () => {
  const { repo, s1, s2 } = twoSessions();
  apply(s1.worktree, patch('a.txt', '10', 'TEN'));
  setOverlap(repo, 'refuse');
  const head = git(repo, 'rev-parse', 'hagent/s2');
  const r = hagent(s2.worktree, ['apply', '--json', '-'], { input: patch('a.txt', '10', 'ten') });
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'OVERLAP');
  assert.is(r.json.error.path, 'a.txt');
  assert.is(r.json.error.line, 10);
  assert.is(r.json.error.session, 's1');
  assert.is(git(repo, 'rev-parse', 'hagent/s2'), head, 'no commit');
  assert.is(readFileSync(path.join(s2.worktree, 'a.txt'), 'utf8'), numbered(30), 'no write');
  // Following the hint: once s1 has landed, the overlap is gone and the edit goes through.
  assert.is(hagent(repo, ['land', '--session', 's1', '--yes', '--json']).status, 0);
  assert.is(hagent(s2.worktree, ['session', 'update', '--json']).status, 0);
  const again = apply(s2.worktree, patch('a.txt', 'TEN', 'ten'));
  assert.equal(again.warnings, []);
});

t(
  'the MCP edit, write and apply_patch warn, refuse and stay silent as "overlap" says',
  async () => {
    const { repo, s1, s2 } = twoSessions();
    apply(s1.worktree, patch('a.txt', '10', 'TEN'));
    const c = await connectMcp(s2.worktree);
    try {
      const edit = await c.call('edit', {
        path: 'a.txt',
        old_string: '\n10\n',
        new_string: '\nten\n',
      });
      assert.is(edit.isError, false, edit.text);
      assert.match(
        edit.text,
        /warning: session s1 also changed a\.txt line 10: landing both will conflict/,
      );
      assert.ok(edit.data.warnings.some((w: string) => /session s1/.test(w)));
      const read = await c.call('read', { path: 'a.txt' });
      const write = await c.call('write', {
        path: 'a.txt',
        content: numbered(30).replace('10\n', 'ten\n').replace('11\n', 'eleven\n'),
        expected_blob: read.data.blob,
      });
      assert.is(write.isError, false, write.text);
      assert.match(write.text, /warning: session s1 also changed a\.txt/);
      setOverlap(repo, 'refuse');
      const refused = await c.call('apply_patch', { patch: patch('a.txt', '9', 'nine') });
      assert.is(refused.isError, true);
      assert.is(refused.data.error.code, 'OVERLAP');
      assert.match(refused.text, /hint:/);
      setOverlap(repo, 'off');
      const quiet = await c.call('apply_patch', { patch: patch('a.txt', '9', 'nine') });
      assert.is(quiet.isError, false, quiet.text);
      assert.equal(quiet.data.warnings, []);
    } finally {
      await c.close();
    }
  },
);

t.run();
