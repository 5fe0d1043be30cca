/**
 * Commits written in-process (git/commit-direct.ts) are the objects `git commit-tree` writes from
 * the same inputs (tree, parents, message, identity, dates), byte for byte (same id), whatever
 * the identity looks like; whatever the in-process path cannot reproduce is left to git, which
 * then makes the commit.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeCommit, writeCommitDirect } from '../../../src/git/commit-direct.js';
import { looseObjectStore, type LooseObjectStore } from '../../../src/git/loose.js';
import { git, makeRepo } from '../../helpers/index.js';

const t = suite('in-process commits');

/** Runs `fn` with the environment changed (undefined removes a variable), then puts it back. */
async function withEnv<T>(
  vars: Record<string, string | undefined>,
  fn: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

/** No fixed dates and no identity from the environment: the repository's config decides. */
const PLAIN = {
  GIT_AUTHOR_DATE: undefined,
  GIT_COMMITTER_DATE: undefined,
  GIT_AUTHOR_NAME: undefined,
  GIT_AUTHOR_EMAIL: undefined,
  GIT_COMMITTER_NAME: undefined,
  GIT_COMMITTER_EMAIL: undefined,
  EMAIL: undefined,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

interface Setup {
  repo: string;
  head: string;
  tree: string;
  store: LooseObjectStore;
}

/** A fresh repository (so no identity asked earlier in this process applies to it). */
async function setup(config: Record<string, string> = {}): Promise<Setup> {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'config', 'user.name', 'Ada Lovelace');
  git(repo, 'config', 'user.email', 'ada@example.com');
  for (const [k, v] of Object.entries(config)) git(repo, 'config', k, v);
  const head = git(repo, 'rev-parse', 'HEAD');
  const store = await looseObjectStore(path.join(repo, '.git'), head);
  assert.ok(store, 'a plain repository has a loose object store');
  return { repo, head, tree: git(repo, 'rev-parse', 'HEAD^{tree}'), store: store! };
}

/** `git commit-tree` in the current environment, with the dates of `author`/`committer` lines. */
function gitCommitTree(s: Setup, message: string, author: string, committer: string): string {
  const date = (line: string) => `@${line.split(' ').slice(-2).join(' ')}`;
  const r = spawnSync('git', ['commit-tree', s.tree, '-p', s.head], {
    cwd: s.repo,
    input: message,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_DATE: date(author), GIT_COMMITTER_DATE: date(committer) },
  });
  assert.is(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** The in-process commit of `message`, checked against git's commit of the same inputs. */
async function sameAsGit(s: Setup, message: string): Promise<{ author: string; oid: string }> {
  const ours = await writeCommitDirect(s.repo, s.store, s.tree, [s.head], message);
  if (ours.kind !== 'done') throw new Error(`in-process path refused: ${ours.reason}`);
  assert.is(gitCommitTree(s, message, ours.author, ours.committer), ours.oid);
  assert.is(git(s.repo, 'cat-file', '-t', ours.oid), 'commit');
  return ours;
}

t('a commit from the config identity is the one git writes', async () => {
  await withEnv(PLAIN, async () => {
    const s = await setup();
    const made = await sameAsGit(s, 'subject\n\nbody line\n');
    assert.match(made.author, /^Ada Lovelace <ada@example\.com> \d+ [+-]\d{4}$/);
    // Byte for byte: trailing spaces, blank lines and no final cleanup.
    await sameAsGit(s, 'subject  \n\n\n  indented\n\n');
  });
});

t('odd identities: unicode, spaces and crud git strips, set through the environment', async () => {
  const names = ['Zoë Ångström-山田', '  Spaced  Out  ', 'Dot. <Angle>', 'Ω'];
  for (const name of names) {
    await withEnv(
      { ...PLAIN, GIT_AUTHOR_NAME: name, GIT_COMMITTER_NAME: `${name} (c)`, EMAIL: 'e@x.org' },
      async () => {
        const s = await setup();
        await sameAsGit(s, `for ${name}\n`);
      },
    );
  }
});

t('dates fixed in the environment are written as git parses them', async () => {
  await withEnv(
    {
      ...PLAIN,
      GIT_AUTHOR_DATE: '2005-04-07T22:13:13+0200',
      GIT_COMMITTER_DATE: '@1700000000 -0330',
    },
    async () => {
      const s = await setup();
      const made = await sameAsGit(s, 'fixed dates\n');
      assert.match(made.author, / 1112904793 \+0200$/);
      // git's own commit with this environment, dates untouched, is the same object.
      const r = spawnSync('git', ['commit-tree', s.tree, '-p', s.head, '-m', 'fixed dates'], {
        cwd: s.repo,
        encoding: 'utf8',
      });
      assert.is(r.stdout.trim(), made.oid);
    },
  );
});

t('time zones: a named zone, a half-hour zone, and a rule string', async () => {
  for (const tz of ['Asia/Kolkata', 'America/St_Johns', 'UTC', ':Europe/Paris', 'IST-5:30']) {
    await withEnv({ ...PLAIN, TZ: tz }, async () => {
      const s = await setup();
      // Node may read a rule string differently from the C library: then git makes the commit.
      const made = await writeCommit(s.repo, '', null, s.store, s.tree, [s.head], `tz ${tz}\n`);
      assert.ok(made.author && made.committer, tz);
      assert.is(gitCommitTree(s, `tz ${tz}\n`, made.author!, made.committer!), made.oid, tz);
      if (tz !== 'IST-5:30') assert.ok(made.inProcess, `${tz} is read alike by Node and git`);
    });
  }
});

t('a .mailmap changes nothing: commit-tree does not read it', async () => {
  await withEnv(PLAIN, async () => {
    const s = await setup();
    writeFileSync(path.join(s.repo, '.mailmap'), 'Someone Else <else@x.org> <ada@example.com>\n');
    const made = await sameAsGit(s, 'mailmap\n');
    assert.match(made.author, /^Ada Lovelace <ada@example\.com>/);
  });
});

t('what git would write otherwise is left to git, which then makes the commit', async () => {
  await withEnv(PLAIN, async () => {
    const latin = await setup({ 'i18n.commitEncoding': 'ISO-8859-1' });
    const r = await writeCommitDirect(latin.repo, latin.store, latin.tree, [latin.head], 'x\n');
    assert.equal(r, { kind: 'askGit', reason: 'i18n.commitEncoding is ISO-8859-1' });
    const made = await writeCommit(
      latin.repo,
      '',
      null,
      latin.store,
      latin.tree,
      [latin.head],
      'x\n',
    );
    assert.not.ok(made.inProcess);
    assert.match(git(latin.repo, 'cat-file', '-p', made.oid), /^encoding ISO-8859-1$/m);

    const s = await setup();
    const odd = await writeCommitDirect(s.repo, s.store, s.tree, [s.head], 'x\uFFFE\n');
    assert.is(odd.kind, 'askGit');
    const short = await writeCommitDirect(s.repo, s.store, 'abc', [s.head], 'x\n');
    assert.is(short.kind, 'askGit');
  });
});

t('no identity known to git: git makes the commit (with its fallback identity)', async () => {
  await withEnv({ ...PLAIN, HOME: '/nonexistent' }, async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    git(repo, 'config', 'user.useConfigOnly', 'true');
    const head = git(repo, 'rev-parse', 'HEAD');
    const store = (await looseObjectStore(path.join(repo, '.git'), head))!;
    const tree = git(repo, 'rev-parse', 'HEAD^{tree}');
    const r = await writeCommitDirect(repo, store, tree, [head], 'x\n');
    assert.is(r.kind, 'askGit');
    const made = await writeCommit(repo, '', null, store, tree, [head], 'x\n');
    assert.not.ok(made.inProcess);
    assert.match(made.author ?? '', /^hagent <hagent@localhost>/);
  });
});

t.run();
