/**
 * The 3-file change the benchmarks measure (bench/run.ts, bench/mcp.ts): one line replaced and
 * one added in each of three files spread over a generated repository, as a Codex patch and as a
 * unified diff, each with its reverse.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchRoot, filePaths, type BenchRepo } from './gen-repo.js';

export interface Patches {
  /** Codex patch A and its reverse, as files. */
  codex: [string, string];
  /** The same change as unified diffs (for git apply), A and its reverse. */
  udiff: [string, string];
  paths: string[];
  /** Each file's change: the 7 lines around the edited one before (`oldText`) and after (`newText`), and the 1-based line the window starts at. */
  edits: { path: string; oldText: string; newText: string; startLine: number }[];
}

/**
 * Builds a 3-file change on files spread over the repository: in each, one line replaced and one
 * added (3 lines of context each side). Written as files under the bench temp folder.
 */
export function makePatches(repo: BenchRepo, worktree: string): Patches {
  const all = filePaths(repo.n);
  const picks = [
    Math.floor(all.length / 7),
    Math.floor(all.length / 2),
    Math.floor((all.length * 6) / 7),
  ];
  const codex: [string[], string[]] = [['*** Begin Patch'], ['*** Begin Patch']];
  const udiff: [string[], string[]] = [[], []];
  const paths: string[] = [];
  const edits: Patches['edits'] = [];
  for (const i of picks) {
    const p = all[i]!;
    paths.push(p);
    const text = readFileSync(path.join(worktree, p), 'utf8');
    const fileLines = text.split('\n').slice(0, -1);
    // A line in the middle whose 7-line window is unique in the file, so both tools find one place.
    let k = Math.floor(fileLines.length / 2);
    const windowAt = (at: number): string => fileLines.slice(at - 3, at + 4).join('\n');
    while (
      k + 4 < fileLines.length &&
      (fileLines[k] === '' || text.split(windowAt(k)).length !== 2)
    )
      k++;
    const before = fileLines.slice(k - 3, k);
    const after = fileLines.slice(k + 1, k + 4);
    const old = fileLines[k]!;
    const neu = [`${old} // edited by the bench`, '  benchMarker();'];
    const ctx = (ls: string[]): string[] => ls.map((l) => ` ${l}`);
    codex[0].push(
      `*** Update File: ${p}`,
      '@@',
      ...ctx(before),
      `-${old}`,
      ...neu.map((l) => `+${l}`),
      ...ctx(after),
    );
    codex[1].push(
      `*** Update File: ${p}`,
      '@@',
      ...ctx(before),
      ...neu.map((l) => `-${l}`),
      `+${old}`,
      ...ctx(after),
    );
    const start = k - 3 + 1;
    edits.push({
      path: p,
      oldText: [...before, old, ...after].join('\n'),
      newText: [...before, ...neu, ...after].join('\n'),
      startLine: start,
    });
    const head = [`diff --git a/${p} b/${p}`, `--- a/${p}`, `+++ b/${p}`];
    udiff[0].push(
      ...head,
      `@@ -${start},7 +${start},8 @@`,
      ...ctx(before),
      `-${old}`,
      ...neu.map((l) => `+${l}`),
      ...ctx(after),
    );
    udiff[1].push(
      ...head,
      `@@ -${start},8 +${start},7 @@`,
      ...ctx(before),
      ...neu.map((l) => `-${l}`),
      `+${old}`,
      ...ctx(after),
    );
  }
  codex[0].push('*** End Patch');
  codex[1].push('*** End Patch');
  const dir = path.join(benchRoot(), `patches-${repo.n}`);
  mkdirSync(dir, { recursive: true });
  const write = (name: string, ls: string[]): string => {
    const f = path.join(dir, name);
    writeFileSync(f, ls.join('\n') + '\n');
    return f;
  };
  return {
    codex: [write('a.codex.patch', codex[0]), write('a-reverse.codex.patch', codex[1])],
    udiff: [write('a.diff', udiff[0]), write('a-reverse.diff', udiff[1])],
    paths,
    edits,
  };
}
