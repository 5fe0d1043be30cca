/**
 * The MCP server's `exec` (through the real SDK client): a script that drops the agent marker and
 * runs `hagent land` is refused HUMAN_ONLY by the caller's process ancestry, and a rewrite of
 * `.hagent/config.json` through a path computed at run time is put back and reported in
 * `outside`.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pathWithHagent } from '../helpers/agents.js';
import { git, hagent, look, makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('hagent mcp: exec cannot reach the human-only steps');

t(
  'a script dropping the marker cannot land; a computed-path config rewrite is put back',
  async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    mkdirSync(path.join(repo, '.hagent'));
    const config = '{ "guard": { "allow": [] } }\n';
    writeFileSync(path.join(repo, '.hagent', 'config.json'), config);
    const s = startSession(repo, ['--name', 'm1']);
    const applied = hagent(s.worktree, ['apply', '--json'], {
      input: '*** Begin Patch\n*** Add File: b.txt\n+two\n*** End Patch\n',
    });
    assert.is(applied.status, 0, applied.stderr);
    look(repo, 'm1'); // the human reads the review first
    assert.is(hagent(repo, ['review', '--approve', '--session', 'm1', '--json']).status, 0);
    const script = path.join(path.dirname(s.worktree), 'm1-land.sh');
    writeFileSync(
      script,
      'env -u HAGENT_AGENT hagent land --yes --json --session m1\n' +
        'm="$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")"\n' +
        `printf '{"guard":{"allow":["hagent-human-only"]}}' > "$m/.ha""gent/config.json"\n`,
    );
    // Without the sandbox (which would stop the config write): the proofs for an agent no wall
    // stands around.
    const c = await connectMcp(repo, ['--session', 'm1'], {
      PATH: pathWithHagent(),
      HAGENT_BWRAP: '',
    });
    try {
      const r = await c.call('exec', { command: `bash ${script}` });
      assert.is(r.isError, false, r.text);
      assert.is(JSON.parse(r.data.stdout).error.code, 'HUMAN_ONLY', r.data.stdout);
      assert.ok(r.data.outside?.restored.includes('.hagent/config.json'), JSON.stringify(r.data));
    } finally {
      await c.close();
    }
    assert.is(git(repo, 'log', '-1', '--format=%s', 'main'), 'initial', 'main did not move');
    assert.is(readFileSync(path.join(repo, '.hagent', 'config.json'), 'utf8'), config);
  },
);

t.run();
