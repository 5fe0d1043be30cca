/**
 * Every command takes `--json` and prints one JSON object with `ok` on stdout, and the smaller
 * wrong results of the CLI stay fixed: a dash path after `--`, doctor with `--session`, one
 * broken session in doctor, and session start on a folder that exists.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('json on every command');

const upd = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n-${from}\n+${to}\n*** End Patch\n`;

/** The leaf commands `hagent --help` lists (`session start`, `config schema`, …), read from the help itself. */
function leafCommands(prefix: string[] = []): string[][] {
  const help = hagent(process.cwd(), [...prefix, '--help']).stdout;
  const section = help.split('Commands:\n')[1]?.split('\n\n')[0] ?? '';
  const names = [...section.matchAll(/^ {2}hagent ((?:[a-z-]+ ?)+)/gm)].map(
    (m) =>
      m[1]!
        .trim()
        .split(' ')
        .slice(prefix.length, prefix.length + 1)[0]!,
  );
  if (names.length === 0) return [prefix];
  return names.flatMap((n) => leafCommands([...prefix, n]));
}

t('every command takes --json and prints one JSON object with ok', () => {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
  let worktree = '';
  const wt = () => (worktree ||= hagent(repo, ['session', 'status', 'j1', '--json']).json.worktree);
  // Each leaf command, run so that it succeeds, in the order of a session's life.
  const runs: Record<
    string,
    {
      cwd: () => string;
      args: string[];
      input?: string;
      env?: Record<string, string>;
      before?: () => void;
    }
  > = {
    'session start': { cwd: () => repo, args: ['--name', 'j1'] },
    'session list': { cwd: () => repo, args: [] },
    'session status': { cwd: () => repo, args: [] },
    guard: { cwd: wt, args: ['--', 'ls'] },
    check: { cwd: wt, args: ['-'], input: upd('a.txt', 'two', 'TWO') },
    apply: { cwd: wt, args: ['-'], input: upd('a.txt', 'two', 'TWO') },
    exec: { cwd: wt, args: ['--', 'true'] },
    undo: { cwd: wt, args: [] },
    sync: { cwd: wt, args: [], before: () => writeFileSync(path.join(wt(), 'b.txt'), 'outside\n') },
    review: { cwd: () => repo, args: ['--approve'] },
    land: { cwd: () => repo, args: ['--yes'] },
    'session update': { cwd: () => repo, args: [] },
    log: { cwd: () => repo, args: [] },
    doctor: { cwd: () => repo, args: [] },
    'config show': { cwd: () => repo, args: [] },
    'config schema': { cwd: () => repo, args: [] },
    'session end': { cwd: () => repo, args: ['--force', '--yes'] },
    run: {
      cwd: () => repo,
      args: ['claude', '--name', 'j2'],
      env: { HAGENT_CLAUDE_BIN: '/bin/true' },
    },
    integrate: { cwd: () => repo, args: ['claude', '--print'] },
    demo: { cwd: () => repo, args: [] },
  };
  const leaves = leafCommands().map((c) => c.join(' '));
  assert.ok(leaves.length >= 15, leaves.join(', '));
  const order = Object.keys(runs);
  // These speak another program's protocol on stdout, so --json has no meaning there: an agent's
  // hook contract (hook) and MCP on stdio (mcp).
  const protocols = ['hook', 'mcp'];
  const missing = leaves.filter((c) => !order.includes(c) && !protocols.includes(c));
  assert.equal(missing, [], `commands without a --json case in this test: ${missing.join(', ')}`);
  for (const name of order.filter((c) => leaves.includes(c))) {
    const c = runs[name]!;
    c.before?.();
    const help = hagent(repo, [...name.split(' '), '--help']).stdout;
    assert.match(help, /--json/, `${name} --help lists --json`);
    // --json goes before a `--` that ends the options (guard, exec: the rest is the command).
    const dashes = c.args.indexOf('--');
    const args =
      dashes < 0
        ? [...c.args, '--json']
        : [...c.args.slice(0, dashes), '--json', ...c.args.slice(dashes)];
    const r = hagent(c.cwd(), [...name.split(' '), ...args], {
      ...(c.input === undefined ? {} : { input: c.input }),
      ...(c.env ? { env: c.env } : {}),
    });
    assert.is(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
    assert.ok(
      r.json && typeof r.json === 'object',
      `${name} printed JSON: ${r.stdout.slice(0, 200)}`,
    );
    assert.is(r.json.ok, true, `${name} has ok: true`);
  }
  assert.ok(
    hagent(repo, ['config', 'schema']).json.$schema || hagent(repo, ['config', 'schema']).json.type,
    'without --json the schema itself, for editors',
  );
});

t('review --approve -- -x approves the file named -x only', () => {
  const repo = makeRepo({ 'a.txt': 'a\n', '-x': 'x\n' });
  const s = startSession(repo, ['--name', 'd1']);
  const applied = hagent(s.worktree, ['apply', '-', '--json'], {
    input:
      '*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: -x\n-x\n+X\n*** End Patch\n',
  });
  assert.is(applied.status, 0, applied.stdout);
  const r = hagent(repo, ['review', '--approve', '--json', '--', '-x']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.approval.paths, ['-x']);
  const bare = hagent(repo, ['review', '--json', '--', '-x']);
  assert.is(bare.status, 2, 'paths without --approve are a usage error, not ignored');
  assert.is(hagent(repo, ['land', '--json']).status, 0);
  assert.is(git(repo, 'show', 'main:-x'), 'X');
  assert.is(git(repo, 'show', 'main:a.txt'), 'a', 'a.txt was not approved');
});

t(
  'doctor --session s2 does not call s1 an orphan, and one broken session does not stop the others',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startSession(repo, ['--name', 's1']);
    const s2 = startSession(repo, ['--name', 's2']);
    startSession(repo, ['--name', 's3']);
    const one = hagent(repo, ['doctor', '--session', 's2', '--json']);
    assert.is(one.status, 0, one.stdout);
    assert.equal(one.json.findings, [], JSON.stringify(one.json.findings));
    // s2: an interrupted apply whose head moved since: doctor may not finish it.
    const common = path.join(repo, '.git');
    mkdirSync(path.join(common, 'hagent', 'tx'), { recursive: true });
    writeFileSync(
      path.join(common, 'hagent', 'tx', 's2.json'),
      JSON.stringify({
        version: 1,
        txid: 'x1',
        session: 's2',
        command: 'apply',
        pid: 999999,
        startedAt: new Date().toISOString(),
        head: '1'.repeat(40),
        commit: null,
        message: 'm\n',
        note: null,
        targets: [{ rel: 'a.txt', prior: null, next: null, tmp: null }],
      }),
    );
    const all = hagent(repo, ['doctor', '--json']);
    assert.is(all.status, 0, all.stdout);
    assert.equal(all.json.sessions, ['s1', 's2', 's3']);
    const broken = all.json.findings.filter((f: any) => f.session === 's2');
    assert.is(broken.length, 1, JSON.stringify(all.json.findings));
    assert.is(broken[0].kind, 'session-unchecked');
    assert.is(broken[0].fixed, false);
    assert.equal(
      all.json.findings.filter((f: any) => f.kind.startsWith('orphan')),
      [],
    );
    // Its hint works: check the files, remove the stale record, run again.
    const record = path.join(common, 'hagent', 'tx', 's2.json');
    assert.ok(broken[0].hint.includes(record), broken[0].hint);
    rmSync(record);
    assert.equal(hagent(repo, ['doctor', '--json']).json.findings, []);
    assert.is(
      hagent(s2.worktree, ['apply', '-', '--json'], { input: upd('a.txt', 'a', 'A') }).status,
      0,
    );
  },
);

t(
  'session start on a folder that exists refuses before making the branch, and the retry works once it is gone',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    // Where a session named f1 goes: beside the worktree of a session started and ended first.
    const probe = startSession(repo, ['--name', 'probe']);
    assert.is(hagent(repo, ['session', 'end', 'probe', '--json']).status, 0);
    const folder = path.join(path.dirname(probe.worktree), 'f1');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'left.txt'), 'left\n');
    const r = hagent(repo, ['session', 'start', '--name', 'f1', '--json']);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'SESSION_EXISTS');
    assert.is(r.json.error.path, folder);
    assert.is(git(repo, 'branch', '--list', 'hagent/f1'), '', 'no branch is left behind');
    assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions.length, 0);
    rmSync(folder, { recursive: true });
    const again = hagent(repo, ['session', 'start', '--name', 'f1', '--json']);
    assert.is(again.status, 0, again.stdout);
  },
);

t.run();
