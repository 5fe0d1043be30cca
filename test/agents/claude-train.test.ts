/**
 * Three agents on one repository, as a user runs them: three `hagent run claude` sessions of the
 * real Claude Code (scripted model on loopback), two of them editing the same lines: the radar
 * warns the second agent before its edit. A gated
 * train lands the two that go cleanly and stops at the conflict; `session update` brings the
 * third up to the new branch, the agent's resolution is approved, and a land finishes it;
 * `land --undo` then takes the last train back. Skipped (and said so) when the CLI cannot run here.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer, type ModelServer, type Step } from '../helpers/model-server.js';
import { git, hagent, look, makeRepo } from '../helpers/index.js';

const test = suite('three real Claude Code sessions landed as a train');
const found = agentBinary('claude');
const it = testOrSkip(test, 'real Claude Code', 'skip' in found ? found.skip : undefined);

const CLAUDE_ARGS = ['--', '-p', 'make the scripted edits', '--dangerously-skip-permissions'];

/** One scripted Edit of `file` in the session worktree, then the end of the turn. */
function editScript(file: string, from: string, to: string): Step[] {
  return [
    (wd) => ({
      calls: [{ id: 'toolu_read', name: 'Read', input: { file_path: `${wd}/${file}` } }],
    }),
    (wd) => ({
      calls: [
        {
          id: 'toolu_edit',
          name: 'Edit',
          input: { file_path: `${wd}/${file}`, old_string: from, new_string: to },
        },
      ],
    }),
    { text: 'Done.' },
  ];
}

/** Runs one `hagent run claude` session named `id` with `script`; returns the model server. */
async function runAgent(repo: string, id: string, script: Step[]): Promise<ModelServer> {
  const server = await startModelServer(script);
  try {
    const env = agentEnv('claude', server.url, (found as { bin: string }).bin);
    const r = await hagentAsync(
      repo,
      ['run', 'claude', '--name', id, '--json', ...CLAUDE_ARGS],
      env,
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const edit = server.results.get('toolu_edit');
    assert.ok(edit && !edit.isError, `${id}: the edit went through: ${edit?.text}`);
    return server;
  } finally {
    await server.close();
  }
}

/** Approves session `id` as a human: review shown, then approved. */
function approve(repo: string, id: string): void {
  look(repo, id);
  const r = hagent(repo, ['review', '--session', id, '--approve']);
  assert.is(r.status, 0, r.stderr);
}

it('a gated train lands the two clean sessions, stops at the conflict; session update + land finishes it; land --undo takes the train back', async () => {
  const repo = makeRepo({
    'src/a.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
    'README.md': '# demo\n',
  });
  // The gate: the tree must not hold a conflict marker, and a.ts must still export a.
  mkdirSync(path.join(repo, '.hagent'), { recursive: true });
  writeFileSync(
    path.join(repo, '.hagent', 'config.json'),
    `${JSON.stringify({ land: { gate: { shell: "! git grep -q '^<<<<<<<' && grep -q 'export const a' src/a.ts" } } })}\n`,
  );
  await runAgent(
    repo,
    'ag1',
    editScript('src/a.ts', 'export const a = 1;', 'export const a = 10;'),
  );
  await runAgent(
    repo,
    'ag2',
    editScript('src/a.ts', 'export const a = 1;', 'export const a = 20;'),
  );
  await runAgent(repo, 'ag3', editScript('README.md', '# demo', '# demo\n\nThree agents.'));
  for (const id of ['ag1', 'ag2', 'ag3']) approve(repo, id);
  const before = git(repo, 'rev-parse', 'main');

  const dry = hagent(repo, ['land', 'ag1', 'ag3', 'ag2', '--dry-run', '--json']);
  assert.equal(dry.json.wouldLand, ['ag1', 'ag3']);
  assert.is(dry.json.wouldStopAt, 'ag2');

  const train = hagent(repo, ['land', 'ag1', 'ag3', 'ag2', '--json']);
  assert.is(train.status, 1, train.stderr + train.stdout);
  assert.equal(
    train.json.landed.map((l: { session: string }) => l.session),
    ['ag1', 'ag3'],
  );
  assert.ok(train.json.landed.every((l: { gate: { skipped: boolean } }) => !l.gate.skipped));
  assert.is(train.json.stopped.session, 'ag2');
  assert.is(train.json.stopped.code, 'LAND_CONFLICT');
  assert.match(train.json.stopped.hint, /hagent session update --session ag2/);
  assert.match(readFileSync(path.join(repo, 'src/a.ts'), 'utf8'), /a = 10;/);

  // The way on: update ag2 (conflict markers in its worktree), resolve as the agent would, sync,
  // approve, land.
  const update = hagent(repo, ['session', 'update', '--session', 'ag2', '--json']);
  const wt = hagent(repo, ['session', 'status', 'ag2', '--json']).json.worktree as string;
  assert.match(readFileSync(path.join(wt, 'src/a.ts'), 'utf8'), /^<<<<<<< /m, update.stdout);
  writeFileSync(
    path.join(wt, 'src/a.ts'),
    'export const a = 30;\nexport const b = 2;\nexport const c = 3;\n',
  );
  git(wt, 'add', 'src/a.ts');
  assert.is(hagent(repo, ['sync', '--session', 'ag2']).status, 0);
  approve(repo, 'ag2');
  const last = hagent(repo, ['land', 'ag2', '--json']);
  assert.is(last.status, 0, last.stderr + last.stdout);
  assert.match(readFileSync(path.join(repo, 'src/a.ts'), 'utf8'), /a = 30;/);
  assert.match(readFileSync(path.join(repo, 'README.md'), 'utf8'), /Three agents\./);

  // The single land of ag2 is on top: land --undo takes it back; then the train is at the tip
  // again and land --undo takes the whole train back.
  assert.is(hagent(repo, ['land', '--undo']).status, 0);
  const undo = hagent(repo, ['land', '--undo', '--json']);
  assert.is(undo.status, 0, undo.stderr + undo.stdout);
  assert.equal(undo.json.sessions, ['ag1', 'ag3']);
  assert.is(git(repo, 'rev-parse', 'main'), before);
  assert.is(git(repo, 'status', '--porcelain', '--untracked-files=no'), '');
});

test.run();
