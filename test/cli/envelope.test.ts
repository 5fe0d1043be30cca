/**
 * The safety envelope through the real CLI: sync, doctor, the journal (hagent log), user hooks,
 * --base compare-and-swap, the lock, and the watcher flag.
 */
import {
  chmodSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BIN,
  GIT_ENV,
  git,
  hagent,
  makeRepo,
  startSession,
  tempDir,
  writeFiles,
  writeIntentRecord,
} from '../helpers/index.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('safety envelope');
const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

t('sync adopts outside edits as one commit marked outside; undo takes it back', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const s = startSession(repo);
  writeFiles(s.worktree, { 'a.txt': 'hand edit\n', 'new.txt': 'new\n' });
  const blocked = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') });
  assert.is(blocked.json.error.code, 'STALE_FILE');
  const r = hagent(s.worktree, ['sync', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [
    { path: 'a.txt', status: 'M' },
    { path: 'new.txt', status: 'A' },
  ]);
  assert.match(git(repo, 'log', '-1', '--format=%B', s.branch), /Hagent-Outside: true/);
  assert.is(hagent(s.worktree, ['session', 'status', '--json']).json.outsideEdits.length, 0);
  assert.is(hagent(s.worktree, ['sync', '--json']).json.commit, null, 'nothing left to adopt');
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'hand edit', 'A') }).status,
    0,
  );
  assert.is(hagent(s.worktree, ['undo', '2', '--json']).status, 0);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  assert.not.ok(existsSync(path.join(s.worktree, 'new.txt')));
});

t('sync leaves out what the path policy denies, and reports it', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  writeFiles(s.worktree, {
    '.env.production': 'SECRET=1\n',
    'server.pem': 'key\n',
    'ok.txt': 'fine\n',
  });
  const r = hagent(s.worktree, ['sync', '--json']);
  assert.is(r.status, 0, r.stdout);
  assert.equal(r.json.files, [{ path: 'ok.txt', status: 'A' }]);
  assert.equal(r.json.skipped.map((k: { path: string }) => k.path).sort(), [
    '.env.production',
    'server.pem',
  ]);
  assert.is(
    git(repo, 'ls-tree', '--name-only', s.branch, '--', '.env.production', 'server.pem'),
    '',
  );
});

t('the journal records applied and blocked attempts with their hints', () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const s = startSession(repo);
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'a', 'A') });
  hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'zzz', 'Q') });
  const all = hagent(repo, ['log', '--json']);
  assert.is(all.status, 0);
  const entries = all.json.entries;
  assert.is(entries.length, 2);
  assert.is(entries[0].ok, true);
  assert.equal(entries[0].files, ['a.txt']);
  assert.is(entries[1].ok, false);
  assert.is(entries[1].code, 'CONTEXT_NOT_FOUND');
  assert.ok(entries[1].hint);
  const failed = hagent(repo, ['log', '--failed']);
  assert.match(failed.stdout, /blocked/);
  assert.match(failed.stdout, /CONTEXT_NOT_FOUND/);
  assert.not.match(failed.stdout, /^applied/m);
});

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
  const no = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'secret') });
  assert.is(no.status, 1);
  assert.is(no.json.error.code, 'HOOK_REJECTED');
  assert.is(no.json.error.hint, 'no secrets please');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'a\n');
  const yes = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'fine') });
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
  assert.is(hagent(s.worktree, ['apply', '-'], { input: upd('a.txt', 'a', 'A') }).status, 0);
  const stale = hagent(s.worktree, ['apply', '-', '--json', '--base', base], {
    input: upd('a.txt', 'A', 'AA'),
  });
  assert.is(stale.json.error.code, 'STALE_FILE');
  const other = hagent(s.worktree, ['apply', '-', '--json', '--base', base], {
    input: upd('b.txt', 'b', 'B'),
  });
  assert.is(other.status, 0, 'a target unchanged since --base applies');
  const head = git(repo, 'rev-parse', s.branch);
  assert.is(
    hagent(s.worktree, ['apply', '-', '--json', '--base', head], { input: upd('a.txt', 'A', 'AA') })
      .status,
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
    slow.stdin.end(upd('a.txt', 'a', 'A'));
    await new Promise((r) => setTimeout(r, 1200));
    const r = hagent(s.worktree, ['apply', '-', '--json', '--lock-timeout', '0.5'], {
      input: upd('a.txt', 'a', 'B'),
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
    input: upd('a.txt', 'a', 'A'),
  });
  assert.is(r.json.watched, false);
  const w = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'A', 'B') });
  assert.is(w.json.watched, true);
});

t(
  'an interrupted apply is finished by the next command, and doctor removes stray temp files',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'dr']);
    const head = git(repo, 'rev-parse', s.branch);
    // The state a kill -9 between publish and commit leaves: the file written, the intent recorded.
    writeFileSync(path.join(s.worktree, 'a.txt'), 'A\n');
    const newOid = git(s.worktree, 'hash-object', '-w', 'a.txt');
    const oldOid = git(repo, 'rev-parse', `${head}:a.txt`);
    writeIntentRecord(repo, 'dr', {
      txid: 'x',
      targets: [{ rel: 'a.txt', prior: oldOid, next: newOid }],
    });
    writeFiles(s.worktree, { 'sub/.x.txt.hagent-dead-1.tmp': 'leftover\n' });
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stdout + d.stderr);
    assert.is(d.json.recoveries[0].action, 'completed');
    assert.is(git(repo, 'show', `${s.branch}:a.txt`), 'A');
    assert.ok(d.json.findings.some((f: { kind: string }) => f.kind === 'stray-temp-files'));
    assert.not.ok(existsSync(path.join(s.worktree, 'sub/.x.txt.hagent-dead-1.tmp')));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.is(hagent(repo, ['doctor', '--json']).json.findings.length, 0, 'all well afterwards');
  },
);

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
      input: upd('a.txt', 'A', 'AA'),
    });
    assert.ok(existsSync(lock), 'an index.lock older than the transaction is left alone');
    assert.is(refused.status, 1, refused.stdout);
    assert.match(refused.json.error.message, /index\.lock|update-index/);
    assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'A\n');
    // Ones made during the transaction (the killed apply's git update-index and update-ref) are cleared.
    utimesSync(lock, new Date(), new Date());
    const refLock = path.join(common, 'refs', 'heads', 'hagent', 'lk.lock');
    writeFileSync(refLock, '');
    const r = hagent(s.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'A', 'AA') });
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

t.run();
