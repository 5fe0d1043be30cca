/**
 * One warm `git cat-file --batch-command` for a long-lived process (the MCP server): each
 * request is a line on its stdin and its answer is read back in order, with no spawn per read
 * (~10–20 ms each here, and copy-on-write faults after the fork). It answers exactly what
 * `git cat-file --batch` answers for the same object names, so callers that parse batch output
 * take either.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { HagentError } from '../errors.js';
import { spawnGit } from './run.js';

interface Pending {
  /** Objects still to be read for this request. */
  left: number;
  parts: Buffer[];
  resolve(out: Buffer): void;
  reject(e: unknown): void;
}

/** A warm object reader. Requests are answered in order; `close()` ends the process. */
export class CatFileBatch {
  private child: ChildProcessWithoutNullStreams | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private queue: Pending[] = [];

  /** @param cwd a folder of the repository (its worktree or git dir). */
  constructor(private readonly cwd: string) {}

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = spawnGit(['cat-file', '--batch-command', '--buffer'], { cwd: this.cwd });
    child.stdout.on('data', (d: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, d]) : d;
      this.drain();
    });
    child.stderr.resume();
    child.stdin.on('error', () => undefined);
    const fail = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      this.buffer = Buffer.alloc(0);
      const queue = this.queue.splice(0);
      for (const p of queue)
        p.reject(
          new HagentError(
            'GIT_FAILED',
            `git cat-file --batch-command ${why}`,
            { argv: ['git', 'cat-file', '--batch-command'] },
            'the read was not answered; run the command again',
          ),
        );
    };
    child.on('error', (e) => fail(`could not run: ${e.message}`));
    child.on('exit', (code, signal) => fail(`ended (${signal ?? `exit ${code}`})`));
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.child = child;
    return child;
  }

  /** Parses every complete answer in the buffer, in order. */
  private drain(): void {
    while (this.queue.length) {
      const p = this.queue[0]!;
      if (p.left === 0) {
        this.queue.shift();
        p.resolve(Buffer.concat(p.parts));
        continue;
      }
      const eol = this.buffer.indexOf(0x0a);
      if (eol === -1) return;
      const header = this.buffer.toString('utf8', 0, eol).split(' ');
      let end = eol + 1;
      if (header.length === 3 && /^\d+$/.test(header[2]!)) {
        end += Number(header[2]) + 1;
        if (this.buffer.length < end) return;
      }
      p.parts.push(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end);
      p.left--;
    }
  }

  /**
   * The `git cat-file --batch` answer for `names` (`<rev>:<path>`, `<rev>^{tree}`, object ids):
   * for each, `<oid> <type> <size>\n<content>\n`, or `<name> missing\n`.
   * @throws HagentError GIT_FAILED when the process dies, or a name holds a line break.
   */
  async contents(names: readonly string[]): Promise<Buffer> {
    if (names.some((n) => /[\n\r]/.test(n)))
      throw new HagentError(
        'GIT_FAILED',
        'an object name with a line break cannot go through git cat-file --batch-command',
        {},
        'rename the file',
      );
    if (names.length === 0) return Buffer.alloc(0);
    const child = this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ left: names.length, parts: [], resolve, reject });
      child.stdin.write(`${names.map((n) => `contents ${n}`).join('\n')}\nflush\n`);
    });
  }

  /** Ends the process (its pending reads fail). Never throws. */
  close(): void {
    const child = this.child;
    if (!child) return;
    child.stdin.end();
    this.child = null;
  }
}
