/**
 * The sandbox as a wall, with real processes on real file systems. The guard's whole dangerous
 * corpus and a bypass corpus (test/cli/sandbox-corpus/bypass.txt: wrapper shells, copied
 * binaries, scripts, computed paths, git aimed at the user's refs and checkout, symbolic links)
 * are RUN inside the sandbox — the text guard left out, so the wall itself is tested — against a
 * canary home folder holding the user's checkout (uncommitted work, a stash, a tag, a branch),
 * another session's worktree, a remote and dot files: every file outside the session worktree
 * and its temp folder is hashed before and after, and no byte may change. The everyday corpus
 * runs and succeeds, and the commits made inside reach hagent (review, land). Then `hagent exec`
 * through the CLI: the agent is told what was stopped and why, and the journal says so.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runShell, type RunOutcome } from '../../src/exec/run.js';
import {
  sandboxedEnv,
  sandboxFor,
  sandboxSettings,
  sandboxStateDir,
  settleSandbox,
  type SandboxLaunch,
} from '../../src/sandbox/index.js';
import { BIN, git, GIT_ENV, hagent, tempDir, writeFiles } from '../helpers/index.js';
import { sandboxMissing } from '../helpers/sandbox.js';
import { testOrSkip } from '../helpers/skip.js';
import { readCorpus } from '../unit/guard/corpus.js';

const t = suite('sandbox');
const test = testOrSkip(t, 'sandbox', sandboxMissing);

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sandbox-corpus');

/** One command a line, `#` lines and blank lines left out. */
const corpus = (file: string): string[] =>
  readFileSync(path.join(CORPUS, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));

/** A canary home folder laid out as on a user's machine, with a session s1 and another, s2. */
interface Layout {
  home: string;
  checkout: string;
  commonDir: string;
  s1: { id: string; worktree: string };
  other: string;
  env: Record<string, string>;
}

function layout(): Layout {
  const home = realpathSync(tempDir('hagent-sandbox-home-'));
  const checkout = path.join(home, 'shop');
  mkdirSync(checkout);
  git(checkout, 'init', '-q', '--initial-branch=main');
  writeFiles(checkout, {
    'README.md': '# shop\n',
    'src/app.js': 'console.log(1);\n',
    'a.txt': 'one\ntwo\n',
  });
  git(checkout, 'add', '-A');
  git(checkout, 'commit', '-q', '-m', 'initial');
  git(checkout, 'branch', 'feature');
  git(checkout, 'tag', 'v1');
  writeFileSync(path.join(checkout, 'a.txt'), 'one\ntwo\nstashed\n');
  git(checkout, 'stash', '-q');
  const origin = path.join(home, 'origin.git');
  git(home, 'init', '-q', '--bare', origin);
  git(checkout, 'remote', 'add', 'origin', origin);
  git(checkout, 'push', '-q', 'origin', 'main', 'feature');
  writeFiles(home, {
    '.bashrc': 'export PS1=canary\n',
    '.gitconfig': '[user]\n\tname = Canary\n',
    '.ssh/id_rsa': 'canary key\n',
    'other-project/x.txt': 'x\n',
    '.npm/.keep': '',
  });
  const env = { HOME: home, HAGENT_WORKTREE_ROOT: 'git-dir' };
  const start = (name: string) => {
    const r = hagent(checkout, ['session', 'start', '--name', name, '--json'], { env });
    assert.is(r.status, 0, r.stdout + r.stderr);
    return { id: r.json.id as string, worktree: realpathSync(r.json.worktree) };
  };
  const s1 = start('s1');
  const s2 = start('s2');
  writeFileSync(path.join(s2.worktree, 'theirs.txt'), 'work of session s2\n');
  // The user's uncommitted work and their repository config, after the sessions started.
  writeFileSync(path.join(checkout, 'README.md'), '# shop\nuncommitted line\n');
  writeFiles(checkout, {
    'notes.txt': 'untracked notes\n',
    '.hagent/config.json': '{ "sandbox": { "network": false } }\n',
  });
  return { home, checkout, commonDir: path.join(checkout, '.git'), s1, other: s2.worktree, env };
}

/** Every file, folder and link under `root` with its content hash and mode, but `skip`'s. */
function hashTree(root: string, skip: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string): void => {
    if (skip.some((s) => p === s || p.startsWith(s + path.sep))) return;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out.set(p, `link ${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, `dir ${st.mode}`);
      for (const e of readdirSync(p)) walk(path.join(p, e));
    } else
      out.set(p, `file ${st.mode} ${createHash('sha1').update(readFileSync(p)).digest('hex')}`);
  };
  walk(root);
  return out;
}

/** What may change: the session worktree, its admin folder, its sandbox folders, the npm cache. */
const writableOf = (l: Layout): string[] => [
  l.s1.worktree,
  path.join(l.home, '.npm'),
  path.join(l.commonDir, 'worktrees', l.s1.id),
  sandboxStateDir(l.commonDir, l.s1.id),
];

function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [p, h] of before)
    if (after.get(p) !== h) changed.push(`${p}: ${h} -> ${after.get(p)}`);
  for (const p of after.keys()) if (!before.has(p)) changed.push(`${p}: new`);
  return changed;
}

/** Prepares s1's sandbox (network off, as the user's config says) and checks it holds. */
async function launchOf(l: Layout): Promise<SandboxLaunch> {
  const choice = await sandboxFor(
    { commonDir: l.commonDir, session: l.s1, userCheckout: l.checkout },
    sandboxSettings({ network: false }, l.home),
    process.env,
  );
  if (!choice.on) throw new Error(`no sandbox: ${choice.reason}`);
  assert.match(path.basename(choice.launch.argv[0]!), /^bwrap$/);
  assert.is(choice.launch.argv.at(-1), '--');
  return choice.launch;
}

/** Runs `command` in s1's sandbox as exec does, the guard left out. */
function inSandbox(
  l: Layout,
  launch: SandboxLaunch,
  command: string,
  timeoutMs = 3000,
): Promise<RunOutcome> {
  const env = sandboxedEnv(
    {
      PATH: process.env.PATH,
      LANG: 'C',
      ...Object.fromEntries(
        Object.entries(GIT_ENV).filter(
          ([k]) => k.startsWith('GIT_AUTHOR') || k.startsWith('GIT_COMMITTER'),
        ),
      ),
      HOME: l.home,
      USER_CHECKOUT: l.checkout,
      OTHER: l.other,
      GITDIR: l.commonDir,
      SESSION: l.s1.id,
      HAGENT_BIN: BIN,
      HAGENT_SESSION: l.s1.id,
    },
    launch,
  );
  return runShell(command, {
    cwd: l.s1.worktree,
    env,
    timeoutMs,
    maxOutputBytes: 16 * 1024,
    wrap: launch.argv,
  });
}

test('the dangerous and bypass corpora, run in the sandbox, change no byte outside the session', async () => {
  const l = layout();
  const launch = await launchOf(l);
  // The wall is checked before anything destructive runs in it.
  const probe = await inSandbox(l, launch, 'touch "$USER_CHECKOUT/sentinel" /etc/hagent-sentinel');
  assert.is.not(probe.exitCode, 0);
  assert.not.ok(existsSync(path.join(l.checkout, 'sentinel')), 'the sandbox holds');
  assert.not.ok(existsSync('/etc/hagent-sentinel'), 'the sandbox holds');

  const skip = writableOf(l);
  const before = hashTree(l.home, skip);
  const commands = [
    ...readCorpus('dangerous.txt').map((c) => c.replaceAll('/home/dev', l.home)),
    ...corpus('bypass.txt'),
  ];
  assert.ok(commands.length > 400, `${commands.length} commands`);
  let stopped = 0;
  const slow: string[] = [];
  for (const command of commands) {
    const r = await inSandbox(l, launch, command);
    if (/read-only file system|operation not permitted|device or resource busy/i.test(r.stderr))
      stopped++;
    if (r.timedOut) slow.push(command);
  }
  // Hashed once at the end (the whole corpus at once: a change names its path).
  assert.equal(diff(before, hashTree(l.home, skip)), []);
  assert.ok(stopped > 100, `${stopped} commands were stopped by the sandbox`);
  assert.not.ok(existsSync('/tmp/hagent-sandbox-canary'));
  // The user's state, read back through git: the uncommitted line, the stash, the refs.
  assert.match(readFileSync(path.join(l.checkout, 'README.md'), 'utf8'), /uncommitted line/);
  assert.match(git(l.checkout, 'stash', 'list'), /stash@\{0\}/);
  assert.is(git(l.checkout, 'rev-parse', 'feature'), git(l.checkout, 'rev-parse', 'v1'));
  // Settling what the corpus left leaves every ref but the session's as it was.
  const refs = git(l.checkout, 'for-each-ref', '--format=%(refname) %(objectname)');
  const settled = await settleSandbox(launch);
  assert.is(
    git(l.checkout, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter((x) => !x.startsWith('refs/heads/hagent/s1 '))
      .join('\n'),
    refs
      .split('\n')
      .filter((x) => !x.startsWith('refs/heads/hagent/s1 '))
      .join('\n'),
  );
  // The session's own HEAD is the agent's to move (a corpus command detached it): put back, then
  // the whole repository checks out sound.
  writeFileSync(
    path.join(l.commonDir, 'worktrees', l.s1.id, 'HEAD'),
    'ref: refs/heads/hagent/s1\n',
  );
  git(l.checkout, 'fsck', '--no-progress');
  assert.ok(settled.objects >= 0);
  // Walks of the whole file system (rm -rf /, find /) are cut by the timeout; what they reached
  // before was read-only all the same.
  assert.ok(slow.length < commands.length / 10, `timed out: ${slow.join('; ')}`);
});

test('the everyday corpus runs and succeeds in the sandbox, and its commits reach hagent', async () => {
  const l = layout();
  await launchOf(l); // its folders made first
  const skip = writableOf(l);
  const before = hashTree(l.home, skip);
  const base = git(l.s1.worktree, 'rev-parse', 'HEAD');
  for (const command of corpus('everyday.txt')) {
    const launch = await launchOf(l);
    const r = await inSandbox(l, launch, command, 60_000);
    assert.is(r.exitCode, 0, `${command}\n${r.stdout}${r.stderr}`);
    const s = await settleSandbox(launch);
    assert.equal(s.problems, [], command);
  }
  // Only the session's branch moved; the user's files are as they were.
  const after = hashTree(l.home, skip);
  const changed = diff(before, after).filter(
    (c) =>
      !c.startsWith(path.join(l.commonDir, 'refs', 'heads', 'hagent', 's1')) &&
      !c.startsWith(path.join(l.commonDir, 'logs', 'refs', 'heads', 'hagent', 's1')) &&
      !c.startsWith(path.join(l.commonDir, 'objects')),
  );
  assert.equal(changed, []);
  const subjects = git(l.checkout, 'log', '--format=%s', `${base}..hagent/s1`);
  assert.equal(subjects.split('\n'), ['build and package', 'more hello', 'add hello']);
  git(l.checkout, 'fsck', '--no-progress');
  // hagent sees them: review lists them, land brings them onto main.
  const review = hagent(l.checkout, ['review', '--session', 's1', '--json'], { env: l.env });
  assert.is(review.status, 0, review.stdout + review.stderr);
  assert.ok(review.json.patches.length >= 3, review.stdout);
  assert.is(
    hagent(l.checkout, ['review', '--session', 's1', '--approve', '--json'], { env: l.env }).status,
    0,
  );
  const land = hagent(l.checkout, ['land', '--session', 's1', '--yes', '--json'], { env: l.env });
  assert.is(land.status, 0, land.stdout + land.stderr);
  assert.is(readFileSync(path.join(l.checkout, 'hello.txt'), 'utf8'), 'hello\nmore\n');
  assert.match(readFileSync(path.join(l.checkout, 'README.md'), 'utf8'), /uncommitted line/);
});

test('hagent exec: a script deleting the user checkout is stopped, the agent told why, the journal says so', () => {
  const l = layout();
  writeFileSync(
    path.join(l.s1.worktree, 'wipe.sh'),
    `rm -rf '${l.checkout}'/*\ngit -C '${l.checkout}' checkout -- .\n`,
  );
  const before = hashTree(l.checkout, [l.commonDir]);
  const r = hagent(l.s1.worktree, ['exec', '--json', '--', 'sh wipe.sh'], { env: l.env });
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.equal(diff(before, hashTree(l.checkout, [l.commonDir])), []);
  assert.is(r.json.sandbox.on, true);
  const readme = r.json.sandbox.denied.find((d: { path: string }) =>
    d.path.endsWith(`${path.sep}README.md`),
  );
  assert.ok(readme, JSON.stringify(r.json.sandbox));
  assert.is(readme.code, 'SANDBOX_DENIED');
  assert.match(
    readme.reason,
    /read-only: outside the session worktree; the user's checkout changes only through hagent land/,
  );
  // The human form: each stopped write on stderr, with the path.
  const h = hagent(l.s1.worktree, ['exec', '--', 'sh wipe.sh'], { env: l.env });
  assert.match(h.stderr, /hagent sandbox: .*README\.md: read-only: outside the session worktree/);
  const log = hagent(l.checkout, ['log', '--json', '--session', 's1'], { env: l.env });
  const entry = log.json.entries.find((e: { code?: string }) => e.code === 'SANDBOX_DENIED');
  assert.ok(entry, log.stdout);
  assert.match(entry.message, /README\.md: read-only/);
});

test("hagent exec: the agent's own git commit in the sandbox becomes the session's history", () => {
  const l = layout();
  const r = hagent(
    l.s1.worktree,
    [
      'exec',
      '--json',
      '--',
      'echo x > c.txt && git add c.txt && git commit -q -m "agent commit" && echo y > d.txt',
    ],
    { env: { ...l.env, ...GIT_ENV } },
  );
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.sandbox.branch, JSON.stringify(r.json.sandbox));
  assert.is(r.json.sandbox.branch.new, git(l.checkout, 'rev-parse', 'hagent/s1~1'));
  assert.equal(r.json.changed, [{ path: 'd.txt', status: 'A' }]);
  assert.equal(
    git(l.checkout, 'log', '--format=%s', '-2', 'hagent/s1').split('\n')[1],
    'agent commit',
  );
  assert.is(git(l.s1.worktree, 'status', '--porcelain'), '');
});

test('a timed-out command in the sandbox has its whole process group killed', () => {
  const l = layout();
  const mark = `${300 + (process.pid % 600)}.25`;
  const r = hagent(
    l.s1.worktree,
    ['exec', '--json', '--timeout', '1', '--', `sleep ${mark} & wait`],
    {
      env: l.env,
    },
  );
  assert.is(r.json.timedOut, true);
  const left = spawnSync('pgrep', ['-f', `sleep ${mark}`], { encoding: 'utf8' });
  assert.is(left.stdout.trim(), '', 'no process of the command is left');
});

t(
  'no sandbox: "required" refuses with SANDBOX_UNAVAILABLE and runs nothing; auto says so and runs under the guard',
  () => {
    const l = layout();
    const none = { ...l.env, HAGENT_BWRAP: '' };
    const auto = hagent(l.s1.worktree, ['exec', '--', 'echo ran > ran.txt'], { env: none });
    assert.is(auto.status, 0, auto.stderr);
    assert.match(
      auto.stderr,
      /warning: no sandbox: bubblewrap \(bwrap\) is not installed; the shell guard alone/,
    );
    const doctor = hagent(l.checkout, ['doctor', '--json'], { env: none });
    assert.is(doctor.json.sandbox.on, false);
    assert.match(hagent(l.checkout, ['doctor'], { env: none }).stdout, /Sandbox: no sandbox/);
    writeFileSync(path.join(l.checkout, '.hagent', 'config.json'), '{ "sandbox": "required" }\n');
    const r = hagent(l.s1.worktree, ['exec', '--json', '--', 'echo ran > ran2.txt'], { env: none });
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'SANDBOX_UNAVAILABLE');
    assert.match(r.json.error.hint, /apt-get install bubblewrap/);
    assert.not.ok(existsSync(path.join(l.s1.worktree, 'ran2.txt')), 'nothing ran');
    writeFileSync(path.join(l.checkout, '.hagent', 'config.json'), '{ "sandbox": "off" }\n');
    const off = hagent(l.s1.worktree, ['exec', '--json', '--', 'true'], { env: l.env });
    assert.equal(off.json.sandbox.on, false);
    assert.is(off.json.sandbox.configured, true);
    writeFileSync(
      path.join(l.checkout, '.hagent', 'config.json'),
      '{ "sandbox": { "writable": ["tmp"] } }\n',
    );
    const bad = hagent(l.s1.worktree, ['exec', '--json', '--', 'true'], { env: l.env });
    assert.is(bad.json.error.code, 'CONFIG_INVALID');
  },
);

test('doctor says the sandbox is on; a damaged object left in the session store is dropped, not moved', async () => {
  const l = layout();
  const doctor = hagent(l.checkout, ['doctor', '--json'], { env: l.env });
  assert.is(doctor.json.sandbox.on, true, doctor.stdout);
  const launch = await launchOf(l);
  const r = await inSandbox(
    l,
    launch,
    'mkdir -p "$GIT_OBJECT_DIRECTORY/ab" && echo junk > "$GIT_OBJECT_DIRECTORY/ab/$(printf %038d 0)"',
  );
  assert.is(r.exitCode, 0, r.stderr);
  const s = await settleSandbox(launch);
  assert.match(s.problems.join('\n'), /dropped ab\/0+: not an object of that name/);
  assert.not.ok(existsSync(path.join(l.commonDir, 'objects', 'ab', '0'.repeat(38))));
});

t.run();
