/**
 * Arguments checked before the repository is looked at, and hints that lead somewhere, through
 * the real CLI: `undo 0`, an unknown command, `integrate --remove --print`, and `session end`
 * of a session holding a path the policy protects.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession, tempDir } from '../helpers/index.js';

const t = suite('usage and hints');

t('undo 0 (or -1, or a word) is a usage error before the session is picked', () => {
  const repo = makeRepo();
  startSession(repo, ['--name', 'a']);
  startSession(repo, ['--name', 'b']);
  for (const n of ['0', '-1', 'two']) {
    const r = hagent(repo, ['undo', n, '--json']);
    assert.is(r.status, 2, `${n}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, 'USAGE', n);
  }
  assert.is(
    hagent(repo, ['undo', '--json']).json.error.code,
    'SESSION_AMBIGUOUS',
    'a good count still needs one session',
  );
});

t('an unknown command is named as such; a near miss gets a suggestion, a far one none', () => {
  const dir = tempDir();
  const far = hagent(dir, ['bogus', '--json']);
  assert.is(far.status, 2);
  assert.is(far.json.error.message, 'unknown command "bogus"');
  assert.not.match(far.json.error.hint, /did you mean/);
  const near = hagent(dir, ['sesion', 'list', '--json']);
  assert.is(near.status, 2);
  assert.match(near.json.error.hint, 'did you mean hagent session?');
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

t(
  'session end of a session holding a protected path hints --allow-denied or taking it out, and the hint works',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'd']);
    writeFileSync(path.join(s.worktree, '.env'), 'SECRET=1\n');
    git(s.worktree, 'add', '.env');
    git(s.worktree, 'commit', '-qm', 'env');
    const end = hagent(repo, ['session', 'end', 'd', '--json']);
    assert.is(end.json.error.code, 'UNLANDED_WORK');
    assert.match(end.json.error.hint, '--allow-denied');
    assert.match(end.json.error.hint, 'hagent undo --session d');
    assert.is(
      hagent(repo, ['land', '--session', 'd', '--yes', '--json']).json.error.code,
      'LAND_DENIED',
      'a plain land refuses, as the hint says',
    );
    const land = hagent(repo, ['land', '--session', 'd', '--yes', '--allow-denied', '--json']);
    assert.is(land.status, 0, land.stdout + land.stderr);
  },
);

t.run();
