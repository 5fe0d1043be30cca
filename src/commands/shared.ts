/**
 * Helpers every command shares: reading the patch input, asking a human.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { HagentError } from '../errors.js';
import type { Io } from '../output/index.js';

/** Options every command accepts. */
export interface CommonArgs {
  json?: boolean;
  session?: string;
}

/**
 * Reads a patch from a file, or from stdin when `file` is `-` or absent and stdin is not a TTY.
 * @throws HagentError PATCH_NOT_FOUND (no such file), EMPTY_PATCH (nothing read), USAGE (no input).
 */
export async function readPatchInput(io: Io, file: string | undefined): Promise<string> {
  let text: string;
  if (file === undefined || file === '-') {
    if (file === undefined && io.stdin.isTTY) {
      throw new HagentError('USAGE', 'no patch given', {}, 'pass a patch file, or pipe the patch on stdin: hagent apply - < patch.txt');
    }
    const chunks: Buffer[] = [];
    for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    try {
      text = await fs.readFile(path.resolve(io.cwd, file), 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new HagentError('PATCH_NOT_FOUND', code === 'EISDIR' ? `${file} is a directory, not a patch file` : `cannot read patch file ${file}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`, { path: file }, 'check the path, or pipe the patch on stdin with -');
    }
  }
  if (text.trim() === '') throw new HagentError('EMPTY_PATCH', file === undefined || file === '-' ? 'stdin held no patch (it was empty)' : `${file} is empty`, {}, 'send the patch text: *** Begin Patch … *** End Patch, or a unified diff');
  return text;
}

/** Asks a yes/no question on the terminal (default no). Resolves false when no one can answer. */
export async function askYesNo(io: Io, question: string): Promise<boolean> {
  if (!io.interactive) return false;
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
