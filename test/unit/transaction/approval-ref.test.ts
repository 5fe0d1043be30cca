/**
 * The pure parts of the approval ref: the commit text it is read from, and the `verify` of a
 * ref transaction that checks an approval did not change.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { refTransactionInput } from '../../../src/git/ref-transaction.js';
import { parseApprovalCommit } from '../../../src/session/approval.js';

const t = suite('approval-ref');
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

const commit = (parents: string[], body: string) =>
  `tree ${'c'.repeat(40)}\n${parents.map((p) => `parent ${p}\n`).join('')}author hagent <hagent@localhost> 0 +0000\ncommitter hagent <hagent@localhost> 0 +0000\n\nhagent: approval of session s1\n\n${body}\n`;

t('an approval commit gives the head (its parent), the paths and the time', () => {
  assert.equal(parseApprovalCommit(commit([A], '{"paths":["x.txt"],"at":"T"}')), {
    head: A,
    paths: ['x.txt'],
    at: 'T',
  });
  assert.equal(parseApprovalCommit(commit([A], '{"paths":null,"at":"T"}'))?.paths, null);
});

t('anything else is no approval', () => {
  assert.is(parseApprovalCommit(commit([], '{"paths":null}')), null, 'no parent');
  assert.is(parseApprovalCommit(commit([A, B], '{"paths":null}')), null, 'two parents');
  assert.is(parseApprovalCommit(commit([A], 'not json')), null);
  assert.is(parseApprovalCommit(commit([A], '{"paths":[1]}')), null, 'paths not strings');
  assert.is(parseApprovalCommit(commit([A], '{"paths":"x"}')), null);
  assert.is(parseApprovalCommit(''), null);
});

t('a verify move checks the ref; a move to the id it holds without verify is nothing', () => {
  const input = refTransactionInput([
    { ref: 'refs/hagent/s1/approved', old: A, new: A, verify: true },
    { ref: 'refs/heads/main', old: A, new: B },
  ]);
  assert.is(
    input,
    `start\0verify refs/hagent/s1/approved\0${A}\0update refs/heads/main\0${B}\0${A}\0prepare\0commit\0`,
  );
});

t.run();
