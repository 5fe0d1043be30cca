/**
 * `hagent integrate`: hagent's hooks merged into each agent's own file without clobbering the
 * user's hooks, idempotent, removable; `hagent doctor` reports an installed hook whose command
 * does not resolve.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, tempDir } from '../helpers/index.js';

const test = suite('hagent integrate');

const read = (f: string) => JSON.parse(readFileSync(f, 'utf8'));

test("claude: merged beside the user's own hooks, idempotent, removed again leaving theirs as they were", () => {
  const repo = makeRepo();
  const file = path.join(repo, '.claude', 'settings.json');
  mkdirSync(path.dirname(file), { recursive: true });
  const mine = {
    permissions: { allow: ['Bash(npm test)'] },
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-linter' }] }],
    },
  };
  writeFileSync(file, JSON.stringify(mine));
  const r = hagent(repo, ['integrate', 'claude', '--json']);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.json.action, 'added');
  const merged = read(file);
  assert.equal(merged.permissions, mine.permissions);
  assert.is(merged.hooks.PreToolUse.length, 2);
  assert.equal(merged.hooks.PreToolUse[0], mine.hooks.PreToolUse[0]);
  assert.is(merged.hooks.PreToolUse[1].hooks[0].command, 'hagent hook claude');
  for (const event of ['PostToolUse', 'Stop', 'SessionEnd', 'WorktreeCreate', 'WorktreeRemove'])
    assert.ok(merged.hooks[event], event);
  const again = hagent(repo, ['integrate', 'claude', '--json']);
  assert.is(again.json.action, 'unchanged');
  assert.equal(read(file), merged);
  const removed = hagent(repo, ['integrate', 'claude', '--remove', '--json']);
  assert.is(removed.json.action, 'removed');
  assert.equal(read(file), mine);
});

test("every agent's project file gets its own shape; --user writes under HOME; copilot's own file goes on --remove", () => {
  const repo = makeRepo();
  const home = tempDir('hagent-home-');
  const env = { HOME: home };
  const expect = {
    codex: '.codex/hooks.json',
    gemini: '.gemini/settings.json',
    cursor: '.cursor/hooks.json',
    copilot: '.github/hooks/hagent.json',
  } as const;
  for (const [agent, rel] of Object.entries(expect)) {
    const r = hagent(repo, ['integrate', agent, '--json'], { env });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.json.file, path.join(repo, rel));
  }
  assert.is(read(path.join(repo, '.cursor/hooks.json')).version, 1);
  assert.is(
    read(path.join(repo, '.github/hooks/hagent.json')).hooks.preToolUse[0].bash,
    'hagent hook copilot preToolUse',
  );
  assert.is(
    read(path.join(repo, '.gemini/settings.json')).hooks.BeforeTool[0].matcher,
    'write_file|replace|run_shell_command',
  );
  const user = hagent(repo, ['integrate', 'codex', '--user', '--json'], { env });
  assert.is(user.json.file, path.join(home, '.codex', 'hooks.json'));
  assert.ok(existsSync(path.join(home, '.codex', 'hooks.json')));
  assert.is(
    hagent(repo, ['integrate', 'copilot', '--remove', '--json'], { env }).json.action,
    'removed',
  );
  assert.not.ok(existsSync(path.join(repo, '.github/hooks/hagent.json')));
  const printed = hagent(repo, ['integrate', 'gemini', '--print'], { env });
  assert.match(printed.stdout, /"BeforeTool"/);
});

test('a file that is not JSON is refused and left as it is', () => {
  const repo = makeRepo();
  const file = path.join(repo, '.codex', 'hooks.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '{ broken');
  const r = hagent(repo, ['integrate', 'codex']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /CONFIG_INVALID/);
  assert.is(readFileSync(file, 'utf8'), '{ broken');
});

test('hagent doctor reports an installed hook whose command does not resolve', () => {
  const repo = makeRepo();
  assert.is(hagent(repo, ['integrate', 'claude']).status, 0);
  const r = hagent(repo, ['doctor', '--json'], {
    env: { PATH: '/usr/bin:/bin', HOME: tempDir('hagent-home-') },
  });
  assert.is(r.status, 0, r.stderr);
  const f = r.json.findings.find((x: { kind: string }) => x.kind === 'hook-command');
  assert.ok(f, r.stdout);
  assert.match(f.message, /hagent is not found on PATH/);
});

test.run();
