/**
 * The shipped hooks/ folder holds exactly what `hagent integrate` merges, so the two never drift.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AGENTS,
  HOOK_FILES,
  agentHookFile,
  installedHookCommand,
} from '../../../src/agents/index.js';
import { ROOT } from '../../helpers/index.js';

const test = suite('hooks/ folder');

for (const agent of AGENTS) {
  test(`hooks/${agent} is the configuration hagent integrate ${agent} writes`, () => {
    const file = path.join(ROOT, 'hooks', agent, path.basename(HOOK_FILES[agent].project));
    assert.equal(
      JSON.parse(readFileSync(file, 'utf8')),
      agentHookFile(agent, installedHookCommand(agent), { worktrees: true }),
    );
  });
}

test('package.json ships hooks/', () => {
  assert.ok(
    (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] }
    ).files.includes('hooks'),
  );
});

test.run();
