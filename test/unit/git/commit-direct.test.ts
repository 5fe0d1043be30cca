/**
 * Commits written in-process (git/commit-direct.ts) are the objects `git commit-tree` writes in
 * the same second, byte for byte (same id), with the identity git last gave hagent; any change to
 * what that identity depends on sends the commit back to git.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, userInfo } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  commitIdentityKey,
  recordCommitIdentity,
  timezoneOffset,
  writeCommitDirect,
} from '../../../src/git/commit-direct.js';
import { commitTree } from '../../../src/git/plumbing.js';
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

/** git makes a commit and its identity is recorded, as writeCommit does on its git path. */
async function viaGit(
  repo: string,
  common: string,
  store: LooseObjectStore,
  tree: string,
  head: string,
  message: string,
): Promise<string> {
  const keyBefore = commitIdentityKey(common, common);
  const oid = await commitTree(repo, tree, [head], message);
  recordCommitIdentity(common, common, store, oid, keyBefore);
  return oid;
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

function setup(): { repo: string; common: string; head: string; tree: string } {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'config', 'user.name', 'Ada Lovelace');
  git(repo, 'config', 'user.email', 'ada@example.com');
  return {
    repo,
    common: path.join(repo, '.git'),
    head: git(repo, 'rev-parse', 'HEAD'),
    tree: git(repo, 'rev-parse', 'HEAD^{tree}'),
  };
}

/** git's commit and the in-process one, made in the same second (retried across a second's turn). */
async function bothInOneSecond(
  repo: string,
  common: string,
  store: LooseObjectStore,
  tree: string,
  head: string,
  message: string,
): Promise<{ theirs: string; ours: string | null }> {
  for (;;) {
    const second = Math.floor(Date.now() / 1000);
    const theirs = await commitTree(repo, tree, [head], message);
    const ours = await writeCommitDirect(common, common, store, tree, [head], message);
    if (Math.floor(Date.now() / 1000) === second) return { theirs, ours: ours?.oid ?? null };
  }
}

t(
  'after git made one commit, the next ones are written in-process, byte for byte what git writes',
  () =>
    withEnv(PLAIN, async () => {
      const { repo, common, head, tree } = setup();
      const store = (await looseObjectStore(common, head))!;
      assert.is(
        await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
        null,
        'nothing recorded yet: git writes it',
      );
      await viaGit(repo, common, store, tree, head, 'first\n');
      const message = 'hagent: M a.txt\n\nbody  with  spaces \n\nHagent-Session: s1\n';
      const { theirs, ours } = await bothInOneSecond(repo, common, store, tree, head, message);
      assert.is(ours, theirs);
      assert.is(
        git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', ours!),
        'Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>',
      );
      git(repo, 'fsck', '--strict', '--no-dangling');
    }),
);

t('a changed user.email, identity variable or config file sends the commit back to git', () =>
  withEnv(PLAIN, async () => {
    const { repo, common, head, tree } = setup();
    const store = (await looseObjectStore(common, head))!;
    await viaGit(repo, common, store, tree, head, 'first\n');
    assert.ok(await writeCommitDirect(common, common, store, tree, [head], 'm\n'));
    git(repo, 'config', 'user.email', 'ada@analytical.engine');
    assert.is(
      await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
      null,
      'repository config changed',
    );
    await viaGit(repo, common, store, tree, head, 'again\n');
    const made = await writeCommitDirect(common, common, store, tree, [head], 'm\n');
    assert.ok(made);
    assert.match(made!.author, /^Ada Lovelace <ada@analytical\.engine> \d+ [+-]\d{4}$/);
    await withEnv({ GIT_AUTHOR_NAME: 'Someone Else' }, async () => {
      assert.is(
        await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
        null,
        'an identity variable changed',
      );
    });
    await withEnv({ GIT_COMMITTER_DATE: '@1700000000 +0000' }, async () => {
      assert.is(commitIdentityKey(common, common), null);
      assert.is(
        await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
        null,
        'a fixed date: git writes it',
      );
    });
    const global = path.join(repo, 'global.gitconfig');
    writeFileSync(global, '[user]\n\tname = Global Name\n');
    await withEnv({ GIT_CONFIG_GLOBAL: global }, async () => {
      assert.is(
        await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
        null,
        'another global file',
      );
    });
    assert.ok(
      await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
      'back to the recorded setting',
    );
  }),
);

t('an include, an encoding header or a signature is never recorded', () =>
  withEnv(PLAIN, async () => {
    const { repo, common, head, tree } = setup();
    const store = (await looseObjectStore(common, head))!;
    appendFileSync(
      path.join(common, 'config'),
      `[include]\n\tpath = ${path.join(repo, 'none.gitconfig')}\n`,
    );
    assert.is(commitIdentityKey(common, common), null);
    await viaGit(repo, common, store, tree, head, 'first\n');
    git(repo, 'config', '--unset', 'include.path');
    assert.is(
      await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
      null,
      'nothing was recorded under the include',
    );
    git(repo, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
    const latin = await viaGit(repo, common, store, tree, head, 'latin\n');
    assert.match(git(repo, 'cat-file', 'commit', latin), /^encoding ISO-8859-1$/m);
    assert.is(
      await writeCommitDirect(common, common, store, tree, [head], 'm\n'),
      null,
      'a commit with an encoding header is not a model',
    );
  }),
);

t(
  'the time zone offset is the one git writes, half hours and negative offsets included',
  async () => {
    for (const tz of [
      'UTC',
      'Asia/Kolkata',
      'America/St_Johns',
      'Europe/Paris',
      'Pacific/Chatham',
    ]) {
      await withEnv({ ...PLAIN, TZ: tz }, async () => {
        const { repo, common, head, tree } = setup();
        const store = (await looseObjectStore(common, head))!;
        await viaGit(repo, common, store, tree, head, 'first\n');
        const { theirs, ours } = await bothInOneSecond(
          repo,
          common,
          store,
          tree,
          head,
          `in ${tz}\n`,
        );
        assert.is(ours, theirs, tz);
      });
    }
    await withEnv({ TZ: 'Asia/Kolkata' }, async () =>
      assert.is(timezoneOffset(1767225600), '+0530'),
    );
    await withEnv({ TZ: 'America/St_Johns' }, async () =>
      assert.is(timezoneOffset(1767225600), '-0330'),
    );
  },
);

t(
  'found by a hostile test: a TZ rule string, a relative config path, a config edited under git or with its mtime put back, a noncharacter',
  () =>
    withEnv(PLAIN, async () => {
      const { repo, common, head, tree } = setup();
      const store = (await looseObjectStore(common, head))!;
      // TZ rule strings: Node reads them as UTC, the C library does not.
      // An absolute path or posixrules: ICU falls back to a fixed offset, right today, wrong in summer.
      for (const tz of [
        'IST-5:30',
        'CET-1CEST,M3.5.0,M10.5.0/3',
        'GMT0BST,M3.5.0/1,M10.5.0',
        'JST-9',
        '/usr/share/zoneinfo/Europe/Paris',
        ':/usr/share/zoneinfo/Europe/Paris',
        'posixrules',
        'Foo/Bar',
      ]) {
        await withEnv({ TZ: tz }, async () =>
          assert.is(commitIdentityKey(common, common), null, tz),
        );
      }
      for (const tz of ['Europe/Paris', ':Asia/Kolkata', 'America/St_Johns', 'EST5EDT']) {
        await withEnv({ TZ: tz }, async () => assert.ok(commitIdentityKey(common, common), tz));
      }
      await withEnv({ GIT_CONFIG_GLOBAL: 'relative.gitconfig' }, async () =>
        assert.is(
          commitIdentityKey(common, common),
          null,
          "a relative path is read from git's folder",
        ),
      );
      await withEnv({ HOME: '' }, async () =>
        assert.is(commitIdentityKey(common, common), null, 'an empty HOME: git reads /.gitconfig'),
      );
      // A config change while git makes the commit: the identity git wrote is not recorded.
      const keyBefore = commitIdentityKey(common, common);
      git(repo, 'config', 'user.name', 'Changed Meanwhile');
      recordCommitIdentity(
        common,
        common,
        store,
        await commitTree(repo, tree, [head], 'raced\n'),
        keyBefore,
      );
      assert.is(await writeCommitDirect(common, common, store, tree, [head], 'm\n'), null);
      await viaGit(repo, common, store, tree, head, 'settled\n');
      assert.ok(await writeCommitDirect(common, common, store, tree, [head], 'm\n'));
      // The same size, the mtime put back: the ctime still tells.
      const config = path.join(common, 'config');
      const key = commitIdentityKey(common, common);
      const { mtime } = statSync(config);
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace('Changed Meanwhile', 'Changed Otherwise'),
      );
      utimesSync(config, mtime, mtime);
      assert.is.not(commitIdentityKey(common, common), key);
      assert.is(await writeCommitDirect(common, common, store, tree, [head], 'm\n'), null);
      // git re-encodes a message with a noncharacter: it writes that commit itself.
      await viaGit(repo, common, store, tree, head, 'again\n');
      assert.ok(
        await writeCommitDirect(common, common, store, tree, [head], 'fine \u00e9\u{1F600}\n'),
      );
      for (const bad of ['\uFFFE', '\uFDD0', '\u{10FFFF}', '\0'])
        assert.is(
          await writeCommitDirect(common, common, store, tree, [head], `msg ${bad}\n`),
          null,
          JSON.stringify(bad),
        );
      // An email git made up from the user and host names (its domain may come from DNS): never recorded.
      git(repo, 'config', 'user.email', `${userInfo().username}@${hostname()}.example`);
      await viaGit(repo, common, store, tree, head, 'made-up email\n');
      assert.is(await writeCommitDirect(common, common, store, tree, [head], 'm\n'), null);
    }),
);

t('a temp file of the record left by a killed writer is removed by the next record', () =>
  withEnv(PLAIN, async () => {
    const { repo, common, head, tree } = setup();
    const store = (await looseObjectStore(common, head))!;
    mkdirSync(path.join(common, 'hagent'), { recursive: true });
    const stale = path.join(common, 'hagent', 'commit-identity.json.999999-dead.tmp');
    writeFileSync(stale, '{');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(stale, old, old);
    await viaGit(repo, common, store, tree, head, 'first\n');
    assert.not.ok(existsSync(stale));
    assert.ok(await writeCommitDirect(common, common, store, tree, [head], 'm\n'));
  }),
);

t.run();
