/**
 * The identity of the commits an agent's hooks make (a process per tool call): git's answer
 * (`git var`) is kept in the repository for the next hook processes, and a kept answer is never
 * used once it may be wrong: another `GIT_AUTHOR_NAME` in the environment, a changed
 * `user.name` in the repository's config or in a file it includes, a new global config file.
 * HAGENT_TRACE says whether git was asked (`git var`) or the kept answer was used.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, tempDir } from '../helpers/index.js';

const test = suite('hagent hook: commit identity');

/** The helpers' identity and dates left out: the configuration decides, as for a user. */
const UNSET = [
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_DATE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
];

function setup(name: string) {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'config', 'user.name', 'Grace Hopper');
  git(repo, 'config', 'user.email', 'grace@example.com');
  const r = hagent(repo, ['session', 'start', '--json', '--name', name], { unsetEnv: UNSET });
  assert.is(r.status, 0, r.stderr);
  return { repo, wt: r.json.worktree as string, branch: r.json.branch as string };
}

let call = 0;

/**
 * One native Write through Claude Code's hooks (pre, the write, post) with `env`.
 * @returns the commit's author and committer (`name <email>|name <email>`) and the trace.
 */
function edit(
  s: { repo: string; wt: string; branch: string },
  env: Record<string, string> = {},
): { who: string; trace: string } {
  call += 1;
  const file = path.join(s.wt, 'a.txt');
  const payload = (event: string) =>
    JSON.stringify({
      hook_event_name: event,
      cwd: s.wt,
      tool_name: 'Write',
      tool_use_id: `toolu_${call}`,
      tool_input: { file_path: file, content: `edit ${call}\n` },
    });
  const opts = {
    unsetEnv: UNSET.filter((k) => !(k in env)),
    env: { HAGENT_TRACE: '1', ...env },
  };
  const pre = hagent(s.wt, ['hook', 'claude'], { ...opts, input: payload('PreToolUse') });
  assert.is(pre.status, 0, pre.stderr);
  writeFileSync(file, `edit ${call}\n`);
  const post = hagent(s.wt, ['hook', 'claude'], { ...opts, input: payload('PostToolUse') });
  assert.is(post.status, 0, post.stderr);
  assert.match(post.stdout, /hagent recorded this edit as commit/);
  assert.match(post.stderr, /commit: in-process/);
  return {
    who: git(s.repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', s.branch),
    trace: post.stderr,
  };
}

const GRACE = 'Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>';
const asked = (trace: string) => /git var GIT_AUTHOR_IDENT/.test(trace);
const kept = (trace: string) => /identity: kept/.test(trace);

test('git is asked once; the next hook processes use the kept answer', () => {
  const s = setup('kept');
  const first = edit(s);
  assert.is(first.who, GRACE);
  assert.ok(asked(first.trace), first.trace);
  for (let i = 0; i < 2; i++) {
    const next = edit(s);
    assert.is(next.who, GRACE);
    assert.ok(kept(next.trace) && !asked(next.trace), next.trace);
  }
});

test('a GIT_AUTHOR_NAME override is followed, and the configured name comes back without it', () => {
  const s = setup('override');
  assert.is(edit(s).who, GRACE);
  const over = edit(s, { GIT_AUTHOR_NAME: 'Ada Lovelace' });
  assert.is(over.who, 'Ada Lovelace <grace@example.com>|Grace Hopper <grace@example.com>');
  assert.ok(asked(over.trace), 'another environment: git is asked');
  assert.is(
    edit(s, { GIT_AUTHOR_NAME: 'Ada Lovelace' }).who.split('|')[0],
    'Ada Lovelace <grace@example.com>',
  );
  const back = edit(s);
  assert.is(back.who, GRACE);
  assert.ok(kept(back.trace), 'the first environment keeps its own answer');
});

test('a changed user.name, in the config or in a file it includes, is followed', () => {
  const s = setup('renamed');
  assert.is(edit(s).who, GRACE);
  git(s.repo, 'config', 'user.name', 'Rear Admiral Hopper');
  const renamed = edit(s);
  assert.is(renamed.who.split('|')[0], 'Rear Admiral Hopper <grace@example.com>');
  assert.ok(asked(renamed.trace), renamed.trace);
  // An include whose file does not exist yet, then appears with another name.
  const extra = path.join(tempDir(), 'identity.inc');
  git(s.repo, 'config', 'include.path', extra);
  assert.is(edit(s).who.split('|')[0], 'Rear Admiral Hopper <grace@example.com>');
  assert.ok(kept(edit(s).trace));
  writeFileSync(extra, '[user]\n\tname = Amazing Grace\n');
  const included = edit(s);
  assert.is(included.who, 'Amazing Grace <grace@example.com>|Amazing Grace <grace@example.com>');
  assert.ok(asked(included.trace), included.trace);
});

test('a global config file that appears is followed', () => {
  const s = setup('global');
  const home = tempDir();
  const global = path.join(home, 'gitconfig');
  git(s.repo, 'config', '--unset', 'user.name');
  writeFileSync(global, '[user]\n\tname = First Global\n');
  const env = { GIT_CONFIG_GLOBAL: global };
  assert.is(edit(s, env).who.split('|')[0], 'First Global <grace@example.com>');
  assert.ok(kept(edit(s, env).trace));
  writeFileSync(global, '[user]\n\tname = Second Global\n');
  assert.is(edit(s, env).who.split('|')[0], 'Second Global <grace@example.com>');
});

test.run();
