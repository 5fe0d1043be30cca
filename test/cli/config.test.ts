/**
 * `.hagent/config.json`, environment overrides and `hagent config show|schema`.
 */
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hagent, makeRepo, startSession, writeFiles } from '../helpers/index.js';

const t = suite('config');

const twoFiles =
  '*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch\n';

t('config show names the source of every value: default, config or env', () => {
  const repo = makeRepo({
    '.hagent/config.json': '{"maxFiles": 3, "deniedPaths": ["secrets/**"]}\n',
  });
  const r = hagent(repo, ['config', 'show', '--json'], { env: { HAGENT_MAX_CHANGED_LINES: '5' } });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.json.values.maxFiles, 3);
  assert.is(r.json.sources.maxFiles, 'config');
  assert.is(r.json.values.maxChangedLines, 5);
  assert.is(r.json.sources.maxChangedLines, 'env');
  assert.is(r.json.sources.confirmFiles, 'default');
  assert.ok(r.json.values.deniedPaths.includes('secrets/**'));
  assert.ok(r.json.values.deniedPaths.includes('**/.env'), 'built-in denials stay');
});

t('an invalid config is a clear error naming the key', () => {
  const repo = makeRepo({ '.hagent/config.json': '{"maxFile": 3}\n' });
  const r = hagent(repo, ['config', 'show', '--json']);
  assert.is(r.status, 1);
  assert.is(r.json.error.code, 'CONFIG_INVALID');
  assert.match(r.json.error.message, /maxFile/);
  const s = makeRepo({ '.hagent/config.json': '{"maxFiles": "ten"}\n' });
  assert.is(hagent(s, ['config', 'show', '--json']).json.error.key, 'maxFiles');
});

t(
  'the hint of an invalid config names the file and line and points at config schema, which works',
  () => {
    const repo = makeRepo({
      '.hagent/config.json': '{\n  "maxFiles": 3,\n  "deniedPaths": 7\n}\n',
    });
    const file = path.join(repo, '.hagent', 'config.json');
    const r = hagent(repo, ['config', 'show', '--json']);
    assert.is(r.status, 1);
    assert.is(r.json.error.line, 3);
    assert.match(r.json.error.hint, `"deniedPaths" at line 3 of ${file}`);
    assert.match(r.json.error.hint, 'hagent config schema');
    assert.not.match(
      r.json.error.hint,
      'config show',
      'config show fails the same way: never suggested',
    );
    assert.is(
      hagent(repo, ['config', 'schema', '--json']).status,
      0,
      'the command the hint names works',
    );
    const broken = makeRepo({
      '.hagent/config.json': '{\n  "maxFiles": 3,\n  "deniedPaths": [\n}\n',
    });
    const b = hagent(broken, ['config', 'show', '--json']);
    assert.is(b.json.error.code, 'CONFIG_INVALID');
    assert.match(b.json.error.hint, 'hagent config schema');
    assert.match(b.json.error.hint, path.join(broken, '.hagent', 'config.json'));
  },
);

t('apply enforces the configured limits and denied paths', () => {
  const repo = makeRepo({
    '.hagent/config.json': '{"maxFiles": 1, "deniedPaths": ["secrets/**"]}\n',
  });
  const s = startSession(repo);
  const limit = hagent(s.worktree, ['apply', '-', '--json'], { input: twoFiles });
  assert.is(limit.json.error.code, 'LIMIT_EXCEEDED');
  assert.match(
    limit.json.error.hint,
    /at most 1 file; or the human raises maxFiles in \.hagent\/config\.json/,
  );
  const denied = hagent(s.worktree, ['apply', '-', '--json'], {
    input: '*** Begin Patch\n*** Add File: secrets/x.txt\n+x\n*** End Patch\n',
  });
  assert.is(denied.json.error.code, 'PATH_DENIED');
  const env = hagent(s.worktree, ['apply', '-', '--json'], {
    input: twoFiles,
    env: { HAGENT_MAX_FILES: '5' },
  });
  assert.is(env.status, 0, 'an environment variable overrides the file for one run');
});

t('a config file inside the session worktree is never read', () => {
  const repo = makeRepo({ 'x.txt': 'x\n' });
  const s = startSession(repo);
  writeFiles(s.worktree, { '.hagent/config.json': '{"maxFiles": 100, "deniedPaths": []}\n' });
  const r = hagent(s.worktree, ['config', 'show', '--json']);
  assert.is(r.json.file, null);
  assert.is(r.json.values.maxFiles, 10);
});

t('config schema prints a JSON Schema with every key', () => {
  const r = hagent(makeRepo(), ['config', 'schema']);
  assert.is(r.status, 0);
  assert.is(r.json.type, 'object');
  for (const key of [
    'maxFiles',
    'maxChangedLines',
    'deniedPaths',
    'suffixes',
    'confirmDeletes',
    'lockTimeoutMs',
    'hookTimeoutMs',
    'watch',
  ])
    assert.ok(r.json.properties[key], key);
});

t.run();
