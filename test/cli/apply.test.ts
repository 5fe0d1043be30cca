/**
 * `hagent apply` through the real CLI on real repositories: the commit and its note, what real
 * tools and agents send, the safety envelope around the write (staleness, the watcher, the lock,
 * hooks, recovery after a kill), the commit identity, and the `apply_patch` bin.
 * Also: HAGENT_TRACE naming which path wrote the commit and why, an apply killed before its one
 * ref transaction, and the stale locks a killed command leaves.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordCodes } from '../helpers/codes.js';
import {
  BIN,
  git,
  GIT_ENV,
  hagent,
  makeRepo,
  repoWithSession,
  ROOT,
  startSession,
  tempDir,
  updatePatch,
  writeFiles,
  writeIntentRecord,
  IDENTITY_VARS,
  look,
} from '../helpers/index.js';
import { killAtIndexWrite, killAtRefTransaction } from '../helpers/kill-git.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('apply');

t('apply commits the patch on the session branch with the patch text in a note', () => {
  const { repo, s } = repoWithSession();
  const patch = updatePatch('a.txt', 'two', 'TWO');
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.ok, true);
  assert.is(r.json.session, 's1');
  assert.equal(r.json.files, [
    { path: 'a.txt', op: 'update', added: 1, removed: 1, level: 'exact' },
  ]);
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), r.json.commit);
  assert.is(git(repo, 'show', 'hagent/s1:a.txt'), 'one\nTWO\nthree');
  assert.is(git(repo, 'notes', '--ref=hagent-sessions/s1', 'show', r.json.commit), patch.trimEnd());
  assert.match(git(repo, 'log', '-1', '--format=%B', 'hagent/s1'), /Hagent-Session: s1/);
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'one\ntwo\nthree\n',
    "the user's checkout is untouched",
  );
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('apply prints the Codex success shape for humans', () => {
  const { s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-'], {
    input:
      '*** Begin Patch\n*** Add File: n.txt\n+new\n*** Update File: a.txt\n-one\n+ONE\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stderr);
  assert.ok(
    r.stdout.startsWith('Success. Updated the following files:\nA n.txt\nM a.txt\n'),
    r.stdout,
  );
});

t('apply from the main checkout finds the only session, or takes --session', () => {
  const { repo, s } = repoWithSession();
  const patchFile = path.join(tempDir(), 'p.patch');
  writeFileSync(patchFile, updatePatch('b.txt', 'bee', 'BEE'));
  const r = hagent(repo, ['apply', patchFile, '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'BEE\n');
  startSession(repo, ['--name', 's2']);
  const amb = hagent(repo, ['apply', patchFile, '--json']);
  assert.is(amb.status, 1);
  assert.is(amb.json.error.code, 'SESSION_AMBIGUOUS');
  const named = hagent(repo, ['apply', patchFile, '--json', '--session', 's2']);
  assert.is(named.status, 0, named.stdout);
});

t('apply --dry-run reports the files and writes nothing', () => {
  const { repo, s } = repoWithSession();
  const before = git(repo, 'rev-parse', 'hagent/s1');
  const r = hagent(s.worktree, ['apply', '-', '--json', '--dry-run'], {
    input: updatePatch('a.txt', 'two', 'TWO'),
  });
  assert.is(r.status, 0);
  assert.is(r.json.dryRun, true);
  assert.is(r.json.commit, null);
  assert.is(r.json.files[0].path, 'a.txt');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  assert.is(git(repo, 'rev-parse', 'hagent/s1'), before);
});

t('apply refuses a file changed outside the session with STALE_FILE and writes nothing', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(s.worktree, 'a.txt'), 'one\ntwo\nthree\nfour\n');
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: updatePatch('a.txt', 'two', 'TWO'),
  });
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'STALE_FILE');
  assert.is(r.json.error.path, 'a.txt');
  assert.is(
    readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
    'one\ntwo\nthree\nfour\n',
    'the outside bytes survive',
  );
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t(
  'apply outside any session, with a missing file, and with empty stdin: one clear error each',
  () => {
    const repo = makeRepo();
    const none = hagent(repo, ['apply', '-', '--json'], {
      input: updatePatch('README.md', '# demo', 'x'),
    });
    assert.is(none.status, 1);
    assert.is(none.json.error.code, 'NOT_IN_SESSION');
    startSession(repo);
    const missing = hagent(repo, ['apply', 'no-such.patch', '--json']);
    assert.is(missing.status, 1);
    assert.is(missing.json.error.code, 'PATCH_NOT_FOUND');
    const empty = hagent(repo, ['apply', '-', '--json'], { input: '' });
    assert.is(empty.status, 1);
    assert.is(empty.json.error.code, 'EMPTY_PATCH');
    const human = hagent(repo, ['apply', 'no-such.patch']);
    assert.is(human.status, 1);
    assert.match(human.stderr, /^error\[PATCH_NOT_FOUND\]: .*no-such\.patch/);
    assert.match(human.stderr, /hint: /);
    const outside = hagent(tempDir(), ['apply', '-', '--json'], {
      input: updatePatch('a', 'b', 'c'),
    });
    assert.is(outside.json.error.code, 'NOT_A_GIT_REPO');
  },
);

t('a patch that is not UTF-8 is refused, never written with replacement characters', () => {
  const { repo, s } = repoWithSession();
  const patchFile = path.join(tempDir(), 'latin1.patch');
  writeFileSync(
    patchFile,
    Buffer.concat([
      Buffer.from('*** Begin Patch\n*** Add File: l.txt\n+caf'),
      Buffer.from([0xe9]),
      Buffer.from('\n*** End Patch\n'),
    ]),
  );
  const r = hagent(s.worktree, ['apply', patchFile, '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'UNSUPPORTED_FILE');
  assert.not.ok(existsSync(path.join(s.worktree, 'l.txt')));
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t('a file can become a folder of the same name in one patch', () => {
  const { repo, s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input:
      '*** Begin Patch\n*** Delete File: b.txt\n*** Add File: b.txt/inner.txt\n+inside\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:b.txt/inner.txt'), 'inside');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  // undo and redo cross the same change both ways (found by a hostile test: STALE_FILE before)
  const undo = hagent(s.worktree, ['undo', '--json']);
  assert.is(undo.status, 0, undo.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'bee\n');
  const redo = hagent(s.worktree, ['undo', '--redo', '--json']);
  assert.is(redo.status, 0, redo.stdout);
  assert.is(readFileSync(path.join(s.worktree, 'b.txt/inner.txt'), 'utf8'), 'inside\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('a folder can become a file of the same name in one patch', () => {
  const { repo, s } = repoWithSession({
    'a.txt': 'a\n',
    'q/only.txt': 'o\n',
    'q/deep/two.txt': 't\n',
  });
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input:
      '*** Begin Patch\n*** Delete File: q/only.txt\n*** Delete File: q/deep/two.txt\n*** Add File: q\n+now a file\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:q'), 'now a file');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const partial = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input: '*** Begin Patch\n*** Delete File: q\n*** Add File: q/x/y.txt\n+y\n*** End Patch\n',
  });
  assert.is(partial.status, 0, partial.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:q/x/y.txt'), 'y');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
});

t('a new file under a path that is a file is refused whole, tracked or not (found by R4)', () => {
  const { repo, s } = repoWithSession();
  writeFileSync(path.join(s.worktree, 'probe.txt'), 'untracked\n');
  for (const [under, patch] of [
    [
      'b.txt',
      '*** Begin Patch\n*** Add File: n.txt\n+n\n*** Add File: b.txt/x\n+x\n*** End Patch\n',
    ],
    [
      'probe.txt',
      '*** Begin Patch\n*** Add File: n.txt\n+n\n*** Add File: probe.txt/x/y\n+x\n*** End Patch\n',
    ],
  ] as const) {
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'FILE_EXISTS');
    assert.is(r.json.error.file, under, r.stdout);
  }
  const both = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Add File: n\n+n\n*** Add File: n/x\n+x\n*** End Patch\n',
  });
  assert.is(both.status, 1, both.stdout);
  assert.is(both.json.error.code, 'DUPLICATE_PATH');
  assert.not.ok(existsSync(path.join(s.worktree, 'n.txt')));
  assert.not.ok(existsSync(path.join(s.worktree, 'n')));
  assert.is(git(s.worktree, 'status', '--porcelain'), '?? probe.txt');
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/s1'), '0');
});

t('two new files with one name in two new folders are staged apart', () => {
  const { repo, s } = repoWithSession();
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Add File: src/one/index.ts\n+1\n*** Add File: src/two/index.ts\n+2\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout);
  assert.is(git(repo, 'show', 'hagent/s1:src/one/index.ts'), '1');
  assert.is(git(repo, 'show', 'hagent/s1:src/two/index.ts'), '2');
});

t(
  'two patches in one input: MULTIPLE_PATCHES at the second, nothing written; one by one apply',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
    const s = startSession(repo);
    const head = git(s.worktree, 'rev-parse', 'HEAD');
    const first = '*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** End Patch\n';
    const second = '*** Begin Patch\n*** Update File: a.txt\n-two\n+TWO\n*** End Patch\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: first + second });
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'MULTIPLE_PATCHES');
    assert.is(r.json.error.message, 'the input holds more than one complete patch');
    assert.is(r.json.error.line, 6, 'the line where the second patch begins');
    assert.match(r.json.error.hint, /send one patch per apply/);
    const text = hagent(s.worktree, ['apply', '-'], { input: first + second });
    assert.is(text.status, 1);
    assert.match(text.stderr, /^error\[MULTIPLE_PATCHES\]: the input holds more than one complete/);
    assert.match(text.stderr, /line: 6/);
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      'one\ntwo\n',
      'nothing written',
    );
    assert.is(git(s.worktree, 'rev-parse', 'HEAD'), head, 'no commit');
    for (const patch of [first, second])
      assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'ONE\nTWO\n');
  },
);

// `hagent apply` on what real tools and agents send (patch-language.md §2, §4, §5, §5b), through
// the built CLI in real git repositories: git format-patch output, CR bytes of git diffs, retried
// patches, Delete + Add rewrites, the final-newline spelling, absolute paths (session worktree, the
// user's main checkout, elsewhere), plain diff -u, and the "format" field.

const head = (repo: string, branch: string): string => git(repo, 'rev-parse', branch);

const codex = (...lines: string[]): string =>
  ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');

t("git format-patch output applies through the CLI and gives the commit's tree", () => {
  const repo = makeRepo({ 'a.txt': 'a\nb\nc\n- \n' });
  git(repo, 'checkout', '-q', '-b', 'work');
  writeFileSync(path.join(repo, 'a.txt'), 'a\nB\nc\n- \n');
  git(repo, 'commit', '-qam', 'b to B');
  const mbox = git(repo, 'format-patch', '-1', '--stdout');
  const want = git(repo, 'rev-parse', 'HEAD^{tree}');
  git(repo, 'checkout', '-q', 'main');
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: `${mbox}\n` });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.format, 'unified');
  assert.not.ok((r.json.leniencies as string[]).includes('unified-diff'));
  assert.is(git(repo, 'rev-parse', `${s.branch}^{tree}`), want);
});

t('a git diff of CRLF lines keeps the CR bytes (a new CRLF file stays CRLF)', () => {
  const repo = makeRepo({ 'README.md': '# demo\n' });
  git(repo, 'config', 'core.autocrlf', 'false');
  const s = startSession(repo);
  const diff =
    'diff --git a/w.txt b/w.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,2 @@\n+one\r\n+two\r\n';
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: diff });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(readFileSync(path.join(s.worktree, 'w.txt'), 'utf8'), 'one\r\ntwo\r\n');
});

t(
  'a retried patch is refused NO_CHANGES "looks applied already" with alreadyApplied, nothing committed',
  () => {
    const repo = makeRepo({ 'a.py': 'def f():\n    return 1\n' });
    const s = startSession(repo);
    const patch = codex(
      '*** Update File: a.py',
      '@@ def f():',
      '-    return 1',
      '+    return 2',
      '*** Add File: b.py',
      '+x = 1',
    );
    assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
    const before = head(repo, s.branch);
    const again = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(again.status, 1);
    assert.is(again.json.error.code, 'NO_CHANGES');
    assert.is(again.json.error.alreadyApplied, true);
    assert.match(again.json.error.message, /looks applied already/);
    assert.is(head(repo, s.branch), before);
    const human = hagent(s.worktree, ['apply', '-'], { input: patch });
    assert.match(
      human.stdout + human.stderr,
      /error\[NO_CHANGES\]: the patch looks applied already/,
    );
  },
);

t(
  "a retry of the session's last patch is NO_CHANGES even when its chunks would match again (an insertion)",
  () => {
    const repo = makeRepo({ 'a.txt': 'first\nthird\n' });
    const s = startSession(repo);
    const patch = codex('*** Update File: a.txt', '@@', ' third', '+fourth');
    assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
    const commit = head(repo, s.branch);
    const again = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(again.status, 1);
    assert.is(again.json.error.code, 'NO_CHANGES');
    assert.is(again.json.error.alreadyApplied, true);
    assert.is(again.json.error.commit, commit);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'first\nthird\nfourth\n');
    // after an undo the same patch is new again
    assert.is(hagent(s.worktree, ['undo', '--json']).status, 0);
    assert.is(hagent(s.worktree, ['apply', '-', '--json'], { input: patch }).status, 0);
  },
);

t(
  'Delete File + Add File of one path is one update in the result and the commit, mode kept',
  () => {
    const repo = makeRepo({ 'run.sh': '#!/bin/sh\necho old\n' });
    git(repo, 'update-index', '--chmod=+x', 'run.sh');
    git(repo, 'commit', '-qm', 'exec');
    const s = startSession(repo);
    const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
      input: codex('*** Delete File: run.sh', '*** Add File: run.sh', '+#!/bin/sh', '+echo new'),
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.json.files, [{ path: 'run.sh', op: 'update', added: 1, removed: 1 }]);
    assert.is(git(repo, 'ls-tree', s.branch, 'run.sh').split(/\s/)[0], '100755');
    assert.is(git(repo, 'show', `${s.branch}:run.sh`), '#!/bin/sh\necho new');
  },
);

t('-last / +last before End of File adds the final newline and says so', () => {
  const repo = makeRepo({ 'n.txt': 'first\nlast' });
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: codex('*** Update File: n.txt', '@@', '-last', '+last', '*** End of File'),
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.is(r.json.files[0].finalNewline, 'added');
  assert.is(readFileSync(path.join(s.worktree, 'n.txt'), 'utf8'), 'first\nlast\n');
});

t(
  'absolute paths: inside the session worktree made relative, inside the main checkout mapped with a warning, elsewhere denied',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const s = startSession(repo);
    const inWt = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex(`*** Update File: ${path.join(s.worktree, 'a.txt')}`, '-a', '+A'),
    });
    assert.is(inWt.status, 0, inWt.stdout + inWt.stderr);
    assert.equal(inWt.json.files[0].path, 'a.txt');
    assert.ok((inWt.json.leniencies as string[]).includes('absolute-path'));
    const inMain = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex(`*** Update File: ${path.join(repo, 'b.txt')}`, '-b', '+B'),
    });
    assert.is(inMain.status, 0, inMain.stdout + inMain.stderr);
    assert.ok((inMain.json.leniencies as string[]).includes('main-checkout-path'));
    assert.match((inMain.json.warnings as string[]).join('\n'), /main checkout/);
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'B\n');
    assert.is(
      readFileSync(path.join(repo, 'b.txt'), 'utf8'),
      'b\n',
      'the main checkout is untouched',
    );
    const outside = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex('*** Add File: /etc/hagent-test.txt', '+x'),
    });
    assert.is(outside.status, 1);
    assert.is(outside.json.error.code, 'PATH_DENIED');
    const escape = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex(`*** Add File: ${s.worktree}/../x.txt`, '+x'),
    });
    assert.is(escape.json.error.code, 'PATH_DENIED');
    const gitDir = hagent(s.worktree, ['apply', '-', '--json'], {
      input: codex(`*** Add File: ${path.join(repo, '.git', 'x')}`, '+x'),
    });
    assert.is(gitDir.json.error.code, 'PATH_DENIED');
  },
);

t(
  'plain diff -u a.orig a.new updates the existing file; neither existing names both headers',
  () => {
    const repo = makeRepo({ 'a.orig': 'x\n' });
    const s = startSession(repo);
    const diff =
      '--- a.orig\t2026-01-01 00:00:00\n+++ a.new\t2026-01-01 00:00:01\n@@ -1 +1 @@\n-x\n+y\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: diff });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(r.json.files[0].path, 'a.orig');
    const none = hagent(s.worktree, ['apply', '-', '--json'], {
      input: diff.replace(/a\.orig/g, 'b.orig').replace(/a\.new/g, 'b.new'),
    });
    assert.is(none.json.error.code, 'FILE_NOT_FOUND');
    assert.match(none.json.error.hint, /b\.orig.*b\.new|b\.new.*b\.orig/);
  },
);

t(
  'a unified-diff deletion whose lines differ from the file is CONTEXT_NOT_FOUND and deletes nothing',
  () => {
    const repo = makeRepo({ 'd.txt': 'one\ntwo\n' });
    const s = startSession(repo);
    const diff =
      'diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-TWO\n';
    const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], { input: diff });
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'CONTEXT_NOT_FOUND');
    assert.is(readFileSync(path.join(s.worktree, 'd.txt'), 'utf8'), 'one\ntwo\n');
  },
);

t(
  'a path through a file is a refusal, not an internal error, with or without attributes files',
  () => {
    for (const files of [
      { 'a.txt': 'a\n' },
      { 'a.txt': 'a\n', '.gitattributes': '*.bin binary\n' },
    ] as Record<string, string>[]) {
      const repo = makeRepo(files);
      const s = startSession(repo);
      const r = hagent(s.worktree, ['apply', '-', '--json'], {
        input: codex('*** Update File: a.txt/x', ' a', '+b'),
        unsetEnv: ['GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'],
      });
      assert.is(r.status, 1, r.stdout + r.stderr);
      assert.is(r.json.error.code, 'FILE_NOT_FOUND');
    }
  },
);

t('a pre-apply hook that exits non-zero refuses with HOOK_REJECTED and its stderr as hint', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  writeFiles(repo, {
    '.hagent/hooks/pre-apply':
      '#!/bin/sh\ninput=$(cat)\ncase "$input" in *secret*) echo "no secrets please" >&2; exit 1;; esac\nexit 0\n',
    '.hagent/hooks/post-apply': '#!/bin/sh\necho "post $HAGENT_SESSION"\n',
  });
  chmodSync(path.join(repo, '.hagent/hooks/pre-apply'), 0o755);
  chmodSync(path.join(repo, '.hagent/hooks/post-apply'), 0o755);
  const s = startSession(repo, ['--name', 'hk']);
  const no = hagent(s.worktree, ['apply', '-', '--json'], {
    input: updatePatch('a.txt', 'a', 'secret'),
  });
  assert.is(no.status, 1);
  assert.is(no.json.error.code, 'HOOK_REJECTED');
  assert.is(no.json.error.hint, 'no secrets please');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  const yes = hagent(s.worktree, ['apply', '-', '--json'], {
    input: updatePatch('a.txt', 'a', 'fine'),
  });
  assert.is(yes.status, 0, yes.stdout);
  assert.is(yes.json.postApply.stdout.trim(), 'post hk');
});

t(
  'the watcher sees an outside write while the patch is being applied: EXTERNAL_EDIT, the outside bytes kept',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    // The pre-apply hook runs inside the watched window (after the staleness check): its write is
    // an outside write by every measure, made where no compare-and-swap has looked yet.
    writeFiles(repo, {
      '.hagent/hooks/pre-apply':
        '#!/bin/sh\nprintf "outside\\n" > "$HAGENT_WORKTREE/sub/b.txt"\nsleep 0.3\n',
    });
    chmodSync(path.join(repo, '.hagent/hooks/pre-apply'), 0o755);
    const s = startSession(repo);
    const patch =
      '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: sub/b.txt\n-b\n+B\n*** End Patch\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'EXTERNAL_EDIT');
    assert.is(r.json.error.path, 'sub/b.txt');
    assert.match(
      r.json.error.message,
      /written by another process while hagent was applying/,
      'seen by the watcher, before any byte',
    );
    assert.is(readFileSync(path.join(s.worktree, 'sub/b.txt'), 'utf8'), 'outside\n');
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      'a\n',
      'nothing of the patch was written',
    );
    assert.is(git(repo, 'rev-parse', s.branch), s.base);
    // With --no-watch the same write is still caught, by the compare-and-swap on the bytes.
    writeFileSync(path.join(s.worktree, 'sub/b.txt'), 'b\n');
    const unwatched = hagent(s.worktree, ['apply', '-', '--json', '--no-watch'], { input: patch });
    assert.is(unwatched.status, 1, unwatched.stdout);
    assert.is(unwatched.json.error.code, 'EXTERNAL_EDIT');
    assert.match(
      unwatched.json.error.message,
      /changed on disk/,
      'caught by the compare-and-swap instead',
    );
    assert.is(readFileSync(path.join(s.worktree, 'sub/b.txt'), 'utf8'), 'outside\n');
  },
);

t('--base refuses when a target changed since that commit, and accepts the head', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo);
  const base = s.base;
  assert.is(
    hagent(s.worktree, ['apply', '-'], { input: updatePatch('a.txt', 'a', 'A') }).status,
    0,
  );
  const stale = hagent(s.worktree, ['apply', '-', '--json', '--base', base], {
    input: updatePatch('a.txt', 'A', 'AA'),
  });
  assert.is(stale.json.error.code, 'STALE_FILE');
  const other = hagent(s.worktree, ['apply', '-', '--json', '--base', base], {
    input: updatePatch('b.txt', 'b', 'B'),
  });
  assert.is(other.status, 0, 'a target unchanged since --base applies');
  const head = git(repo, 'rev-parse', s.branch);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json', '--base', head], {
      input: updatePatch('a.txt', 'A', 'AA'),
    }).status,
    0,
  );
});

t(
  'a second writer waits for the lock and gets LOCKED after --lock-timeout, naming the holder',
  async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    writeFiles(repo, { '.hagent/hooks/pre-apply': '#!/bin/sh\nsleep 3\n' });
    chmodSync(path.join(repo, '.hagent/hooks/pre-apply'), 0o755);
    const s = startSession(repo);
    const slow = spawn(process.execPath, [BIN, 'apply', '-', '--json'], {
      cwd: s.worktree,
      env: { ...process.env, ...GIT_ENV },
    });
    slow.stdin.end(updatePatch('a.txt', 'a', 'A'));
    await new Promise((r) => setTimeout(r, 1200));
    const r = hagent(s.worktree, ['apply', '-', '--json', '--lock-timeout', '0.5'], {
      input: updatePatch('a.txt', 'a', 'B'),
    });
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'LOCKED');
    assert.is(r.json.error.holder.command, 'apply');
    const code = await new Promise((resolve) => slow.on('close', resolve));
    assert.is(code, 0);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'A\n');
  },
);

/** Runs hagent on a pseudo-terminal (util-linux `script`), typing `answer` at the prompt. */
function onTty(
  cwd: string,
  args: string[],
  answer: string,
): { status: number | null; out: string } {
  const cmd = [process.execPath, BIN, ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const r = spawnSync(
    'sh',
    [
      '-c',
      `(sleep 2; printf '${answer}\\r') | script -qec "${cmd.replace(/"/g, '\\"')}" /dev/null`,
    ],
    { cwd, env: { ...process.env, ...GIT_ENV, NO_COLOR: '1' }, encoding: 'utf8' },
  );
  return { status: r.status, out: r.stdout };
}

// util-linux's script (Debian: bsdutils) gives the CLI a pseudo-terminal.
const noScript = spawnSync('script', ['--version']).error
  ? '`script` is not installed (Debian: bsdutils)'
  : undefined;

testOrSkip(
  t,
  'safety envelope',
  noScript,
)('on a terminal a risky patch shows files and a diff preview and asks; no is the default', () => {
  const repo = makeRepo({ 'a.txt': 'a\nb\n', 'b.txt': 'keep\n' });
  const s = startSession(repo);
  const patch = path.join(s.worktree, '..', 'risky.patch');
  writeFileSync(
    patch,
    '*** Begin Patch\n*** Delete File: b.txt\n*** Update File: a.txt\n-b\n+B\n*** End Patch\n',
  );
  const no = onTty(s.worktree, ['apply', patch], 'n');
  assert.match(no.out, /needs your yes/);
  assert.match(no.out, /D b\.txt/);
  assert.match(no.out, /-keep/, 'a diff preview is shown');
  assert.match(no.out, /CONFIRMATION_REQUIRED/);
  assert.ok(existsSync(path.join(s.worktree, 'b.txt')), 'no means nothing is written');
  const yes = onTty(s.worktree, ['apply', patch], 'y');
  assert.match(yes.out, /Success\. Updated the following files:/);
  assert.not.ok(existsSync(path.join(s.worktree, 'b.txt')));
});

t('--no-watch is recorded in the result', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  const r = hagent(s.worktree, ['apply', '-', '--json', '--no-watch'], {
    input: updatePatch('a.txt', 'a', 'A'),
  });
  assert.is(r.json.watched, false);
  const w = hagent(s.worktree, ['apply', '-', '--json'], { input: updatePatch('a.txt', 'A', 'B') });
  assert.is(w.json.watched, true);
});

t(
  'a kill between moving a target aside and linking the new file in: recovery puts the old file back',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const s = startSession(repo, ['--name', 'as']);
    const head = git(repo, 'rev-parse', s.branch);
    const oid = (f: string) => git(repo, 'rev-parse', `${head}:${f}`);
    // Target 0 (a.txt) was published; target 1 (b.txt) is aside under its backup name, and absent.
    writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
    const aOid = git(s.worktree, 'hash-object', '-w', 'a.txt');
    const bFile = path.join(tempDir(), 'b-new.txt');
    writeFileSync(bFile, 'B\n');
    const bNew = git(s.worktree, 'hash-object', '-w', bFile);
    renameSync(path.join(s.worktree, 'b.txt'), path.join(s.worktree, '.b.txt.hagent-tz-bak-1.tmp'));
    writeIntentRecord(repo, 'as', {
      txid: 'tz',
      targets: [
        { rel: 'a.txt', prior: oid('a.txt'), next: aOid },
        { rel: 'b.txt', prior: oid('b.txt'), next: bNew },
      ],
    });
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(d.json.recoveries[0].action, 'restored');
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'b\n');
    assert.not.ok(existsSync(path.join(s.worktree, '.b.txt.hagent-tz-bak-1.tmp')));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'a kill during the rollback (a published file moved aside to put the old one back): recovery puts it back, no file goes missing',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const s = startSession(repo, ['--name', 'rb']);
    const head = git(repo, 'rev-parse', s.branch);
    const oid = (f: string) => git(repo, 'rev-parse', `${head}:${f}`);
    writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
    const aNew = git(s.worktree, 'hash-object', '-w', 'a.txt');
    // b.txt was published (B), then the rollback moved it aside and was killed before linking b back.
    writeFileSync(path.join(s.worktree, '.b.txt.hagent-restore-4242-aside.tmp'), 'B\n');
    const bNew = git(s.worktree, 'hash-object', '-w', '.b.txt.hagent-restore-4242-aside.tmp');
    rmSync(path.join(s.worktree, 'b.txt'));
    writeIntentRecord(repo, 'rb', {
      txid: 'tr',
      pid: 4242,
      targets: [
        { rel: 'a.txt', prior: oid('a.txt'), next: aNew },
        { rel: 'b.txt', prior: oid('b.txt'), next: bNew },
      ],
    });
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(
      d.json.recoveries[0].action,
      'completed',
      'both files hold the new bytes once b is back',
    );
    assert.is(git(repo, 'show', `${s.branch}:b.txt`), 'B');
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'B\n');
    assert.not.ok(existsSync(path.join(s.worktree, '.b.txt.hagent-restore-4242-aside.tmp')));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'index.lock and ref locks left by git processes killed with the apply are cleared by recovery; an older one is not ours',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'lk']);
    const head = git(repo, 'rev-parse', s.branch);
    writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
    const newOid = git(s.worktree, 'hash-object', '-w', 'a.txt');
    const oldOid = git(repo, 'rev-parse', `${head}:a.txt`);
    const common = git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    const lock = path.join(
      git(s.worktree, 'rev-parse', '--path-format=absolute', '--git-dir'),
      'index.lock',
    );
    const intent = (startedAt: Date) =>
      JSON.stringify({
        version: 1,
        txid: 'y',
        session: 'lk',
        command: 'apply',
        pid: 1,
        startedAt: startedAt.toISOString(),
        head,
        commit: null,
        message: 'hagent: M a.txt\n',
        note: null,
        targets: [
          {
            rel: 'a.txt',
            prior: { oid: oldOid, mode: '100644' },
            next: { oid: newOid, mode: '100644' },
            tmp: null,
          },
        ],
      });
    // A lock older than the transaction belongs to someone else: git's refusal stands.
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    writeFiles(common, { 'hagent/tx/lk.json': intent(new Date()) });
    const refused = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('a.txt', 'A', 'AA'),
    });
    assert.ok(existsSync(lock), 'an index.lock older than the transaction is left alone');
    assert.is(refused.status, 1, refused.stdout);
    assert.match(refused.json.error.message, /index\.lock|update-index/);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'A\n');
    // Ones made during the transaction (the killed apply's git update-index and update-ref) are cleared.
    utimesSync(lock, new Date(), new Date());
    const refLock = path.join(common, 'refs', 'heads', 'hagent', 'lk.lock');
    writeFileSync(refLock, '');
    const r = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('a.txt', 'A', 'AA'),
    });
    assert.is(r.status, 0, r.stdout);
    assert.is(r.json.recovery.action, 'completed');
    assert.not.ok(existsSync(lock));
    assert.not.ok(
      existsSync(refLock),
      'the session ref lock left by the killed update-ref is gone',
    );
    assert.is(git(repo, 'show', `${s.branch}:a.txt`), 'AA');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

// apply watches its targets for outside writes; when no watch can start (the inotify watch limit is
// reached) it refuses with WATCH_FAILED and writes nothing, and `--no-watch`, the hint, applies the
// patch without watching (recorded as `watched: false`). The limit is set to 0 inside a user
// namespace of the CLI's own (Linux ≥ 5.11 counts inotify watches per user namespace), so nothing
// outside the test is touched.

// `$0 "$@"` runs the CLI once the limit is 0; the script itself is constant.
const LIMIT_ZERO = 'echo 0 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"';

const probe = spawnSync(
  'unshare',
  ['--user', '--map-root-user', 'sh', '-c', LIMIT_ZERO, process.execPath, '-e', ''],
  { encoding: 'utf8' },
);

const cannot =
  probe.status === 0
    ? undefined
    : `cannot lower the inotify limit in a user namespace here: ${(probe.stderr || String(probe.error)).trim()}`;

/** `hagent ARGS` with no inotify watch available. */
function withoutWatches(cwd: string, args: string[], input: string) {
  const r = spawnSync(
    'unshare',
    ['--user', '--map-root-user', 'sh', '-c', LIMIT_ZERO, process.execPath, BIN, ...args],
    { cwd, input, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' },
  );
  recordCodes(r.stdout, r.stderr);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: JSON.parse(r.stdout) };
}

testOrSkip(
  t,
  'apply: the watcher',
  cannot,
)('no watch can start: WATCH_FAILED, nothing written; --no-watch (the hint) applies', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo);
  const head = git(s.worktree, 'rev-parse', 'HEAD');
  const patch = '*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n';
  const r = withoutWatches(s.worktree, ['apply', '-', '--json'], patch);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.is(r.json.error.code, 'WATCH_FAILED');
  assert.match(r.json.error.message, /cannot watch the patch's files for outside writes: ENOSPC/);
  assert.match(r.json.error.hint, /inotify watch limit is reached/);
  assert.match(r.json.error.hint, /--no-watch/);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\n', 'nothing written');
  assert.is(git(s.worktree, 'rev-parse', 'HEAD'), head, 'no commit');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  const ok = withoutWatches(s.worktree, ['apply', '-', '--json', '--no-watch'], patch);
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  assert.is(ok.json.watched, false);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'two\n');
});

function applyAsync(cwd: string, patch: string): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'apply', '-', '--json', '--yes'], {
      cwd,
      env: { ...process.env, ...GIT_ENV },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => resolve({ status: code ?? -1, out }));
    child.stdin.end(patch);
  });
}

t('four sessions applying side by side: every commit keeps its note', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
  const sessions = ['a', 'b', 'c', 'd'].map((n) => ({
    n,
    s: startSession(repo, ['--name', `s-${n}`]),
  }));
  const commits: string[] = [];
  // Each session applies 8 patches in a row; the four sessions run side by side.
  await Promise.all(
    sessions.map(async ({ n, s }) => {
      for (let round = 0; round < 8; round++) {
        const r = await applyAsync(
          s.worktree,
          `*** Begin Patch\n*** Update File: ${n}.txt\n@@\n-${round === 0 ? n : `${n} ${round - 1}`}\n+${n} ${round}\n*** End Patch\n`,
        );
        assert.is(r.status, 0, r.out);
        const json = JSON.parse(r.out);
        assert.equal(json.warnings, [], 'no note warning');
        commits.push(json.commit);
      }
    }),
  );
  // Each session keeps its notes in a notes ref of its own (refs/notes/hagent-sessions/<id>).
  const noted = new Set(
    sessions.flatMap(({ n }) =>
      git(repo, 'notes', `--ref=hagent-sessions/s-${n}`, 'list')
        .split('\n')
        .map((l) => l.split(' ')[1]),
    ),
  );
  for (const c of commits) assert.ok(noted.has(c), `note of ${c}`);
});

t('an intent temp file of a writer that died is removed by the next writing command', () => {
  const repo = makeRepo();
  const s = startSession(repo, ['--name', 'tmpy']);
  const tx = path.join(repo, '.git', 'hagent', 'tx');
  mkdirSync(tx, { recursive: true });
  const dead = path.join(tx, 'tmpy.json.999999999-abc123.tmp');
  const other = path.join(tx, 'other.json.999999999-abc123.tmp');
  writeFileSync(dead, '{');
  writeFileSync(other, '{');
  const r = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo!\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.not.ok(existsSync(dead), "this session's dead temp is gone");
  assert.ok(existsSync(other), "another session's is left to that session");
});

t(
  'a lock on the old global notes ref is never removed, and no longer blocks a note: the next apply keeps its note, byte for byte',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'nl']);
    const lock = path.join(repo, '.git', 'refs', 'notes', 'hagent.lock');
    mkdirSync(path.dirname(lock), { recursive: true });
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+a  \n*** End Patch\n\n';
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
    assert.is(r.status, 0, r.stdout);
    assert.equal(r.json.warnings, [], 'no note warning');
    assert.ok(existsSync(lock), "a lock git may hold is git's: left alone");
    const blob = git(repo, 'notes', '--ref=hagent-sessions/nl', 'list', r.json.commit);
    assert.is(
      spawnSync('git', ['cat-file', 'blob', blob], { cwd: repo }).stdout.toString('utf8'),
      patch,
      'the patch text, trailing spaces and blank line kept',
    );
  },
);

// apply's commit written in-process (git/commit-direct.ts), through the real CLI, with the
// identity git gives (`git var`) in each process: a changed identity is picked up by the next
// command; a date fixed in the environment is kept; sessions applying side by side all commit.
// These tests leave the helpers' fixed dates (and identity variables) out, so the repository's
// config decides.

function repoWithIdentity(files: Record<string, string>): string {
  const repo = makeRepo(files);
  git(repo, 'config', 'user.name', 'Grace Hopper');
  git(repo, 'config', 'user.email', 'grace@example.com');
  return repo;
}

function start(repo: string, name: string): { worktree: string; branch: string } {
  const r = hagent(repo, ['session', 'start', '--json', '--name', name], {
    unsetEnv: IDENTITY_VARS,
  });
  assert.is(r.status, 0, r.stderr);
  return r.json;
}

function appendLine(file: string, last: string, line: string): string {
  return `*** Begin Patch\n*** Update File: ${file}\n@@\n ${last}\n+${line}\n*** End Patch\n`;
}

/** Applies with tracing on; @returns the commit and whether it was written in-process. */
function apply(worktree: string, patch: string): { commit: string; inProcess: boolean } {
  const r = hagent(worktree, ['apply', '-', '--json', '--yes'], {
    input: patch,
    unsetEnv: IDENTITY_VARS,
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.commit);
  return { commit: r.json.commit, inProcess: /apply: committed in-process/.test(r.stderr) };
}

t('every commit is made in-process with the identity git gives', () => {
  const repo = repoWithIdentity({ 'a.txt': 'a\n' });
  const s = start(repo, 'one');
  const made = [
    apply(s.worktree, appendLine('a.txt', 'a', 'b')),
    apply(s.worktree, appendLine('a.txt', 'b', 'c')),
    apply(s.worktree, appendLine('a.txt', 'c', 'd')),
  ];
  assert.equal(
    made.map((m) => m.inProcess),
    [true, true, true],
  );
  const now = Math.floor(Date.now() / 1000);
  for (const m of made) {
    const [who, time] = git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>%n%ct', m.commit).split(
      '\n',
    );
    assert.is(who, 'Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>');
    assert.ok(Math.abs(Number(time) - now) < 120, 'the commit carries the current time');
    assert.match(
      git(repo, 'notes', '--ref=hagent-sessions/one', 'show', m.commit),
      /\*\*\* Begin Patch/,
    );
  }
  assert.is(git(repo, 'rev-parse', s.branch), made[2]!.commit);
  assert.is(git(repo, 'rev-list', '--count', `${made[0]!.commit}~1..${s.branch}`), '3');
  assert.is(
    git(repo, 'reflog', '--format=%gs', s.branch)
      .split('\n')
      .filter((l) => l.startsWith('hagent apply')).length,
    3,
  );
  assert.is(git(s.worktree, 'status', '--porcelain'), '', 'index and files agree with the head');
  git(repo, 'fsck', '--strict', '--no-dangling');
});

t('a changed user.name is picked up by the next command', () => {
  const repo = repoWithIdentity({ 'a.txt': 'a\n' });
  const s = start(repo, 'two');
  apply(s.worktree, appendLine('a.txt', 'a', 'b'));
  assert.ok(apply(s.worktree, appendLine('a.txt', 'b', 'c')).inProcess);
  git(repo, 'config', 'user.name', 'Rear Admiral Hopper');
  const renamed = apply(s.worktree, appendLine('a.txt', 'c', 'd'));
  assert.ok(renamed.inProcess);
  assert.is(
    git(repo, 'log', '-1', '--format=%an|%cn', renamed.commit),
    'Rear Admiral Hopper|Rear Admiral Hopper',
  );
  const next = apply(s.worktree, appendLine('a.txt', 'd', 'e'));
  assert.ok(next.inProcess);
  assert.is(git(repo, 'log', '-1', '--format=%an', next.commit), 'Rear Admiral Hopper');
  // A fixed date in the environment: the commit carries it, as git's would.
  const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
    input: appendLine('a.txt', 'e', 'f'),
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /committed in-process/);
  assert.is(
    git(repo, 'log', '-1', '--format=%an|%cI', r.json.commit),
    `${GIT_ENV.GIT_AUTHOR_NAME}|2026-01-01T00:00:00+00:00`,
  );
});

t(
  'land after an apply: the land commit is made in-process too, refs and checkout as git would leave them',
  () => {
    const repo = repoWithIdentity({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const s = start(repo, 'lander');
    apply(s.worktree, appendLine('a.txt', 'a', 'a2'));
    apply(s.worktree, appendLine('b.txt', 'b', 'b2'));
    look(repo, 'lander');
    assert.is(
      hagent(repo, ['review', '--session', 'lander', '--approve', '--json'], {
        unsetEnv: IDENTITY_VARS,
      }).status,
      0,
    );
    const before = git(repo, 'rev-parse', 'main');
    const r = hagent(repo, ['land', '--session', 'lander', '--yes', '--json'], {
      unsetEnv: IDENTITY_VARS,
      env: { HAGENT_TRACE: '1' },
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /land: committed in-process/);
    assert.is(git(repo, 'rev-parse', 'main'), r.json.commit);
    assert.is(git(repo, 'rev-parse', `${r.json.commit}^`), before, 'a squash onto the old tip');
    assert.is(
      git(repo, 'rev-parse', `${r.json.commit}^{tree}`),
      git(repo, 'rev-parse', `${s.branch}^{tree}`),
    );
    assert.is(
      git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main'),
      'Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>',
    );
    assert.match(git(repo, 'reflog', '-1', '--format=%gs', 'main'), /^hagent land lander/);
    assert.is(git(repo, 'show', 'main:a.txt'), 'a\na2');
    assert.is(git(repo, 'status', '--porcelain'), '', 'the checkout holds the landed files');
    git(repo, 'fsck', '--strict', '--no-dangling');
  },
);

t('four sessions applying side by side: every commit made, noted and reachable', async () => {
  const repo = repoWithIdentity({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
  const sessions = ['a', 'b', 'c', 'd'].map((n) => ({ n, s: start(repo, `side-${n}`) }));
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV };
  for (const k of IDENTITY_VARS) delete env[k];
  const run = (cwd: string, patch: string) =>
    new Promise<{ status: number; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'apply', '-', '--json', '--yes'], { cwd, env });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      child.on('close', (code) => resolve({ status: code ?? -1, out }));
      child.stdin.end(patch);
    });
  const results = await Promise.all(
    sessions.map(async ({ n, s }) => {
      const commits: string[] = [];
      let last = n;
      for (let i = 0; i < 5; i++) {
        const r = await run(s.worktree, appendLine(`${n}.txt`, last, `${n}${i}`));
        assert.is(r.status, 0, r.out);
        commits.push(JSON.parse(r.out).commit);
        last = `${n}${i}`;
      }
      return { s, commits };
    }),
  );
  for (const { s, commits } of results) {
    assert.is(git(repo, 'rev-parse', s.branch), commits[4]);
    for (const c of commits) assert.is(git(repo, 'log', '-1', '--format=%an', c), 'Grace Hopper');
    for (const c of commits)
      assert.match(
        git(repo, 'notes', `--ref=hagent-sessions/${s.branch.replace('hagent/', '')}`, 'show', c),
        /Begin Patch/,
      );
  }
  git(repo, 'fsck', '--strict', '--no-dangling');
});

// HAGENT_TRACE says which path wrote apply's commit and why: in-process with the identity git
// gives, or git when the repository asks for what the in-process writer does not reproduce (a
// commit encoding other than UTF-8), and both commits are what git would have written.

function applyTraced(worktree: string, patch: string): { commit: string; trace: string } {
  const r = hagent(worktree, ['apply', '-', '--json', '--yes'], {
    input: patch,
    env: { HAGENT_TRACE: '1' },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { commit: r.json.commit, trace: r.stderr };
}

t('the trace names the commit path and the reason git was asked', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = hagent(repo, ['session', 'start', '--json', '--name', 'fast']);
  assert.is(s.status, 0, s.stderr);
  const first = applyTraced(s.json.worktree, appendLine('a.txt', 'a', 'b'));
  assert.match(first.trace, /commit: in-process/);
  git(repo, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
  const second = applyTraced(s.json.worktree, appendLine('a.txt', 'b', 'c'));
  assert.match(second.trace, /commit: git \(i18n\.commitEncoding is ISO-8859-1\)/);
  assert.match(git(repo, 'cat-file', '-p', second.commit), /^encoding ISO-8859-1$/m);
  assert.is(git(repo, 'rev-parse', `${second.commit}^`), first.commit);
  git(repo, 'fsck', '--strict', '--no-dangling');
});

// The `apply_patch` bin (dist/apply_patch.cjs): Codex's calling convention and success text, the
// session of the current folder, paths read against that folder, hagent's teaching errors. (Its
// text against the real Codex binary: test/codex/differential.ts.)

const APPLY_PATCH_BIN = path.join(ROOT, 'dist', 'apply_patch.cjs');

function runApplyPatch(cwd: string, args: string[], input = '') {
  const r = spawnSync(process.execPath, [APPLY_PATCH_BIN, ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function setup() {
  const repo = makeRepo({ 'm.txt': 'one\n', 'del.txt': 'x\n', 'sub/src.txt': 'mv\n' });
  mkdirSync(path.join(repo, '.hagent'));
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    JSON.stringify({ confirmDeletes: false }),
  );
  return { repo, s: startSession(repo) };
}

t(
  'applies the patch given as the argument and prints the A, then M, then D lines as Codex does',
  () => {
    const { repo, s } = setup();
    const r = runApplyPatch(s.worktree, [
      '*** Begin Patch\n*** Delete File: del.txt\n*** Update File: sub/src.txt\n*** Move to: sub/dst.txt\n@@\n-mv\n+moved\n*** Update File: m.txt\n@@\n-one\n+uno\n*** Add File: new.txt\n+hi\n*** End Patch',
    ]);
    assert.is(r.status, 0, r.stderr);
    assert.is(
      r.stdout,
      'Success. Updated the following files:\nA new.txt\nM sub/dst.txt\nM m.txt\nD del.txt\n',
    );
    assert.is(r.stderr, '');
    assert.is(readFileSync(path.join(s.worktree, 'sub/dst.txt'), 'utf8'), 'moved\n');
    assert.is(git(repo, 'rev-list', '--count', `main..${s.branch}`), '1');
  },
);

t(
  'reads the patch on stdin, and its paths against the current folder (--preserve-crlf accepted)',
  () => {
    const { s } = setup();
    const r = runApplyPatch(
      path.join(s.worktree, 'sub'),
      ['--preserve-crlf'],
      '*** Begin Patch\n*** Update File: src.txt\n@@\n-mv\n+here\n*** End Patch\n',
    );
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, 'Success. Updated the following files:\nM src.txt\n');
    assert.is(readFileSync(path.join(s.worktree, 'sub/src.txt'), 'utf8'), 'here\n');
  },
);

t('a refusal is the teaching error on stderr, exit 1, nothing written; usage errors exit 2', () => {
  const { s } = setup();
  const r = runApplyPatch(s.worktree, [
    '*** Begin Patch\n*** Update File: m.txt\n@@\n-nope\n+x\n*** End Patch',
  ]);
  assert.is(r.status, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /^error\[CONTEXT_NOT_FOUND\]: /);
  assert.match(r.stderr, /hint: /);
  assert.is(readFileSync(path.join(s.worktree, 'm.txt'), 'utf8'), 'one\n');
  assert.is(runApplyPatch(s.worktree, [], '').status, 2);
  assert.is(runApplyPatch(s.worktree, ['a', 'b']).status, 2);
  assert.not.ok(existsSync(path.join(s.worktree, 'x')));
});

t('a risky patch is refused with a hint naming hagent apply --yes, since the bin has none', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  const r = runApplyPatch(s.worktree, ['*** Begin Patch\n*** Delete File: a.txt\n*** End Patch']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /CONFIRMATION_REQUIRED[\s\S]*hagent apply --yes/);
  assert.ok(existsSync(path.join(s.worktree, 'a.txt')));
});

t('without a terminal a risky patch is refused with a hint naming --yes, which applies it', () => {
  const repo = makeRepo({ 'b.txt': 'keep\n' });
  const s = startSession(repo);
  const patch = '*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n';
  const r = hagent(s.worktree, ['apply', '-', '--json'], { input: patch });
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'CONFIRMATION_REQUIRED');
  assert.is(r.json.error.hint, 'ask the human; with their yes, run again with --yes');
  assert.ok(existsSync(path.join(s.worktree, 'b.txt')));
  assert.is(hagent(s.worktree, ['apply', '-', '--yes'], { input: patch }).status, 0);
  assert.not.ok(existsSync(path.join(s.worktree, 'b.txt')));
});

t('outside any session it is refused', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const r = runApplyPatch(repo, ['*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /NOT_IN_SESSION/);
});

// An apply killed (kill -9) after its files and index, before its one ref transaction: the
// record holds the branch, the redo ref and the session's notes ref, so the next command moves
// them together — no commit without its note, no note lock to clear, nothing half done.

t('the next command moves the branch and the notes ref of the killed apply together', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo, ['--name', 'k1']);
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n';
  const killed = hagent(s.worktree, ['apply', '-', '--json'], {
    input: patch,
    env: killAtRefTransaction(),
  });
  assert.is(killed.status, -1, `hagent was killed (${killed.status}: ${killed.stdout})`);
  assert.is(git(repo, 'rev-parse', s.branch), s.base, 'no ref moved');
  assert.is(git(repo, 'for-each-ref', 'refs/notes/'), '');
  const st = hagent(repo, ['session', 'status', 'k1', '--json']);
  assert.is(st.json.interrupted.command, 'apply');
  const d = hagent(repo, ['doctor', '--json']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.is(d.json.recoveries[0].action, 'completed');
  const head = git(repo, 'rev-parse', s.branch);
  assert.is(git(repo, 'show', `${head}:a.txt`), 'A');
  assert.is(git(repo, 'notes', '--ref=hagent-sessions/k1', 'show', head), patch.trimEnd());
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'A\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  assert.is(git(repo, 'fsck', '--no-dangling', '--no-progress'), '');
});

// --- Stale locks ---
// Locks a killed command leaves: the session lock of a dead holder (same host) is taken over at
// once, even with `--lock-timeout 0`; a live holder's is not. The worktree's index.lock left by a
// git killed with its apply is cleared by the next command's recovery, which completes the apply.

/** Writes the session lock of `s1` as a holder with `pid` on this host would. */
function writeLock(repo: string, pid: number): string {
  const dir = path.join(repo, '.git', 'hagent', 'locks');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 's1.lock');
  const body = {
    pid,
    hostname: os.hostname(),
    command: 'apply',
    startedAt: new Date().toISOString(),
    token: 'deadbeefdeadbeef0001',
  };
  writeFileSync(file, `${JSON.stringify(body)}\n`);
  return file;
}

/** The pid of a process that has ended (and been reaped). */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => c.on('exit', resolve));
  return c.pid!;
}

t('a dead holder on this host is taken over at once: apply --lock-timeout 0 succeeds', async () => {
  const { repo, s } = repoWithSession();
  const lock = writeLock(repo, await deadPid());
  const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
    input: updatePatch('a.txt', 'two', 'TWO'),
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.not.ok(existsSync(lock), 'released after the apply');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
});

t('a holder that ended but is not reaped yet (a zombie) is dead: taken over at once', async () => {
  const { repo, s } = repoWithSession();
  if (!existsSync('/proc/self/stat')) {
    console.log('  skipped: zombie holder (no /proc on this system)');
    return;
  }
  // The inner sleep ends at once; its parent (exec'd into sleep 30) never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const zombie = Number(
      await new Promise<string>((resolve) =>
        parent.stdout!.once('data', (d) => resolve(String(d))),
      ),
    );
    for (let i = 0; i < 200; i++) {
      const state = readFileSync(`/proc/${zombie}/stat`, 'latin1').split(') ')[1]?.[0];
      if (state === 'Z') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    writeLock(repo, zombie);
    const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
  } finally {
    parent.kill('SIGKILL');
  }
});

t('a live holder is never taken over: LOCKED (exit 1) naming it, its lock left as it was', () => {
  const { repo, s } = repoWithSession();
  const live = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const lock = writeLock(repo, live.pid!);
    const before = readFileSync(lock, 'utf8');
    const r = hagent(s.worktree, ['apply', '-', '--lock-timeout', '0', '--json'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
    });
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'LOCKED');
    assert.is(r.json.error.holder.pid, live.pid);
    assert.match(r.json.error.hint, /wait for the apply command to finish/);
    assert.is(readFileSync(lock, 'utf8'), before);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  } finally {
    live.kill('SIGKILL');
  }
});

t(
  'an index.lock left by a git killed with its apply: the next apply completes it, lock gone',
  () => {
    const { s } = repoWithSession();
    const killed = hagent(s.worktree, ['apply', '-'], {
      input: updatePatch('a.txt', 'two', 'TWO'),
      env: killAtIndexWrite(),
    });
    assert.is(killed.status, -1, 'killed');
    const gitDir = git(s.worktree, 'rev-parse', '--absolute-git-dir');
    assert.ok(existsSync(path.join(gitDir, 'index.lock')), 'the killed git left its lock');
    const next = hagent(s.worktree, ['apply', '-', '--json'], {
      input: updatePatch('b.txt', 'bee', 'BEE'),
    });
    assert.is(next.status, 0, next.stdout + next.stderr);
    assert.is(next.json.recovery.command, 'apply');
    assert.not.ok(existsSync(path.join(gitDir, 'index.lock')));
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t.run();
