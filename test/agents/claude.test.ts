/**
 * The real Claude Code CLI through `hagent run claude`, driven by the scripted model server on
 * loopback: native Write/Edit/Read and Bash tool calls fire hagent's PreToolUse/PostToolUse hooks,
 * every write becomes one commit, refusals come back as the tool's result, and the session then
 * reviews and lands. Skipped (and said so) when the CLI cannot be installed.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, runAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer, type ModelServer, type Step } from '../helpers/model-server.js';
import { git, hagent, makeRepo, look } from '../helpers/index.js';

const test = suite('real Claude Code through hagent run');
const found = agentBinary('claude');
const it = testOrSkip(test, 'real Claude Code', 'skip' in found ? found.skip : undefined);

const CLAUDE_ARGS = [
  '--',
  '-p',
  'make the scripted edits',
  '--dangerously-skip-permissions',
  '--output-format',
  'json',
];

/** Commit subjects and bodies of the session branch since its base, oldest first. */
function sessionLog(repo: string, id: string): { subject: string; body: string }[] {
  const out = git(repo, 'log', '--reverse', '--format=%s%x1f%b%x1e', `main..hagent/${id}`);
  return out
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [subject = '', body = ''] = r.split('\x1f');
      return { subject, body };
    });
}

it('create, edit, shell edit and delete each become one commit; .env, .git/config and the main checkout are refused as the tool result', async () => {
  const repo = makeRepo({ 'a.txt': 'hi\n', 'old.txt': 'to delete\n' });
  const main = (p: string) => path.join(repo, p);
  const script: Step[] = [
    (wd) => ({
      calls: [
        {
          id: 'toolu_write',
          name: 'Write',
          input: { file_path: `${wd}/new.txt`, content: 'created\n' },
        },
      ],
    }),
    (wd) => ({ calls: [{ id: 'toolu_read', name: 'Read', input: { file_path: `${wd}/a.txt` } }] }),
    (wd) => ({
      calls: [
        {
          id: 'toolu_edit',
          name: 'Edit',
          input: { file_path: `${wd}/a.txt`, old_string: 'hi', new_string: 'hello' },
        },
      ],
    }),
    {
      calls: [
        {
          id: 'toolu_bash',
          name: 'Bash',
          input: { command: 'rm old.txt && echo shell > sh.txt', description: 'shell edit' },
        },
      ],
    },
    (wd) => ({
      calls: [
        {
          id: 'toolu_env',
          name: 'Write',
          input: { file_path: `${wd}/.env`, content: 'SECRET=1\n' },
        },
      ],
    }),
    // In a worktree `.git` is the file naming its git dir (Claude itself fails `.git/config` there as ENOTDIR).
    (wd) => ({
      calls: [{ id: 'toolu_readgit', name: 'Read', input: { file_path: `${wd}/.git` } }],
    }),
    (wd) => ({
      calls: [
        {
          id: 'toolu_gitcfg',
          name: 'Write',
          input: { file_path: `${wd}/.git`, content: 'gitdir: /elsewhere\n' },
        },
      ],
    }),
    {
      calls: [
        {
          id: 'toolu_main',
          name: 'Write',
          input: { file_path: main('from-agent.txt'), content: 'clobbered\n' },
        },
      ],
    },
    (wd) => ({
      calls: [
        { id: 'toolu_par1', name: 'Write', input: { file_path: `${wd}/p1.txt`, content: 'one\n' } },
        { id: 'toolu_par2', name: 'Write', input: { file_path: `${wd}/p2.txt`, content: 'two\n' } },
      ],
    }),
    { text: 'All done.' },
  ];
  const server = await startModelServer(script);
  try {
    const env = agentEnv('claude', server.url, (found as { bin: string }).bin);
    const r = await hagentAsync(
      repo,
      ['run', 'claude', '--name', 'c1', '--json', ...CLAUDE_ARGS],
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const summary = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('\n{') + 1)) as {
      session: string;
      worktree: string;
      commits: number;
      blocked: { code: string }[];
      hooksServed: number | null;
    };
    const wt = summary.worktree;
    // The real agent's hook processes reached this run's hook server (not only their fallback).
    assert.ok((summary.hooksServed ?? 0) > 0, `hooks served: ${summary.hooksServed}`);
    const results = server.results;
    assert.ok(
      results.get('toolu_write') && !results.get('toolu_write')!.isError,
      'Write went through',
    );
    assert.ok(
      results.get('toolu_edit') && !results.get('toolu_edit')!.isError,
      `Edit went through: ${results.get('toolu_edit')?.text}`,
    );
    for (const id of ['toolu_env', 'toolu_gitcfg', 'toolu_main']) {
      const res = results.get(id);
      assert.ok(res?.isError, `${id} refused: ${res?.text}`);
    }
    assert.match(results.get('toolu_env')!.text, /hagent refused this: error\[PATH_DENIED\]/);
    assert.match(results.get('toolu_main')!.text, /error\[OUTSIDE_WORKTREE\].*main checkout/);
    assert.ok(
      results.get('toolu_main')!.text.includes(`edit ${wt}/from-agent.txt instead`),
      results.get('toolu_main')!.text,
    );
    // Nothing refused reached disk.
    assert.not.ok(existsSync(path.join(wt, '.env')));
    assert.not.ok(existsSync(main('from-agent.txt')));
    assert.is(readFileSync(main('a.txt'), 'utf8'), 'hi\n');
    assert.match(
      results.get('toolu_gitcfg')!.text,
      /hagent refused this: error\[PATH_DENIED\]: \.git/,
    );
    assert.not.ok(
      readFileSync(path.join(wt, '.git'), 'utf8').includes('elsewhere'),
      '.git file untouched',
    );
    // One commit per write, attributed to its tool call.
    const log = sessionLog(repo, 'c1');
    const subjects = log.map((c) => c.subject);
    assert.equal(subjects.slice(0, 3), [
      'hagent: Write new.txt',
      'hagent: Edit a.txt',
      'hagent: exec rm old.txt && echo shell > sh.txt',
    ]);
    assert.equal(subjects.slice(3).sort(), ['hagent: Write p1.txt', 'hagent: Write p2.txt']);
    assert.is(log.length, 5);
    assert.match(
      log[0]!.body,
      /Hagent-Op: edit\nHagent-Agent: claude\nHagent-Tool: Write\nHagent-Tool-Use-Id: toolu_write/,
    );
    assert.match(log[2]!.body, /Hagent-Op: exec/);
    assert.match(log[2]!.body, /D old\.txt/);
    assert.match(log[2]!.body, /A sh\.txt/);
    const note = git(repo, 'notes', '--ref=hagent-sessions/c1', 'show', `hagent/c1~3`);
    assert.match(note, /"old_string": "hi"/, 'the edit is kept in the note');
    assert.is(summary.commits, 5);
    assert.equal(summary.blocked.map((b) => b.code).sort(), [
      'OUTSIDE_WORKTREE',
      'PATH_DENIED',
      'PATH_DENIED',
    ]);
    // review shows exactly these; land brings them onto main.
    const review = hagent(repo, ['review', '--session', 'c1', '--json']);
    assert.is(review.status, 0, review.stderr);
    assert.is(review.json.patches.length, 5);
    assert.equal(review.json.files.map((f: { path: string }) => f.path).sort(), [
      'a.txt',
      'new.txt',
      'old.txt',
      'p1.txt',
      'p2.txt',
      'sh.txt',
    ]);
    look(repo, 'c1');
    assert.is(hagent(repo, ['review', '--session', 'c1', '--approve']).status, 0);
    const land = hagent(repo, ['land', '--session', 'c1', '--json']);
    assert.is(land.status, 0, land.stderr + land.stdout);
    assert.is(git(repo, 'show', 'main:a.txt'), 'hello');
    assert.is(git(repo, 'show', 'main:sh.txt'), 'shell');
  } finally {
    await server.close();
  }
});

it('a file changed outside the session is adopted as its own commit before the agent writes it', async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const start = hagent(repo, ['session', 'start', '--name', 's2', '--json']);
  assert.is(start.status, 0, start.stderr);
  const wt = start.json.worktree as string;
  writeFileSync(path.join(wt, 'a.txt'), 'changed by the user\n');
  const server = await startModelServer([
    (wd) => ({ calls: [{ id: 'toolu_read', name: 'Read', input: { file_path: `${wd}/a.txt` } }] }),
    (wd) => ({
      calls: [
        {
          id: 'toolu_edit',
          name: 'Edit',
          input: {
            file_path: `${wd}/a.txt`,
            old_string: 'changed by the user',
            new_string: 'changed by the agent',
          },
        },
      ],
    }),
    { text: 'Done.' },
  ]);
  try {
    const r = await hagentAsync(
      repo,
      ['run', 'claude', '--session', 's2', ...CLAUDE_ARGS],
      agentEnv('claude', server.url, (found as { bin: string }).bin),
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /hagent review --session s2/);
    const log = sessionLog(repo, 's2');
    assert.equal(
      log.map((c) => c.subject),
      ['hagent: outside edits (M a.txt)', 'hagent: Edit a.txt'],
    );
    assert.match(log[0]!.body, /Hagent-Outside: true/);
    assert.is(git(repo, 'show', 'hagent/s2~1:a.txt'), 'changed by the user');
    assert.is(git(repo, 'show', 'hagent/s2:a.txt'), 'changed by the agent');
  } finally {
    await server.close();
  }
});

it('rm -rf ~ and git push --force are blocked by the guard before they run; the refusal is the tool result', async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const server = await startModelServer([
    { calls: [{ id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf ~', description: 'x' } }] },
    {
      calls: [
        {
          id: 'toolu_push',
          name: 'Bash',
          input: { command: 'git push --force origin HEAD:main', description: 'x' },
        },
      ],
    },
    {
      calls: [
        {
          id: 'toolu_ok',
          name: 'Bash',
          input: { command: 'git status --short && echo fine > ok.txt', description: 'x' },
        },
      ],
    },
    { text: 'Done.' },
  ]);
  try {
    const env = agentEnv('claude', server.url, (found as { bin: string }).bin);
    writeFileSync(path.join(env.HOME!, 'keep.txt'), 'mine\n');
    const r = await hagentAsync(repo, ['run', 'claude', '--name', 'g1', ...CLAUDE_ARGS], env);
    assert.is(r.status, 0, r.stderr + r.stdout);
    assert.ok(existsSync(path.join(env.HOME!, 'keep.txt')), 'home untouched');
    for (const id of ['toolu_rm', 'toolu_push']) {
      assert.ok(server.results.get(id)?.isError, id);
      assert.match(server.results.get(id)!.text, /hagent refused this: error\[GUARD_BLOCKED\]/);
    }
    assert.not.ok(server.results.get('toolu_ok')?.isError, server.results.get('toolu_ok')?.text);
    assert.equal(
      sessionLog(repo, 'g1').map((c) => c.subject),
      ['hagent: exec git status --short && echo fine > ok.txt'],
    );
    assert.match(r.stdout, /2 attempts blocked/);
  } finally {
    await server.close();
  }
});

it('hagent integrate claude + claude --worktree NAME: the worktree is a hagent session and its edits are commits', async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  git(repo, 'add', '.claude/settings.json');
  git(repo, 'commit', '-q', '-m', 'hagent hooks');
  const server = await startModelServer([
    (wd) => ({
      calls: [
        {
          id: 'toolu_w',
          name: 'Write',
          input: { file_path: `${wd}/wt.txt`, content: 'from a claude worktree\n' },
        },
      ],
    }),
    { text: 'Done.' },
  ]);
  try {
    const env = {
      ...agentEnv('claude', server.url, (found as { bin: string }).bin),
      PATH: pathWithHagent(),
    };
    const r = await runAsync(
      (found as { bin: string }).bin,
      ['--worktree', 'wt-one', '-p', 'edit', '--dangerously-skip-permissions'],
      repo,
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const list = hagent(repo, ['session', 'list', '--json']);
    assert.is(list.json.sessions.length, 1, list.stdout);
    const id = list.json.sessions[0].id as string;
    assert.is(id, 'wt-one');
    assert.ok(!server.results.get('toolu_w')?.isError, server.results.get('toolu_w')?.text);
    assert.equal(
      sessionLog(repo, id).map((c) => c.subject),
      ['hagent: Write wt.txt'],
    );
  } finally {
    await server.close();
  }
});

/** The tool names Claude Code offered the model in its first main-loop request. */
function toolsOffered(server: ModelServer): string[] {
  return (
    server.requests.find(
      (q) => q.path.endsWith('/messages') && Array.isArray(q.body.tools) && q.body.tools.length,
    )?.body.tools ?? []
  ).map((t: { name: string }) => t.name);
}

/**
 * `hagent integrate claude --mcp --strict` in `repo` (the two files it writes checked), committed
 * as the user would so every session worktree carries it, then a session `name`.
 * @returns the session worktree.
 */
function strictSession(repo: string, name: string): string {
  const integrate = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--json']);
  assert.is(integrate.status, 0, integrate.stderr);
  assert.equal(
    integrate.json.files.map((f: { file: string }) => path.relative(repo, f.file)),
    ['.mcp.json', path.join('.claude', 'settings.json')],
  );
  git(repo, 'add', '.mcp.json', '.claude/settings.json');
  git(repo, 'commit', '-q', '-m', 'hagent MCP server, strict mode');
  const start = hagent(repo, ['session', 'start', '--name', name, '--json']);
  assert.is(start.status, 0, start.stderr);
  return start.json.worktree as string;
}

/**
 * Claude Code in `wt` against the scripted model server, in its default permission mode (no
 * --dangerously-skip-permissions: its rules decide), after the user once accepted its trust
 * dialog in `repo` (session worktrees share that trust): only then does it apply the project's
 * allow rule for hagent's tools.
 */
function runTrustedClaude(repo: string, wt: string, url: string, prompt: string) {
  const env: Record<string, string> = {
    ...agentEnv('claude', url, (found as { bin: string }).bin),
    PATH: pathWithHagent(),
  };
  writeFileSync(
    path.join(env.HOME!, '.claude.json'),
    JSON.stringify({ projects: { [realpathSync(repo)]: { hasTrustDialogAccepted: true } } }),
  );
  return runAsync(
    (found as { bin: string }).bin,
    ['-p', prompt, '--output-format', 'json'],
    wt,
    env,
  );
}

it('hagent integrate claude --mcp --strict: Claude Code edits through mcp__hagent__edit and mcp__hagent__apply_patch (two commits); its own permission rules refuse native Edit and Write', async () => {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' });
  const wt = strictSession(repo, 'm1');
  const patch = '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n';
  const server = await startModelServer([
    {
      calls: [
        {
          id: 'toolu_mcp_edit',
          name: 'mcp__hagent__edit',
          input: { path: 'a.txt', old_string: 'one', new_string: 'uno' },
        },
      ],
    },
    { calls: [{ id: 'toolu_mcp_patch', name: 'mcp__hagent__apply_patch', input: { patch } }] },
    (wd) => ({
      calls: [
        {
          id: 'toolu_native_edit',
          name: 'Edit',
          input: { file_path: `${wd}/b.txt`, old_string: 'bee', new_string: 'native' },
        },
      ],
    }),
    (wd) => ({
      calls: [
        {
          id: 'toolu_native_write',
          name: 'Write',
          input: { file_path: `${wd}/native.txt`, content: 'native\n' },
        },
      ],
    }),
    { text: 'Done.' },
  ]);
  try {
    const r = await runTrustedClaude(repo, wt, server.url, 'make the scripted edits');
    assert.is(r.status, 0, r.stderr + r.stdout);
    const offered = toolsOffered(server);
    assert.ok(
      offered.includes('mcp__hagent__edit') && offered.includes('mcp__hagent__apply_patch'),
      offered.join(','),
    );
    for (const denied of ['Edit', 'Write', 'NotebookEdit'])
      assert.not.ok(offered.includes(denied), `${denied} is not offered`);
    const res = (id: string) => server.results.get(id);
    assert.ok(
      res('toolu_mcp_edit') && !res('toolu_mcp_edit')!.isError,
      res('toolu_mcp_edit')?.text,
    );
    assert.match(res('toolu_mcp_edit')!.text, /a\.txt/);
    assert.ok(
      res('toolu_mcp_patch') && !res('toolu_mcp_patch')!.isError,
      res('toolu_mcp_patch')?.text,
    );
    assert.match(res('toolu_mcp_patch')!.text, /c\.txt/);
    for (const id of ['toolu_native_edit', 'toolu_native_write']) {
      assert.ok(res(id)?.isError, `${id} refused: ${res(id)?.text}`);
      assert.match(
        res(id)!.text,
        /No such tool available: (Edit|Write)\. \1 exists but is not enabled in this context/,
      );
    }
    assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'uno\ntwo\n');
    assert.is(readFileSync(path.join(wt, 'c.txt'), 'utf8'), 'sea\n');
    assert.is(
      readFileSync(path.join(wt, 'b.txt'), 'utf8'),
      'bee\n',
      'the refused Edit left b.txt as it was',
    );
    assert.not.ok(existsSync(path.join(wt, 'native.txt')), 'the refused Write created nothing');
    const review = hagent(repo, ['review', '--session', 'm1', '--json']);
    assert.is(review.status, 0, review.stderr);
    assert.is(review.json.patches.length, 2, JSON.stringify(review.json.patches));
    assert.equal(review.json.files.map((f: { path: string }) => f.path).sort(), ['a.txt', 'c.txt']);
    assert.is(sessionLog(repo, 'm1').length, 2);
  } finally {
    await server.close();
  }
});

it('strict mode, a whole piece of work through hagent mcp: Claude Code calls every tool of the server (status, read, edit with the blob read, write, check, apply_patch, exec, undo, redo, sync, review, log)', async () => {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
  const wt = strictSession(repo, 'all');
  const patch = '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n';
  const call = (name: string, input: Record<string, unknown>) => ({
    calls: [{ id: `t_${name}`, name: `mcp__hagent__${name}`, input }],
  });
  const server: ModelServer = await startModelServer([
    call('status', {}),
    call('read', { path: 'a.txt' }),
    // The blob id the read reported is the edit's compare-and-swap token. Claude Code gives the
    // model the structured content (JSON) of a tool's result, not its text.
    () =>
      call('edit', {
        path: 'a.txt',
        old_string: 'one',
        new_string: 'uno',
        expected_blob:
          /"blob":"([0-9a-f]{40})"/.exec(server.results.get('t_read')?.text ?? '')?.[1] ?? 'none',
      }),
    call('write', { path: 'd.txt', content: 'dee\n' }),
    call('check', { patch }),
    call('apply_patch', { patch }),
    call('exec', { command: 'echo made > e.txt' }),
    call('undo', {}),
    call('redo', {}),
    call('sync', {}),
    call('review', { stat: true }),
    call('log', {}),
    { text: 'Done.' },
  ]);
  try {
    const r = await runTrustedClaude(repo, wt, server.url, 'do the scripted work');
    assert.is(r.status, 0, r.stderr + r.stdout);
    const offered = toolsOffered(server)
      .filter((n) => n.startsWith('mcp__hagent__'))
      .map((n) => n.slice('mcp__hagent__'.length))
      .sort();
    const called = [...server.results.keys()].map((id) => id.slice('t_'.length)).sort();
    assert.equal(called, offered, 'every tool the server offers was called');
    for (const [id, res] of server.results) assert.ok(!res.isError, `${id}: ${res.text}`);
    // What the model saw of the read: the file's numbered lines.
    assert.match(server.results.get('t_read')!.text, /"text":"1\\tone\\n2\\ttwo"/);
    assert.match(server.results.get('t_edit')!.text, /a\.txt/);
    assert.match(server.results.get('t_review')!.text, /e\.txt/);
    assert.is(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'uno\ntwo\n');
    assert.is(readFileSync(path.join(wt, 'd.txt'), 'utf8'), 'dee\n');
    assert.is(readFileSync(path.join(wt, 'c.txt'), 'utf8'), 'sea\n');
    assert.is(readFileSync(path.join(wt, 'e.txt'), 'utf8'), 'made\n', 'undone, then redone');
    // One commit each for the edit, the write, the patch and the command (redone).
    assert.is(sessionLog(repo, 'all').length, 4, JSON.stringify(sessionLog(repo, 'all')));
    assert.is(git(wt, 'status', '--porcelain'), '');
  } finally {
    await server.close();
  }
});

test.run();
