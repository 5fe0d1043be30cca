#!/usr/bin/env node
// The stand-in agent of bench/agent-hooks.ts: `hagent run claude` starts it (HAGENT_CLAUDE_BIN)
// with the environment it gives Claude Code, its hook server listening. It checks that the hook
// command of the `--settings` file is the one it times, then, run after run, interleaved: `node
// -e 0`, and for each subject one native edit (the PreToolUse hook process, the write, the
// PostToolUse hook process), and a hook outside any session. Subjects: through the server (the
// environment as given), in-process (the socket variable removed), other builds (in-process).
// Timings go to the JSON file named by HAGENT_BENCH_PLAN's `out`. Not a test; no assertions but
// the exit statuses.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const plan = JSON.parse(readFileSync(process.env.HAGENT_BENCH_PLAN, 'utf8'));
const settings = JSON.parse(
  readFileSync(process.argv[process.argv.indexOf('--settings') + 1], 'utf8'),
);
const command = settings.hooks.PreToolUse[0].hooks[0].command;
// `hagent run` prefixes its own hooks' commands with the source marker (RUN_HOOK_SOURCE).
const expected = `HAGENT_HOOK_SOURCE=run ${process.execPath} ${plan.bin} hook claude`;
if (command.replace(/'/g, '') !== expected)
  throw new Error(`the settings' hook command is ${command}, not ${expected}`);

/** CPU ms (user + system) of process `pid` and its waited-for children, from /proc; null off Linux. */
function cpuOf(pid, self) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // proc(5) fields 14-17 (utime, stime, cutime, cstime), counted from the state (field 3), in ticks of 10 ms.
    return ((self ? Number(f[11]) + Number(f[12]) : 0) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return null;
  }
}
/** CPU ms of this driver's children, plus the server's own (hagent run is the parent) when `server`. */
const cpuNow = (server) => {
  const mine = cpuOf(process.pid, false);
  const theirs = server ? cpuOf(process.ppid, true) : 0;
  return mine === null || theirs === null ? null : mine + theirs;
};

function run(args, cwd, env, input = '') {
  const r = spawnSync(args[0], args.slice(1), { cwd, env, input, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 2)
    throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
}
function timed(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const withoutSocket = { ...process.env };
delete withoutSocket.HAGENT_HOOK_SOCKET;
const outsideEnv = { ...withoutSocket };
for (const k of Object.keys(outsideEnv))
  if (k.startsWith('HAGENT_') && k !== 'HAGENT_MAX_FILES') delete outsideEnv[k];

const subjects = plan.subjects.map((s) => ({
  ...s,
  env: s.server ? process.env : withoutSocket,
  pre: [],
  post: [],
  edit: [],
  outside: [],
  editCpu: [],
}));
const node = [];
const nodeCpu = [];
const hook = (s, cwd, env, event) =>
  run(
    [process.execPath, s.bin, 'hook', 'claude'],
    cwd,
    { ...env, HAGENT_HOOK_SOURCE: 'run' },
    JSON.stringify(event),
  );
const write = (s, i, name) => ({
  hook_event_name: name,
  cwd: s.wt,
  tool_name: 'Write',
  tool_use_id: `toolu_${s.key}_${i}`,
  tool_input: { file_path: path.join(s.wt, s.target), content: `edit ${i}\n` },
});
// Warm-up: the code caches, the file-system cache, the server's first compile.
for (let i = 0; i < 3; i++) {
  run([process.execPath, '-e', '0'], plan.repo, withoutSocket);
  for (const s of subjects) {
    hook(s, s.wt, s.env, write(s, `w${i}`, 'PreToolUse'));
    writeFileSync(path.join(s.wt, s.target), `warm ${i}\n`);
    hook(s, s.wt, s.env, write(s, `w${i}`, 'PostToolUse'));
  }
}
for (let i = 0; i < plan.runs; i++) {
  const c0 = cpuNow(false);
  node.push(timed(() => run([process.execPath, '-e', '0'], plan.repo, withoutSocket)));
  const c1 = cpuNow(false);
  if (c0 !== null && c1 !== null) nodeCpu.push(c1 - c0);
  for (const s of subjects) {
    let pre = 0;
    let post = 0;
    const before = cpuNow(s.server);
    s.edit.push(
      timed(() => {
        pre = timed(() => hook(s, s.wt, s.env, write(s, i, 'PreToolUse')));
        writeFileSync(path.join(s.wt, s.target), `edit ${i}\n`);
        post = timed(() => hook(s, s.wt, s.env, write(s, i, 'PostToolUse')));
      }),
    );
    const after = cpuNow(s.server);
    if (before !== null && after !== null) s.editCpu.push(after - before);
    s.pre.push(pre);
    s.post.push(post);
    s.outside.push(
      timed(() =>
        hook(s, plan.repo, outsideEnv, {
          hook_event_name: 'PreToolUse',
          cwd: plan.repo,
          tool_name: 'Write',
          tool_input: { file_path: path.join(plan.repo, s.target), content: 'x' },
        }),
      ),
    );
  }
}
writeFileSync(
  plan.out,
  JSON.stringify({ node, nodeCpu, subjects: subjects.map(({ env: _env, ...s }) => s) }),
);
