// patch-language.md §5b: absolute paths inside the session worktree are made relative, inside the
// user's main checkout mapped to the session; every other absolute path is left to be denied.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkPath, DEFAULT_POLICY, relativizeAbsolute } from '../../../src/policy/index.js';

const test = suite('policy: absolute paths');
const roots = {
  worktree: ['/repo/.git/hagent/worktrees/s1', '/real/repo/.git/hagent/worktrees/s1'],
  mainCheckout: ['/repo'],
};

test('a path inside the worktree (either spelling of it) becomes relative, the worktree winning over the main checkout it lies in', () => {
  assert.equal(relativizeAbsolute('/repo/.git/hagent/worktrees/s1/src/a.ts', roots), {
    kind: 'worktree',
    path: 'src/a.ts',
    root: '/repo/.git/hagent/worktrees/s1',
  });
  assert.equal(relativizeAbsolute('/real/repo/.git/hagent/worktrees/s1/a.ts', roots), {
    kind: 'worktree',
    path: 'a.ts',
    root: '/real/repo/.git/hagent/worktrees/s1',
  });
});

test('a path inside the main checkout maps to the same relative path', () => {
  assert.equal(relativizeAbsolute('/repo/src/./b.ts', roots), {
    kind: 'main-checkout',
    path: 'src/b.ts',
    root: '/repo',
  });
});

test('.. is resolved before the prefix test, and other absolute paths stay as they are (then denied)', () => {
  assert.equal(relativizeAbsolute('/repo/../etc/passwd', roots), {
    kind: 'relative',
    path: '/repo/../etc/passwd',
  });
  assert.equal(relativizeAbsolute('/repository/x', roots), {
    kind: 'relative',
    path: '/repository/x',
  });
  assert.equal(relativizeAbsolute('/repo', roots), { kind: 'relative', path: '/repo' });
  assert.throws(
    () => checkPath('/etc/passwd', DEFAULT_POLICY),
    (e: Error & { code?: string }) => e.code === 'PATH_DENIED',
  );
  assert.equal(relativizeAbsolute('src/a.ts', roots), { kind: 'relative', path: 'src/a.ts' });
});

test('a main-checkout path into .git maps to .git/… and is denied by policy', () => {
  const r = relativizeAbsolute('/repo/.git/config', roots);
  assert.is(r.path, '.git/config');
  assert.throws(
    () => checkPath(r.path, DEFAULT_POLICY),
    (e: Error & { code?: string }) => e.code === 'PATH_DENIED',
  );
});

test.run();
