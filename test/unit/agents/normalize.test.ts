/**
 * The normalizer maps each agent's event to hagent's terms, and the answer shapes (pure).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { block, noEffect, normalizeEvent, patchPaths } from '../../../src/agents/index.js';
import { rebasePatchPaths } from '../../../src/agents/hook.js';
import { mergeHookConfig } from '../../../src/agents/integrate.js';

const test = suite('agents normalize');

test('Claude Code: Write/Edit/NotebookEdit paths, Bash command, tool-use id, event kinds', () => {
  const w = normalizeEvent('claude', undefined, {
    hook_event_name: 'PreToolUse',
    cwd: '/w',
    tool_name: 'NotebookEdit',
    tool_use_id: 't',
    tool_input: { notebook_path: '/w/n.ipynb' },
  });
  assert.equal([w.kind, w.action, w.paths, w.toolUseId], ['pre-tool', 'edit', ['/w/n.ipynb'], 't']);
  const b = normalizeEvent('claude', undefined, {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
  });
  assert.equal([b.kind, b.action, b.command], ['post-tool', 'shell', 'ls']);
  assert.is(
    normalizeEvent('claude', undefined, { hook_event_name: 'WorktreeCreate', name: 'x' })
      .worktreeName,
    'x',
  );
  assert.is(normalizeEvent('claude', undefined, { hook_event_name: 'Stop' }).kind, 'stop');
  assert.is(normalizeEvent('claude', undefined, { hook_event_name: 'Notification' }).kind, 'other');
});

test('Codex: apply_patch from tool_input.command, a heredoc apply_patch through the shell, argv commands', () => {
  const patch =
    '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Add File: b/c.txt\n+z\n*** End Patch';
  const p = normalizeEvent('codex', undefined, {
    hook_event_name: 'PreToolUse',
    tool_name: 'apply_patch',
    tool_input: { command: patch },
  });
  assert.equal([p.action, p.patch, p.paths], ['patch', patch, ['a.txt', 'b/c.txt']]);
  const viaShell = normalizeEvent('codex', undefined, {
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: `apply_patch <<'EOF'\n${patch}\nEOF` },
  });
  assert.equal([viaShell.action, viaShell.patch], ['patch', patch]);
  assert.is(
    normalizeEvent('codex', undefined, {
      hook_event_name: 'PreToolUse',
      tool_name: 'exec_command',
      tool_input: { command: ['bash', '-lc', 'make test'] },
    }).command,
    'make test',
  );
});

test('Gemini, Cursor, Copilot: their field names', () => {
  assert.equal(
    normalizeEvent('gemini', undefined, {
      hook_event_name: 'BeforeTool',
      tool_name: 'replace',
      tool_input: { file_path: '/w/a' },
    }).paths,
    ['/w/a'],
  );
  const c = normalizeEvent('cursor', undefined, {
    hook_event_name: 'beforeShellExecution',
    workspace_roots: ['/w'],
    command: 'ls',
  });
  assert.equal([c.kind, c.action, c.command, c.cwd], ['pre-tool', 'shell', 'ls', '/w']);
  const e = normalizeEvent('cursor', undefined, {
    hook_event_name: 'afterFileEdit',
    file_path: '/w/a',
    edits: [],
  });
  assert.equal([e.kind, e.action, e.paths], ['post-tool', 'edit', ['/w/a']]);
  const k = normalizeEvent('copilot', 'preToolUse', {
    toolName: 'create',
    toolArgs: JSON.stringify({ path: '/w/n' }),
    cwd: '/w',
  });
  assert.equal([k.kind, k.action, k.paths], ['pre-tool', 'edit', ['/w/n']]);
  const ap = normalizeEvent('copilot', 'preToolUse', {
    toolName: 'apply_patch',
    toolArgs: '*** Begin Patch\n*** Delete File: x\n*** End Patch',
  });
  assert.equal([ap.action, ap.paths], ['patch', ['x']]);
});

test('patchPaths reads unified diff headers too', () => {
  assert.equal(patchPaths('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/new\n'), [
    'x',
    'new',
  ]);
});

test("answers: each agent's block form", () => {
  const ev = normalizeEvent('claude', undefined, {});
  assert.equal(block('claude', ev, 'no'), { exitCode: 2, stdout: '', stderr: 'no\n' });
  assert.equal(JSON.parse(block('cursor', ev, 'no\nmore').stdout), {
    permission: 'deny',
    continue: true,
    user_message: 'no',
    agent_message: 'no\nmore',
  });
  assert.equal(JSON.parse(block('copilot', ev, 'no').stdout), {
    permissionDecision: 'deny',
    permissionDecisionReason: 'no',
  });
  assert.is(noEffect('cursor').stdout, '{}\n');
  assert.is(noEffect('codex').stdout, '');
});

test('rebasePatchPaths: from a subfolder, absolute inside the worktree, outside left alone', () => {
  const p = (f: string) => `*** Begin Patch\n*** Update File: ${f}\n*** End Patch\n`;
  assert.is(rebasePatchPaths(p('a.txt'), '/w/src', '/w'), p('src/a.txt'));
  assert.is(rebasePatchPaths(p('/w/b.txt'), '/w', '/w'), p('b.txt'));
  assert.is(rebasePatchPaths(p('/etc/passwd'), '/w', '/w'), p('/etc/passwd'));
});

test("mergeHookConfig keeps the user's handlers in a shared matcher group and removes only hagent's", () => {
  const mine = {
    hooks: {
      Stop: [
        {
          hooks: [
            { type: 'command', command: 'notify' },
            { type: 'command', command: 'hagent hook claude' },
          ],
        },
      ],
    },
  };
  assert.equal(mergeHookConfig(mine, {}, true), {
    hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }] },
  });
});

test.run();
