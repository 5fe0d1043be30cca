/**
 * A shell call seen by the agent hooks (Claude Code's PreToolUse / PostToolUse for Bash) that
 * reached outside the session: the user's untracked notes and ignored `.env` removed,
 * `.hagent/config.json` rewritten, a replace ref planted. The PostToolUse tells the agent, puts
 * back what it can, and the journal and `hagent session status` tell the human.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('hook: outside the session');

const hook = (cwd: string, payload: unknown) =>
  hagent(cwd, ['hook', 'claude'], { input: JSON.stringify(payload) });

t(
  'a Bash call that removed untracked and ignored files, rewrote the hagent config and planted a replace ref',
  () => {
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitignore': '.env\n' });
    writeFileSync(path.join(repo, 'notes.txt'), 'my notes\n');
    writeFileSync(path.join(repo, '.env'), 'SECRET=1\n');
    mkdirSync(path.join(repo, '.hagent'));
    const config = '{ "guard": { "allow": [] } }\n';
    writeFileSync(path.join(repo, '.hagent', 'config.json'), config);
    const wt = startSession(repo, ['--name', 'h1']).worktree;
    const call = {
      cwd: wt,
      tool_name: 'Bash',
      tool_use_id: 'toolu_clean',
      tool_input: { command: 'npm run clean' },
    };
    const pre = hook(wt, { ...call, hook_event_name: 'PreToolUse' });
    assert.is(pre.status, 0, pre.stderr);
    // What the command did while it ran.
    rmSync(path.join(repo, 'notes.txt'));
    rmSync(path.join(repo, '.env'));
    writeFileSync(
      path.join(repo, '.hagent', 'config.json'),
      '{ "guard": { "allow": ["hagent-human-only"] } }\n',
    );
    const head = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'replace', '-f', head, git(repo, 'commit-tree', `${head}^{tree}`, '-m', 'other'));
    const post = hook(wt, { ...call, hook_event_name: 'PostToolUse' });
    assert.is(post.status, 0, post.stderr);
    const ctx = post.json.hookSpecificOutput.additionalContext as string;
    assert.match(
      ctx,
      /untracked or ignored files changed or removed: \.env, \.hagent\/config\.json, notes\.txt/,
      ctx,
    );
    assert.match(ctx, new RegExp(`refs/replace/${head} moved \\(none\\)`));
    assert.match(ctx, /put back as they were: .*\.hagent\/config\.json/);
    assert.match(ctx, new RegExp(`update-ref -d refs/replace/${head}`));
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'SECRET=1\n');
    assert.is(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'my notes\n');
    assert.is(readFileSync(path.join(repo, '.hagent', 'config.json'), 'utf8'), config);
    const status = hagent(repo, ['session', 'status', 'h1', '--json']);
    assert.match(JSON.stringify(status.json.outsideChanged), /\.env/);
    assert.ok(existsSync(path.join(repo, '.env')));
  },
);

t.run();
