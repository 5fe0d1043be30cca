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

export function readCorpus(file: 'dangerous.txt' | 'everyday.txt'): string[] {
  const out: string[] = [];
  for (const line of readFileSync(path.join(DIR, file), 'utf8').split('\n')) {
    if (line.startsWith('| ')) out[out.length - 1] += `\n${line.slice(2)}`;
    else if (line === '|') out[out.length - 1] += '\n';
    else if (line.trim() && !line.startsWith('#')) out.push(line);
  }
  return out;
}
