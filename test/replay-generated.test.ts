/**
 * Replay of a generated history that holds what real repositories hold and plain source trees
 * rarely do: CRLF files, mixed line endings, files without a final newline, mode changes, renames
 * and repetitive files (snapshot-like runs of equal lines). Each commit pair is applied through
 * the real CLI as a unified diff, a `-M` diff, git format-patch output and the Codex language
 * (test/helpers/replay.ts); the session tree id must equal the commit's. Then the whole history
 * as ONE multi-commit format-patch mbox (several commits touching one file) must give the last
 * commit's tree.
 */
import { writeFileSync, chmodSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from './helpers/index.js';
import {
  REPLAY_ENV,
  gitBytes,
  historyPairs,
  replayPair,
  repoWithTree,
  summarize,
  treeOf,
  type FormResult,
} from './helpers/replay.js';

/** The generated history, commit by commit (each step edits the checkout, then commits). */
function generate(): string {
  const repo = makeRepo({ 'README.md': '# generated\n' });
  git(repo, 'config', 'core.autocrlf', 'false');
  const w = (p: string, text: string): void => writeFileSync(path.join(repo, p), text);
  const commit = (msg: string): void => {
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', msg);
  };
  const snap = (n: number, mark = ''): string =>
    Array.from(
      { length: n },
      (_, k) => `  "case ${k % 3}": ${k % 2 ? 'true' : 'false'}${mark}\n`,
    ).join('');
  w('crlf.txt', 'one\r\ntwo\r\nthree\r\nfour\r\n');
  w('mixed.txt', 'one\r\ntwo\nthree\r\nfour\n');
  w('nonl.txt', 'first\nsecond\nthird\nfourth\nfifth\nsixth\nlast');
  w('run.sh', '#!/bin/sh\necho 1\n');
  w('snap.txt', `exports[1] = {\n${snap(12)}};\n`);
  w('x.txt', 'x\nx\nx\nx\ny\n');
  commit('files of every kind');
  w('crlf.txt', 'one\r\nTWO\r\nthree\r\nfour\r\nfive\r\n');
  w('mixed.txt', 'one\r\ntwo\nTHREE\r\nfour\n');
  w('nonl.txt', 'first\nsecond\nthird\nfourth\nfifth\nsixth\nlast line');
  commit('CRLF, mixed and no-final-newline edits');
  chmodSync(path.join(repo, 'run.sh'), 0o755);
  commit('a mode change');
  w('snap.txt', `exports[1] = {\n${snap(12)}${snap(3)}};\n`);
  w('x.txt', 'x\nx\nx\nx\nx\ny\n');
  commit('insertions into repetitive files');
  renameSync(path.join(repo, 'nonl.txt'), path.join(repo, 'moved.txt'));
  w('moved.txt', 'first\nsecond\nthird\nfourth\nfifth\nsixth\nlast line\n');
  w('crlf.txt', 'one\nTWO\r\nthree\r\nfour\r\nfive\r\n');
  commit('a rename adding the final newline; a line turned LF');
  w('crlf2.txt', 'new\r\nfile\r');
  commit('a new CRLF file ending in CR');
  w('mixed.txt', 'one\r\ntwo\nTHREE\r\n4\r\nfour\n');
  w('snap.txt', `exports[1] = {\n${snap(6)}  "inserted": null\n${snap(9)}};\n`);
  unlinkSync(path.join(repo, 'x.txt'));
  commit('a mixed insertion, an insertion into a snapshot, a deletion');
  return repo;
}

const source = generate();
const { pairs } = historyPairs(source, 30);
const results: FormResult[] = [];
const replay = suite(
  'replay of a generated history (CRLF, mixed endings, no final newline, modes, renames, repetitive files)',
);

for (const pair of pairs) {
  replay(`commit pair ${pair.label} replays to the same tree in every form`, () => {
    const rs = replayPair(source, pair);
    results.push(...rs);
    const failed = rs.filter((r) => r.outcome === 'failed');
    assert.ok(
      failed.length === 0,
      failed
        .map(
          (r) => `[${r.form}] ${r.reason}${r.patchFile ? `\n(patch saved at ${r.patchFile})` : ''}`,
        )
        .join('\n\n'),
    );
    assert.ok(
      rs.some((r) => r.form === 'format-patch' && r.outcome === 'passed') ||
        pair.older.length !== 40 ||
        rs.every((r) => r.form !== 'format-patch'),
      'format-patch form replayed',
    );
  });
}

replay(
  "the whole history as one multi-commit format-patch mbox gives the last commit's tree",
  () => {
    const first = git(source, 'rev-list', '--max-parents=0', 'HEAD');
    const repo = repoWithTree(source, treeOf(source, first));
    const s = startSession(repo);
    const mbox = gitBytes(source, [
      'format-patch',
      '-M',
      '--stdout',
      '--binary',
      '--full-index',
      `${first}..HEAD`,
    ]);
    const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
      input: mbox,
      env: REPLAY_ENV,
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(git(repo, 'rev-parse', `${s.branch}^{tree}`), treeOf(source, 'HEAD'));
  },
);

replay('every pair replayed in every form, and the totals are printed', () => {
  const s = summarize(results, 'replay of the generated history');
  process.stdout.write(`\n${s.lines.join('\n')}\n`);
  assert.ok(pairs.length >= 5);
  assert.is(s.failed, 0);
});

replay.run();
