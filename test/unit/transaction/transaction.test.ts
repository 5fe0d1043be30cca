/**
 * The one transaction (transaction/run.ts) and its one recovery (transaction/recover.ts) on real
 * git repositories: the pure pieces (the ref transaction's input, the record of a plan), a run
 * that moves every ref at once or none, and recovery of a record left at each point a kill can
 * leave it: nothing published, files published, refs moved.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  failedRefOf,
  moveRefs,
  refTransactionInput,
  writeNoteCommit,
} from '../../../src/git/index.js';
import {
  intentPath,
  readIntent,
  recordOf,
  recoverTransaction,
  runTransaction,
  writeIntent,
  type TransactionPlan,
} from '../../../src/transaction/index.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('transaction');

/** The error `p` rejects with (fails when it resolves). */
async function rejection(
  p: Promise<unknown>,
): Promise<{ code?: string; details?: { ref?: string } }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string };
  }
  throw new Error('expected a rejection');
}

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

t('the ref transaction input names every old value, with start, prepare and commit', () => {
  const input = refTransactionInput([
    { ref: 'refs/x/u', old: A, new: B },
    { ref: 'refs/x/c', old: null, new: B },
    { ref: 'refs/x/d', old: A, new: null },
    { ref: 'refs/x/n', old: null, new: A, unchecked: true },
  ]);
  assert.equal(input.split('\0'), [
    'start',
    'update refs/x/u',
    B,
    A,
    'create refs/x/c',
    B,
    'delete refs/x/d',
    A,
    'update refs/x/n',
    A,
    '',
    'prepare',
    'commit',
    '',
  ]);
});

t('failedRefOf reads the ref git names when a compare-and-swap fails', () => {
  assert.is(
    failedRefOf("fatal: cannot lock ref 'refs/heads/x': is at 1 but expected 2\n"),
    'refs/heads/x',
  );
  assert.is(failedRefOf('fatal: something else'), null);
});

t('moveRefs moves all refs or none: one stale old value leaves every ref as it was', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'update-ref', 'refs/x/one', head);
  const e = await rejection(
    moveRefs(
      repo,
      [
        { ref: 'refs/x/two', old: null, new: head },
        { ref: 'refs/x/one', old: B, new: null },
      ],
      'test',
    ),
  );
  assert.is(e.code, 'TARGET_MOVED');
  assert.is(e.details?.ref, 'refs/x/one');
  assert.is(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/x/'), 'refs/x/one');
  await moveRefs(
    repo,
    [
      { ref: 'refs/x/two', old: null, new: head },
      { ref: 'refs/x/one', old: head, new: null },
    ],
    'test',
  );
  assert.is(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/x/'), 'refs/x/two');
});

t('a note commit is written unreferenced and read by git once its ref points at it', async () => {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  const common = path.join(repo, '.git');
  const w = { cwd: repo, commonDir: common, gitDir: null, store: null };
  const first = await writeNoteCommit(w, null, head, 'the patch  \n\n');
  assert.is(git(repo, 'for-each-ref', 'refs/notes/'), '', 'no ref moved');
  git(repo, 'update-ref', 'refs/notes/hagent-sessions/s', first);
  const blob = git(repo, 'notes', '--ref=hagent-sessions/s', 'list', head);
  assert.is(git(repo, 'cat-file', '-s', blob), String('the patch  \n\n'.length));
  const second = await writeNoteCommit(w, first, head, 'replaced\n');
  git(repo, 'update-ref', 'refs/notes/hagent-sessions/s', second);
  assert.is(git(repo, 'notes', '--ref=hagent-sessions/s', 'show', head), 'replaced');
  assert.is(git(repo, 'rev-parse', `${second}^`), first);
});

/** A repository, a second commit with a.txt changed, and a plan that moves refs/x/s to it. */
function planned(): {
  repo: string;
  common: string;
  head: string;
  next: string;
  plan: TransactionPlan;
} {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const common = path.join(repo, '.git');
  const head = git(repo, 'rev-parse', 'HEAD');
  const priorOid = git(repo, 'rev-parse', 'HEAD:a.txt');
  writeFileSync(path.join(repo, 'new.txt'), 'A\n');
  const nextOid = git(repo, 'hash-object', '-w', 'new.txt');
  git(repo, 'update-index', '--cacheinfo', `100644,${nextOid},a.txt`);
  const tree = git(repo, 'write-tree');
  git(repo, 'update-index', '--cacheinfo', `100644,${priorOid},a.txt`);
  const next = git(repo, 'commit-tree', tree, '-p', head, '-m', 'next');
  git(repo, 'update-ref', 'refs/x/s', head);
  const files = [
    {
      rel: 'a.txt',
      prior: { oid: priorOid, mode: '100644' },
      next: { oid: nextOid, mode: '100644' },
    },
  ];
  return {
    repo,
    common,
    head,
    next,
    plan: {
      kind: 'apply',
      session: 's',
      message: 'test',
      worktrees: [
        {
          path: repo,
          owner: 'session',
          files,
          publish: {
            kind: 'bytes',
            writes: [
              {
                rel: 'a.txt',
                bytes: Buffer.from('A\n'),
                mode: 0o644,
                expected: Buffer.from('a\n'),
                expectedMode: 0o644,
              },
            ],
          },
        },
      ],
      refs: [{ ref: 'refs/x/s', old: head, new: next }],
      note: null,
      rollForward: true,
    },
  };
}

const writer = (repo: string) => ({
  cwd: repo,
  commonDir: path.join(repo, '.git'),
  gitDir: null,
  store: null,
});

t('a run publishes the files, the index and the refs, and leaves no record', async () => {
  const { repo, common, next, plan } = planned();
  await runTransaction(common, repo, plan, writer(repo));
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'A\n');
  assert.is(git(repo, 'rev-parse', 'refs/x/s'), next);
  assert.is(
    git(repo, 'ls-files', '-s', 'a.txt').split(' ')[1],
    git(repo, 'rev-parse', `${next}:a.txt`),
  );
  assert.not.ok(existsSync(intentPath(common, 's')));
});

t('a run whose ref compare-and-swap fails puts the file and the index back', async () => {
  const { repo, common, head, plan } = planned();
  const indexBefore = git(repo, 'ls-files', '-s');
  plan.refs = [{ ref: 'refs/x/s', old: B, new: head }];
  assert.is(
    (await rejection(runTransaction(common, repo, plan, writer(repo)))).code,
    'TARGET_MOVED',
  );
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
  assert.is(git(repo, 'ls-files', '-s'), indexBefore);
  assert.not.ok(existsSync(intentPath(common, 's')));
});

t('the record of a plan has one schema, read back as written', async () => {
  const { common, plan } = planned();
  const record = recordOf(plan, 'tx1', new Date(0));
  assert.is(record.version, 2);
  assert.is(record.kind, 'apply');
  await writeIntent(common, record);
  const read = await readIntent(common, 's');
  assert.equal(read, { record, pending: null });
});

t('recovery of a record whose refs moved completes it (index settled)', async () => {
  const { repo, common, head, next, plan } = planned();
  await writeIntent(common, recordOf(plan, 'tx2', new Date()));
  writeFileSync(path.join(repo, 'a.txt'), 'A\n');
  git(repo, 'update-ref', 'refs/x/s', next, head);
  const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
  assert.is(r?.action, 'completed');
  assert.is(r?.commit, next);
  assert.is(
    git(repo, 'ls-files', '-s', 'a.txt').split(' ')[1],
    git(repo, 'rev-parse', `${next}:a.txt`),
  );
  assert.not.ok(existsSync(intentPath(common, 's')));
});

t(
  'recovery with every file written and no ref moved rolls forward when the record allows',
  async () => {
    const { repo, common, next, plan } = planned();
    await writeIntent(common, recordOf(plan, 'tx3', new Date()));
    writeFileSync(path.join(repo, 'a.txt'), 'A\n');
    const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
    assert.is(r?.action, 'completed');
    assert.is(git(repo, 'rev-parse', 'refs/x/s'), next);
  },
);

t('recovery that may not roll forward puts the written file back', async () => {
  const { repo, common, head, plan } = planned();
  await writeIntent(common, recordOf({ ...plan, rollForward: false }, 'tx4', new Date()));
  writeFileSync(path.join(repo, 'a.txt'), 'A\n');
  const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
  assert.is(r?.action, 'restored');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
  assert.is(git(repo, 'rev-parse', 'refs/x/s'), head);
});

t('recovery never overwrites a file someone else changed since: it is reported', async () => {
  const { repo, common, plan } = planned();
  await writeIntent(common, recordOf({ ...plan, rollForward: false }, 'tx5', new Date()));
  writeFileSync(path.join(repo, 'a.txt'), 'theirs\n');
  const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
  assert.is(r?.action, 'restored');
  assert.equal(r?.outside, ['a.txt']);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'theirs\n');
});

t('recovery after someone else moved a session ref touches nothing and is refused', async () => {
  const { repo, common, plan } = planned();
  plan.session = 'x';
  plan.refs = [{ ...plan.refs[0]!, ref: 'refs/hagent/x/r' }];
  git(repo, 'update-ref', 'refs/hagent/x/r', plan.refs[0]!.old!);
  await writeIntent(common, recordOf(plan, 'tx6', new Date()));
  writeFileSync(path.join(repo, 'a.txt'), 'A\n');
  git(repo, 'update-ref', 'refs/hagent/x/r', git(repo, 'commit-tree', 'HEAD^{tree}', '-m', 'o'));
  const e = await rejection(recoverTransaction(common, 'x', repo, 'refs/hagent/x/r'));
  assert.is(e.code, 'STALE_FILE');
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'A\n');
  assert.ok(existsSync(intentPath(common, 'x')), 'the record is kept for the user');
});

t(
  'recovery after the user moved their own branch touches nothing and ends the record',
  async () => {
    const { repo, common, plan } = planned();
    await writeIntent(common, recordOf(plan, 'tx7', new Date()));
    writeFileSync(path.join(repo, 'a.txt'), 'A\n');
    git(repo, 'update-ref', 'refs/x/s', git(repo, 'commit-tree', 'HEAD^{tree}', '-m', 'other'));
    const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
    assert.is(r?.action, 'kept');
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'A\n');
    assert.not.ok(existsSync(intentPath(common, 's')));
  },
);

t.run();
