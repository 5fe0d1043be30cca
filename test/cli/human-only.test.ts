/**
 * The human-only commands cannot be reached from an agent's process by any route through
 * `hagent exec`: a script, `python3` dropping the agent marker, `env -i`, `exec` replacing the
 * shell, a background job, `setsid -f` (detached, re-parented to init). Each is refused
 * HUMAN_ONLY by the caller's process ancestry (agents/ancestry.ts), the target branch does not
 * move, and the human's own `hagent land` afterwards still works.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pathWithHagent } from '../helpers/agents.js';
import { git, GIT_ENV, hagent, look, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('human-only steps through hagent exec');

const PATH = pathWithHagent();

/** A repository with a session holding one approved patch (so a land would go through). */
function approved(): { repo: string; worktree: string; id: string } {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  const s = startSession(repo, ['--name', 'h1']);
  const applied = hagent(s.worktree, ['apply', '--json'], {
    input: '*** Begin Patch\n*** Add File: b.txt\n+two\n*** End Patch\n',
  });
  assert.is(applied.status, 0, applied.stdout + applied.stderr);
  look(repo, 'h1'); // the human reads the review first
  const ok = hagent(repo, ['review', '--approve', '--session', 'h1', '--json']);
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  return { repo, worktree: s.worktree, id: s.id };
}

/** Waits up to `ms` for `file` to hold JSON; returns it parsed, or null. */
async function waitJson(file: string, ms: number): Promise<any> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        // still being written
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

/** Runs `script` (bash) as a file through hagent exec in the session worktree. */
function execScript(worktree: string, script: string) {
  const file = path.join(path.dirname(worktree), `${path.basename(worktree)}-script.sh`);
  writeFileSync(file, script);
  // Without the sandbox: these are the proofs for an agent no wall stands around (inside one,
  // the sandbox's own mount table is the proof: test/cli/hook-sandbox.test.ts).
  return hagent(worktree, ['exec', '--json', '--', `bash ${file}`], {
    env: { PATH, HAGENT_BWRAP: '' },
  });
}

const LAND = 'hagent land --yes --json --session h1';

const routes: [string, string][] = [
  ['a script dropping the marker (env -u)', `env -u HAGENT_AGENT ${LAND}`],
  [
    'python3 dropping the marker',
    `python3 -c "import os,subprocess,sys; e=dict(os.environ); e.pop('HAGENT_AGENT'); sys.exit(subprocess.run('${LAND}'.split(), env=e).returncode)"`,
  ],
  ['env -i', `env -i PATH="$PATH" HOME="$HOME" ${LAND}`],
  ['exec replacing the shell', `exec env -u HAGENT_AGENT ${LAND}`],
  [
    'approve dropping the marker',
    'env -u HAGENT_AGENT hagent review --approve --json --session h1',
  ],
  ['session end dropping the marker', 'env -u HAGENT_AGENT hagent session end h1 --yes --json'],
  ['integrate dropping the marker', 'env -u HAGENT_AGENT hagent integrate claude --json'],
];

for (const [name, line] of routes) {
  t(`${name}: HUMAN_ONLY, nothing lands`, () => {
    const { repo, worktree } = approved();
    const r = execScript(worktree, `${line}\n`);
    assert.is(r.status, 1, r.stdout + r.stderr);
    const inner = JSON.parse(r.json.stdout).error;
    assert.is(inner.code, 'HUMAN_ONLY', r.json.stdout);
    assert.match(inner.message, /is for the human/);
    assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial', 'main did not move');
    assert.not.ok(existsSync(path.join(repo, '.claude')), 'integrate wrote nothing');
  });
}

t(
  'a background job (nohup) is refused while the command runs, and killed when it ends',
  async () => {
    const { repo, worktree } = approved();
    const out = path.join(path.dirname(worktree), 'bg.json');
    const late = path.join(path.dirname(worktree), 'late.txt');
    const r = execScript(
      worktree,
      `nohup sh -c 'env -u HAGENT_AGENT ${LAND} > ${out}' >/dev/null 2>&1 &\n` +
        `nohup sh -c 'sleep 3; echo alive > ${late}' >/dev/null 2>&1 &\n` +
        `while [ ! -s ${out} ]; do sleep 0.1; done\n`,
    );
    assert.is(r.status, 0, r.stdout + r.stderr);
    const landed = await waitJson(out, 5000);
    assert.is(landed?.error?.code, 'HUMAN_ONLY', JSON.stringify(landed));
    await new Promise((res) => setTimeout(res, 3500));
    assert.not.ok(existsSync(late), 'the job that outlived the command was killed');
    assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial');
  },
);

t('setsid -f (detached, re-parented to init) is refused after the command ended', async () => {
  const { repo, worktree } = approved();
  const out = path.join(path.dirname(worktree), 'detached.json');
  const r = execScript(
    worktree,
    `setsid -f env -u HAGENT_AGENT sh -c 'sleep 1; ${LAND} > ${out} 2>&1'\n`,
  );
  assert.is(r.status, 0, r.stdout + r.stderr);
  const landed = await waitJson(out, 15000);
  assert.is(landed?.error?.code, 'HUMAN_ONLY', JSON.stringify(landed));
  assert.match(landed.error.how, /detached itself while the shell of a hagent exec/);
  assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial');
  // The human, in their own shell, lands it.
  const human = hagent(repo, ['land', '--yes', '--json', '--session', 'h1']);
  assert.is(human.status, 0, human.stdout + human.stderr);
  assert.is(git(repo, 'show', 'main:b.txt'), 'two');
});

t(
  'an integrate-wired agent in the main checkout (its hook answered outside any session) cannot land',
  () => {
    const { repo } = approved();
    // A stand-in agent: runs its hook command line through sh, as agents do, then a shell command.
    const agent = path.join(tempDir('hagent-agent-'), 'agent.cjs');
    writeFileSync(
      agent,
      `const { execSync } = require('node:child_process');
const event = JSON.stringify({ hook_event_name: 'PreToolUse', cwd: process.cwd(), tool_name: 'Bash', tool_input: { command: 'true' } });
execSync('cat | hagent hook claude', { input: event, shell: '/bin/sh' });
process.stdout.write(execSync('env -u HAGENT_AGENT ${LAND} || true', { shell: '/bin/sh' }));
`,
    );
    const r = spawnSync(process.execPath, [agent], {
      cwd: repo,
      env: { ...process.env, ...GIT_ENV, PATH },
      encoding: 'utf8',
    });
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout).error;
    assert.is(out?.code, 'HUMAN_ONLY', r.stdout);
    assert.match(out.how, /an agent whose hagent hook ran/);
    assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial', 'main did not move');
  },
);

t.run();
