/**
 * The agents' own configuration files (what hagent integrate writes: hooks, MCP servers, strict
 * mode's deny rules) are denied paths: an agent cannot take strict mode or hagent's hooks away
 * through hagent's tools (MCP write, apply, Claude's Write through the hook), its shell edits of
 * them are not committed, a commit it makes with git is refused at land (LAND_DENIED, override
 * --allow-denied), and hagent integrate run by the human still writes them.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deniedReason, DEFAULT_POLICY } from '../../src/policy/index.js';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const test = suite('agent configuration is denied');

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

test("the default policy denies exactly the agents' configuration files, not the folders around them", () => {
  for (const p of DENIED)
    assert.match(deniedReason(p, DEFAULT_POLICY) ?? '', /an agent's own configuration/, p);
  for (const p of ALLOWED) assert.is(deniedReason(p, DEFAULT_POLICY), null, p);
});

test('hagent integrate (the human) writes them; in a strict project the MCP write of .claude/settings.json is refused PATH_DENIED', async () => {
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
});

test('a shell edit of them is not committed; a git commit of them is refused at land (LAND_DENIED) unless --allow-denied', () => {
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
});

test('hagent integrate run by the human from a session worktree writes the main checkout, as before', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'c3']);
  const r = hagent(s.worktree, ['integrate', 'gemini', '--json'], {
    env: { HOME: path.join(repo, '.home-not-used') },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(existsSync(path.join(repo, '.gemini/settings.json')));
  assert.not.ok(existsSync(path.join(s.worktree, '.gemini/settings.json')));
});

test.run();
