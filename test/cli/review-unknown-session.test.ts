/**
 * An unknown session is a refusal everywhere: `review --approve ID` (a session id where paths go)
 * and every command taking `--session` exit 1 with SESSION_NOT_FOUND and a hint naming
 * `hagent session list`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, repoWithSession, startSession, updatePatch } from '../helpers/index.js';

const t = suite('review-unknown-session');

function withChange() {
  const { repo, s } = repoWithSession();
  hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'two', 'TWO') });
  return { repo, s };
}

t('review --approve nosuch: SESSION_NOT_FOUND, exit 1, hint names session list and paths', () => {
  const { repo } = withChange();
  const r = hagent(repo, ['review', '--approve', 'nosuch', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'SESSION_NOT_FOUND');
  assert.match(r.json.error.hint, /hagent session list/);
  assert.match(r.json.error.hint, /hagent review --session ID --approve/);
  assert.match(r.json.error.hint, /a\.txt/);
  assert.is(hagent(repo, ['review', '--json']).json.approval, null, 'nothing approved');
});

t('review --approve <another session>: USAGE naming the command that approves it', () => {
  const { repo } = withChange();
  startSession(repo, ['--name', 'other']);
  const r = hagent(repo, ['review', '--session', 's1', '--approve', 'other', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 2, r.stdout);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.hint, /hagent review --session other --approve/);
});

t('a path that is not among the changes stays a USAGE error about paths', () => {
  const { repo } = withChange();
  const r = hagent(repo, ['review', '--approve', 'b.txt', '--json'], {
    unsetEnv: ['HAGENT_AGENT'],
  });
  assert.is(r.status, 2, r.stdout);
  assert.is(r.json.error.code, 'USAGE');
  assert.match(r.json.error.message, /not among the changes to land: b\.txt/);
});

t('every command taking --session refuses an unknown one with SESSION_NOT_FOUND, exit 1', () => {
  const { repo } = withChange();
  const commands: string[][] = [
    ['session', 'status'],
    ['session', 'end', '--yes'],
    ['session', 'update'],
    ['apply', '-'],
    ['check', '-'],
    ['review'],
    ['review', '--approve'],
    ['land'],
    ['land', '--undo'],
    ['undo'],
    ['undo', '--redo'],
    ['sync'],
    ['doctor'],
    ['log'],
    ['exec', '--', 'true'],
    ['guard', '--', 'ls'],
  ];
  for (const c of commands) {
    const dashes = c.indexOf('--');
    const args =
      dashes < 0
        ? [...c, '--session', 'nosuch', '--json']
        : [...c.slice(0, dashes), '--session', 'nosuch', '--json', ...c.slice(dashes)];
    const r = hagent(repo, args, {
      input: updatePatch('a.txt', 'one', 'ONE'),
      unsetEnv: ['HAGENT_AGENT'],
    });
    assert.is(r.status, 1, `${c.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.is(r.json?.error?.code, 'SESSION_NOT_FOUND', c.join(' '));
    assert.match(r.json.error.hint, /hagent session list/, c.join(' '));
  }
});

t.run();
