/**
 * A session worktree the user removed (issue 26, class 7), through the real CLI on real
 * repositories: land and land --undo work from the session branch without it, `session end`
 * ends the session, and `session status` / `hagent doctor` say it is gone with a hint whose
 * command recreates it.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('worktree-removed');

const addFile = (rel: string, text: string) =>
  `*** Begin Patch\n*** Add File: ${rel}\n+${text}\n*** End Patch\n`;

/** A repository with session s1 holding one applied patch (b.txt). */
function sessionWithWork() {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 's1']);
  const r = hagent(s.worktree, ['apply', '-'], { input: addFile('b.txt', 'agent line') });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, s };
}

/** Runs a hint's `hagent …` command (the first one it names) in `cwd`. */
function followHint(cwd: string, hint: string) {
  const m = /hagent ([^;,()]+?)(?:;|,|$| \()/.exec(hint);
  assert.ok(m, `the hint names a command: ${hint}`);
  return hagent(cwd, [...m![1]!.trim().split(/\s+/), '--json']);
}

t('git worktree remove --force: land works without the worktree, then session end', () => {
  const { repo, s } = sessionWithWork();
  git(repo, 'worktree', 'remove', '--force', s.worktree);
  const land = hagent(repo, ['land', '--yes', '--json', '--session', 's1']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'agent line\n');
  const undo = hagent(repo, ['land', '--undo', '--json', '--session', 's1']);
  assert.is(undo.status, 0, undo.stdout + undo.stderr);
  assert.not.ok(existsSync(path.join(repo, 'b.txt')), 'the undo took b.txt back');
  assert.is(hagent(repo, ['land', '--yes', '--json', '--session', 's1']).status, 0);
  const end = hagent(repo, ['session', 'end', 's1', '--json']);
  assert.is(end.status, 0, end.stdout + end.stderr);
  assert.is(git(repo, 'status', '--porcelain'), '');
});

t('rm -rf and git worktree prune: status and doctor say so, and their hint recreates it', () => {
  const { repo, s } = sessionWithWork();
  rmSync(s.worktree, { recursive: true, force: true });
  git(repo, 'worktree', 'prune');
  const status = hagent(repo, ['session', 'status', 's1']);
  assert.is(status.status, 0, status.stderr);
  assert.match(status.stdout, /\(missing\)/);
  assert.match(status.stdout, /hagent doctor --session s1 --restore-worktree/);
  const list = hagent(repo, ['session', 'list', '--json']);
  assert.is(list.json.sessions[0].worktreeExists, false, list.stdout);
  assert.match(hagent(repo, ['session', 'list']).stdout, /worktree missing: hagent doctor/);
  const doctor = hagent(repo, ['doctor', '--json']);
  const finding = doctor.json.findings.find((f: any) => f.kind === 'missing-worktree');
  assert.ok(finding, doctor.stdout);
  assert.is(finding.fixed, false);
  const fixed = followHint(repo, finding.hint);
  assert.is(fixed.status, 0, fixed.stdout + fixed.stderr);
  assert.ok(fixed.json.findings.some((f: any) => f.kind === 'missing-worktree' && f.fixed));
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'agent line\n');
  assert.is(git(s.worktree, 'symbolic-ref', 'HEAD'), 'refs/heads/hagent/s1');
  // The session works in it again.
  const more = hagent(s.worktree, ['apply', '-'], { input: addFile('c.txt', 'more') });
  assert.is(more.status, 0, more.stdout + more.stderr);
  // Nothing more to say of the session or of this repository. (Doctor also reports the pools
  // of other, deleted repositories in the same cache folder, which an earlier test of the same
  // run may have left: a finding of the machine, not of this repository.)
  const after = hagent(repo, ['doctor', '--json']);
  assert.equal(
    after.json.findings.filter(
      (f: any) => !/belongs to .*, which no longer exists/.test(f.message),
    ),
    [],
    after.stdout,
  );
});

t(
  'rm -rf without prune: apply names the way back, which works; a checkout elsewhere is refused',
  () => {
    const { repo, s } = sessionWithWork();
    rmSync(s.worktree, { recursive: true, force: true });
    const apply = hagent(repo, ['apply', '--session', 's1', '--json', '-'], {
      input: addFile('c.txt', 'x'),
    });
    assert.is(apply.json.error.code, 'WORKTREE_BROKEN');
    const back = followHint(repo, apply.json.error.hint);
    assert.is(back.status, 0, back.stdout + back.stderr);
    assert.ok(existsSync(path.join(s.worktree, 'b.txt')));
    // The branch checked out in another (present) worktree: the work is there, not recreated.
    rmSync(s.worktree, { recursive: true, force: true });
    git(repo, 'worktree', 'prune');
    const other = path.join(path.dirname(repo), `${path.basename(repo)}-other`);
    git(repo, 'worktree', 'add', '-q', other, 'hagent/s1');
    const refused = hagent(repo, ['doctor', '--session', 's1', '--restore-worktree', '--json']);
    assert.is(refused.status, 0);
    const f = refused.json.findings.find((x: any) => x.kind === 'session-unchecked');
    assert.ok(f, refused.stdout);
    assert.match(f.message, /WORKTREE_BROKEN/);
    assert.match(f.hint, /switch --detach/);
    assert.not.ok(existsSync(s.worktree));
    rmSync(other, { recursive: true, force: true });
  },
);

t.run();
