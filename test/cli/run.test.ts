/**
 * `hagent run` with stand-in agent binaries (shell scripts that record how they were started):
 * the worktree as working folder, the per-run hook mechanism of each agent, the arguments after
 * `--`, the agent's exit status, the summary; a missing binary is AGENT_NOT_INSTALLED before any
 * session is made. The real Claude Code and Codex runs are in test/agents/.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, tempDir, TEST_CACHE } from '../helpers/index.js';

// The fake agents below record what they were given in a temp folder, outside the worktree: they run
// without the sandbox (--no-sandbox), which would stop that write (the run inside it: hook-sandbox.test.ts).
const test = suite('hagent run');

/** A stand-in agent: writes its cwd, argv and HAGENT_* env to `record`, makes a file, exits with `status`. */
function fakeAgent(status: number): { bin: string; record: string } {
  const dir = tempDir('hagent-fake-agent-');
  const record = path.join(dir, 'record.json');
  const bin = path.join(dir, 'agent');
  writeFileSync(
    bin,
    `#!/bin/sh\nnode -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({cwd: process.cwd(), args: process.argv.slice(2), session: process.env.HAGENT_SESSION, worktree: process.env.HAGENT_WORKTREE, settings: process.argv[2] === "--settings" ? {text: require("fs").readFileSync(process.argv[3], "utf8"), mode: require("fs").statSync(process.argv[3]).mode & 511} : null, files: Object.fromEntries([".gemini/settings.json", ".cursor/hooks.json", ".github/hooks/hagent.json"].filter((f) => require("fs").existsSync(f)).map((f) => [f, require("fs").readFileSync(f, "utf8")]))}))' ${JSON.stringify(record)} "$@"\necho made > made-by-agent.txt\nexit ${status}\n`,
    { mode: 0o755 },
  );
  return { bin, record };
}

test("claude: runs in the worktree with --settings FILE (hagent's hooks), the args after --, and exits with its status", () => {
  const repo = makeRepo();
  const fake = fakeAgent(3);
  const r = hagent(
    repo,
    ['run', 'claude', '--name', 'r1', '--no-sandbox', '--', '-p', 'hello world'],
    {
      env: { HAGENT_CLAUDE_BIN: fake.bin },
    },
  );
  assert.is(r.status, 3, r.stderr);
  const rec = JSON.parse(readFileSync(fake.record, 'utf8'));
  assert.is(rec.session, 'r1');
  assert.is(rec.cwd, rec.worktree);
  assert.ok(
    rec.worktree.startsWith(TEST_CACHE + path.sep),
    `the worktree follows XDG_CACHE_HOME: ${rec.worktree}`,
  );
  assert.is(rec.args[0], '--settings');
  assert.equal(rec.args.slice(2), ['-p', 'hello world']);
  const settings = JSON.parse(rec.settings.text);
  // HTTP hooks answered by the run (src/agents/hook-http.ts), with the run's token: the file is
  // this user's only.
  const handler = settings.hooks.PreToolUse[0].hooks[0];
  assert.is(handler.type, 'http');
  assert.match(handler.url, /^http:\/\/127\.0\.0\.1:\d+\/hooks\/claude$/);
  assert.match(handler.headers.Authorization, /^Bearer [0-9a-f]{64}$/);
  assert.is(rec.settings.mode, 0o600);
  assert.not.ok(existsSync(rec.args[1]), 'removed when the run ends: its token is dead');
  assert.ok(!rec.args[1].startsWith(repo + path.sep + '.claude'), "not in the user's checkout");
  assert.match(r.stdout, /hagent session r1: 0 commits/);
  assert.match(r.stdout, /not yet committed: made-by-agent\.txt/);
  assert.match(r.stdout, /hagent review --session r1/);
});

test('codex: -C WORKTREE, hook trust for this run and -c hooks.<Event>, placed after exec', () => {
  const repo = makeRepo();
  const fake = fakeAgent(0);
  const r = hagent(
    repo,
    ['run', 'codex', '--name', 'r2', '--no-sandbox', '--json', '--', 'exec', 'fix it'],
    {
      env: { HAGENT_CODEX_BIN: fake.bin },
    },
  );
  assert.is(r.status, 0, r.stderr);
  const rec = JSON.parse(readFileSync(fake.record, 'utf8'));
  assert.is(rec.args[0], 'exec');
  assert.equal(rec.args.slice(1, 4), ['-C', rec.worktree, '--dangerously-bypass-hook-trust']);
  assert.ok(
    rec.args.some((a: string) =>
      /^hooks\.PreToolUse=\[\{hooks=\[\{type="command",command=".* hook codex",timeout=120\}\]\}\]$/.test(
        a,
      ),
    ),
    rec.args.join(' '),
  );
  assert.is(rec.args.at(-1), 'fix it');
  assert.equal(r.json.outsideEdits, ['made-by-agent.txt']);
  assert.is(r.json.exitCode, 0);
});

test('gemini: its workspace settings file inside the worktree', () => {
  const repo = makeRepo();
  const fake = fakeAgent(0);
  assert.is(
    hagent(repo, ['run', 'gemini', '--name', 'r3', '--no-sandbox'], {
      env: { HAGENT_GEMINI_BIN: fake.bin },
    }).status,
    0,
  );
  const rec = JSON.parse(readFileSync(fake.record, 'utf8'));
  assert.is(
    JSON.parse(rec.files['.gemini/settings.json']).hooks.BeforeTool[0].matcher,
    'write_file|replace|run_shell_command',
  );
  assert.not.ok(
    existsSync(path.join(rec.worktree, '.gemini')),
    'removed after the run, with its folder',
  );
});

test("cursor-agent and copilot: their hook file inside the worktree, left out of the session's commits", () => {
  const repo = makeRepo();
  for (const [name, rel, env] of [
    ['cursor-agent', '.cursor/hooks.json', 'HAGENT_CURSOR_AGENT_BIN'],
    ['copilot', '.github/hooks/hagent.json', 'HAGENT_COPILOT_BIN'],
  ] as const) {
    const fake = fakeAgent(0);
    const id = name === 'copilot' ? 'r5' : 'r4';
    const r = hagent(repo, ['run', name, '--name', id, '--no-sandbox', '--json'], {
      env: { [env]: fake.bin },
    });
    assert.is(r.status, 0, r.stderr);
    const wt = r.json.worktree as string;
    assert.match(
      JSON.parse(readFileSync(fake.record, 'utf8')).files[rel],
      /hagent\.cjs'? hook (cursor|copilot)/,
      rel,
    );
    assert.not.ok(existsSync(path.join(wt, rel)), `${rel} removed after the run`);
    assert.equal(r.json.outsideEdits, ['made-by-agent.txt']);
    assert.is(hagent(repo, ['sync', '--session', id]).status, 0);
    assert.is(git(repo, 'show', '--name-only', '--format=', `hagent/${id}`), 'made-by-agent.txt');
  }
});

test('a missing agent binary is AGENT_NOT_INSTALLED with the install command, and no session is made', () => {
  const repo = makeRepo();
  const r = hagent(repo, ['run', 'claude', '--name', 'r6'], {
    env: { PATH: '/usr/bin:/bin' },
    unsetEnv: ['HAGENT_CLAUDE_BIN'],
  });
  assert.is(r.status, 1);
  assert.match(r.stderr, /error\[AGENT_NOT_INSTALLED\]/);
  assert.match(r.stderr, /npm install -g @anthropic-ai\/claude-code/);
  assert.equal(hagent(repo, ['session', 'list', '--json']).json.sessions, []);
});

test('usage: an unknown agent, --session with --name, a stray argument before --', () => {
  const repo = makeRepo();
  assert.is(hagent(repo, ['run', 'vim']).status, 2);
  assert.is(hagent(repo, ['run', 'claude', '--session', 'a', '--name', 'b']).status, 2);
  const stray = hagent(repo, ['run', 'claude', 'fix']);
  assert.is(stray.status, 2);
  assert.match(stray.stderr, /after --/);
});

/** A stand-in agent that fails at once, as one not logged in does: a message, a status, no change. */
function failingAgent(status: number): string {
  const bin = path.join(tempDir('hagent-fake-agent-'), 'agent');
  writeFileSync(bin, `#!/bin/sh\necho "Invalid API key. Please run /login" >&2\nexit ${status}\n`, {
    mode: 0o755,
  });
  return bin;
}

test('an agent failing before changing anything: the empty session it started is removed, its status kept', () => {
  const repo = makeRepo();
  const r = hagent(repo, ['run', 'claude', '--name', 'f1'], {
    env: { HAGENT_CLAUDE_BIN: failingAgent(5) },
  });
  assert.is(r.status, 5, r.stderr);
  assert.match(r.stderr, 'Invalid API key');
  assert.match(
    r.stdout,
    'exited with status 5 before changing anything; the empty session was removed',
  );
  assert.not.match(r.stdout, /hagent land/);
  assert.is(git(repo, 'branch', '--list', 'hagent/f1'), '', 'branch removed');
  assert.not.match(git(repo, 'worktree', 'list'), /f1/, 'worktree removed');
  assert.equal(hagent(repo, ['session', 'list', '--json']).json.sessions, []);
  const j = hagent(repo, ['run', 'gemini', '--name', 'f2', '--json'], {
    env: { HAGENT_GEMINI_BIN: failingAgent(1) },
  });
  assert.is(j.status, 1);
  assert.is(j.json.removed, true);
});

test('a failing agent leaves a resumed session, a session with work, and a run that exited 0', () => {
  const repo = makeRepo();
  assert.is(hagent(repo, ['session', 'start', '--name', 'kept']).status, 0);
  const resumed = hagent(repo, ['run', 'claude', '--session', 'kept', '--json'], {
    env: { HAGENT_CLAUDE_BIN: failingAgent(2) },
  });
  assert.is(resumed.status, 2, resumed.stderr);
  assert.is(resumed.json.removed, false);
  const worked = hagent(repo, ['run', 'claude', '--name', 'w1', '--json'], {
    env: { HAGENT_CLAUDE_BIN: fakeAgent(4).bin },
  });
  assert.is(worked.status, 4);
  assert.is(worked.json.removed, false, 'the agent left a file: that is work');
  const ok = hagent(repo, ['run', 'claude', '--name', 'z1', '--json'], {
    env: { HAGENT_CLAUDE_BIN: failingAgent(0) },
  });
  assert.is(ok.status, 0);
  assert.is(ok.json.removed, false);
  assert.equal(
    hagent(repo, ['session', 'list', '--json'])
      .json.sessions.map((x: { id: string }) => x.id)
      .sort(),
    ['kept', 'w1', 'z1'],
  );
});

test.run();
