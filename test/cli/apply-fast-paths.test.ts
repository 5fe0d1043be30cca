/**
 * HAGENT_TRACE says which path wrote apply's commit and why: in-process with the identity git
 * gives, or git when the repository asks for what the in-process writer does not reproduce (a
 * commit encoding other than UTF-8), and both commits are what git would have written.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo } from '../helpers/index.js';

const t = suite('apply fast paths');

function apply(worktree: string, patch: string): { commit: string; trace: string } {
  const r = hagent(worktree, ['apply', '-', '--json', '--yes'], {
    input: patch,
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { commit: r.json.commit, trace: r.stderr };
}

const append = (file: string, last: string, line: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n ${last}\n+${line}\n*** End Patch\n`;

t('the trace names the commit path and the reason git was asked', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = hagent(repo, ['session', 'start', '--json', '--name', 'fast']);
  assert.is(s.status, 0, s.stderr);
  const first = apply(s.json.worktree, append('a.txt', 'a', 'b'));
  assert.match(first.trace, /commit: in-process/);
  git(repo, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
  const second = apply(s.json.worktree, append('a.txt', 'b', 'c'));
  assert.match(second.trace, /commit: git \(i18n\.commitEncoding is ISO-8859-1\)/);
  assert.match(git(repo, 'cat-file', '-p', second.commit), /^encoding ISO-8859-1$/m);
  assert.is(git(repo, 'rev-parse', `${second.commit}^`), first.commit);
  git(repo, 'fsck', '--strict', '--no-dangling');
});

t.run();
