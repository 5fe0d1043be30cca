/**
 * `hagent integrate <agent>` through the real CLI.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, tempDir } from '../helpers/index.js';

const t = suite('integrate');

// `hagent integrate`: hagent's hooks merged into each agent's own file without clobbering the
// user's hooks, idempotent, removable; `hagent doctor` reports an installed hook whose command does
// not resolve.

const read = (f: string) => JSON.parse(readFileSync(f, 'utf8'));

t(
  "claude: merged beside the user's own hooks, idempotent, removed again leaving theirs as they were",
  () => {
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
  },
);

t(
  "every agent's project file gets its own shape; --user writes under HOME; copilot's own file goes on --remove",
  () => {
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
  },
);

t('a file that is not JSON is refused and left as it is', () => {
  const repo = makeRepo();
  const file = path.join(repo, '.codex', 'hooks.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '{ broken');
  const r = hagent(repo, ['integrate', 'codex']);
  assert.is(r.status, 1);
  assert.match(r.stderr, /CONFIG_INVALID/);
  assert.is(readFileSync(file, 'utf8'), '{ broken');
});

t('hagent doctor reports an installed hook whose command does not resolve', () => {
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

// `hagent integrate <agent> --mcp [--strict]`: hagent's MCP server (and strict mode's rules) merged
// into each agent's own files beside the user's servers and rules, idempotent, removed again
// leaving the user's content as it was; --print writes nothing; --json; doctor reports a server
// command that does not resolve.

/** Writes `value` as the agents themselves do (2-space JSON), returning its text. */
function put(file: string, value: unknown): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const text = `${JSON.stringify(value, null, 2)}\n`;
  writeFileSync(file, text);
  return text;
}

const SERVER = { command: 'hagent', args: ['mcp'] };

t(
  "claude: .mcp.json and .claude/settings.json merged beside the user's servers and rules; idempotent; --remove keeps the deny rules, --strict --remove gives back the files as they were",
  () => {
    const repo = makeRepo();
    const home = tempDir('hagent-home-');
    const env = { HOME: home };
    const mcpFile = path.join(repo, '.mcp.json');
    const settingsFile = path.join(repo, '.claude', 'settings.json');
    const mcpText = put(mcpFile, {
      mcpServers: { mine: { type: 'stdio', command: 'my-server', args: [] } },
    });
    const settingsText = put(settingsFile, {
      permissions: { allow: ['Bash(npm test)'], deny: ['Read(.env)'] },
      enabledMcpjsonServers: ['mine'],
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'my-stop' }] }] },
    });
    const r = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--json'], { env });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.json.action, 'added');
    assert.is(r.json.mcp, true);
    assert.is(r.json.strict, true);
    assert.is(r.json.strictMode.failsClosed, true);
    assert.equal(
      r.json.files.map((f: { file: string; action: string }) => [f.file, f.action]),
      [
        [mcpFile, 'added'],
        [settingsFile, 'added'],
      ],
    );
    assert.equal(read(mcpFile).mcpServers, {
      mine: { type: 'stdio', command: 'my-server', args: [] },
      hagent: { type: 'stdio', ...SERVER },
    });
    const settings = read(settingsFile);
    assert.equal(settings.permissions, {
      allow: ['Bash(npm test)', 'mcp__hagent__*'],
      deny: ['Read(.env)', 'Edit', 'Write', 'NotebookEdit'],
    });
    assert.equal(settings.enabledMcpjsonServers, ['mine', 'hagent']);
    assert.equal(settings.hooks.Stop[0].hooks[0].command, 'my-stop');
    // Idempotent: nothing written the second time.
    const merged = [readFileSync(mcpFile, 'utf8'), readFileSync(settingsFile, 'utf8')];
    const again = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--json'], { env });
    assert.is(again.json.action, 'unchanged');
    assert.equal(
      again.json.files.map((f: { action: string }) => f.action),
      ['unchanged', 'unchanged'],
    );
    assert.equal([readFileSync(mcpFile, 'utf8'), readFileSync(settingsFile, 'utf8')], merged);
    // --remove: the server, its approval and the allow rule go; the deny rules stay.
    const removed = hagent(repo, ['integrate', 'claude', '--mcp', '--remove', '--json'], { env });
    assert.is(removed.status, 0, removed.stderr);
    assert.is(removed.json.action, 'removed');
    assert.is(readFileSync(mcpFile, 'utf8'), mcpText);
    assert.equal(read(settingsFile).permissions, {
      allow: ['Bash(npm test)'],
      deny: ['Read(.env)', 'Edit', 'Write', 'NotebookEdit'],
    });
    assert.equal(read(settingsFile).enabledMcpjsonServers, ['mine']);
    const strictRemoved = hagent(
      repo,
      ['integrate', 'claude', '--mcp', '--strict', '--remove', '--json'],
      { env },
    );
    assert.is(strictRemoved.status, 0, strictRemoved.stderr);
    assert.is(readFileSync(settingsFile, 'utf8'), settingsText);
  },
);

t(
  "claude --user: the server in ~/.claude.json beside its other content, strict rules in ~/.claude/settings.json, no approval needed; a .mcp.json holding only hagent's server goes on --remove",
  () => {
    const repo = makeRepo();
    const home = tempDir('hagent-home-');
    const env = { HOME: home };
    const claudeJson = path.join(home, '.claude.json');
    put(claudeJson, {
      numStartups: 3,
      projects: { '/some/where': { hasTrustDialogAccepted: true } },
    });
    const r = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--user', '--json'], {
      env,
    });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.json.scope, 'user');
    assert.equal(
      r.json.files.map((f: { file: string }) => f.file),
      [claudeJson, path.join(home, '.claude', 'settings.json')],
    );
    const c = read(claudeJson);
    assert.is(c.numStartups, 3);
    assert.equal(c.projects, { '/some/where': { hasTrustDialogAccepted: true } });
    assert.equal(c.mcpServers, { hagent: { type: 'stdio', ...SERVER } });
    const s = read(path.join(home, '.claude', 'settings.json'));
    assert.equal(s, {
      permissions: { allow: ['mcp__hagent__*'], deny: ['Edit', 'Write', 'NotebookEdit'] },
    });
    assert.not.ok(existsSync(path.join(repo, '.mcp.json')), 'the project is not touched');
    const back = hagent(
      repo,
      ['integrate', 'claude', '--mcp', '--strict', '--user', '--remove', '--json'],
      { env },
    );
    assert.is(back.status, 0, back.stderr);
    assert.equal(read(claudeJson), {
      numStartups: 3,
      projects: { '/some/where': { hasTrustDialogAccepted: true } },
    });
    assert.equal(read(path.join(home, '.claude', 'settings.json')), {});
    // Project scope: a .mcp.json that holds only hagent's server is hagent's file.
    assert.is(hagent(repo, ['integrate', 'claude', '--mcp'], { env }).status, 0);
    assert.is(hagent(repo, ['integrate', 'claude', '--mcp', '--remove'], { env }).status, 0);
    assert.not.ok(existsSync(path.join(repo, '.mcp.json')));
    assert.equal(read(path.join(repo, '.claude', 'settings.json')), {});
  },
);

t(
  "codex: [mcp_servers.hagent] and strict [features] shell_tool = false merged into config.toml keeping the user's comments and tables byte for byte; removed back to the same bytes; --user honours CODEX_HOME",
  () => {
    const repo = makeRepo();
    const home = tempDir('hagent-home-');
    const file = path.join(repo, '.codex', 'config.toml');
    mkdirSync(path.dirname(file), { recursive: true });
    const mine =
      '# my Codex settings\nmodel = "o3"   # the one I like\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "1"]\n\n[features]\nweb_search_request = true\n';
    writeFileSync(file, mine);
    const r = hagent(repo, ['integrate', 'codex', '--mcp', '--strict', '--json'], {
      env: { HOME: home },
    });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.json.action, 'added');
    assert.is(r.json.files[0].format, 'toml');
    assert.equal(r.json.snippet, {
      mcp_servers: { hagent: { ...SERVER, startup_timeout_sec: 60 } },
      features: { shell_tool: false },
    });
    assert.is(r.json.strictMode.failsClosed, false);
    assert.match(r.json.strictMode.notEnforced, /no setting that removes its apply_patch tool/);
    const text = readFileSync(file, 'utf8');
    assert.ok(
      text.startsWith(
        '# my Codex settings\nmodel = "o3"   # the one I like\n\n[mcp_servers.docs]\ncommand = "docs-server"\n',
      ),
      text,
    );
    assert.match(text, /\[features\]\nshell_tool = false\nweb_search_request = true\n/);
    assert.match(
      text,
      /\n\[mcp_servers\.hagent\]\ncommand = "hagent"\nargs = \["mcp"\]\nstartup_timeout_sec = 60\n$/,
    );
    assert.is(
      hagent(repo, ['integrate', 'codex', '--mcp', '--strict', '--json'], { env: { HOME: home } })
        .json.action,
      'unchanged',
    );
    assert.is(readFileSync(file, 'utf8'), text);
    // Without --strict, --remove leaves shell_tool; with it, the file is back to its bytes.
    assert.is(
      hagent(repo, ['integrate', 'codex', '--mcp', '--remove'], { env: { HOME: home } }).status,
      0,
    );
    assert.not.match(readFileSync(file, 'utf8'), /mcp_servers\.hagent/);
    assert.match(readFileSync(file, 'utf8'), /shell_tool = false/);
    assert.is(
      hagent(repo, ['integrate', 'codex', '--mcp', '--strict', '--remove'], { env: { HOME: home } })
        .status,
      0,
    );
    assert.is(readFileSync(file, 'utf8'), mine);
    const codexHome = tempDir('hagent-codex-home-');
    const user = hagent(repo, ['integrate', 'codex', '--mcp', '--user', '--json'], {
      env: { HOME: home, CODEX_HOME: codexHome },
    });
    assert.is(user.status, 0, user.stderr);
    assert.is(user.json.file, path.join(codexHome, 'config.toml'));
    assert.is(
      readFileSync(path.join(codexHome, 'config.toml'), 'utf8'),
      '[mcp_servers.hagent]\ncommand = "hagent"\nargs = ["mcp"]\nstartup_timeout_sec = 60\n',
    );
  },
);

t(
  "codex: a config.toml that is not TOML, or defines hagent's server as an inline table, is refused and left as it is",
  () => {
    const repo = makeRepo();
    const file = path.join(repo, '.codex', 'config.toml');
    mkdirSync(path.dirname(file), { recursive: true });
    for (const content of ['model = \n', 'mcp_servers = { hagent = { command = "old" } }\n']) {
      writeFileSync(file, content);
      const r = hagent(repo, ['integrate', 'codex', '--mcp']);
      assert.is(r.status, 1, r.stdout);
      assert.match(r.stderr, /CONFIG_INVALID/);
      assert.match(r.stderr, /hint: /);
      assert.is(readFileSync(file, 'utf8'), content);
    }
  },
);

t(
  "gemini: mcpServers.hagent and strict tools.exclude merged beside the user's; idempotent; --strict --remove gives the file back",
  () => {
    const repo = makeRepo();
    const file = path.join(repo, '.gemini', 'settings.json');
    const mine = put(file, {
      mcpServers: { docs: { command: 'docs' } },
      tools: { exclude: ['web_fetch'] },
      ui: { theme: 'GitHub' },
    });
    const r = hagent(repo, ['integrate', 'gemini', '--mcp', '--strict', '--json']);
    assert.is(r.status, 0, r.stderr);
    assert.equal(read(file), {
      mcpServers: { docs: { command: 'docs' }, hagent: SERVER },
      tools: { exclude: ['web_fetch', 'write_file', 'replace'] },
      ui: { theme: 'GitHub' },
    });
    assert.is(r.json.strictMode.failsClosed, true);
    assert.is(
      hagent(repo, ['integrate', 'gemini', '--mcp', '--strict', '--json']).json.action,
      'unchanged',
    );
    assert.is(
      hagent(repo, ['integrate', 'gemini', '--mcp', '--strict', '--remove', '--json']).json.action,
      'removed',
    );
    assert.is(readFileSync(file, 'utf8'), mine);
  },
);

t(
  "cursor: .cursor/mcp.json, and with --strict the Cursor CLI's deny rule in .cursor/cli.json beside the user's permissions; says the editor cannot be made strict",
  () => {
    const repo = makeRepo();
    const cli = path.join(repo, '.cursor', 'cli.json');
    const mine = put(cli, { permissions: { allow: ['Shell(ls)'], deny: ['Shell(rm)'] } });
    const r = hagent(repo, ['integrate', 'cursor', '--mcp', '--strict', '--json']);
    assert.is(r.status, 0, r.stderr);
    assert.equal(read(path.join(repo, '.cursor', 'mcp.json')), { mcpServers: { hagent: SERVER } });
    assert.equal(read(cli), {
      permissions: { allow: ['Shell(ls)'], deny: ['Shell(rm)', 'Write(**)'] },
    });
    assert.is(r.json.strictMode.failsClosed, false);
    assert.match(r.json.strictMode.notEnforced, /Cursor editor has no setting/);
    const text = hagent(repo, ['integrate', 'cursor', '--mcp', '--strict']);
    assert.match(text.stdout, /nothing to change in .*mcp\.json/);
    assert.match(text.stdout, /Strict mode does not fail closed for cursor/);
    assert.is(hagent(repo, ['integrate', 'cursor', '--mcp', '--strict', '--remove']).status, 0);
    assert.is(readFileSync(cli, 'utf8'), mine);
    assert.not.ok(
      existsSync(path.join(repo, '.cursor', 'mcp.json')),
      "a file of hagent's server alone goes",
    );
  },
);

t(
  'copilot: .github/mcp.json (or ~/.copilot/mcp-config.json, COPILOT_HOME) with a local server entry; strict mode is a flag: printed, no file written for it',
  () => {
    const repo = makeRepo();
    const home = tempDir('hagent-home-');
    const r = hagent(repo, ['integrate', 'copilot', '--mcp', '--strict', '--json'], {
      env: { HOME: home },
    });
    assert.is(r.status, 0, r.stderr);
    assert.equal(
      r.json.files.map((f: { file: string }) => f.file),
      [path.join(repo, '.github', 'mcp.json')],
    );
    assert.equal(read(path.join(repo, '.github', 'mcp.json')), {
      mcpServers: { hagent: { type: 'local', ...SERVER, tools: ['*'] } },
    });
    assert.equal(r.json.strictMode.flags, ['--deny-tool=write', '--allow-tool=hagent']);
    const printed = hagent(repo, ['integrate', 'copilot', '--mcp', '--strict', '--print'], {
      env: { HOME: home },
    });
    assert.match(printed.stdout, /Start it with: copilot --deny-tool=write --allow-tool=hagent/);
    assert.match(printed.stdout, /a command-line flag, not a file/);
    const copilotHome = tempDir('hagent-copilot-home-');
    put(path.join(copilotHome, 'mcp-config.json'), {
      mcpServers: { gh: { type: 'http', url: 'https://example.invalid/mcp' } },
    });
    const user = hagent(repo, ['integrate', 'copilot', '--mcp', '--user', '--json'], {
      env: { HOME: home, COPILOT_HOME: copilotHome },
    });
    assert.is(user.json.file, path.join(copilotHome, 'mcp-config.json'));
    assert.equal(Object.keys(read(path.join(copilotHome, 'mcp-config.json')).mcpServers), [
      'gh',
      'hagent',
    ]);
    assert.is(
      hagent(repo, ['integrate', 'copilot', '--mcp', '--user', '--remove'], {
        env: { HOME: home, COPILOT_HOME: copilotHome },
      }).status,
      0,
    );
    assert.equal(read(path.join(copilotHome, 'mcp-config.json')), {
      mcpServers: { gh: { type: 'http', url: 'https://example.invalid/mcp' } },
    });
  },
);

t(
  "--print writes nothing and shows every file's part (TOML for Codex); --strict without --mcp is a usage error",
  () => {
    const repo = makeRepo();
    const printed = hagent(repo, ['integrate', 'claude', '--mcp', '--strict', '--print']);
    assert.is(printed.status, 0, printed.stderr);
    assert.match(
      printed.stdout,
      /# merged into .*\.mcp\.json by: hagent integrate claude --mcp --strict/,
    );
    assert.match(printed.stdout, /"mcp__hagent__\*"/);
    assert.match(printed.stdout, /Strict mode fails closed for claude/);
    const json = hagent(repo, ['integrate', 'claude', '--mcp', '--print', '--json']);
    assert.is(json.json.action, 'printed');
    assert.equal(
      json.json.files.map((f: { action: string }) => f.action),
      ['printed', 'printed'],
    );
    const toml = hagent(repo, ['integrate', 'codex', '--mcp', '--strict', '--print']);
    assert.match(
      toml.stdout,
      /\[mcp_servers\.hagent\]\ncommand = "hagent"\nargs = \["mcp"\]\nstartup_timeout_sec = 60\n\n\[features\]\nshell_tool = false/,
    );
    for (const f of ['.mcp.json', '.claude', '.codex'])
      assert.not.ok(existsSync(path.join(repo, f)), `${f} not written`);
    const usage = hagent(repo, ['integrate', 'claude', '--strict']);
    assert.is(usage.status, 2);
    assert.match(usage.stderr, /--strict needs --mcp/);
  },
);

t('hagent doctor reports a hagent MCP server whose command does not resolve', () => {
  const repo = makeRepo();
  const home = tempDir('hagent-home-');
  assert.is(hagent(repo, ['integrate', 'gemini', '--mcp'], { env: { HOME: home } }).status, 0);
  const r = hagent(repo, ['doctor', '--json'], { env: { PATH: '/usr/bin:/bin', HOME: home } });
  assert.is(r.status, 0, r.stderr);
  const f = r.json.findings.find((x: { kind: string }) => x.kind === 'mcp-command');
  assert.ok(f, r.stdout);
  assert.match(
    f.message,
    /gemini's MCP server hagent in .*settings\.json runs `hagent mcp`.*hagent is not found on PATH/,
  );
  assert.match(f.hint, /hagent integrate gemini --mcp/);
});

t(
  'integrate --remove --print prints the file as the removal would leave it, and writes nothing',
  () => {
    const repo = makeRepo();
    const home = tempDir('hagent-home-');
    const file = path.join(home, '.claude', 'settings.json');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '{"model": "mine"}\n');
    const env = { HOME: home };
    assert.is(hagent(repo, ['integrate', 'claude', '--user'], { env }).status, 0);
    const installed = readFileSync(file, 'utf8');
    const r = hagent(repo, ['integrate', 'claude', '--user', '--remove', '--print'], { env });
    assert.is(r.status, 0, r.stderr);
    assert.not.match(r.stdout, /merged into/);
    assert.match(r.stdout, `${file} after: hagent integrate claude --user --remove`);
    assert.equal(JSON.parse(r.stdout.slice(r.stdout.indexOf('\n') + 1)), { model: 'mine' });
    assert.is(readFileSync(file, 'utf8'), installed, 'nothing written');
    const mcp = hagent(repo, ['integrate', 'claude', '--mcp', '--user', '--remove', '--print'], {
      env,
    });
    assert.is(mcp.status, 0, mcp.stderr);
    assert.match(mcp.stdout, /^# taken out of .* --remove/m);
  },
);

t.run();
