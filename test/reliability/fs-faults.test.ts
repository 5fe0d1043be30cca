/**
 * File-system faults injected into one apply, undo, redo or land (fsx's FileSystem scope): a
 * full disk, a failing device, a folder without write permission, an immutable file, a
 * read-only file system, a rename across file systems, failing fsyncs, short writes. Each is
 * refused as IO_FAILED with its errno and a hint that works: the repository and worktree are
 * exactly as before (bytes, modes, indexes, refs, hagent's records), nothing is left behind,
 * and the same command succeeds once the fault is gone. No root, nothing skipped.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FaultyFileSystem, MUTATING, type FaultRule } from '../helpers/faultfs.js';
import {
  assertRefusedCleanly,
  assertWorktreeAtHead,
  commands,
  fixture,
  underFaults,
  type Fixture,
} from '../helpers/faultfs-fixture.js';
import { git, writeIntentRecord } from '../helpers/index.js';

const t = suite('file-system faults');

/** Which calls fail; each test names the errno they fail with. */
type Rule = Omit<FaultRule, 'errno'>;

const TMP = /\.hagent-[0-9a-z-]+\.tmp$/;
const INTENT = /\/hagent\/tx\/[^/]+\.json/;

/** The patch is in, whole: every change of PATCH on disk and in the head, modes kept. */
function assertApplied(fx: Fixture, label: string): void {
  assertWorktreeAtHead(fx, label);
  const read = (p: string) => readFileSync(path.join(fx.worktree, p), 'utf8');
  assert.is(read('a.txt'), 'one\nTWO\nthree\n', label);
  assert.is(read('run.sh'), '#!/bin/sh\necho hello\n', label);
  assert.ok(statSync(path.join(fx.worktree, 'run.sh')).mode & 0o100, `${label}: run.sh lost +x`);
  assert.is(read('new/deep/n.txt'), 'new\n', label);
  assert.is(read('moved/b.txt'), 'wasp\n', label);
  assert.is(git(fx.worktree, 'ls-files', 'gone.txt', 'dir'), '', label);
}

const applyFaults: [string, string, Rule[], { shortWrites?: number }?][] = [
  [
    'a full disk while a staged file is written',
    'ENOSPC',
    [{ op: /^handle\.write$/, path: TMP, nth: 2 }],
  ],
  [
    'a full disk while the intent record is written',
    'ENOSPC',
    [{ op: /^writeSync$/, path: INTENT }],
  ],
  [
    'a disk filling up after short writes',
    'ENOSPC',
    [{ op: /^handle\.write$/, nth: 5 }],
    { shortWrites: 2 },
  ],
  ['a failing fsync of a staged file', 'EIO', [{ op: /^handle\.sync$/, path: TMP, nth: 3 }]],
  ['a failing fsync of the intent record', 'EIO', [{ op: /^handle\.sync$/, path: INTENT }]],
  ['a failing close of a staged file', 'EIO', [{ op: /^handle\.close$/, path: TMP }]],
  ['a device error reading a target', 'EIO', [{ op: /^readFile(Sync)?$/, path: /\/a\.txt$/ }]],
  [
    'a device error on lstat while checking for symlinks',
    'EIO',
    [{ op: /^lstatSync$/, path: /\/moved$/ }],
  ],
  [
    'a folder without write permission for the staged file',
    'EACCES',
    [{ op: /^open$/, path: TMP, nth: 2 }],
  ],
  [
    'permission denied creating a new folder',
    'EACCES',
    [{ op: /^mkdir$/, path: /\/new$|\/new\/deep$/ }],
  ],
  [
    'an immutable target, after other targets were published',
    'EPERM',
    [{ op: /^rename$/, nth: 3 }],
  ],
  ['an immutable file to delete (the first publish step)', 'EPERM', [{ op: /^rename$/, nth: 1 }]],
  ['a read-only file system when the new file is linked in', 'EROFS', [{ op: /^link$/, nth: 2 }]],
  ['a rename across file systems', 'EXDEV', [{ op: /^rename$/, nth: 2 }]],
  ['a failing removal of a staged file once published', 'EIO', [{ op: /^rm$/, path: TMP, nth: 2 }]],
];

for (const [what, errno, rules, options] of applyFaults) {
  t(`apply: ${what} is refused as IO_FAILED ${errno}, everything as before`, async () => {
    const fx = await fixture();
    await assertRefusedCleanly(fx, what, rules, errno, () => commands.apply(fx), options);
    await commands.apply(fx);
    assertApplied(fx, `${what}: the apply after the fault`);
  });
}

t('apply: short writes (one byte at a time) are written whole', async () => {
  const fx = await fixture();
  const fs = new FaultyFileSystem([], { shortWrites: 1, skipSyncs: true });
  const out = await underFaults(fs, () => commands.apply(fx));
  assert.equal(out, { kind: 'ok' });
  assert.ok(fs.calls.filter((c) => c.op === 'handle.write').length > 20, 'writes were short');
  assertApplied(fx, 'short writes');
});

t(
  'apply: a folder a move emptied that cannot be removed stays, empty; the apply is done',
  async () => {
    const fx = await fixture();
    const fs = new FaultyFileSystem([{ op: /^rmdir$/, path: /\/dir$/, errno: 'EBUSY' }], {
      skipSyncs: true,
    });
    assert.equal(await underFaults(fs, () => commands.apply(fx)), { kind: 'ok' });
    assert.ok(fs.failed.length > 0, 'the rmdir was refused');
    assertApplied(fx, 'rmdir refused');
    assert.ok(statSync(path.join(fx.worktree, 'dir')).isDirectory(), 'git does not track folders');
  },
);

t('apply: a folder that refuses fsync is passed over (its renames are atomic anyway)', async () => {
  const fx = await fixture();
  const folder = new RegExp(`^${fx.worktree}(/new/deep|/moved)?$`);
  const fs = new FaultyFileSystem([{ op: /^handle\.sync$/, path: folder, errno: 'EINVAL' }]);
  assert.equal(await underFaults(fs, () => commands.apply(fx)), { kind: 'ok' });
  assert.ok(fs.failed.length > 0, 'a folder fsync was refused');
  assertApplied(fx, 'folder fsync refused');
});

t('undo and redo: faults in their reads and intent records are refused cleanly', async () => {
  const fx = await fixture();
  await commands.apply(fx);
  const cases: [string, string, Rule[]][] = [
    ['a full disk writing the intent record', 'ENOSPC', [{ op: /^writeSync$/, path: INTENT }]],
    ['a failing fsync of the intent record', 'EIO', [{ op: /^fsyncSync$/, path: INTENT }]],
    ['a rename across file systems', 'EXDEV', [{ op: /^renameSync$/, path: INTENT }]],
    [
      'a device error reading a file to check it',
      'EIO',
      [{ op: /^readFile(Sync)?$/, path: /\/a\.txt$/ }],
    ],
    ['a read-only file system', 'EROFS', [{ op: MUTATING }]],
  ];
  for (const [what, errno, rules] of cases) {
    await assertRefusedCleanly(fx, `undo: ${what}`, rules, errno, () => commands.undo(fx));
    await commands.undo(fx);
    assertWorktreeAtHead(fx, `undo after ${what}`);
    assert.is(readFileSync(path.join(fx.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
    await assertRefusedCleanly(fx, `redo: ${what}`, rules, errno, () => commands.redo(fx));
    await commands.redo(fx);
    assertApplied(fx, `redo after ${what}`);
  }
});

const SESSION_RECORD = /\/hagent\/sessions\/[^/]+\.json/;
const landFaults: [string, string, Rule[]][] = [
  [
    "a full disk writing the land's transaction record",
    'ENOSPC',
    [{ op: /^writeSync$/, path: /\/hagent\/tx\// }],
  ],
  [
    "a failing rename of the land's transaction record",
    'EIO',
    [{ op: /^renameSync$/, path: /\/hagent\/tx\// }],
  ],
  ['a read-only git folder', 'EROFS', [{ op: MUTATING, path: /\/\.git\// }]],
];

for (const [what, errno, rules] of landFaults) {
  t(`land: ${what} is refused as IO_FAILED ${errno}, target and checkout as before`, async () => {
    const fx = await fixture();
    await commands.apply(fx);
    await assertRefusedCleanly(fx, what, rules, errno, () => commands.land(fx));
    await commands.land(fx);
    assert.is(readFileSync(path.join(fx.repo, 'moved/b.txt'), 'utf8'), 'wasp\n');
    assert.is(git(fx.repo, 'status', '--porcelain', '--untracked-files=all'), '');
  });
}

// readIntent (transaction/record.ts) takes only bytes that are not a record for damage: a record
// it cannot read now (EIO) is kept, and the command refused, so what a killed apply left to
// finish or undo is not thrown away.
t('an intent record that cannot be read (EIO) is kept, and the command refused', async () => {
  const fx = await fixture();
  const oid = git(fx.repo, 'rev-parse', `hagent/${fx.id}:a.txt`);
  writeIntentRecord(fx.repo, fx.id, {
    txid: 'killed-1',
    pid: 999_999,
    targets: [{ rel: 'a.txt', prior: oid, next: oid }],
  });
  const intent = path.join(fx.ctx.commonDir, 'hagent', 'tx', `${fx.id}.json`);
  const fs = new FaultyFileSystem([{ op: /^readFile$/, path: INTENT, errno: 'EIO', nth: 1 }], {
    skipSyncs: true,
  });
  const out = await underFaults(fs, () => commands.apply(fx));
  assert.is(out.kind, 'refused', JSON.stringify(out));
  if (out.kind === 'refused') assert.is(out.code, 'IO_FAILED');
  assert.ok(existsSync(intent), 'the record is kept');
});

t.run();
