/**
 * Checks across the commands, through the real CLI: `--json`, usage errors and hints on every
 * command, the human-only commands, the agents' own configuration files, and the kinds of
 * repository users have (the whole session cycle in each).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_POLICY, deniedReason } from '../../src/policy/index.js';
import {
  BIN,
  git,
  GIT_ENV,
  hagent,
  makeRepo,
  startSession,
  tempDir,
  updatePatch,
  writeFiles,
  writeIntentRecord,
  look,
} from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';
import { testOrSkip } from '../helpers/skip.js';

const t = suite('all commands');

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
    status: { cwd: () => repo, args: [] },
    guard: { cwd: wt, args: ['--', 'ls'] },
    check: { cwd: wt, args: ['-'], input: updatePatch('a.txt', 'two', 'TWO') },
    apply: { cwd: wt, args: ['-'], input: updatePatch('a.txt', 'two', 'TWO') },
    exec: { cwd: wt, args: ['--', 'true'] },
    undo: { cwd: wt, args: [] },
    sync: { cwd: wt, args: [], before: () => writeFileSync(path.join(wt(), 'b.txt'), 'outside\n') },
    review: { cwd: () => repo, args: ['--approve'], before: () => look(repo) },
    gate: {
      cwd: () => repo,
      args: [],
      before: () => {
        mkdirSync(path.join(repo, '.hagent'), { recursive: true });
        writeFileSync(path.join(repo, '.hagent', 'config.json'), '{"land": {"gate": ["true"]}}\n');
      },
    },
    land: { cwd: () => repo, args: ['--yes'] },
    'session update': { cwd: () => repo, args: [] },
    log: { cwd: () => repo, args: [] },
    doctor: { cwd: () => repo, args: [] },
    gc: { cwd: () => repo, args: ['--dry-run'] },
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

t('an unknown command is named as such; a near miss gets a suggestion, a far one none', () => {
  const dir = tempDir();
  const far = hagent(dir, ['bogus', '--json']);
  assert.is(far.status, 2);
  assert.is(far.json.error.message, 'unknown command "bogus"');
  assert.not.match(far.json.error.hint, /did you mean/);
  const near = hagent(dir, ['sesion', 'list', '--json']);
  assert.is(near.status, 2);
  assert.match(near.json.error.hint, 'did you mean hagent session?');
});

t(
  'value options given twice, negated, or with a lone - are USAGE errors, on the fast path and through yargs',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'args']);
    writeFileSync(
      path.join(repo, 'p.patch'),
      '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# x\n*** End Patch\n',
    );
    const lines = [
      ['check', 'p.patch', '--dir', '.', '--dir', '.'],
      ['check', 'p.patch', '--no-dir'],
      ['check', 'p.patch', '--dir', '-'],
      ['apply', 'p.patch', '--session', 'args', '--no-base'],
      ['apply', 'p.patch', '--session', 'args', '--base', '-'],
      ['apply', 'p.patch', '--session', '-'],
      ['land', '--session', 'args', '--message', '-'],
      ['land', '--session', 'args', '--message', 'x', '--message', 'y'],
    ];
    for (const l of lines) {
      const r = hagent(repo, [...l, '--json']);
      assert.is(r.status, 2, `${l.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.is(r.json?.error?.code ?? r.json?.code, 'USAGE', l.join(' '));
    }
    assert.is(git(repo, 'rev-parse', 'HEAD'), s.base, 'nothing landed');
  },
);

t('usage errors exit 2 and --help exits 0 with examples', () => {
  const repo = makeRepo();
  const bad = hagent(repo, ['frobnicate']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /USAGE/);
  const badJson = hagent(repo, ['apply', '--no-such-flag', '--json']);
  assert.is(badJson.status, 2);
  assert.is(badJson.json.error.code, 'USAGE');
  const help = hagent(repo, ['apply', '--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /Examples:/);
});

// The human's commands stay the human's: review --approve, land, land --undo, undo --land, session
// end and integrate refuse HUMAN_ONLY (nothing changed) when run with the agent marker
// HAGENT_AGENT, which hagent sets for the agent of `hagent run`, the command of `hagent exec` and
// the MCP server's exec; the guard refuses those verbs in front of every shell an agent has (exec,
// MCP exec, Claude's Bash through the PreToolUse hook); and the agents' own configuration files are
// denied paths, so strict mode cannot be switched off from a session.

const AGENT = { HAGENT_AGENT: 'x1' };

/** A repository with a session `x1` holding one applied patch. */
function setup() {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'x1']);
  const r = hagent(s.worktree, ['apply', '--json'], {
    input: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n',
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  return { repo, s };
}

/** A shell script outside the worktree that runs the human's commands through the real CLI (the guard cannot see into it). */
function sneakScript(): string {
  const file = path.join(tempDir('hagent-sneak-'), 'sneak.sh');
  const h = `'${process.execPath}' '${BIN}'`;
  writeFileSync(
    file,
    `${h} review --approve --json; ${h} land --yes --json; ${h} session end x1 --force --yes --json\n`,
  );
  return file;
}

function assertUntouched(repo: string, s: { base: string }) {
  assert.is(git(repo, 'rev-parse', 'main'), s.base, 'main did not move');
  assert.is(
    readFileSync(path.join(repo, 'a.txt'), 'utf8'),
    'one\n',
    "the user's checkout is untouched",
  );
  const review = hagent(repo, ['review', '--session', 'x1', '--json']);
  assert.is(review.status, 0, 'the session still exists');
  assert.not.ok(review.json.approval, 'no approval was recorded');
}

t(
  'with HAGENT_AGENT set, every human-only command refuses HUMAN_ONLY (exit 1) and changes nothing',
  () => {
    const { repo, s } = setup();
    const cases: [string[], string][] = [
      [['review', '--approve'], 'hagent review --approve'],
      [['review', '--approve', 'a.txt'], 'hagent review --approve'],
      [['land', '--yes'], 'hagent land'],
      [['land', '--undo'], 'hagent land --undo'],
      [['undo', '--land'], 'hagent undo --land'],
      [['session', 'end', 'x1', '--force', '--yes'], 'hagent session end'],
      [['integrate', 'gemini'], 'hagent integrate gemini'],
      [['integrate', 'claude', '--mcp', '--strict', '--remove'], 'hagent integrate claude'],
    ];
    for (const [args, what] of cases) {
      const r = hagent(s.worktree, [...args, '--json'], { env: AGENT });
      assert.is(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.is(r.json.error.code, 'HUMAN_ONLY', args.join(' '));
      assert.is(r.json.error.message, `${what} is for the human: run it from your own shell`);
      assert.match(r.json.error.hint, /ask them to run hagent/);
      assert.not.match(
        r.json.error.hint,
        /env -u/,
        'the hint does not teach the agent the way round',
      );
      const text = hagent(s.worktree, args, { env: AGENT });
      assert.match(text.stderr, /error\[HUMAN_ONLY\]/);
    }
    assertUntouched(repo, s);
    assert.not.ok(existsSync(path.join(repo, '.gemini')), 'integrate wrote nothing');
    // The rest works under the marker: reading the review, undo and redo.
    assert.is(hagent(s.worktree, ['review', '--json'], { env: AGENT }).status, 0);
    assert.is(hagent(s.worktree, ['session', 'status', '--json'], { env: AGENT }).status, 0);
    assert.is(hagent(s.worktree, ['undo', '--json'], { env: AGENT }).status, 0);
    assert.is(hagent(s.worktree, ['undo', '--redo', '--json'], { env: AGENT }).status, 0);
    // Without the marker (the human, or `env -u HAGENT_AGENT`), approve and land run.
    look(s.worktree);
    assert.is(
      hagent(s.worktree, ['review', '--approve', '--json'], { env: { HAGENT_AGENT: '' } }).status,
      0,
    );
    const landed = hagent(repo, ['land', '--session', 'x1', '--json']);
    assert.is(landed.status, 0, landed.stdout + landed.stderr);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'two\n');
  },
);

t(
  'hagent exec: the guard refuses approve && land (hagent-human-only); a script it cannot see runs with the marker and is refused HUMAN_ONLY',
  () => {
    const { repo, s } = setup();
    const r = hagent(s.worktree, [
      'exec',
      '--json',
      '--',
      'hagent review --approve >/dev/null && hagent land --yes',
    ]);
    assert.is(r.status, 1, r.stdout + r.stderr);
    assert.is(r.json.error.code, 'GUARD_BLOCKED');
    assert.is(r.json.error.rule, 'hagent-human-only');
    assert.match(r.json.error.message, /hagent review --approve is for the human/);
    for (const c of ['env -u HAGENT_AGENT true', 'unset HAGENT_AGENT', 'HAGENT_AGENT= true']) {
      const m = hagent(s.worktree, ['exec', '--json', '--', c]);
      assert.is(m.json?.error?.rule, 'agent-marker', `${c}: ${m.stdout}`);
    }
    const sneak = hagent(s.worktree, ['exec', '--json', '--', `sh ${sneakScript()}`]);
    assert.is(sneak.status, 1, sneak.stdout + sneak.stderr);
    assert.is(
      (sneak.json.stdout.match(/"code": "HUMAN_ONLY"/g) ?? []).length,
      3,
      sneak.json.stdout,
    );
    assertUntouched(repo, s);
  },
);

t(
  'the MCP exec tool (real SDK client): the guard refuses the human-only verbs; a hidden script is refused HUMAN_ONLY',
  async () => {
    const { repo, s } = setup();
    const c = await connectMcp(repo, ['--session', 'x1']);
    try {
      const blocked = await c.call('exec', {
        command: 'hagent review --approve >/dev/null && hagent land --yes',
      });
      assert.is(blocked.isError, true);
      assert.is(blocked.data.error.code, 'GUARD_BLOCKED');
      assert.is(blocked.data.error.rule, 'hagent-human-only');
      for (const command of [
        'hagent session end x1 --force --yes',
        'npx hagent integrate gemini',
        `node '${BIN}' undo --land`,
      ]) {
        const r = await c.call('exec', { command });
        assert.is(r.data?.error?.rule, 'hagent-human-only', `${command}: ${r.text}`);
      }
      const sneak = await c.call('exec', { command: `sh ${sneakScript()}` });
      assert.is(sneak.isError, false, sneak.text);
      assert.is(
        (sneak.data.stdout.match(/"code": "HUMAN_ONLY"/g) ?? []).length,
        3,
        sneak.data.stdout,
      );
    } finally {
      await c.close();
    }
    assertUntouched(repo, s);
  },
);

t(
  "Claude's Bash through the PreToolUse hook (hagent integrate, no marker): approve && land is denied with the rule",
  () => {
    const { repo, s } = setup();
    const payload = {
      hook_event_name: 'PreToolUse',
      session_id: 's',
      cwd: s.worktree,
      tool_name: 'Bash',
      tool_use_id: 'b1',
      tool_input: { command: 'hagent review --approve >/dev/null && hagent land --yes' },
    };
    const r = hagent(s.worktree, ['hook', 'claude'], { input: JSON.stringify(payload) });
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /error\[GUARD_BLOCKED\]/);
    assert.match(r.stderr, /hagent review --approve is for the human/);
    const unset = hagent(s.worktree, ['hook', 'claude'], {
      input: JSON.stringify({
        ...payload,
        tool_input: { command: 'env -u HAGENT_AGENT hagent land' },
      }),
    });
    assert.is(unset.status, 2);
    assert.match(unset.stderr, /HAGENT_AGENT/);
    assertUntouched(repo, s);
  },
);

t(
  'hagent run: the agent process carries HAGENT_AGENT, so the hagent it runs refuses to land',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const dir = tempDir('hagent-fake-agent-');
    const record = path.join(dir, 'record.txt');
    const bin = path.join(dir, 'agent');
    writeFileSync(
      bin,
      `#!/bin/sh\necho "$HAGENT_AGENT" > '${record}'\necho two > a.txt\n'${process.execPath}' '${BIN}' sync >/dev/null\n'${process.execPath}' '${BIN}' land --yes --json >> '${record}'\nexit 0\n`,
      { mode: 0o755 },
    );
    // Without the sandbox (which would stop the record's write outside the worktree): the marker alone.
    const r = hagent(repo, ['run', 'claude', '--name', 'r1', '--no-sandbox'], {
      env: { HAGENT_CLAUDE_BIN: bin },
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    const rec = readFileSync(record, 'utf8');
    assert.is(rec.split('\n')[0], 'r1', 'the marker holds the session id');
    assert.match(rec, /"code": "HUMAN_ONLY"/);
    assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n', 'nothing landed');
  },
);

// The agents' own configuration files (what hagent integrate writes: hooks, MCP servers, strict
// mode's deny rules) are denied paths: an agent cannot take strict mode or hagent's hooks away
// through hagent's tools (MCP write, apply, Claude's Write through the hook), its shell edits of
// them are not committed, a commit it makes with git is refused at land (LAND_DENIED, override
// --allow-denied), and hagent integrate run by the human still writes them.

const DENIED = [
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.mcp.json',
  '.codex/config.toml',
  '.codex/hooks.json',
  '.gemini/settings.json',
  '.cursor/hooks.json',
  '.cursor/mcp.json',
  '.cursor/cli.json',
  '.github/hooks/hagent.json',
  '.github/mcp.json',
  'packages/web/.claude/settings.json',
];

const ALLOWED = [
  '.claude/commands/fix.md',
  '.claude/agents/reviewer.md',
  '.github/workflows/ci.yml',
  '.github/copilot-instructions.md',
  'CLAUDE.md',
  'AGENTS.md',
  '.gemini/styleguide.md',
  '.cursor/rules/style.mdc',
  'docs/mcp.json.md',
];

t(
  "the default policy denies exactly the agents' configuration files, not the folders around them",
  () => {
    for (const p of DENIED)
      assert.match(deniedReason(p, DEFAULT_POLICY) ?? '', /an agent's own configuration/, p);
    for (const p of ALLOWED) assert.is(deniedReason(p, DEFAULT_POLICY), null, p);
  },
);

t(
  'hagent integrate (the human) writes them; in a strict project the MCP write of .claude/settings.json is refused PATH_DENIED',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const env = { HOME: path.join(repo, '.home-not-used') };
    const r = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--json'], { env });
    assert.is(r.status, 0, r.stdout + r.stderr);
    const settings = readFileSync(path.join(repo, '.claude/settings.json'), 'utf8');
    assert.match(settings, /"deny"/);
    assert.ok(existsSync(path.join(repo, '.mcp.json')));
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'strict mode');
    const s = startSession(repo, ['--name', 'c1']);
    const c = await connectMcp(repo, ['--session', 'c1']);
    try {
      for (const file of ['.claude/settings.json', '.mcp.json', '.codex/config.toml']) {
        const w = await c.call('write', { path: file, content: '{}\n' });
        assert.is(w.isError, true, `${file}: ${w.text}`);
        assert.is(w.data.error.code, 'PATH_DENIED', file);
        assert.match(w.data.error.message, /an agent's own configuration/);
      }
      const ok = await c.call('write', { path: '.claude/commands/fix.md', content: 'fix it\n' });
      assert.is(ok.isError, false, ok.text);
    } finally {
      await c.close();
    }
    assert.is(
      readFileSync(path.join(s.worktree, '.claude/settings.json'), 'utf8'),
      settings,
      'strict mode stays on',
    );
    const patch = hagent(s.worktree, ['apply', '--json'], {
      input: '*** Begin Patch\n*** Add File: .codex/hooks.json\n+{}\n*** End Patch\n',
    });
    assert.is(patch.json.error.code, 'PATH_DENIED');
    const hook = hagent(s.worktree, ['hook', 'claude'], {
      input: JSON.stringify({
        hook_event_name: 'PreToolUse',
        session_id: 's',
        cwd: s.worktree,
        tool_name: 'Write',
        tool_use_id: 'w1',
        tool_input: { file_path: path.join(s.worktree, '.claude/settings.json'), content: '{}\n' },
      }),
    });
    assert.match(hook.stdout + hook.stderr, /PATH_DENIED/);
    assert.is(readFileSync(path.join(s.worktree, '.claude/settings.json'), 'utf8'), settings);
  },
);

t(
  'a shell edit of them is not committed; a git commit of them is refused at land (LAND_DENIED) unless --allow-denied',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const s = startSession(repo, ['--name', 'c2']);
    const ex = hagent(s.worktree, [
      'exec',
      '--json',
      '--',
      'mkdir -p .claude && echo "{}" > .claude/settings.json && echo two > a.txt',
    ]);
    assert.is(ex.status, 0, ex.stdout + ex.stderr);
    assert.equal(ex.json.changed, [{ path: 'a.txt', status: 'M' }]);
    assert.ok(
      ex.json.skipped.some((k: { path: string }) => k.path === '.claude/settings.json'),
      JSON.stringify(ex.json.skipped),
    );
    mkdirSync(path.join(s.worktree, '.codex'), { recursive: true });
    writeFileSync(path.join(s.worktree, '.codex', 'config.toml'), '[mcp_servers]\n');
    git(s.worktree, 'add', '-f', '.claude/settings.json', '.codex/config.toml');
    git(s.worktree, 'commit', '-qm', 'agent commit');
    const before = git(repo, 'rev-parse', 'main');
    const refused = hagent(repo, ['land', '--session', 'c2', '--yes', '--json']);
    assert.is(refused.status, 1, refused.stdout);
    assert.is(refused.json.error.code, 'LAND_DENIED');
    assert.equal(refused.json.error.files.sort(), ['.claude/settings.json', '.codex/config.toml']);
    assert.is(git(repo, 'rev-parse', 'main'), before, 'nothing landed');
    const forced = hagent(repo, ['land', '--session', 'c2', '--yes', '--allow-denied', '--json']);
    assert.is(forced.status, 0, forced.stdout);
    assert.is(readFileSync(path.join(repo, '.claude/settings.json'), 'utf8'), '{}\n');
  },
);

t(
  'hagent integrate run by the human from a session worktree writes the main checkout, as before',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const s = startSession(repo, ['--name', 'c3']);
    const r = hagent(s.worktree, ['integrate', 'gemini', '--json'], {
      env: { HOME: path.join(repo, '.home-not-used') },
    });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.ok(existsSync(path.join(repo, '.gemini/settings.json')));
    assert.not.ok(existsSync(path.join(s.worktree, '.gemini/settings.json')));
  },
);

// The kinds of repository users have, through the real CLI: SHA-256 object ids, line-ending and
// content filters (core.autocrlf, eol=crlf, git-lfs), submodules, sparse checkouts, a bare
// repository with worktrees and a repository folder that moved. Each runs the whole session cycle,
// or the refusal that keeps the repository whole.

/** Every CLI call of this file: no apply may spin (a parser bug once did, forever). */
const run = (cwd: string, args: string[], input?: string) =>
  hagent(cwd, args, { timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

function ok(cwd: string, args: string[], input?: string) {
  const r = run(cwd, [...args, '--json'], input);
  assert.is(r.status, 0, `hagent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.json;
}

const add = (file: string, ...lines: string[]) =>
  `*** Begin Patch\n*** Add File: ${file}\n${lines.map((l) => `+${l}\n`).join('')}*** End Patch\n`;

/**
 * The whole cycle in `repo` (which holds `a.txt` = one/two/three): apply an update and an add,
 * undo and redo, an outside edit kept by sync, review, approve, land, end. Returns the session's
 * worktree for checks of its files before the end.
 */
function fullCycle(
  repo: string,
  newFile = 'n.txt',
  checks: (worktree: string) => void = () => undefined,
): void {
  const s = startSession(repo, ['--name', 'k1']);
  ok(s.worktree, ['apply', '-'], updatePatch('a.txt', 'two', 'TWO'));
  ok(s.worktree, ['apply', '-'], add(newFile, 'new'));
  ok(s.worktree, ['undo']);
  ok(s.worktree, ['undo', '--redo']);
  const a = path.join(s.worktree, 'a.txt');
  writeFileSync(a, readFileSync(a, 'latin1').replace('three', 'THREE'), 'latin1');
  const synced = ok(s.worktree, ['sync']);
  assert.equal(
    synced.files.map((f: any) => f.path ?? f),
    ['a.txt'],
    JSON.stringify(synced),
  );
  ok(s.worktree, ['apply', '-'], updatePatch('a.txt', 'one', 'ONE'));
  assert.is(
    git(s.worktree, 'status', '--porcelain'),
    '',
    'the session worktree is clean as git sees it',
  );
  checks(s.worktree);
  const review = ok(repo, ['review']);
  assert.equal(review.files.map((f: any) => f.path).sort(), ['a.txt', newFile].sort());
  look(repo);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean after the land");
  assert.equal(git(repo, 'show', 'main:a.txt').split('\n'), ['ONE', 'TWO', 'THREE']);
  ok(repo, ['session', 'end']);
  git(repo, 'fsck', '--no-progress');
}

t('SHA-256: the whole cycle works and no apply spins', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n', 'd/e.txt': 'deep\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  fullCycle(repo, 'd/sub/n.txt');
  assert.is(git(repo, 'rev-parse', 'HEAD').length, 64);
  assert.is(git(repo, 'show', 'main:d/sub/n.txt'), 'new');
});

t('SHA-256: undo refuses a real outside edit and takes back its own patch otherwise', () => {
  const repo = tempDir('hagent-sha256-');
  git(repo, 'init', '-q', '--object-format=sha256', '--initial-branch=main');
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  const s = startSession(repo, ['--name', 'k2']);
  ok(s.worktree, ['apply', '-'], updatePatch('a.txt', 'two', 'TWO'));
  writeFileSync(path.join(s.worktree, 'a.txt'), 'outside\n');
  const stale = run(s.worktree, ['undo', '--json']);
  assert.is(stale.status, 1, stale.stdout);
  assert.is(stale.json.error.code, 'STALE_FILE');
  git(s.worktree, 'checkout', '--', 'a.txt');
  ok(s.worktree, ['undo']);
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

/** The bytes `git checkout` writes for `rev:file` in `repo` (smudge and end-of-line conversion). */
function checkedOut(repo: string, rev: string, file: string): Buffer {
  const r = spawnSync('git', ['cat-file', '--filters', `${rev}:${file}`], {
    cwd: repo,
    env: { ...process.env, ...GIT_ENV },
  });
  assert.is(r.status, 0, r.stderr.toString());
  return r.stdout;
}

/** A repository whose files are committed, then checked out again under its attributes and config. */
function convertingRepo(
  files: Record<string, string>,
  config: Record<string, string> = {},
): string {
  const repo = makeRepo(files);
  for (const [k, v] of Object.entries(config)) git(repo, 'config', k, v);
  for (const f of Object.keys(files)) rmSync(path.join(repo, f));
  git(repo, 'checkout', '--', '.');
  return repo;
}

const CRLF = 'one\r\ntwo\r\nthree\r\n';

t('core.autocrlf=true: CRLF files apply, commit LF blobs, and land as git checks them out', () => {
  const repo = convertingRepo({ 'a.txt': 'one\ntwo\nthree\n' }, { 'core.autocrlf': 'true' });
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), CRLF);
  fullCycle(repo, 'n.txt', (wt) => {
    assert.is(
      readFileSync(path.join(wt, 'a.txt'), 'utf8'),
      'ONE\r\nTWO\r\nTHREE\r\n',
      'the worktree keeps the checked-out form',
    );
    assert.is(
      readFileSync(path.join(wt, 'n.txt'), 'utf8'),
      'new\r\n',
      'a new file gets the form git would check out',
    );
    assert.is(
      git(wt, 'cat-file', 'blob', 'HEAD:a.txt'),
      'ONE\nTWO\nTHREE',
      'the blob is what git stores',
    );
  });
  assert.ok(readFileSync(path.join(repo, 'a.txt')).equals(checkedOut(repo, 'main', 'a.txt')));
  assert.is(readFileSync(path.join(repo, 'n.txt'), 'utf8'), 'new\r\n');
});

t('* text=auto eol=crlf: the whole cycle keeps CRLF in the worktrees and LF in the blobs', () => {
  const repo = convertingRepo({
    '.gitattributes': '* text=auto eol=crlf\n',
    'a.txt': 'one\ntwo\nthree\n',
  });
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), CRLF);
  fullCycle(repo, 'n.txt', (wt) => {
    assert.is(readFileSync(path.join(wt, 'n.txt'), 'utf8'), 'new\r\n');
  });
  assert.ok(readFileSync(path.join(repo, 'a.txt')).equals(checkedOut(repo, 'main', 'a.txt')));
  assert.is(git(repo, 'cat-file', 'blob', 'main:n.txt'), 'new');
});

t('*.bat text eol=crlf: only the .bat files are converted; a delete of one is not stale', () => {
  const repo = convertingRepo({
    '.gitattributes': '*.bat text eol=crlf\n',
    'run.bat': '@echo off\necho hi\n',
    'gone.bat': 'x\n',
    'a.txt': 'lf\n',
  });
  assert.is(readFileSync(path.join(repo, 'run.bat'), 'utf8'), '@echo off\r\necho hi\r\n');
  const s = startSession(repo, ['--name', 'k3']);
  ok(s.worktree, ['apply', '-'], `${updatePatch('run.bat', 'echo hi', 'echo HI')}`);
  ok(
    s.worktree,
    ['apply', '-', '--yes'],
    '*** Begin Patch\n*** Add File: new.bat\n+echo new\n*** Delete File: gone.bat\n*** Update File: a.txt\n-lf\n+LF\n*** End Patch\n',
  );
  assert.is(readFileSync(path.join(s.worktree, 'new.bat'), 'utf8'), 'echo new\r\n');
  assert.is(readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'), 'LF\n');
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  look(repo);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(readFileSync(path.join(repo, 'run.bat'), 'utf8'), '@echo off\r\necho HI\r\n');
  assert.is(git(repo, 'cat-file', 'blob', 'main:run.bat'), '@echo off\necho HI');
  assert.is(readFileSync(path.join(repo, 'new.bat'), 'utf8'), 'echo new\r\n');
  assert.not.ok(existsSync(path.join(repo, 'gone.bat')));
});

t(
  'core.autocrlf=true: the recovery of an interrupted apply judges and puts back the checked-out form',
  () => {
    const repo = convertingRepo(
      { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' },
      { 'core.autocrlf': 'true' },
    );
    const s = startSession(repo, ['--name', 'k10']);
    const prior = {
      a: git(repo, 'rev-parse', 'HEAD:a.txt'),
      b: git(repo, 'rev-parse', 'HEAD:b.txt'),
    };
    const next = spawnSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: repo,
      input: 'one\nTWO\nthree\n',
    })
      .stdout.toString()
      .trim();
    const nextB = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: 'BEE\n' })
      .stdout.toString()
      .trim();
    // Killed after a.txt was published (its CRLF form is on disk) and before b.txt was.
    writeFileSync(path.join(s.worktree, 'a.txt'), 'one\r\nTWO\r\nthree\r\n');
    writeIntentRecord(repo, 'k10', {
      txid: 't1',
      pid: 999999,
      targets: [
        { rel: 'a.txt', prior: prior.a, next },
        { rel: 'b.txt', prior: prior.b, next: nextB },
      ],
    });
    const r = ok(repo, ['doctor']);
    assert.is(r.recoveries.length, 1, JSON.stringify(r));
    assert.is(r.recoveries[0].action, 'restored');
    assert.equal(r.recoveries[0].outside, [], "the CRLF files are hagent's, not outside edits");
    assert.is(
      readFileSync(path.join(s.worktree, 'a.txt'), 'utf8'),
      'one\r\ntwo\r\nthree\r\n',
      'put back in the form git checks out',
    );
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'bee\r\n');
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
  },
);

t(
  'the conversion config and the attribute-file check see a change made after the first apply',
  () => {
    const live = (cwd: string, args: string[], input: string) =>
      hagent(cwd, [...args, '--json'], {
        input,
        timeoutMs: 30_000,
        unsetEnv: ['GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'],
      });
    const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n', 'c.bat': 'x\n' });
    const s = startSession(repo, ['--name', 'k11']);
    assert.is(live(s.worktree, ['apply', '-'], updatePatch('a.txt', 'one', 'ONE')).status, 0);
    // core.autocrlf turned on afterwards: the next apply must see it (CRLF on disk, LF blob).
    git(repo, 'config', 'core.autocrlf', 'true');
    writeFileSync(path.join(s.worktree, 'b.txt'), 'bee\r\n');
    git(s.worktree, 'add', 'b.txt');
    assert.is(git(s.worktree, 'status', '--porcelain'), '', 'git calls the CRLF file clean');
    const r = live(s.worktree, ['apply', '-'], updatePatch('b.txt', 'bee', 'BEE'));
    assert.is(r.status, 0, r.stdout);
    assert.is(git(s.worktree, 'cat-file', 'blob', 'HEAD:b.txt'), 'BEE');
    assert.is(readFileSync(path.join(s.worktree, 'b.txt'), 'utf8'), 'BEE\r\n');
    git(repo, 'config', '--unset', 'core.autocrlf');
    // A .gitattributes that appears later in the worktree is read.
    writeFileSync(path.join(s.worktree, '.gitattributes'), '*.bat text eol=crlf\n');
    const bat = live(s.worktree, ['apply', '-'], updatePatch('c.bat', 'x', 'y'));
    assert.is(bat.status, 0, bat.stdout);
    assert.is(readFileSync(path.join(s.worktree, 'c.bat'), 'utf8'), 'y\r\n');
    assert.is(git(s.worktree, 'cat-file', 'blob', 'HEAD:c.bat'), 'y');
  },
);

const lfs = spawnSync('git', ['lfs', 'version']).status === 0;

function lfsRepo(): string {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, 'lfs', 'install', '--local');
  writeFiles(repo, {
    '.gitattributes': '*.dat filter=lfs diff=lfs merge=lfs -text\n',
    'big.dat': 'alpha\nbeta\n',
  });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'lfs');
  return repo;
}

const isPointer = (text: string) => text.startsWith('version https://git-lfs.github.com/spec/v1\n');

const lfsTest = testOrSkip(
  t,
  'repository kinds',
  lfs ? undefined : 'git-lfs is not installed (Debian: git-lfs)',
);

lfsTest(
  'git-lfs: an LFS file is edited, a new *.dat is committed as a pointer, and the checkout is clean after land',
  () => {
    const repo = lfsRepo();
    const s = startSession(repo, ['--name', 'k4']);
    assert.is(readFileSync(path.join(s.worktree, 'big.dat'), 'utf8'), 'alpha\nbeta\n');
    ok(s.worktree, ['apply', '-'], updatePatch('big.dat', 'beta', 'BETA'));
    ok(s.worktree, ['apply', '-'], add('new.dat', 'fresh'));
    ok(s.worktree, ['undo']);
    ok(s.worktree, ['undo', '--redo']);
    writeFileSync(path.join(s.worktree, 'big.dat'), 'alpha\nBETA\ngamma\n');
    writeFileSync(path.join(s.worktree, 'synced.dat'), 'made outside\n');
    assert.equal(
      ok(s.worktree, ['sync']).files.map((f: any) => f.path),
      ['big.dat', 'synced.dat'],
    );
    assert.ok(
      isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:synced.dat')),
      'a *.dat adopted by sync is a pointer too',
    );
    ok(s.worktree, ['apply', '-'], updatePatch('big.dat', 'gamma', 'GAMMA'));
    assert.is(git(s.worktree, 'status', '--porcelain'), '');
    assert.ok(
      isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:new.dat')),
      'a new *.dat is a pointer',
    );
    assert.ok(isPointer(git(s.worktree, 'cat-file', 'blob', 'HEAD:big.dat')));
    assert.is(
      readFileSync(path.join(s.worktree, 'new.dat'), 'utf8'),
      'fresh\n',
      'the worktree holds the content',
    );
    look(repo);
    ok(repo, ['review', '--approve']);
    ok(repo, ['land']);
    assert.is(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean after land");
    assert.is(readFileSync(path.join(repo, 'new.dat'), 'utf8'), 'fresh\n');
    assert.is(readFileSync(path.join(repo, 'big.dat'), 'utf8'), 'alpha\nBETA\nGAMMA\n');
    ok(repo, ['session', 'end']);
    git(repo, 'fsck', '--no-progress');
  },
);

t(
  'a filter attribute naming a driver git has no command for is refused before anything is written',
  () => {
    const repo = makeRepo({ '.gitattributes': '*.dat filter=lfs -text\n', 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'k5']);
    const r = run(s.worktree, ['apply', '-', '--json'], add('new.dat', 'raw'));
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'FILTER_UNAVAILABLE');
    assert.is(r.json.error.path, 'new.dat');
    assert.match(r.json.error.hint, /git lfs install/);
    assert.not.ok(existsSync(path.join(s.worktree, 'new.dat')));
    assert.is(git(repo, 'rev-list', '--count', 'main..hagent/k5'), '0');
  },
);

t('a filter program that fails is refused with FILTER_FAILED and nothing is written', () => {
  const repo = makeRepo({ '.gitattributes': '*.enc filter=broken\n', 'a.txt': 'a\n' });
  git(repo, 'config', 'filter.broken.clean', 'false');
  git(repo, 'config', 'filter.broken.smudge', 'cat');
  git(repo, 'config', 'filter.broken.required', 'true');
  const s = startSession(repo, ['--name', 'k6']);
  const r = run(s.worktree, ['apply', '-', '--json'], add('x.enc', 'secret'));
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'FILTER_FAILED');
  assert.not.ok(existsSync(path.join(s.worktree, 'x.enc')));
  assert.is(git(repo, 'rev-list', '--count', 'main..hagent/k6'), '0');
});

function submoduleRepo(): { repo: string; gitlink: string } {
  const sub = makeRepo({ 's.txt': 's\n' });
  const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
  git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
  git(repo, 'commit', '-q', '-m', 'submodule');
  return { repo, gitlink: git(repo, 'rev-parse', 'HEAD:sub') };
}

t('submodules: a path inside one is refused, and the rest of the cycle keeps the gitlink', () => {
  const { repo, gitlink } = submoduleRepo();
  const s = startSession(repo, ['--name', 'k7']);
  for (const patch of [
    add('sub/new.txt', 'x'),
    updatePatch('sub', 'a', 'b'),
    '*** Begin Patch\n*** Delete File: sub\n*** End Patch\n',
  ]) {
    const r = run(s.worktree, ['apply', '-', '--json', '--yes'], patch);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'SUBMODULE_PATH', r.stdout);
    assert.is(r.json.error.submodule, 'sub');
  }
  assert.not.ok(existsSync(path.join(s.worktree, 'sub', 'new.txt')));
  fullCycleFrom(repo, s.worktree);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink, 'the gitlink is still on the branch');
  assert.is(git(repo, 'ls-tree', 'main', 'sub').split(/\s/)[0], '160000');
});

t("submodules: a land never turns a gitlink into a folder, and the hint's way out lands", () => {
  const { repo, gitlink } = submoduleRepo();
  const s = startSession(repo, ['--name', 'k8']);
  // The agent's own git commands replace the gitlink with a folder of files.
  git(s.worktree, 'rm', '-q', '--cached', 'sub');
  writeFiles(s.worktree, { 'sub/y.txt': 'y\n', 'a.txt': 'one\nTWO\nthree\n' });
  git(s.worktree, 'add', 'sub/y.txt', 'a.txt');
  git(s.worktree, 'commit', '-q', '-m', 'agent commit');
  look(repo);
  ok(repo, ['review', '--approve']);
  const r = run(repo, ['land', '--json']);
  assert.is(r.status, 1, r.stdout);
  assert.is(r.json.error.code, 'SUBMODULE_PATH');
  assert.equal(r.json.error.files, ['sub']);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink, 'nothing landed');
  // The hint: restore the gitlink in the session worktree, sync, land.
  git(s.worktree, 'rm', '-r', '-q', '--cached', 'sub');
  git(s.worktree, 'checkout', s.base, '--', 'sub');
  rmSync(path.join(s.worktree, 'sub', 'y.txt'));
  ok(s.worktree, ['sync']);
  look(repo);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'rev-parse', 'main:sub'), gitlink);
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
});

/** The middle of {@link fullCycle} for a session already started: apply, undo, redo, land, end. */
function fullCycleFrom(repo: string, worktree: string): void {
  ok(worktree, ['apply', '-'], updatePatch('a.txt', 'two', 'TWO'));
  ok(worktree, ['apply', '-'], add('n.txt', 'new'));
  ok(worktree, ['undo']);
  ok(worktree, ['undo', '--redo']);
  writeFileSync(path.join(worktree, 'outside.txt'), 'made outside hagent\n');
  assert.equal(
    ok(worktree, ['sync']).files.map((f: any) => f.path),
    ['outside.txt'],
  );
  look(repo);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'show', 'main:a.txt'), 'one\nTWO\nthree');
  assert.is(git(repo, 'show', 'main:outside.txt'), 'made outside hagent');
  ok(repo, ['session', 'end']);
  git(repo, 'fsck', '--no-progress');
}

t('sparse checkouts: a file outside the cone is refused as such, with a hint that works', () => {
  const repo = makeRepo({ 'in/a.txt': 'a\n', 'out/b.txt': 'b\n', 'top.txt': 't\n' });
  git(repo, 'sparse-checkout', 'set', 'in');
  const s = startSession(repo, ['--name', 'k9']);
  assert.not.ok(
    existsSync(path.join(s.worktree, 'out', 'b.txt')),
    'the session worktree is sparse too',
  );
  for (const patch of [
    updatePatch('out/b.txt', 'b', 'B'),
    '*** Begin Patch\n*** Delete File: out/b.txt\n*** End Patch\n',
  ]) {
    const r = run(s.worktree, ['apply', '-', '--json', '--yes'], patch);
    assert.is(r.status, 1, r.stdout);
    assert.is(r.json.error.code, 'OUTSIDE_SPARSE');
    assert.match(r.json.error.message, /outside the sparse checkout/);
    assert.match(r.json.error.hint, /sparse-checkout add "out"/);
  }
  ok(s.worktree, ['apply', '-'], updatePatch('in/a.txt', 'a', 'A'));
  ok(s.worktree, ['undo']);
  ok(s.worktree, ['undo', '--redo']);
  writeFileSync(path.join(s.worktree, 'in', 'c.txt'), 'c\n');
  assert.equal(
    ok(s.worktree, ['sync']).files.map((f: any) => f.path),
    ['in/c.txt'],
  );
  git(s.worktree, 'sparse-checkout', 'add', 'out');
  ok(s.worktree, ['apply', '-'], updatePatch('out/b.txt', 'b', 'B'));
  look(repo);
  ok(repo, ['review', '--approve']);
  ok(repo, ['land']);
  assert.is(git(repo, 'status', '--porcelain'), '');
  assert.is(git(repo, 'show', 'main:out/b.txt'), 'B');
  assert.is(readFileSync(path.join(repo, 'in', 'a.txt'), 'utf8'), 'A\n');
  assert.not.ok(existsSync(path.join(repo, 'out')), "the user's sparse checkout stays sparse");
  ok(repo, ['session', 'end']);
});

t(
  'bare repository with worktrees: config and hooks come from the worktree holding the target branch',
  () => {
    const seed = makeRepo({
      'a.txt': 'one\ntwo\nthree\n',
      '.hagent/config.json': '{"deniedPaths":["secret/**"]}\n',
    });
    const top = tempDir('hagent-bare-');
    const bare = path.join(top, 'repo.git');
    git(top, 'clone', '-q', '--bare', seed, bare);
    git(bare, 'worktree', 'add', '-q', path.join(top, 'main'), 'main');
    const main = path.join(top, 'main');
    writeFiles(main, {
      '.hagent/hooks/pre-apply':
        '#!/bin/sh\ncat > /dev/null\necho "vetoed by the main worktree\'s hook" >&2\nexit 1\n',
    });
    chmodSync(path.join(main, '.hagent/hooks/pre-apply'), 0o755);
    const shown = ok(main, ['config', 'show']);
    assert.is(shown.file, path.join(main, '.hagent', 'config.json'));
    const s = startSession(main, ['--name', 'b1']);
    const denied = run(s.worktree, ['apply', '-', '--json'], add('secret/x.txt', 'x'));
    assert.is(denied.json?.error?.code, 'PATH_DENIED', denied.stdout);
    const vetoed = run(s.worktree, ['apply', '-', '--json'], updatePatch('a.txt', 'two', 'TWO'));
    assert.is(vetoed.json?.error?.code, 'HOOK_REJECTED', vetoed.stdout);
    rmSync(path.join(main, '.hagent/hooks/pre-apply'));
    fullCycleFrom(main, s.worktree);
  },
);

/** Runs `body` with session worktrees inside the git folder (`worktreeRoot: "git-dir"`), the layout that moves with the repository. */
function inGitDir(body: () => void): () => void {
  return () => {
    process.env.HAGENT_WORKTREE_ROOT = 'git-dir';
    try {
      body();
    } finally {
      delete process.env.HAGENT_WORKTREE_ROOT;
    }
  };
}

t(
  'a moved repository folder: sessions are found and repaired, and every command keeps working',
  inGitDir(() => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\nthree\n' });
    startSession(repo, ['--name', 'm1']);
    startSession(repo, ['--name', 'm2']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const wt1 = path.join(moved, '.git', 'hagent', 'worktrees', 'm1');
    // From inside a moved session worktree (git itself no longer finds its repository there).
    ok(wt1, ['apply', '-'], updatePatch('a.txt', 'two', 'TWO'));
    const list = ok(moved, ['session', 'list']);
    assert.equal(list.sessions.map((x: any) => x.worktree).sort(), [
      wt1,
      path.join(moved, '.git', 'hagent', 'worktrees', 'm2'),
    ]);
    const doctor = ok(moved, ['doctor']);
    assert.equal(
      doctor.findings.filter((f: any) => !f.fixed),
      [],
      JSON.stringify(doctor.findings),
    );
    assert.is(git(wt1, 'status', '--porcelain'), '');
    assert.is(git(moved, 'worktree', 'list', '--porcelain').includes(`worktree ${wt1}\n`), true);
    ok(moved, ['session', 'end', 'm2']);
    ok(wt1, ['apply', '-'], add('n.txt', 'new'));
    ok(wt1, ['undo']);
    ok(wt1, ['undo', '--redo']);
    look(moved);
    ok(moved, ['review', '--approve']);
    ok(moved, ['land']);
    assert.is(git(moved, 'status', '--porcelain'), '');
    assert.is(readFileSync(path.join(moved, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.is(readFileSync(path.join(moved, 'n.txt'), 'utf8'), 'new\n');
    ok(moved, ['session', 'end']);
    git(moved, 'fsck', '--no-progress');
  }),
);

t(
  'doctor right after a move reports the repair it made',
  inGitDir(() => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startSession(repo, ['--name', 'm3']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const doctor = ok(moved, ['doctor']);
    const f = doctor.findings.find((x: any) => x.kind === 'moved-worktree');
    assert.ok(f && f.fixed && f.session === 'm3', JSON.stringify(doctor.findings));
    ok(
      path.join(moved, '.git', 'hagent', 'worktrees', 'm3'),
      ['apply', '-'],
      updatePatch('a.txt', 'a', 'A'),
    );
  }),
);

t(
  'a moved repository with its worktrees outside it: the first command in the repository mends the links',
  () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const s = startSession(repo, ['--name', 'm4']);
    const moved = `${repo}-moved`;
    renameSync(repo, moved);
    const doctor = ok(moved, ['doctor']);
    const f = doctor.findings.find((x: any) => x.kind === 'moved-worktree');
    assert.ok(f && f.fixed && f.session === 'm4', JSON.stringify(doctor.findings));
    ok(s.worktree, ['apply', '-'], updatePatch('a.txt', 'a', 'A'));
    ok(moved, ['land', '--yes']);
    assert.is(readFileSync(path.join(moved, 'a.txt'), 'utf8'), 'A\n');
    ok(moved, ['session', 'end']);
  },
);

t.run();
