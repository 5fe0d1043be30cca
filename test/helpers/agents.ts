/**
 * The real agent CLIs for tests: Claude Code (`@anthropic-ai/claude-code`), Codex
 * (`@openai/codex`) and Gemini CLI (`@google/gemini-cli`), installed on first use into a cache outside the repository
 * (`$HAGENT_AGENTS_CACHE`, default `<tmpdir>/hagent-agents-cache`), never a dependency of hagent.
 * `HAGENT_CLAUDE_BIN` / `HAGENT_CODEX_BIN` / `HAGENT_GEMINI_BIN` point at an installed binary instead. When a CLI cannot
 * be installed (no registry), its tests are registered as skipped and the reason is printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordCodes } from './codes.js';
import { BIN, GIT_ENV, tempDir } from './index.js';

/** Where the CLIs are installed for tests. */
export const AGENTS_CACHE =
  process.env.HAGENT_AGENTS_CACHE ?? path.join(os.tmpdir(), 'hagent-agents-cache');

/** The versions these tests were written against (hook contracts change every few weeks); .ci/run installs the same. */
export const PACKAGES = {
  claude: '@anthropic-ai/claude-code@2.1.197',
  codex: '@openai/codex@0.171.0',
  gemini: '@google/gemini-cli@0.61.0',
} as const;
export type TestAgent = keyof typeof PACKAGES;

const found = new Map<TestAgent, { bin: string } | { skip: string }>();

/** The agent's binary, installing it into the cache when missing; `{skip}` says why it is not available. */
export function agentBinary(agent: TestAgent): { bin: string } | { skip: string } {
  const known = found.get(agent);
  if (known) return known;
  const override = process.env[`HAGENT_${agent.toUpperCase()}_BIN`];
  let result: { bin: string } | { skip: string };
  const bin = path.join(AGENTS_CACHE, 'node_modules', '.bin', agent);
  if (override) result = { bin: override };
  else if (existsSync(bin)) result = { bin };
  else {
    mkdirSync(AGENTS_CACHE, { recursive: true });
    // Both at once: an install with --no-save into the same prefix removes what an earlier one put there.
    process.stderr.write(
      `installing ${Object.values(PACKAGES).join(' ')} into ${AGENTS_CACHE} …\n`,
    );
    const r = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        AGENTS_CACHE,
        '--no-save',
        '--no-audit',
        '--no-fund',
        ...Object.values(PACKAGES),
      ],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 900_000 },
    );
    result =
      r.status === 0 && existsSync(bin)
        ? { bin }
        : {
            skip: `npm install ${PACKAGES[agent]} failed (exit ${r.status ?? r.signal}); no registry?`,
          };
  }
  if ('bin' in result) {
    const v = spawnSync(result.bin, ['--version'], { encoding: 'utf8', timeout: 60_000 });
    if (v.status !== 0)
      result = {
        skip: `${result.bin} --version failed: ${(v.stderr || v.error?.message || '').trim()}`,
      };
  }
  if ('skip' in result) process.stderr.write(`SKIPPED (${agent}): ${result.skip}\n`);
  found.set(agent, result);
  return result;
}

/**
 * A `CODEX_HOME` for one test with the scripted server as its model provider. Codex refuses to put
 * its helper binaries under a `CODEX_HOME` inside the temp folder, so it lives in the user's cache
 * folder. `gpt-5.5` is a model Codex has metadata for, so it offers its freeform `apply_patch` tool.
 */
export function codexHome(serverUrl: string): string {
  const base = path.join(
    process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
    'hagent-tests',
  );
  mkdirSync(base, { recursive: true });
  const home = path.join(
    base,
    `codex-home-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  );
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${serverUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_API_KEY"',
      '',
    ].join('\n'),
  );
  process.on('exit', () => spawnSync('rm', ['-rf', home]));
  return home;
}

/** The environment every real-agent run gets: no network but the loopback server, a throwaway home. */
export function agentEnv(agent: TestAgent, serverUrl: string, bin: string): Record<string, string> {
  const home = tempDir('hagent-agent-home-');
  const common = {
    ...GIT_ENV,
    HOME: home,
    [`HAGENT_${agent.toUpperCase()}_BIN`]: bin,
    NO_COLOR: '1',
  };
  if (agent === 'claude')
    return {
      ...common,
      ANTHROPIC_BASE_URL: serverUrl,
      ANTHROPIC_API_KEY: 'x',
      IS_SANDBOX: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // hagent's MCP server starts slowly on a loaded machine; Claude Code's own limit is 30 s.
      MCP_TIMEOUT: '120000',
    };
  if (agent === 'gemini') {
    // An API key as the auth method (else it asks to log in), and no folder-trust prompt.
    mkdirSync(path.join(home, '.gemini'), { recursive: true });
    writeFileSync(
      path.join(home, '.gemini', 'settings.json'),
      JSON.stringify({
        security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      }),
    );
    return { ...common, GEMINI_API_KEY: 'x', GOOGLE_GEMINI_BASE_URL: serverUrl };
  }
  return { ...common, CODEX_HOME: codexHome(serverUrl), SCRIPTED_API_KEY: 'x' };
}

/** Result of an async CLI run. */
export interface AsyncRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `hagent ARGS` without blocking the event loop (the scripted server answers from this same
 * process), stdin closed.
 */
export async function hagentAsync(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 240_000,
): Promise<AsyncRun> {
  const r = await runAsync(process.execPath, [BIN, ...args], cwd, env, timeoutMs);
  recordCodes(r.stdout, r.stderr);
  return r;
}

/** Runs any command the same way (stdin closed, output collected, killed after `timeoutMs`). */
export function runAsync(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 240_000,
): Promise<AsyncRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * A PATH with `hagent` first on it (a shim running the built CLI), as `npm install -g .` gives a
 * user: the installed hooks and MCP entries run plain `hagent`.
 */
export function pathWithHagent(): string {
  const shims = tempDir('hagent-shims-');
  writeFileSync(
    path.join(shims, 'hagent'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    { mode: 0o755 },
  );
  return `${shims}${path.delimiter}${process.env.PATH}`;
}
