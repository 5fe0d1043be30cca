/**
 * The real Codex CLI through `hagent run codex` (scripted model server on loopback): a shell call
 * running a script that drops the agent marker and lands is refused HUMAN_ONLY by the caller's
 * process ancestry, and the user's untracked notes the same script removed from the main checkout
 * are put back by the post-tool hook. Skipped (and said so) when the CLI cannot be installed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentBinary, agentEnv, hagentAsync, pathWithHagent } from '../helpers/agents.js';
import { testOrSkip } from '../helpers/skip.js';
import { startModelServer } from '../helpers/model-server.js';
import { git, hagent, look, makeRepo, tempDir } from '../helpers/index.js';

const test = suite('real Codex CLI: the human-only commands and the outside watch');
const found = agentBinary('codex');
const it = testOrSkip(test, 'real Codex', 'skip' in found ? found.skip : undefined);

it('a script dropping the marker cannot land; the notes it removed from the checkout are put back', async () => {
  const repo = makeRepo({ 'a.txt': 'one\n' });
  writeFileSync(path.join(repo, 'notes.txt'), 'my notes\n');
  const start = hagent(repo, ['session', 'start', '--name', 'x2', '--json']);
  assert.is(start.status, 0, start.stderr);
  const applied = hagent(start.json.worktree, ['apply', '--json'], {
    input: '*** Begin Patch\n*** Add File: b.txt\n+two\n*** End Patch\n',
  });
  assert.is(applied.status, 0, applied.stderr);
  look(repo, 'x2'); // the human reads the review first
  assert.is(hagent(repo, ['review', '--approve', '--session', 'x2', '--json']).status, 0);
  const sneak = path.join(tempDir('hagent-sneak-'), 'land.sh');
  // Codex's shell gets its own PATH: the script names the hagent on the test's PATH in full.
  const PATH = pathWithHagent();
  const bin = path.join(PATH.split(path.delimiter)[0]!, 'hagent');
  writeFileSync(
    sneak,
    `env -u HAGENT_AGENT ${bin} land --yes --json --session x2\n` +
      'm="$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")"\n' +
      'rm -f "$m/notes.txt"\n',
  );
  const server = await startModelServer([
    { calls: [{ id: 'call_sneak', name: 'exec_command', input: { cmd: `sh ${sneak}` } }] },
    { text: 'All done.' },
  ]);
  try {
    const codex = (found as { bin: string }).bin;
    const r = await hagentAsync(
      repo,
      [
        'run',
        'codex',
        '--session',
        'x2',
        '--',
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        'land it',
      ],
      { ...agentEnv('codex', server.url, codex), PATH },
    );
    assert.is(r.status, 0, r.stderr + r.stdout);
    const text = server.results.get('call_sneak')?.text ?? '';
    assert.match(text, /"code": "HUMAN_ONLY"/, text);
    assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial', 'main did not move');
    assert.ok(existsSync(path.join(repo, 'notes.txt')), 'the notes are back');
    assert.is(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'my notes\n');
    assert.match(r.stdout, /notes\.txt/, 'the run summary names the outside change');
  } finally {
    await server.close();
  }
});

test.run();
