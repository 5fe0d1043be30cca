/**
 * The human's commands stay the human's: review --approve, land, land --undo, undo --land,
 * session end and integrate refuse HUMAN_ONLY (nothing changed) when run with the agent marker
 * HAGENT_AGENT, which hagent sets for the agent of `hagent run`, the command of `hagent exec` and
 * the MCP server's exec; the guard refuses those verbs in front of every shell an agent has (exec,
 * MCP exec, Claude's Bash through the PreToolUse hook); and the agents' own configuration files
 * are denied paths, so strict mode cannot be switched off from a session.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const test = suite('human-only commands');
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

test('with HAGENT_AGENT set, every human-only command refuses HUMAN_ONLY (exit 1) and changes nothing', () => {
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
  assert.is(
    hagent(s.worktree, ['review', '--approve', '--json'], { env: { HAGENT_AGENT: '' } }).status,
    0,
  );
  const landed = hagent(repo, ['land', '--session', 'x1', '--json']);
  assert.is(landed.status, 0, landed.stdout + landed.stderr);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'two\n');
});

test('hagent exec: the guard refuses approve && land (hagent-human-only); a script it cannot see runs with the marker and is refused HUMAN_ONLY', () => {
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
  assert.is((sneak.json.stdout.match(/"code": "HUMAN_ONLY"/g) ?? []).length, 3, sneak.json.stdout);
  assertUntouched(repo, s);
});

test('the MCP exec tool (real SDK client): the guard refuses the human-only verbs; a hidden script is refused HUMAN_ONLY', async () => {
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
});

test("Claude's Bash through the PreToolUse hook (hagent integrate, no marker): approve && land is denied with the rule", () => {
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
});

test('hagent run: the agent process carries HAGENT_AGENT, so the hagent it runs refuses to land', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const dir = tempDir('hagent-fake-agent-');
  const record = path.join(dir, 'record.txt');
  const bin = path.join(dir, 'agent');
  writeFileSync(
    bin,
    `#!/bin/sh\necho "$HAGENT_AGENT" > '${record}'\necho two > a.txt\n'${process.execPath}' '${BIN}' sync >/dev/null\n'${process.execPath}' '${BIN}' land --yes --json >> '${record}'\nexit 0\n`,
    { mode: 0o755 },
  );
  const r = hagent(repo, ['run', 'claude', '--name', 'r1'], { env: { HAGENT_CLAUDE_BIN: bin } });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const rec = readFileSync(record, 'utf8');
  assert.is(rec.split('\n')[0], 'r1', 'the marker holds the session id');
  assert.match(rec, /"code": "HUMAN_ONLY"/);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n', 'nothing landed');
});

test.run();
