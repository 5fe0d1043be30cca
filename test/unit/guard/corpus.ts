/** Reads the guard corpus: one command per line; `| ` lines continue the command above; `#` lines are comments. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GuardContext } from '../../../src/guard/index.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus');

/** The context the corpus is written for. */
export const CORPUS_CTX: GuardContext = {
  worktree: '/home/dev/shop/.git/hagent/worktrees/s1',
  home: '/home/dev',
  protectedBranches: ['main'],
};

/**
 * A session laid out as on a user's machine: the worktree under the user's cache folder (the
 * default `worktreeRoot`), the user's checkout elsewhere in the home folder, the agent's cwd the
 * worktree.
 */
export const MACHINE_CTX: GuardContext = {
  worktree: '/home/dev/.cache/hagent/worktrees/shop-0123456789ab/s1',
  home: '/home/dev',
  protectedBranches: ['main'],
  checkout: '/home/dev/src/shop',
  gitDir: '/home/dev/src/shop/.git',
};

export type CorpusFile =
  'dangerous.txt' | 'everyday.txt' | 'machine-dangerous.txt' | 'machine-everyday.txt';

export function readCorpus(file: CorpusFile): string[] {
  const out: string[] = [];
  for (const line of readFileSync(path.join(DIR, file), 'utf8').split('\n')) {
    if (line.startsWith('| ')) out[out.length - 1] += `\n${line.slice(2)}`;
    else if (line === '|') out[out.length - 1] += '\n';
    else if (line.trim() && !line.startsWith('#')) out.push(line);
  }
  return out;
}
