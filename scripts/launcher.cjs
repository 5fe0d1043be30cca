#!/usr/bin/env node
// hagent's command line, started fast: loads the CLI bundle (cli.cjs, beside this file; hook.cjs for `hagent hook`) with a
// V8 code cache, so a command skips most of the parsing and compiling of ~800 KB of JavaScript
// on every run (agents call hagent hundreds of times a session). The cache is V8's own format:
// V8 checks it against its version and flags and rejects a stale one. Its name carries the
// bundle's content hash, size and mtime, so a rebuilt or edited bundle never meets an old cache.
// It lives in `.cache/` beside the bundle, or in the user's cache folder when that is not
// writable; it is never read from a shared folder such as /tmp. Any failure here only means
// "no cache": the bundle then compiles as usual.
// The launcher is CommonJS: an ES module entry point starts Node's ES module loader, which costs
// ~10 ms of compiling Node's own internal modules on every start.
'use strict';
const {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} = require('node:fs');
const { createRequire } = require('node:module');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');

/**
 * The repository around `dir`: its top folder (real path) and git common dir; null outside any
 * repository; 'doubt' when it cannot be told here (the bundle decides then).
 */
function repositoryOf(dir) {
  let d;
  try {
    d = realpathSync(dir);
  } catch {
    return 'doubt';
  }
  for (;;) {
    const dotGit = path.join(d, '.git');
    let st;
    try {
      st = statSync(dotGit);
    } catch {
      st = null;
    }
    if (st) {
      if (!st.isFile()) return { top: d, common: dotGit };
      const m = /^gitdir: (.+?)\r?\n?$/.exec(readFileSync(dotGit, 'utf8'));
      if (!m) return 'doubt';
      const gitDir = path.resolve(d, m[1]);
      const common = existsSync(path.join(gitDir, 'commondir'))
        ? path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim())
        : gitDir;
      return { top: d, common };
    }
    const parent = path.dirname(d);
    if (parent === d) return null;
    d = parent;
  }
}

// `hagent hook AGENT`: an agent runs it on every tool call, in every repository once installed at
// user scope. Outside any hagent session it must cost about a bare `node` start, so that case is
// decided here, before the ~800 KB bundle loads: the event is read from stdin (and handed to the
// bundle when it does load), and only when no session's worktree holds the event's folder is the
// no-effect answer given here. Any doubt loads the bundle, which decides the same way.
function sessionsMayHold(dir) {
  const repo = repositoryOf(dir);
  if (repo === 'doubt') return true;
  if (repo === null) return false;
  const sessions = path.join(repo.common, 'hagent', 'sessions');
  if (!existsSync(sessions)) return false;
  for (const name of readdirSync(sessions)) {
    if (!name.endsWith('.json')) continue;
    const wt = JSON.parse(readFileSync(path.join(sessions, name), 'utf8')).worktree;
    if (typeof wt !== 'string') return true;
    const rel = path.relative(realpathSync(wt), realpathSync(dir));
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return true;
  }
  return false;
}

// Each agent's project hook file (src/agents/integrate.ts HOOK_FILES). In a repository whose main
// checkout wires the agent with hagent's hooks, an agent outside any session has its writes and
// destructive git refused (src/agents/main-checkout.ts): those events load the bundle.
const PROJECT_HOOK_FILES = {
  claude: '.claude/settings.json',
  codex: '.codex/hooks.json',
  gemini: '.gemini/settings.json',
  cursor: '.cursor/hooks.json',
  'cursor-agent': '.cursor/hooks.json',
  copilot: '.github/hooks/hagent.json',
};

/** True when `dir`'s repository may wire `agent` by hagent integrate (any doubt: true). */
function checkoutMayBeWired(dir, agent) {
  const repo = repositoryOf(dir);
  if (repo === 'doubt') return true;
  if (repo === null) return false;
  // The main checkout holds the common dir as `.git`; a bare repository's worktrees: doubt.
  if (path.basename(repo.common) !== '.git') return true;
  const main = path.dirname(repo.common);
  const read = (rel) => {
    try {
      return readFileSync(path.join(main, rel), 'utf8');
    } catch {
      return '';
    }
  };
  const file = PROJECT_HOOK_FILES[agent];
  return (
    (file !== undefined && /hook\s+(claude|codex|gemini|cursor|copilot)\b/.test(read(file))) ||
    read('.hagent/config.json').includes('"mainCheckout"')
  );
}

function hookOutsideSessions() {
  const [, , command, agent, eventArg] = process.argv;
  if (command !== 'hook' || !agent || agent.startsWith('-')) return false;
  let input;
  try {
    input = readFileSync(0, 'utf8');
  } catch {
    return false;
  }
  // Handed to the bundle in every case: reading it there through process.stdin cost ~2 ms more.
  globalThis.__hagentHookInput = input;
  // Under `hagent run`, only the run's own hooks act (src/agents/hook.ts RUN_HOOKS_ENV).
  if (process.env.HAGENT_RUN_HOOKS === '1' && process.env.HAGENT_HOOK_SOURCE !== 'run') {
    if (agent === 'cursor' || agent === 'cursor-agent') writeSync(1, '{}\n');
    return true;
  }
  // `hagent run` names its session: the bundle finds it.
  if (process.env.HAGENT_WORKTREE || process.env.HAGENT_SESSION) return false;
  try {
    const p = input.trim() ? JSON.parse(input) : {};
    const event = String(p.hook_event_name || p.hookEventName || eventArg || '');
    if (/worktree/i.test(event)) return false;
    const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots : [];
    const dirs = [p.cwd, roots[0], process.cwd()].filter((x) => typeof x === 'string' && x);
    if (dirs.some((x) => sessionsMayHold(path.resolve(x)))) return false;
    // Events hagent answers outside a session: a tool call about to run, an agent session starting.
    if (
      /pre.?tool|before|session.?start/i.test(event) &&
      checkoutMayBeWired(path.resolve(dirs[0] ?? '.'), agent)
    )
      return false;
  } catch {
    return false;
  }
  registerHookAgent();
  if (agent === 'cursor' || agent === 'cursor-agent') writeSync(1, '{}\n');
  return true;
}

// The agent that runs this hook, registered as src/agents/ancestry.ts `registerHookAgent` does
// (same registry, same entry), for a hook answered here outside any session: that agent cannot
// run the human's commands either (docs/human-only.md). Kept here because the bundle does not
// load on this path. Never throws.
function registerHookAgent() {
  try {
    const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish', 'env', 'timeout', 'nice']);
    const info = (pid) => {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = text.lastIndexOf(')');
      const f = text.slice(close + 2).split(' ');
      const comm = text.slice(text.indexOf('(') + 1, close);
      return { pid, ppid: +f[1], sid: +f[3], tty: +f[4], start: f[19], comm };
    };
    let p = info(info(process.pid).ppid);
    let shells = 0;
    while (p.pid > 1 && SHELLS.has(p.comm) && (p.tty === 0 || p.sid !== p.pid)) {
      shells++;
      p = info(p.ppid);
    }
    if (shells === 0 || p.pid <= 1 || SHELLS.has(p.comm)) return;
    const dir = path.join(os.userInfo().homedir, '.cache', 'hagent', 'agents');
    const file = path.join(dir, `${p.pid}-${p.start}.json`);
    if (existsSync(file)) return;
    mkdirSync(dir, { recursive: true });
    const entry = { pid: p.pid, start: p.start, kind: 'hook', session: null, repo: null };
    writeFileSync(file, JSON.stringify({ ...entry, since: Number(p.start) }), { mode: 0o600 });
  } catch {
    // no /proc, or nothing writable: the other proofs still hold
  }
}

if (!hookOutsideSessions()) askHookServer(loadCli);

/**
 * Under `hagent run` the plain hook line is answered by the run itself, over the Unix socket
 * named in HAGENT_HOOK_SOCKET (src/agents/hook-server.ts has the protocol): no bundle to load,
 * no repository to read cold. Only a whole answer counts; any failure before it arrives (no
 * socket, a refused or broken connection, no connection within 2 s, an answer that does not
 * parse, the server's own "handle it yourself") runs `fallback`, which handles the hook here
 * with the input already read, as without a server.
 */
function askHookServer(fallback) {
  const socket = process.env.HAGENT_HOOK_SOCKET;
  const input = globalThis.__hagentHookInput;
  if (!socket || typeof input !== 'string' || bundleName() !== 'hook') return fallback();
  const [, , , agent, event] = process.argv;
  const conn = require('node:net').connect(socket);
  let settled = false;
  const fail = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    conn.destroy();
    fallback();
  };
  const timer = setTimeout(fail, 2000);
  const chunks = [];
  conn.on('connect', () => {
    clearTimeout(timer);
    const request = {
      v: 1,
      agent,
      event: event ?? null,
      input,
      cwd: process.cwd(),
      env: process.env,
    };
    conn.write(`${JSON.stringify(request)}\n`);
  });
  conn.on('data', (chunk) => chunks.push(chunk));
  conn.on('error', fail);
  conn.on('close', () => {
    if (settled) return;
    let a;
    try {
      const text = Buffer.concat(chunks).toString('utf8');
      a = text.endsWith('\n') ? JSON.parse(text) : null;
    } catch {
      a = null;
    }
    const whole = a && a.v === 1 && typeof a.stdout === 'string' && typeof a.stderr === 'string';
    if (!whole || !Number.isInteger(a.exitCode)) return fail();
    settled = true;
    writeAll(1, a.stdout);
    writeAll(2, a.stderr);
    process.exitCode = a.exitCode;
  });
}

/** Writes `text` to the descriptor; what a non-blocking pipe does not take at once goes through Node's stream. */
function writeAll(fd, text) {
  let bytes = Buffer.from(text, 'utf8');
  try {
    while (bytes.length) bytes = bytes.subarray(writeSync(fd, bytes));
  } catch {
    (fd === 1 ? process.stdout : process.stderr).write(bytes);
  }
}

/**
 * The plain hook line `hagent hook AGENT [EVENT]` (what agents' configurations run) starts the
 * hook's own bundle, hook.cjs; everything else, `hagent hook --help` included, the CLI's.
 */
function bundleName() {
  const args = process.argv.slice(2);
  const plainHook =
    '__ENTRY__' === 'hagent' &&
    args[0] === 'hook' &&
    (args.length === 2 || args.length === 3) &&
    !args.slice(1).some((a) => a.startsWith('-'));
  return plainHook ? 'hook' : 'cli';
}

function loadCli() {
  const BUNDLE_HASHES = __BUNDLE_HASHES__;
  // Which program this launcher starts from the CLI bundle: `hagent`, or the `apply_patch` drop-in.
  globalThis.hagentEntry = '__ENTRY__';
  const program = bundleName();
  const bundle = path.join(__dirname, `${program}.cjs`);
  const fd = openSync(bundle, 'r');
  const st = fstatSync(fd);
  const source = readFileSync(fd, 'utf8');
  closeSync(fd);
  const name = `${program}-${BUNDLE_HASHES[program]}-${st.size}-${Math.trunc(st.mtimeMs)}-${process.version}-${process.arch}.v8`;
  const userCache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const places = [path.join(path.dirname(bundle), '.cache'), path.join(userCache, 'hagent')];
  let cachedData;
  for (const dir of places) {
    try {
      cachedData = readFileSync(path.join(dir, name));
      break;
    } catch {
      // not there
    }
  }
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapper, {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
  });
  const forced = process.env.HAGENT_WRITE_CODE_CACHE === '1';
  if (forced || !cachedData || script.cachedDataRejected) {
    // At exit the cache holds every function this run compiled, not just the top level.
    process.once('exit', () => {
      const data = script.createCachedData();
      for (const dir of places) {
        try {
          mkdirSync(dir, { recursive: true });
          const tmp = path.join(dir, `.${name}.${process.pid}.tmp`);
          writeFileSync(tmp, data);
          renameSync(tmp, path.join(dir, name));
          return;
        } catch {
          // not writable: try the next place
        }
      }
    });
  }
  const cliModule = { exports: {} };
  script.runInThisContext()(
    cliModule.exports,
    createRequire(bundle),
    cliModule,
    bundle,
    path.dirname(bundle),
  );
}
