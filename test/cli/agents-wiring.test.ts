/**
 * What `hagent integrate` (project scope, file left uncommitted) protects, through the spawned
 * CLI: a new session worktree carries the agent wiring hidden from git, doctor copies it into an
 * older session and reports what cannot be copied, and outside any session an integrated agent's
 * writes and destructive git in the checkout are refused (MAIN_CHECKOUT), its session start says
 * it is not protected; `"mainCheckout": "warn"` keeps only the telling; a repository that is not
 * wired answers nothing. The real agents: test/agents/wiring.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo } from '../helpers/index.js';

const test = suite('agent wiring');

const hook = (cwd: string, agent: string, payload: Record<string, unknown>) =>
  hagent(cwd, ['hook', agent], { input: JSON.stringify({ cwd, ...payload }) });
const write = (file: string) => ({
  hook_event_name: 'PreToolUse',
  tool_name: 'Write',
  tool_use_id: 'toolu_1',
  tool_input: { file_path: file, content: 'x\n' },
});
const bash = (command: string) => ({
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_use_id: 'toolu_2',
  tool_input: { command },
});

test('session start: the uncommitted hook file is copied into the worktree, hidden from git; session status sees no outside edit', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const integrate = hagent(repo, ['integrate', 'claude']);
  assert.is(integrate.status, 0);
  // integrate says exactly what is protected, and what is not.
  assert.match(integrate.stdout, /Protected in a hagent session .*Write, Edit and NotebookEdit/);
  assert.match(
    integrate.stdout,
    /Outside a session in this repository's checkouts .*refused \(MAIN_CHECKOUT\)/,
  );
  assert.match(integrate.stdout, /Not protected: hooks fail open/);
  assert.match(
    hagent(repo, ['integrate', 'gemini', '--json']).json.protection.inSession,
    /write_file and replace/,
  );
  const start = hagent(repo, ['session', 'start', '--name', 's1', '--json']);
  assert.is(start.status, 0, start.stderr);
  assert.equal(start.json.wiring, {
    carried: ['.claude/settings.json', '.gemini/settings.json'],
    notCarried: [],
  });
  const wt = start.json.worktree as string;
  assert.is(
    readFileSync(path.join(wt, '.claude/settings.json'), 'utf8'),
    readFileSync(path.join(repo, '.claude/settings.json'), 'utf8'),
  );
  assert.is(git(wt, 'status', '--porcelain', '--untracked-files=all'), '');
  assert.equal(hagent(repo, ['session', 'status', 's1', '--json']).json.outsideEdits, []);
  // The main checkout's own view is unchanged: its file is still untracked there.
  assert.match(git(repo, 'status', '--porcelain'), /\?\? \.claude\//);
});

test('doctor: copies the wiring into a session started before integrate (fixed); reports what cannot be hidden (.mcp.json at the top) with how to mend it', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const wt = hagent(repo, ['session', 'start', '--name', 'old', '--json']).json.worktree as string;
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  assert.is(hagent(repo, ['integrate', 'claude', '--mcp']).status, 0);
  const doctor = hagent(repo, ['doctor', '--json']);
  const wiring = doctor.json.findings.filter((f: { kind: string }) => f.kind === 'agent-wiring');
  assert.is(wiring.length, 2, doctor.stdout);
  assert.ok(wiring[0].fixed);
  assert.equal(wiring[0].paths, ['.claude/settings.json']);
  assert.ok(existsSync(path.join(wt, '.claude/settings.json')));
  assert.not.ok(wiring[1].fixed);
  assert.match(wiring[1].message, /runs without hagent's MCP server: its \.mcp\.json/);
  assert.match(wiring[1].hint, /git add \.mcp\.json && git commit/);
  // A new session says so at once.
  const start = hagent(repo, ['session', 'start', '--name', 'new']);
  assert.match(start.stdout, /WARNING: session new's worktree lacks \.mcp\.json/);
});

test('outside any session, in an integrated checkout: Write and destructive git are refused (MAIN_CHECKOUT, how to start a session); reads, read-only git and files elsewhere pass', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  const w = hook(repo, 'claude', write(path.join(repo, 'a.txt')));
  assert.is(w.status, 2, w.stdout + w.stderr);
  assert.match(w.stderr, /hagent refused this: error\[MAIN_CHECKOUT\]: a write to .*a\.txt/);
  assert.match(w.stderr, /claude --worktree NAME/);
  for (const command of [
    'git reset --hard HEAD~1',
    'git stash',
    'rm -rf src',
    'bash -c "git checkout -- ."',
  ]) {
    const r = hook(repo, 'claude', bash(command));
    assert.is(r.status, 2, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /error\[MAIN_CHECKOUT\]/);
  }
  for (const command of ['git status', 'git log --oneline', 'ls', 'grep -r "git reset" .'])
    assert.is(hook(repo, 'claude', bash(command)).status, 0, command);
  const read = hook(repo, 'claude', {
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_input: { file_path: path.join(repo, 'a.txt') },
  });
  assert.is(read.status, 0);
  // Codex's apply_patch, same rule.
  assert.is(hagent(repo, ['integrate', 'codex']).status, 0);
  const patch = hook(repo, 'codex', {
    hook_event_name: 'PreToolUse',
    tool_name: 'apply_patch',
    tool_input: { command: '*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n' },
  });
  assert.is(patch.status, 2);
  assert.match(patch.stderr, /error\[MAIN_CHECKOUT\][\s\S]*hagent run codex/);
  assert.not.ok(existsSync(path.join(repo, 'b.txt')));
});

test('session start outside a session: the agent is told it is not protected, the human sees a systemMessage', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  const r = hook(repo, 'claude', { hook_event_name: 'SessionStart', source: 'startup' });
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.match(
    out.systemMessage,
    /NOT in a hagent session: its file writes and destructive git are refused/,
  );
  assert.match(out.hookSpecificOutput.additionalContext, /You are NOT in a hagent session/);
});

test('"mainCheckout": "warn": nothing is refused, the start still says so; a repository not wired: no effect at all', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(path.join(repo, '.hagent/config.json'), '{"mainCheckout": "warn"}\n');
  assert.is(hook(repo, 'claude', write(path.join(repo, 'a.txt'))).status, 0);
  assert.is(hook(repo, 'claude', bash('git reset --hard')).status, 0);
  const start = hook(repo, 'claude', { hook_event_name: 'SessionStart' });
  assert.match(JSON.parse(start.stdout).systemMessage, /mainCheckout: warn/);
  const plain = makeRepo({ 'a.txt': 'one\n' });
  const r = hook(plain, 'claude', write(path.join(plain, 'a.txt')));
  assert.is(r.status, 0);
  assert.is(r.stdout + r.stderr, '');
  assert.is(hook(plain, 'claude', { hook_event_name: 'SessionStart' }).stdout, '');
});

test.run();
