/**
 * The session notes refs (refs/notes/hagent-sessions/<id>, git/notes.ts) are hagent's as the old
 * global notes ref is: the guard protects them from deletion and from notes writes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { protectedRef } from '../../../src/guard/git.js';

const t = suite('notes refs');

t('a session notes ref and the old global notes ref are protected; a user notes ref is not', () => {
  assert.ok(protectedRef('refs/notes/hagent-sessions/s1', []));
  assert.ok(protectedRef('refs/notes/hagent', []));
  assert.not.ok(protectedRef('refs/notes/hagent-other', []));
  assert.not.ok(protectedRef('refs/notes/commits', []));
});

t.run();
