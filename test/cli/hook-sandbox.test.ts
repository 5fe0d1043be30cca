/**
 * The sandbox through the agents' hooks and `hagent run`, with the real CLI and real bwrap: an
 * allowed shell call of each agent is rewritten into the session's sandbox in that agent's
 * input-rewriting form; the rewritten command, run by a shell as the agent would, cannot write
 * the user's checkout and its own commit reaches the session through the post-tool hook, which
 * also tells the agent what the sandbox stopped; `"sandbox": "off"` and a machine without bwrap
 * leave the command as it is; `hagent run` starts the whole agent inside and `--no-sandbox` does
 * not. Real agent binaries: test/agents/claude-sandbox.test.ts. Skipped where bwrap cannot start.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';
import { testOrSkip } from '../helpers/skip.js';

const test = suite('hagent hook: the sandbox');
const bwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0;
const it = testOrSkip(
  test,
  'the sandbox through the hooks',
  bwrap ? undefined : 'bubblewrap (bwrap) cannot start here',
);

function setup() {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'h1']);
  return { repo, wt: s.worktree as string };
}

/** Each agent's pre-tool payload of a shell call, and where its answer puts the new command. */
const SHELL = {
  claude: (wt: string, command: string) => ({
    args: ['claude'],
    payload: {
      hook_event_name: 'PreToolUse',
      cwd: wt,
      tool_name: 'Bash',
      tool_use_id: 'toolu_1',
      tool_input: { command, description: 'd' },
    },
    read: (j: any) => {
      assert.is(j.hookSpecificOutput.permissionDecision, 'allow');
      assert.is(j.hookSpecificOutput.updatedInput.description, 'd', 'the rest of the input kept');
      return j.hookSpecificOutput.updatedInput.command as string;
    },
  }),
  codex: (wt: string, command: string) => ({
    args: ['codex'],
    payload: {
      hook_event_name: 'PreToolUse',
      cwd: wt,
      tool_name: 'exec_command',
      tool_use_id: 'call_1',
      tool_input: { cmd: command },
    },
    read: (j: any) => {
      assert.is(j.hookSpecificOutput.permissionDecision, 'allow');
      return j.hookSpecificOutput.updatedInput.cmd as string;
    },
  }),
  gemini: (wt: string, command: string) => ({
    args: ['gemini'],
    payload: {
      hook_event_name: 'BeforeTool',
      cwd: wt,
      tool_name: 'run_shell_command',
      tool_input: { command, description: 'd' },
    },
    read: (j: any) => j.hookSpecificOutput.tool_input.command as string,
  }),
  cursor: (wt: string, command: string) => ({
    args: ['cursor'],
    payload: { hook_event_name: 'beforeShellExecution', workspace_roots: [wt], command, cwd: wt },
    read: (j: any) => {
      assert.is(j.permission, 'allow');
      return j.updated_input.command as string;
    },
  }),
  copilot: (wt: string, command: string) => ({
    args: ['copilot', 'preToolUse'],
    payload: { cwd: wt, toolName: 'bash', toolArgs: JSON.stringify({ command }) },
    read: (j: any) => {
      assert.is(j.permissionDecision, 'allow');
      return j.modifiedArgs.command as string;
    },
  }),
} as const;

for (const agent of Object.keys(SHELL) as (keyof typeof SHELL)[]) {
  it(`${agent}: an allowed shell call is rewritten into the sandbox; run as the agent would, it cannot write the user's checkout`, () => {
    const { repo, wt } = setup();
    const target = path.join(repo, 'a.txt');
    // A script the guard cannot read, finding the user's checkout at run time.
    writeFileSync(
      path.join(wt, 'out.sh'),
      `R=$(git worktree list --porcelain | head -1 | cut -d' ' -f2-)\necho out > "$R/a.txt"\n`,
    );
    const spec = SHELL[agent](wt, 'echo in > inside.txt; bash out.sh');
    const r = hagent(wt, ['hook', ...spec.args], { input: JSON.stringify(spec.payload) });
    assert.is(r.status, 0, r.stderr);
    const command = spec.read(JSON.parse(r.stdout));
    assert.match(command, /bwrap .* -c /);
    const ran = spawnSync('sh', ['-c', command], { cwd: wt, encoding: 'utf8' });
    assert.match(ran.stderr, /Read-only file system/);
    assert.is(readFileSync(target, 'utf8'), 'one\n', "the user's checkout is untouched");
    assert.is(readFileSync(path.join(wt, 'inside.txt'), 'utf8'), 'in\n');
  });
}

it('claude: a commit the rewritten command makes inside reaches the session branch through the post-tool hook, which tells the agent what the sandbox stopped (journaled)', () => {
  const { repo, wt } = setup();
  git(repo, 'branch', 'keep');
  writeFileSync(path.join(wt, 'del.sh'), 'git branch -D keep\n');
  const command =
    'echo mine > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -q -m inside; bash del.sh';
  const spec = SHELL.claude(wt, command);
  const pre = hagent(wt, ['hook', 'claude'], { input: JSON.stringify(spec.payload) });
  assert.is(pre.status, 0, pre.stderr);
  const ran = spawnSync('sh', ['-c', spec.read(JSON.parse(pre.stdout))], {
    cwd: wt,
    encoding: 'utf8',
  });
  assert.ok(git(repo, 'rev-parse', '--verify', 'keep'), "the user's branch is still there");
  const post = hagent(wt, ['hook', 'claude'], {
    input: JSON.stringify({
      ...spec.payload,
      hook_event_name: 'PostToolUse',
      tool_response: { stdout: ran.stdout, stderr: ran.stderr },
    }),
  });
  assert.is(post.status, 0, post.stderr);
  assert.ok(
    git(repo, 'log', '--format=%s', 'main..hagent/h1').split('\n').includes('inside'),
    "the agent's commit made inside is on the session branch",
  );
  assert.is(git(repo, 'show', 'hagent/h1:own.txt'), 'mine');
  const context = JSON.parse(post.stdout).hookSpecificOutput.additionalContext as string;
  assert.match(context, /hagent sandbox: .*read-only: the repository's refs/);
  const log = hagent(repo, ['log', '--json']).json;
  assert.ok(
    log.entries.some((e: { code?: string }) => e.code === 'SANDBOX_DENIED'),
    JSON.stringify(log.entries),
  );
});

it('"sandbox": "off" in the config, and a machine without bwrap, leave the command as it is', () => {
  const { repo, wt } = setup();
  const spec = SHELL.claude(wt, 'ls');
  const none = hagent(wt, ['hook', 'claude'], {
    input: JSON.stringify(spec.payload),
    env: { HAGENT_BWRAP: '' },
  });
  assert.is(none.status, 0, none.stderr);
  assert.is(none.stdout, '', 'no rewrite');
  assert.match(none.stderr, /bubblewrap|sandbox/, 'said, where the hook log shows it');
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(path.join(repo, '.hagent', 'config.json'), '{"sandbox": "off"}\n');
  const off = hagent(wt, ['hook', 'claude'], { input: JSON.stringify(spec.payload) });
  assert.is(off.status, 0, off.stderr);
  assert.is(off.stdout, '');
});

it('hagent run: the whole agent starts inside (its writes outside the worktree fail, its marker is set); --no-sandbox starts it as it is; "required" without bwrap refuses before any session', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const dir = tempDir('hagent-fake-agent-');
  const bin = path.join(dir, 'agent');
  writeFileSync(
    bin,
    `#!/bin/sh\necho "sandbox=$HAGENT_SANDBOX" > seen.txt\n{ echo clobbered > '${path.join(repo, 'a.txt')}'; echo x > '${path.join(dir, 'outside.txt')}'; } 2>> seen.txt\nexit 0\n`,
    { mode: 0o755 },
  );
  const r = hagent(repo, ['run', 'claude', '--name', 'r1', '--json'], {
    env: { HAGENT_CLAUDE_BIN: bin },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.sandbox, { on: true });
  const seen = readFileSync(path.join(r.json.worktree, 'seen.txt'), 'utf8');
  assert.match(seen, /sandbox=r1/);
  assert.match(seen, /Read-only file system/);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
  const plain = hagent(repo, ['run', 'claude', '--name', 'r2', '--no-sandbox', '--json'], {
    env: { HAGENT_CLAUDE_BIN: bin },
  });
  assert.is(plain.status, 0, plain.stderr);
  assert.is(plain.json.sandbox.on, false);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'clobbered\n', 'no wall: it wrote');
  git(repo, 'checkout', '--', 'a.txt');
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(path.join(repo, '.hagent', 'config.json'), '{"sandbox": "required"}\n');
  const refused = hagent(repo, ['run', 'claude', '--name', 'r3', '--json'], {
    env: { HAGENT_CLAUDE_BIN: bin, HAGENT_BWRAP: '' },
  });
  assert.is(refused.status, 1);
  assert.is(refused.json.error.code, 'SANDBOX_UNAVAILABLE');
  const list = hagent(repo, ['session', 'list', '--json']).json;
  assert.ok(!list.sessions.some((s: { id: string }) => s.id === 'r3'), 'no session was made');
});

it('hagent run: a process inside that reaches the hook socket chooses neither the environment nor the folder of what the run does outside (a fake git on its PATH never runs)', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const dir = tempDir('hagent-forger-');
  const pwned = path.join(dir, 'pwned');
  const bin = path.join(dir, 'agent');
  // The stand-in agent: a fake git in its temp folder, then hook requests over the run's socket
  // with that folder first on PATH (and one for the user's checkout), each answer recorded.
  writeFileSync(
    bin,
    `#!${process.execPath}
const { mkdirSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const fake = path.join(process.env.TMPDIR, 'fakebin');
mkdirSync(fake, { recursive: true });
writeFileSync(path.join(fake, 'git'), '#!/bin/sh\\necho ran > ${pwned}\\nexec /usr/bin/git "$@"\\n', { mode: 0o755 });
const wt = process.cwd();
const ask = (cwd, file) => new Promise((resolve) => {
  const event = { hook_event_name: 'PostToolUse', cwd, tool_name: 'Write', tool_use_id: 'toolu_' + file,
    tool_input: { file_path: path.join(cwd, file), content: 'x\\n' } };
  const c = net.connect(process.env.HAGENT_HOOK_SOCKET);
  let out = '';
  c.on('connect', () => c.write(JSON.stringify({ v: 1, agent: 'claude', event: 'post-edit',
    input: JSON.stringify(event), cwd, env: { ...process.env, HAGENT_HOOK_SOURCE: 'run', PATH: fake + ':' + process.env.PATH,
    NODE_OPTIONS: '--require ' + path.join(fake, 'nothing.js') } }) + '\\n'));
  c.on('data', (d) => (out += d));
  c.on('close', () => resolve(out));
  c.on('error', (e) => resolve('error ' + e.message));
});
(async () => {
  writeFileSync(path.join(wt, 'b.txt'), 'x\\n');
  const inWt = await ask(wt, 'b.txt');
  const inMain = await ask(${JSON.stringify(repo)}, 'a.txt');
  writeFileSync(path.join(wt, 'answers.json'), JSON.stringify({ inWt, inMain }));
})();
`,
    { mode: 0o755 },
  );
  const r = hagent(repo, ['run', 'claude', '--name', 'f1', '--json'], {
    env: { HAGENT_CLAUDE_BIN: bin },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.sandbox, { on: true });
  const answers = JSON.parse(readFileSync(path.join(r.json.worktree, 'answers.json'), 'utf8'));
  const inWt = JSON.parse(answers.inWt);
  assert.is(inWt.exitCode, 0, answers.inWt);
  assert.match(inWt.stdout, /recorded this edit as commit/, answers.inWt);
  assert.not.ok(existsSync(pwned), "the fake git on the request's PATH never ran outside");
  assert.match(answers.inMain, /"fallback":".*outside the run's session worktree/);
  assert.is(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
  assert.equal(git(repo, 'log', '--format=%s', 'main..hagent/f1').split('\n'), [
    'hagent: Write b.txt',
  ]);
});

it('hagent run without bwrap says so loudly on stderr and runs with the guard alone', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const bin = path.join(tempDir('hagent-fake-agent-'), 'agent');
  writeFileSync(bin, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const r = hagent(repo, ['run', 'claude', '--name', 'w1'], {
    env: { HAGENT_CLAUDE_BIN: bin, HAGENT_BWRAP: '' },
  });
  assert.match(r.stderr, /WITHOUT a sandbox.*bubblewrap/);
});

it('inside the sandbox, hagent refuses the human-only steps whatever the environment (the sandbox is in its mount table): HUMAN_ONLY, nothing lands', () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'x.txt'), 'x\n');
  writeFileSync(
    path.join(wt, 'land.sh'),
    `env -i PATH="$PATH" '${process.execPath}' '${BIN}' land --yes --json\n`,
  );
  const spec = SHELL.claude(wt, 'bash land.sh');
  const pre = hagent(wt, ['hook', 'claude'], { input: JSON.stringify(spec.payload) });
  assert.is(pre.status, 0, pre.stderr);
  const ran = spawnSync('sh', ['-c', spec.read(JSON.parse(pre.stdout))], {
    cwd: wt,
    encoding: 'utf8',
  });
  const out = JSON.parse(ran.stdout);
  assert.is(out.error.code, 'HUMAN_ONLY', ran.stdout + ran.stderr);
  assert.match(out.error.message, /inside session h1's sandbox/);
  assert.not.ok(git(repo, 'ls-tree', '--name-only', 'main').split('\n').includes('x.txt'));
});

test.run();
