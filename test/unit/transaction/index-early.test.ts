/**
 * The transaction's `git update-index` is started with the run and fed at the index step
 * (git/objects.ts `openIndexUpdate`): git holds `index.lock` from the start, a refusal before
 * the index step leaves the index as it was and unlocked, and a kill of the process running
 * the transaction leaves no lock behind (git sees its input end and changes nothing), after
 * which recovery puts the files back.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  intentPath,
  recoverTransaction,
  runTransaction,
  type TransactionPlan,
} from '../../../src/transaction/index.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('transaction: the index update started early');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A repository and a plan that changes a.txt and moves refs/x/s (to a commit of any tree). */
function setUp(): { repo: string; common: string; plan: TransactionPlan } {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = git(repo, 'rev-parse', 'HEAD');
  const prior = git(repo, 'rev-parse', 'HEAD:a.txt');
  writeFileSync(path.join(repo, 'b.tmp'), 'A\n');
  const nextOid = git(repo, 'hash-object', '-w', 'b.tmp');
  const next = git(repo, 'commit-tree', 'HEAD^{tree}', '-p', head, '-m', 'next');
  git(repo, 'update-ref', 'refs/x/s', head);
  const file = { rel: 'a.txt', prior: { oid: prior, mode: '100644' } };
  const worktree = { path: repo, owner: 'session' as const };
  const plan: TransactionPlan = {
    ...{ kind: 'apply', session: 's', message: 'test', note: null, rollForward: false },
    worktrees: [
      {
        ...worktree,
        files: [{ ...file, next: { oid: nextOid, mode: '100644' } }],
        publish: { kind: 'bytes', writes: [change('a.txt', 'a\n', 'A\n')] },
      },
    ],
    refs: [{ ref: 'refs/x/s', old: head, new: next }],
  };
  return { repo, common: path.join(repo, '.git'), plan };
}

/** The staged write of `rel` from `from` to `to` (mode 644). */
function change(rel: string, from: string, to: string) {
  const mode = 0o644;
  return { rel, bytes: Buffer.from(to), mode, expected: Buffer.from(from), expectedMode: mode };
}

const writer = (repo: string) => ({
  cwd: repo,
  commonDir: path.join(repo, '.git'),
  gitDir: null,
  store: null,
});

async function until(what: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return what();
}

t(
  'git holds the index lock from the start; a refusal before the index step leaves it as it was',
  async () => {
    const { repo, common, plan } = setUp();
    const lock = path.join(common, 'index.lock');
    const index = readFileSync(path.join(common, 'index'));
    const mtime = statSync(path.join(common, 'index')).mtimeMs;
    let heldDuringStaging = false;
    const refused = await runTransaction(common, repo, plan, writer(repo), {
      staged: async () => {
        heldDuringStaging = await until(() => existsSync(lock));
        throw new Error('refused by the test');
      },
    }).then(
      () => null,
      (e: Error) => e.message,
    );
    assert.is(refused, 'refused by the test');
    assert.ok(heldDuringStaging, 'git took index.lock while the files were staged');
    assert.not.ok(existsSync(lock), 'no lock left');
    assert.equal(
      readFileSync(path.join(common, 'index')),
      index,
      'the index is byte for byte as before',
    );
    assert.is(statSync(path.join(common, 'index')).mtimeMs, mtime, 'and not rewritten');
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
    assert.not.ok(existsSync(intentPath(common, 's')));
  },
);

t('a run writes the entries through the early git', async () => {
  const { repo, common, plan } = setUp();
  await runTransaction(common, repo, plan, writer(repo));
  assert.is(
    git(repo, 'ls-files', '-s', 'a.txt').split(' ')[1],
    plan.worktrees[0]!.files[0]!.next!.oid,
  );
  assert.not.ok(existsSync(path.join(common, 'index.lock')));
});

t(
  'a kill -9 after the files were published leaves no index lock; recovery puts them back',
  async () => {
    const { repo, common, plan } = setUp();
    const index = readFileSync(path.join(common, 'index'));
    const planFile = path.join(repo, '.git', 'plan.json');
    writeFileSync(
      planFile,
      JSON.stringify(plan, (_k, v) => (v?.type === 'Buffer' ? { buffer: v.data } : v)),
    );
    // The child runs the transaction and stops for good once the files are published.
    const script = `
    import { readFileSync } from 'node:fs';
    import { runTransaction } from ${JSON.stringify(path.join(ROOT, 'src/transaction/index.ts'))};
    const plan = JSON.parse(readFileSync(process.argv[1], 'utf8'), (_k, v) =>
      v && Array.isArray(v.buffer) ? Buffer.from(v.buffer) : v);
    const repo = ${JSON.stringify(repo)};
    await runTransaction(repo + '/.git', repo, plan,
      { cwd: repo, commonDir: repo + '/.git', gitDir: null, store: null },
      { published: async () => { process.stdout.write('published\\n'); await new Promise(() => {}); } });
  `;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, planFile],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    assert.ok(
      await until(() => out.includes('published'), 30_000),
      'the child published the files',
    );
    assert.ok(
      existsSync(path.join(common, 'index.lock')),
      'git holds the lock, waiting for entries',
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    assert.ok(
      await until(() => !existsSync(path.join(common, 'index.lock'))),
      'the orphaned git saw its input end and removed its lock',
    );
    assert.equal(readFileSync(path.join(common, 'index')), index, 'and changed nothing');
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'A\n', 'published, not indexed');
    const r = await recoverTransaction(common, 's', repo, 'refs/x/s');
    assert.ok(r, 'recovered');
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n', 'put back');
    assert.not.ok(existsSync(intentPath(common, 's')));
  },
);

t.run();
