/**
 * Whether the operating-system sandbox can start on this machine: undefined when it can, else
 * why not (the tests that need it report themselves skipped with that reason).
 */
import { realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as assert from 'uvu/assert';
import { probeSandbox } from '../../src/sandbox/index.js';
import { git, hagent, makeRepo } from './index.js';
import { checkoutHashes } from './repo-checks.js';

const probe = probeSandbox(process.env);

/** Why no sandbox can start here, or undefined when one can. */
export const sandboxMissing: string | undefined = probe.available ? undefined : probe.reason;

/**
 * A repository wired by `hagent integrate <agent>` (its hook file `hookFile` committed, as a team
 * would) with a session `name` started and an uncommitted edit of `a.txt` in the user's
 * checkout: the setup of the real-agent tests of the rewritten shell. `before`: the checkout's
 * hashes (repo-checks.ts) to compare after the agent ran.
 */
export function integratedSession(
  agent: string,
  hookFile: string,
  name: string,
): { repo: string; wt: string; before: Map<string, string> } {
  const repo = realpathSync(makeRepo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' }));
  assert.is(hagent(repo, ['integrate', agent]).status, 0);
  git(repo, 'add', hookFile);
  git(repo, 'commit', '-q', '-m', 'hagent hooks');
  const start = hagent(repo, ['session', 'start', '--name', name, '--json']);
  assert.is(start.status, 0, start.stderr);
  writeFileSync(path.join(repo, 'a.txt'), 'one\nuser edit\n');
  return { repo, wt: start.json.worktree as string, before: checkoutHashes(repo) };
}
