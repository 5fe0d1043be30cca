/**
 * A damaged session record (not JSON, or not a session) through the real CLI: every command
 * names the file and the fault (SESSION_CORRUPT), `session list` shows it as broken, and
 * `hagent doctor` rebuilds it from the branch and worktree or says what to do.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, makeRepo, startSession } from '../helpers/index.js';

const t = suite('session-corrupt');

const PATCH =
  '*** Begin Patch\n*** Update File: README.md\n-# demo\n+# demo, edited\n*** End Patch\n';

function recordOf(repo: string, id: string): string {
  return path.join(repo, '.git', 'hagent', 'sessions', `${id}.json`);
}

t(
  'status and land of a record that is not JSON refuse SESSION_CORRUPT naming the file (exit 1)',
  () => {
    const repo = makeRepo();
    startSession(repo, ['--name', 'det']);
    const file = recordOf(repo, 'det');
    writeFileSync(file, '{"id":"det"\n');
    for (const args of [
      ['session', 'status', 'det'],
      ['land', '--session', 'det'],
    ]) {
      const r = hagent(repo, [...args, '--json']);
      assert.is(r.status, 1, `${args.join(' ')}: ${r.stderr}${r.stdout}`);
      assert.is(r.json.error.code, 'SESSION_CORRUPT');
      assert.is(r.json.error.file, file);
      assert.match(r.json.error.message, 'not valid JSON');
      assert.match(r.json.error.hint, 'hagent doctor');
    }
    assert.is(readFileSync(file, 'utf8'), '{"id":"det"\n', 'the record is left as it was');
  },
);

t(
  'a schema-invalid record is SESSION_CORRUPT naming the field; session list shows it as broken',
  () => {
    const repo = makeRepo();
    startSession(repo, ['--name', 'ok']);
    startSession(repo, ['--name', 'sch']);
    const file = recordOf(repo, 'sch');
    writeFileSync(file, '{"version":1,"id":"sch"}\n');
    const r = hagent(repo, ['session', 'status', 'sch', '--json']);
    assert.is(r.status, 1);
    assert.is(r.json.error.code, 'SESSION_CORRUPT');
    assert.match(r.json.error.message, 'field worktree');
    const list = hagent(repo, ['session', 'list', '--json']);
    assert.is(list.status, 0, list.stderr);
    assert.equal(
      list.json.sessions.map((s: { id: string }) => s.id),
      ['ok'],
    );
    assert.is(list.json.broken.length, 1);
    assert.is(list.json.broken[0].id, 'sch');
    assert.is(list.json.broken[0].file, file);
    assert.match(list.json.broken[0].hint, 'hagent doctor');
    const human = hagent(repo, ['session', 'list']);
    assert.match(human.stdout, /sch\s+broken: /);
  },
);

t(
  'doctor rebuilds a damaged record from branch hagent/<id> and its worktree, keeping the damaged file',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'det']);
    assert.is(hagent(s.worktree, ['apply'], { input: PATCH }).status, 0);
    const file = recordOf(repo, 'det');
    writeFileSync(file, '{"id":"det"');
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stderr);
    const f = d.json.findings.find((x: { kind: string }) => x.kind === 'session-corrupt');
    assert.ok(f, JSON.stringify(d.json.findings));
    assert.is(f.fixed, true);
    assert.is(readFileSync(`${file}.damaged`, 'utf8'), '{"id":"det"', 'the damaged file is kept');
    const st = hagent(repo, ['session', 'status', 'det', '--json']);
    assert.is(st.status, 0, st.stderr);
    assert.is(st.json.base, s.base);
    assert.is(st.json.worktree, s.worktree);
    assert.is(st.json.commits, 1);
    assert.is(st.json.target, 'refs/heads/main');
  },
);

t(
  'doctor reports a damaged record it cannot rebuild (no branch) with the hint, and leaves it',
  () => {
    const repo = makeRepo();
    const s = startSession(repo, ['--name', 'gone']);
    git(repo, 'worktree', 'remove', '--force', s.worktree);
    git(repo, 'branch', '-D', 'hagent/gone');
    const file = recordOf(repo, 'gone');
    writeFileSync(file, '[');
    const d = hagent(repo, ['doctor', '--json']);
    assert.is(d.status, 0, d.stderr);
    const f = d.json.findings.find((x: { kind: string }) => x.kind === 'session-corrupt');
    assert.ok(f, JSON.stringify(d.json.findings));
    assert.is(f.fixed, false);
    assert.match(f.message, 'branch hagent/gone does not exist');
    assert.match(f.hint, 'mv ');
    assert.ok(existsSync(file), 'not deleted');
    const human = hagent(repo, ['doctor']);
    assert.not.match(human.stdout, /all well/i);
  },
);

t.run();
