/**
 * Two land items: with no git identity the land is authored `hagent <hagent@localhost>` and the
 * human is told (text and JSON warnings); a partial land's message names the files it lands,
 * never a file of the same patch it leaves behind.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, IDENTITY_VARS, look, makeRepo, startSession } from '../helpers/index.js';

const test = suite('land: smaller items');

const PATCH =
  '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n';

test('no git identity: the land says it is authored hagent <hagent@localhost> and how to set one (text and JSON)', () => {
  const repo = makeRepo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
  const s = startSession(repo, ['--name', 'i1']);
  assert.is(hagent(s.worktree, ['apply', '-'], { input: PATCH }).status, 0);
  look(repo, 'i1'); // the human reads the review first
  assert.is(hagent(repo, ['review', '--session', 'i1', '--approve']).status, 0);
  // No identity anywhere: no variables, no global config, and git may not guess one.
  const noIdentity = {
    unsetEnv: IDENTITY_VARS,
    env: {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'user.useConfigOnly',
      GIT_CONFIG_VALUE_0: 'true',
    },
  };
  const land = hagent(repo, ['land', '--session', 'i1', '--json'], noIdentity);
  assert.is(land.status, 0, land.stderr + land.stdout);
  assert.is(git(repo, 'log', '-1', '--format=%an <%ae>', 'main'), 'hagent <hagent@localhost>');
  assert.ok(
    land.json.warnings.some((w: string) =>
      /no identity configured.*git config --global user\.name/.test(w),
    ),
    land.stdout,
  );
  assert.is(hagent(repo, ['land', '--undo', '--session', 'i1', '--yes']).status, 0);
  const text = hagent(repo, ['land', '--session', 'i1'], noIdentity);
  assert.match(text.stdout, /warning: git has no identity configured/);
  // With an identity: no warning.
  assert.is(hagent(repo, ['land', '--undo', '--session', 'i1', '--yes']).status, 0);
  assert.equal(hagent(repo, ['land', '--session', 'i1', '--json']).json.warnings, []);
});

test("a partial land's message names the files it lands, not the other files of the same patch", () => {
  const repo = makeRepo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
  const s = startSession(repo, ['--name', 'p1']);
  assert.is(hagent(s.worktree, ['apply', '-'], { input: PATCH }).status, 0);
  look(repo, 'p1'); // the human reads the review first
  assert.is(hagent(repo, ['review', '--session', 'p1', '--approve', 'a.txt']).status, 0);
  const land = hagent(repo, ['land', '--session', 'p1', '--json']);
  assert.is(land.status, 0, land.stderr + land.stdout);
  const message = git(repo, 'log', '-1', '--format=%B', 'main');
  assert.match(message, /\(1 patch, 1 file\) \(approved: 1 of the session's files\)/);
  assert.match(message, /^- M a\.txt$/m);
  assert.not.match(message, /b\.txt/);
});

test.run();
