/**
 * `hagent hook <agent>` with the payloads each agent's hook reference documents (Claude Code,
 * Codex, Gemini CLI, Cursor, Copilot CLI): the answer has the agent's exact shape, refused edits
 * never reach disk, recorded edits are one commit each, and outside a session nothing happens.
 * Cursor and Copilot CLI cannot run here, so these payload tests are their only tests.
 * Also: the commit identity kept across hook processes, and a first edit under packed trees.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, IDENTITY_VARS, makeRepo, startSession, tempDir } from '../helpers/index.js';

const test = suite('hagent hook');

function setup() {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'h1']);
  return { repo, wt: s.worktree };
}

const hook = (cwd: string, args: string[], payload: unknown) =>
  hagent(cwd, ['hook', ...args], { input: JSON.stringify(payload) });
const subjects = (repo: string) =>
  git(repo, 'log', '--format=%s', 'main..hagent/h1').split('\n').filter(Boolean);

// Each agent's pre-tool payload for a write of `file`, and how it reads a block.
const PRE = {
  claude: (wt: string, file: string) => ({
    args: ['claude'],
    payload: {
      hook_event_name: 'PreToolUse',
      session_id: 's',
      cwd: wt,
      tool_name: 'Write',
      tool_use_id: 'toolu_1',
      tool_input: { file_path: file, content: 'x\n' },
    },
  }),
  codex: (wt: string, file: string) => ({
    args: ['codex'],
    payload: {
      hook_event_name: 'PreToolUse',
      session_id: 's',
      turn_id: 't',
      cwd: wt,
      model: 'm',
      permission_mode: 'bypassPermissions',
      tool_name: 'apply_patch',
      tool_use_id: 'call_1',
      tool_input: {
        command: `*** Begin Patch\n*** Add File: ${path.relative(wt, file)}\n+x\n*** End Patch\n`,
      },
    },
  }),
  gemini: (wt: string, file: string) => ({
    args: ['gemini'],
    payload: {
      hook_event_name: 'BeforeTool',
      session_id: 's',
      cwd: wt,
      timestamp: '2026-01-01T00:00:00Z',
      tool_name: 'write_file',
      tool_input: { file_path: file, content: 'x\n' },
    },
  }),
  cursor: (wt: string, file: string) => ({
    args: ['cursor'],
    payload: {
      hook_event_name: 'preToolUse',
      conversation_id: 'c',
      generation_id: 'g1',
      workspace_roots: [wt],
      tool_name: 'Write',
      tool_input: { file_path: file, content: 'x\n' },
    },
  }),
  copilot: (wt: string, file: string) => ({
    args: ['copilot', 'preToolUse'],
    payload: {
      sessionId: 's',
      timestamp: 1767225600000,
      cwd: wt,
      toolName: 'create',
      toolArgs: JSON.stringify({ path: file, file_text: 'x\n' }),
    },
  }),
} as const;

function assertBlocked(agent: keyof typeof PRE, r: ReturnType<typeof hagent>, code: string): void {
  if (agent === 'cursor') {
    assert.is(r.status, 0);
    assert.is(r.json.permission, 'deny');
    assert.match(r.json.agent_message, new RegExp(`error\\[${code}\\]`));
  } else if (agent === 'copilot') {
    assert.is(r.status, 0);
    assert.is(r.json.permissionDecision, 'deny');
    assert.match(r.json.permissionDecisionReason, new RegExp(`error\\[${code}\\]`));
  } else {
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.is(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^hagent refused this: error\\[${code}\\]`));
  }
}

for (const agent of Object.keys(PRE) as (keyof typeof PRE)[]) {
  test(`${agent}: a write of .env is refused in the agent's own block form, nothing written, journaled`, () => {
    const { repo, wt } = setup();
    const { args, payload } = PRE[agent](wt, path.join(wt, '.env'));
    const r = hook(wt, args, payload);
    assertBlocked(agent, r, 'PATH_DENIED');
    assert.not.ok(existsSync(path.join(wt, '.env')));
    const log = hagent(repo, ['log', '--failed', '--json']);
    assert.ok(
      log.json.entries.some((e: { code: string }) => e.code === 'PATH_DENIED'),
      log.stdout,
    );
  });

  // Not for Codex: its patch names worktree-relative paths, so it cannot leave the worktree.
  if (agent !== 'codex')
    test(`${agent}: a write into the user's main checkout is refused, naming the same file in the worktree`, () => {
      const { repo, wt } = setup();
      const { args, payload } = PRE[agent](wt, path.join(repo, 'b.txt'));
      const r = hook(wt, args, payload);
      assertBlocked(agent, r, 'OUTSIDE_WORKTREE');
      assert.not.ok(existsSync(path.join(repo, 'b.txt')));
    });

  test(`${agent}: outside any hagent session the hook has no effect`, () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const { args, payload } = PRE[agent](repo, path.join(repo, '.env'));
    const r = hook(repo, args, payload);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, agent === 'cursor' ? '{}\n' : '');
  });
}

test('claude: an allowed Write passes silently; its PostToolUse makes one commit with tool name, tool-use id and the edit in the note', () => {
  const { repo, wt } = setup();
  const input = { file_path: path.join(wt, 'b.txt'), content: 'new\n' };
  const pre = hook(wt, ['claude'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'Write',
    tool_use_id: 'toolu_9',
    tool_input: input,
  });
  assert.is(pre.status, 0, pre.stderr);
  assert.is(pre.stdout, '');
  writeFileSync(input.file_path, input.content);
  writeFileSync(path.join(wt, 'unrelated.txt'), 'not this tool call\n');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Write',
    tool_use_id: 'toolu_9',
    tool_input: input,
    tool_response: { filePath: input.file_path, success: true },
  });
  assert.is(post.status, 0, post.stderr);
  assert.is(post.json.hookSpecificOutput.hookEventName, 'PostToolUse');
  assert.match(
    post.json.hookSpecificOutput.additionalContext,
    /recorded this edit as commit [0-9a-f]{12}/,
  );
  assert.equal(subjects(repo), ['hagent: Write b.txt']);
  assert.is(
    git(repo, 'show', '--name-only', '--format=', 'hagent/h1'),
    'b.txt',
    "only the tool call's file",
  );
  assert.match(
    git(repo, 'log', '-1', '--format=%B', 'hagent/h1'),
    /Hagent-Op: edit\nHagent-Agent: claude\nHagent-Tool: Write\nHagent-Tool-Use-Id: toolu_9/,
  );
  assert.match(
    git(repo, 'notes', '--ref=hagent-sessions/h1', 'show', 'hagent/h1'),
    /"content": "new\\n"/,
  );
  assert.is(git(wt, 'status', '--porcelain'), '?? unrelated.txt');
});

test("claude: a stale target is adopted as an outside commit in PreToolUse, so the agent's commit holds only its edit", () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'a.txt'), 'changed outside\n');
  const input = {
    file_path: path.join(wt, 'a.txt'),
    old_string: 'changed outside',
    new_string: 'agent',
  };
  assert.is(
    hook(wt, ['claude'], {
      hook_event_name: 'PreToolUse',
      cwd: wt,
      tool_name: 'Edit',
      tool_use_id: 't1',
      tool_input: input,
    }).status,
    0,
  );
  writeFileSync(path.join(wt, 'a.txt'), 'agent\n');
  assert.is(
    hook(wt, ['claude'], {
      hook_event_name: 'PostToolUse',
      cwd: wt,
      tool_name: 'Edit',
      tool_use_id: 't1',
      tool_input: input,
    }).status,
    0,
  );
  assert.equal(subjects(repo), ['hagent: Edit a.txt', 'hagent: outside edits (M a.txt)']);
});

test('claude: Bash PostToolUse commits every file the command changed as Hagent-Op: exec; Stop syncs leftovers', () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'made.txt'), 'by shell\n');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_b',
    tool_input: { command: 'echo by shell > made.txt' },
  });
  assert.is(post.status, 0, post.stderr);
  const body = git(repo, 'log', '-1', '--format=%B', 'hagent/h1');
  assert.match(body, /Hagent-Op: exec/);
  assert.match(body, /Hagent-Command: echo by shell > made.txt/);
  writeFileSync(path.join(wt, 'left.txt'), 'left over\n');
  const stop = hook(wt, ['claude'], { hook_event_name: 'Stop', cwd: wt, stop_hook_active: false });
  assert.is(stop.status, 0);
  assert.is(stop.stdout, '');
  assert.match(stop.stderr, /hagent review --session h1/);
  assert.equal(subjects(repo), [
    'hagent: outside edits (A left.txt)',
    'hagent: exec echo by shell > made.txt',
  ]);
});

test('claude: a Write whose file a parallel Bash PostToolUse commits first keeps its attribution: the exec commit names it, its own PostToolUse points there', () => {
  const { repo, wt } = setup();
  const input = { file_path: path.join(wt, 'b.txt'), content: 'by write\n' };
  assert.is(
    hook(wt, ['claude'], {
      hook_event_name: 'PreToolUse',
      cwd: wt,
      tool_name: 'Write',
      tool_use_id: 'toolu_w',
      tool_input: input,
    }).status,
    0,
  );
  writeFileSync(input.file_path, input.content);
  // The parallel shell command finishes first: its commit takes in everything changed, b.txt too.
  writeFileSync(path.join(wt, 'c.txt'), 'by shell\n');
  const bash = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_b',
    tool_input: { command: 'echo by shell > c.txt' },
  });
  assert.is(bash.status, 0, bash.stderr);
  const body = git(repo, 'log', '-1', '--format=%B', 'hagent/h1');
  assert.match(body, /Hagent-Op: exec/);
  assert.match(body, /Hagent-Tool-Use-Id: toolu_b\n/);
  assert.match(body, /Hagent-Includes-Tool-Use-Id: toolu_w/);
  const note = git(repo, 'notes', '--ref=hagent-sessions/h1', 'show', 'hagent/h1');
  assert.match(note, /^echo by shell > c.txt\n/);
  assert.match(note, /"toolUseId": "toolu_w"/);
  assert.match(note, /"content": "by write\\n"/);
  const exec = git(repo, 'rev-parse', 'hagent/h1');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Write',
    tool_use_id: 'toolu_w',
    tool_input: input,
  });
  assert.is(post.status, 0, post.stderr);
  assert.match(
    post.json.hookSpecificOutput.additionalContext,
    new RegExp(`recorded this edit in commit ${exec.slice(0, 12)}`),
  );
  assert.equal(subjects(repo), ['hagent: exec echo by shell > c.txt'], 'no second commit');
  // A later shell command touching b.txt again is not attributed to the finished Write.
  writeFileSync(input.file_path, 'by shell again\n');
  assert.is(
    hook(wt, ['claude'], {
      hook_event_name: 'PostToolUse',
      cwd: wt,
      tool_name: 'Bash',
      tool_use_id: 'toolu_b2',
      tool_input: { command: 'echo again > b.txt' },
    }).status,
    0,
  );
  assert.not.match(
    git(repo, 'log', '-1', '--format=%B', 'hagent/h1'),
    /Hagent-Includes-Tool-Use-Id/,
  );
});

test('claude: a Bash command the guard refuses is blocked with exit 2 and the rule on stderr', () => {
  const { wt } = setup();
  const r = hook(wt, ['claude'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'x',
    tool_input: { command: 'git push --force origin main' },
  });
  assert.is(r.status, 2);
  assert.match(r.stderr, /error\[GUARD_BLOCKED\]/);
});

test("codex: apply_patch is applied by hagent and blocked with a Codex-shaped success; a PostToolUse after an unhonoured block restores hagent's bytes", () => {
  const { repo, wt } = setup();
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n';
  const payload = {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'apply_patch',
    tool_use_id: 'call_p',
    tool_input: { command: patch },
  };
  const r = hook(wt, ['codex'], payload);
  assert.is(r.status, 2);
  assert.match(
    r.stderr,
    /^Success\. Updated the following files:\nM a\.txt\n\(hagent applied this patch atomically as commit [0-9a-f]{12} on hagent\/h1/,
  );
  assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');
  // The block was not honoured: Codex's own engine wrote something else.
  writeFileSync(path.join(wt, 'a.txt'), 'two\ntwo\n');
  const post = hook(wt, ['codex'], {
    ...payload,
    hook_event_name: 'PostToolUse',
    tool_response: 'Success.',
  });
  assert.is(post.status, 0, post.stderr);
  assert.match(post.stderr, /put back to hagent's bytes/);
  assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');
  assert.equal(subjects(repo), ['hagent: M a.txt']);
});

test('codex: a patch hagent refuses comes back as the block reason with the code and hint; nothing written', () => {
  const { wt } = setup();
  const r = hook(wt, ['codex'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'apply_patch',
    tool_use_id: 'c',
    tool_input: {
      command: '*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+two\n*** End Patch\n',
    },
  });
  assert.is(r.status, 2);
  assert.match(r.stderr, /^hagent refused this: error\[CONTEXT_NOT_FOUND\]/);
  assert.match(r.stderr, /hint: /);
  assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'one\n');
});

test('codex: a patch sent from a subfolder, or with absolute paths inside the worktree, lands on the same files', () => {
  const repo = makeRepo({ 'src/a.txt': 'one\n', 'b.txt': 'bee\n' });
  const wt = startSession(repo, ['--name', 'h1']).worktree;
  const fromSub = hook(wt, ['codex'], {
    hook_event_name: 'PreToolUse',
    cwd: path.join(wt, 'src'),
    tool_name: 'apply_patch',
    tool_use_id: 'c1',
    tool_input: {
      command: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n',
    },
  });
  assert.is(fromSub.status, 2);
  assert.match(fromSub.stderr, /^Success\. Updated the following files:\nM src\/a\.txt/);
  const absolute = hook(wt, ['codex'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'apply_patch',
    tool_use_id: 'c2',
    tool_input: {
      command: `*** Begin Patch\n*** Update File: ${path.join(wt, 'b.txt')}\n@@\n-bee\n+bea\n*** End Patch\n`,
    },
  });
  assert.match(absolute.stderr, /^Success\. Updated the following files:\nM b\.txt/);
  assert.is(readFileSync(path.join(wt, 'src/a.txt'), 'utf8'), 'two\n');
  assert.is(readFileSync(path.join(wt, 'b.txt'), 'utf8'), 'bea\n');
});

test('gemini: AfterTool of replace records the edit; run_shell_command AfterTool commits as exec', () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'a.txt'), 'two\n');
  const r = hook(wt, ['gemini'], {
    hook_event_name: 'AfterTool',
    cwd: wt,
    tool_name: 'replace',
    tool_input: { file_path: path.join(wt, 'a.txt'), old_string: 'one', new_string: 'two' },
    tool_response: { llmContent: 'ok' },
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '');
  writeFileSync(path.join(wt, 'c.txt'), 'c\n');
  assert.is(
    hook(wt, ['gemini'], {
      hook_event_name: 'AfterTool',
      cwd: wt,
      tool_name: 'run_shell_command',
      tool_input: { command: 'echo c > c.txt' },
    }).status,
    0,
  );
  assert.equal(subjects(repo), ['hagent: exec echo c > c.txt', 'hagent: replace a.txt']);
});

test('cursor: afterFileEdit records the edit; beforeShellExecution of a blocked command denies in JSON; an allowed one answers {} without a sandbox', () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'a.txt'), 'two\n');
  const r = hook(wt, ['cursor'], {
    hook_event_name: 'afterFileEdit',
    conversation_id: 'c',
    generation_id: 'g',
    workspace_roots: [wt],
    file_path: path.join(wt, 'a.txt'),
    edits: [{ old_string: 'one', new_string: 'two' }],
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '{}\n');
  assert.equal(subjects(repo), ['hagent: Edit a.txt']);
  const bad = hook(wt, ['cursor'], {
    hook_event_name: 'beforeShellExecution',
    workspace_roots: [wt],
    command: 'rm -rf ~',
    cwd: wt,
  });
  assert.is(bad.json.permission, 'deny');
  assert.match(bad.json.agent_message, /GUARD_BLOCKED/);
  // Where no sandbox can start (the rewrite into one: hook-sandbox.test.ts).
  const ok = hagent(wt, ['hook', 'cursor'], {
    input: JSON.stringify({
      hook_event_name: 'beforeShellExecution',
      workspace_roots: [wt],
      command: 'ls',
      cwd: wt,
    }),
    env: { HAGENT_BWRAP: '' },
  });
  assert.is(ok.stdout, '{}\n');
});

test('copilot: postToolUse of edit records it (toolArgs is a JSON string); a bash preToolUse the guard refuses is denied in JSON', () => {
  const { repo, wt } = setup();
  writeFileSync(path.join(wt, 'a.txt'), 'two\n');
  const r = hook(wt, ['copilot', 'postToolUse'], {
    sessionId: 's',
    timestamp: 1,
    cwd: wt,
    toolName: 'edit',
    toolArgs: JSON.stringify({ path: path.join(wt, 'a.txt'), old_str: 'one', new_str: 'two' }),
    toolResult: { resultType: 'success', textResultForLlm: 'ok' },
  });
  assert.is(r.status, 0, r.stderr);
  assert.equal(subjects(repo), ['hagent: edit a.txt']);
  const bad = hook(wt, ['copilot', 'preToolUse'], {
    sessionId: 's',
    timestamp: 1,
    cwd: wt,
    toolName: 'bash',
    toolArgs: JSON.stringify({ command: 'git push --force' }),
  });
  assert.is(bad.status, 0);
  assert.is(bad.json.permissionDecision, 'deny');
});

test('claude: WorktreeCreate makes a hagent session and prints its path; WorktreeRemove ends it once landed, keeps it otherwise', () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const r = hook(repo, ['claude'], {
    hook_event_name: 'WorktreeCreate',
    cwd: repo,
    session_id: 's',
    name: 'feature-x',
  });
  assert.is(r.status, 0, r.stderr);
  const wt = r.stdout.trim().split('\n').pop()!;
  assert.ok(existsSync(path.join(wt, 'a.txt')));
  assert.is(hagent(repo, ['session', 'list', '--json']).json.sessions[0].id, 'feature-x');
  writeFileSync(path.join(wt, 'b.txt'), 'work\n');
  const keep = hook(repo, ['claude'], {
    hook_event_name: 'WorktreeRemove',
    cwd: repo,
    worktree_path: wt,
  });
  assert.is(keep.status, 0);
  assert.match(keep.stderr, /keeps its worktree: it has work that has not landed/);
  assert.ok(existsSync(wt));
  assert.is(
    git(repo, 'show', 'hagent/feature-x:b.txt'),
    'work',
    'the leftover was synced, not lost',
  );
});

test('claude: SessionStart tells the model about the session in additionalContext', () => {
  const { wt } = setup();
  const r = hook(wt, ['claude'], { hook_event_name: 'SessionStart', cwd: wt, source: 'startup' });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.json.hookSpecificOutput.hookEventName, 'SessionStart');
  assert.match(r.json.hookSpecificOutput.additionalContext, /hagent session h1/);
});

test('an event that is not JSON fails open with exit 1 and a message', () => {
  const { wt } = setup();
  const r = hagent(wt, ['hook', 'claude'], { input: 'not json' });
  assert.is(r.status, 1);
  assert.match(r.stderr, /not JSON/);
});

test("claude: a Bash command that changed the user's checkout is reported by its PostToolUse (additionalContext, systemMessage, journal)", () => {
  const { repo, wt } = setup();
  const cmd = 'sh s.sh';
  const pre = hook(wt, ['claude'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_o',
    tool_input: { command: cmd },
  });
  assert.is(pre.status, 0, pre.stderr);
  // What the script did while it ran: a write into the user's checkout and a commit on main.
  writeFileSync(path.join(repo, 'a.txt'), 'changed\n');
  git(repo, 'commit', '-qam', 'by the script');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_o',
    tool_input: { command: cmd },
  });
  assert.is(post.status, 0, post.stderr);
  const ctx = post.json.hookSpecificOutput.additionalContext as string;
  assert.match(ctx, /main checkout .* changed while the command ran/);
  assert.match(ctx, /refs\/heads\/main moved/);
  assert.match(post.json.systemMessage, /WARNING from hagent/);
  const log = hagent(repo, ['log', '--json']);
  assert.ok(
    log.json.entries.some(
      (e: { code?: string; command: string }) =>
        e.code === 'OUTSIDE_CHANGED' && e.command === 'hook claude Bash',
    ),
    log.stdout,
  );
  // The next command, with nothing changed outside, is quiet.
  hook(wt, ['claude'], {
    hook_event_name: 'PreToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_p',
    tool_input: { command: 'true' },
  });
  const quiet = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Bash',
    tool_use_id: 'toolu_p',
    tool_input: { command: 'true' },
  });
  assert.is(quiet.stdout, '');
});

test('claude: while the worktree is on another branch, a Write is refused before it is written, its PostToolUse and SessionEnd say it is not recorded, status says drifted, and end names the way back', () => {
  const { repo, wt } = setup();
  git(wt, 'checkout', '-q', '-b', 'other');
  const file = path.join(wt, 'after.txt');
  const pre = hook(wt, ['claude'], PRE.claude(wt, file).payload);
  assert.is(pre.status, 2, pre.stdout + pre.stderr);
  assert.match(pre.stderr, /error\[WORKTREE_BROKEN\]: .*other checked out instead of hagent\/h1/);
  assert.match(pre.stderr, /hint: nothing was written; git -C .* switch hagent\/h1/);
  const log = hagent(repo, ['log', '--json', '--failed']);
  assert.ok(
    log.json.entries.some(
      (e: { code?: string; command: string }) =>
        e.code === 'WORKTREE_BROKEN' && e.command === 'hook claude Write',
    ),
    log.stdout,
  );
  // A block not honoured (the write happened anyway): the PostToolUse says so, exit 0, no hook failure.
  writeFileSync(file, 'x\n');
  const post = hook(wt, ['claude'], {
    hook_event_name: 'PostToolUse',
    cwd: wt,
    tool_name: 'Write',
    tool_use_id: 'toolu_1',
    tool_input: { file_path: file, content: 'x\n' },
  });
  assert.is(post.status, 0, post.stderr);
  assert.match(
    post.json.hookSpecificOutput.additionalContext,
    /NOT recorded: the session worktree has other checked out/,
  );
  const end = hook(wt, ['claude'], { hook_event_name: 'SessionEnd', cwd: wt, reason: 'exit' });
  assert.is(end.status, 0, end.stderr);
  assert.match(
    end.stderr,
    /^hagent: session h1's worktree is off its branch .*git -C .* switch hagent\/h1.*then hagent sync --session h1/,
  );
  // Work committed on the other branch: never landed, never empty.
  git(wt, 'add', 'after.txt');
  git(wt, 'commit', '-qm', 'on other');
  writeFileSync(path.join(wt, 'more.txt'), 'm\n');
  const status = hagent(repo, ['session', 'status', 'h1', '--json']).json;
  assert.is(status.state, 'drifted');
  assert.is(status.landed, false);
  assert.is(status.drift.kind, 'other-branch');
  const refused = hagent(repo, ['session', 'end', 'h1', '--json']);
  assert.is(refused.json.error.code, 'UNLANDED_WORK');
  assert.match(
    refused.json.error.hint,
    /^keep them with git -C .* switch hagent\/h1 \(then git -C .* merge other for what was committed there\), then hagent sync --session h1/,
  );
  // Following the hint works.
  git(wt, 'switch', '-q', 'hagent/h1');
  git(wt, 'merge', '-q', 'other');
  const sync = hagent(repo, ['sync', '--session', 'h1', '--json']);
  assert.is(sync.status, 0, sync.stdout + sync.stderr);
  assert.ok(existsSync(path.join(wt, 'after.txt')));
  assert.not.equal(hagent(repo, ['session', 'status', 'h1', '--json']).json.state, 'drifted');
});

test("gemini and codex: a shell command that changed the user's checkout is reported by the post-tool hook in each agent's form", () => {
  const { repo, wt } = setup();
  const gem = (name: string) =>
    hook(wt, ['gemini'], {
      hook_event_name: name,
      session_id: 's',
      cwd: wt,
      timestamp: '2026-01-01T00:00:00Z',
      tool_name: 'run_shell_command',
      tool_input: { command: 'sh s.sh' },
    });
  assert.is(gem('BeforeTool').status, 0);
  writeFileSync(path.join(repo, 'a.txt'), 'by gemini\n');
  const g = gem('AfterTool');
  assert.is(g.status, 0, g.stderr);
  assert.match(g.json.hookSpecificOutput.additionalContext, /tracked files changed: a\.txt/);
  assert.match(g.json.systemMessage, /WARNING from hagent/);
  const cx = (name: string) =>
    hook(wt, ['codex'], {
      hook_event_name: name,
      session_id: 's',
      turn_id: 't',
      cwd: wt,
      model: 'm',
      permission_mode: 'bypassPermissions',
      tool_name: 'Bash',
      tool_use_id: 'call_s',
      tool_input: { command: 'sh s.sh' },
    });
  assert.is(cx('PreToolUse').status, 0);
  writeFileSync(path.join(repo, 'a.txt'), 'by codex\n');
  const c = cx('PostToolUse');
  assert.is(c.status, 0, c.stderr);
  // Codex's PostToolUse output carries additionalContext (the model) and systemMessage (the user).
  assert.match(c.json.hookSpecificOutput.additionalContext, /tracked files changed: a\.txt/);
  assert.is(c.json.hookSpecificOutput.hookEventName, 'PostToolUse');
  assert.match(c.json.systemMessage, /WARNING from hagent/);
});

// --- Commit identity ---
// The identity of the commits an agent's hooks make (a process per tool call): git's answer
// (`git var`) is kept in the repository for the next hook processes, and a kept answer is never
// used once it may be wrong: another `GIT_AUTHOR_NAME` in the environment, a changed
// `user.name` in the repository's config or in a file it includes, a new global config file.
// HAGENT_TRACE says whether git was asked (`git var`) or the kept answer was used.

/** The helpers' identity and dates left out: the configuration decides, as for a user. */

function setupIdentity(name: string) {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  git(repo, 'config', 'user.name', 'Grace Hopper');
  git(repo, 'config', 'user.email', 'grace@example.com');
  const r = hagent(repo, ['session', 'start', '--json', '--name', name], {
    unsetEnv: IDENTITY_VARS,
  });
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
    unsetEnv: IDENTITY_VARS.filter((k) => !(k in env)),
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
  const s = setupIdentity('kept');
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
  const s = setupIdentity('override');
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
  const s = setupIdentity('renamed');
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
  const s = setupIdentity('global');
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

// --- Packed trees ---
// A native edit of a file whose trees are packed (the base commit of a repository after `git gc`,
// the usual case for a real repository): the pre-tool hook reads them with one `git cat-file`
// and keeps loose copies, so the post-tool hook reads them in-process; the commit is the one git
// would make and the repository stays sound. HAGENT_TRACE names the git processes each ran.

test('the post-tool hook of a first edit under packed trees spawns no cat-file', () => {
  const repo = makeRepo({ 'src/lib/a.txt': 'a\n', 'src/lib/b.txt': 'b\n', 'top.txt': 't\n' });
  git(repo, 'gc', '--quiet', '--prune=now');
  assert.is(git(repo, 'count-objects', '-v').match(/^count: (\d+)/m)?.[1], '0', 'all packed');
  const s = startSession(repo, ['--name', 'packed']);
  const file = path.join(s.worktree, 'src', 'lib', 'a.txt');
  const payload = (event: string) =>
    JSON.stringify({
      hook_event_name: event,
      cwd: s.worktree,
      tool_name: 'Write',
      tool_use_id: 'toolu_packed',
      tool_input: { file_path: file, content: 'a2\n' },
    });
  const env = { HAGENT_TRACE: '1' };
  const pre = hagent(s.worktree, ['hook', 'claude'], { input: payload('PreToolUse'), env });
  assert.is(pre.status, 0, pre.stderr);
  assert.match(pre.stderr, /git cat-file --batch/, 'the pre-tool hook reads the packed trees');
  writeFileSync(file, 'a2\n');
  const post = hagent(s.worktree, ['hook', 'claude'], { input: payload('PostToolUse'), env });
  assert.is(post.status, 0, post.stderr);
  assert.match(post.stdout, /hagent recorded this edit as commit/);
  assert.not.match(post.stderr, /git cat-file/, post.stderr);
  assert.is(git(repo, 'show', `${s.branch}:src/lib/a.txt`), 'a2');
  assert.is(git(repo, 'show', `${s.branch}:src/lib/b.txt`), 'b');
  assert.is(git(repo, 'rev-parse', `${s.branch}~1`), s.base);
  assert.is(git(s.worktree, 'status', '--porcelain'), '');
  git(repo, 'fsck', '--strict', '--no-dangling');
  // The copies are git's own objects: gc drops them again.
  git(repo, 'gc', '--quiet', '--prune=now');
  git(repo, 'fsck', '--strict', '--no-dangling');
  assert.is(git(repo, 'show', `${s.branch}:src/lib/a.txt`), 'a2');
});

test.run();
