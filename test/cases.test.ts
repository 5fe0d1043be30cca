/**
 * Every shared conformance case (../shared/cases, see its README) through the real CLI:
 * input/ committed in a fresh repo → session start → apply patch.txt --json [args] with no TTY →
 * the worktree equals expected/ and one new commit, or the error code matches and nothing changed.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CASES_DIR,
  copyTree,
  diffSnapshots,
  git,
  hagent,
  snapshotTree,
  startSession,
  tempDir,
} from './helpers/index.js';

const cases = suite('shared conformance cases');

/**
 * Symlinks some copies of shared/ lose: the link becomes a regular file holding its target
 * text (as git does with core.symlinks=false). The case means a symlink, so the harness puts
 * it back before committing; reported as a shared-case problem in the closing note.
 */
const SYMLINKS: Record<string, string[]> = { '029_symlink_target_denied': ['docs/link.md'] };

function restoreSymlinks(name: string, repo: string): void {
  for (const rel of SYMLINKS[name] ?? []) {
    const abs = path.join(repo, rel);
    if (lstatSync(abs).isSymbolicLink()) continue;
    const target = readFileSync(abs, 'utf8').trim();
    rmSync(abs);
    symlinkSync(target, abs);
  }
}
const names = existsSync(CASES_DIR)
  ? readdirSync(CASES_DIR)
      .filter((n) => /^\d{3}_/.test(n))
      .sort()
  : [];

cases('the shared cases folder is present and holds cases', () => {
  assert.ok(names.length >= 40, `expected the shared cases at ${CASES_DIR}, found ${names.length}`);
});

for (const name of names) {
  const dir = path.join(CASES_DIR, name);
  cases(`case ${name}`, async () => {
    const repo = tempDir(`hagent-case-${name}-`);
    await copyTree(path.join(dir, 'input'), repo);
    restoreSymlinks(name, repo);
    git(repo, 'init', '-q', '--initial-branch=main');
    git(repo, 'config', 'core.autocrlf', 'false');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'input');
    const s = startSession(repo);
    const before = snapshotTree(s.worktree);
    const headBefore = git(repo, 'rev-parse', s.branch);
    const args = existsSync(path.join(dir, 'args'))
      ? readFileSync(path.join(dir, 'args'), 'utf8').trim().split(/\s+/).filter(Boolean)
      : [];
    const r = hagent(s.worktree, ['apply', path.join(dir, 'patch.txt'), '--json', ...args]);
    const headAfter = git(repo, 'rev-parse', s.branch);
    if (existsSync(path.join(dir, 'expected'))) {
      assert.is(r.status, 0, `exit status (stdout ${r.stdout} stderr ${r.stderr})`);
      assert.is(r.json?.ok, true);
      const diff = diffSnapshots(
        snapshotTree(s.worktree),
        snapshotTree(path.join(dir, 'expected')),
      );
      assert.is(diff, null, diff ?? '');
      assert.is(
        git(repo, 'rev-list', '--count', `${headBefore}..${headAfter}`),
        '1',
        'exactly one new commit',
      );
      assert.is(git(repo, 'rev-parse', `${headAfter}^`), headBefore);
      assert.is(
        git(s.worktree, 'status', '--porcelain'),
        '',
        'the commit holds exactly the worktree',
      );
    } else {
      const code = readFileSync(path.join(dir, 'expected_error'), 'utf8').trim();
      assert.is(r.status, 1, `exit status (stdout ${r.stdout} stderr ${r.stderr})`);
      assert.is(r.json?.ok, false);
      assert.is(r.json?.error?.code, code, r.stdout);
      assert.ok(typeof r.json?.error?.message === 'string' && r.json.error.message.length > 0);
      assert.ok(
        typeof r.json?.error?.hint === 'string' && r.json.error.hint.length > 0,
        'every refusal has a hint',
      );
      assert.is(diffSnapshots(snapshotTree(s.worktree), before), null, 'the worktree is unchanged');
      assert.is(headAfter, headBefore, 'no new commit');
    }
  });
}

cases.run();
