/**
 * One atomic ref transaction per command: every ref a command moves, creates or deletes goes
 * through one `git update-ref --stdin -z` with `start` / `update` / `create` / `delete` /
 * `prepare` / `commit` (git-update-ref(1) "transaction"), each update naming the value the ref
 * must hold now. Git locks every ref before it changes any, so either all move or none does,
 * with git's reflog entries, whatever the ref backend, hooks and configuration.
 */
import { HagentError } from '../errors.js';
import { runGit, spawnGitFedLater, type FedLater } from './run.js';
import { readRefsDirect } from './refs-direct.js';
import { readRef } from './plumbing.js';

/**
 * One ref move of a transaction. `old`: the id the ref must hold now (null: it must not exist);
 * `new`: the id it gets (null: deleted).
 */
export interface RefMove {
  ref: string;
  old: string | null;
  new: string | null;
  /**
   * No compare-and-swap: the ref gets `new` whatever it holds (a ref named after the id it
   * keeps, such as `refs/hagent/<id>/undone/<sha>`, which can only hold that id).
   */
  unchecked?: boolean;
  /**
   * With `old` = `new`: git checks that the ref holds `old` (`verify`), so the transaction fails
   * when state it depends on (an approval) changed since it was read.
   */
  verify?: boolean;
}

/**
 * The `-z` input of {@link moveRefs} for `moves` (pure): `start`, one command per move, then
 * `prepare` and `commit`. A move with neither side is left out (nothing to do).
 * @throws Error "BUG:" when a move names no id at all to size the zero id from.
 */
export function refTransactionInput(moves: readonly RefMove[]): string {
  const cmds = ['start'];
  for (const m of moves) {
    if (m.old === null && m.new === null) continue;
    if (m.verify && m.old === m.new) cmds.push(`verify ${m.ref}`, m.old!);
    else if (m.new === null) cmds.push(`delete ${m.ref}`, m.old!);
    else if (m.unchecked) cmds.push(`update ${m.ref}`, m.new, '');
    else if (m.old === null) cmds.push(`create ${m.ref}`, m.new);
    else cmds.push(`update ${m.ref}`, m.new, m.old);
  }
  cmds.push('prepare', 'commit');
  return cmds.map((c) => `${c}\0`).join('');
}

/** A move that changes a ref or verifies one (a move to the id it holds is nothing). Pure. */
function isRealMove(m: RefMove): boolean {
  return m.old !== m.new || (!!m.verify && m.old !== null);
}

/** The ref git names in a failed transaction's stderr ("cannot lock ref 'X'"), if any. Pure. */
export function failedRefOf(stderr: string): string | null {
  return /cannot lock ref '([^']+)'/.exec(stderr)?.[1] ?? /ref '([^']+)'/.exec(stderr)?.[1] ?? null;
}

/**
 * Moves every ref of `moves` in one atomic transaction (module header), with `message` as the
 * reflog line (`--create-reflog`: hagent's refs keep one from their first move).
 * @param cwd where git runs: a worktree of the repository (its HEAD's reflog follows a branch
 *   checked out there, as git does).
 * @throws HagentError TARGET_MOVED naming the ref whose compare-and-swap failed (none moved).
 */
export async function moveRefs(
  cwd: string,
  moves: readonly RefMove[],
  message: string,
): Promise<void> {
  const real = moves.filter(isRealMove);
  if (real.length === 0) return;
  const r = await runGit(['update-ref', '--create-reflog', '-m', message, '--stdin', '-z'], {
    cwd,
    input: refTransactionInput(real),
    allowFailure: true,
    detached: true,
  });
  if (r.exitCode !== 0) throw refusedMove(real, r.stderr);
}

/**
 * The error of a failed transaction of `real`, naming the ref git names: IO_FAILED when git
 * says the file system refused it (a full disk, a read-only or failing one), else TARGET_MOVED.
 * Pure.
 */
function refusedMove(real: readonly RefMove[], stderr: string): HagentError {
  const name = failedRefOf(stderr);
  const m = real.find((x) => x.ref === name) ?? real[0]!;
  const io =
    /No space left on device|Disk quota exceeded|Read-only file system|Input\/output error|couldn't write '[^']+'/.exec(
      stderr,
    );
  if (io)
    return new HagentError(
      'IO_FAILED',
      `git could not move ${m.ref}: ${io[0]}`,
      { ref: m.ref, path: m.ref, errno: io[0], stderr: stderr.trim() },
      'free some space or mend the file system, then run the command again',
    );
  return new HagentError(
    'TARGET_MOVED',
    `${m.ref} moved while hagent was working (expected ${m.old?.slice(0, 12) ?? 'no ref'})`,
    { ref: m.ref, expected: m.old, stderr: stderr.trim() },
    'someone else updated it at the same moment; nothing moved; run the command again',
  );
}

/** A ref transaction whose git process is already running, waiting for its moves. */
export interface OpenRefTransaction {
  /**
   * Sends `moves` (start … prepare, commit) and waits for git.
   * @throws HagentError TARGET_MOVED naming the ref whose compare-and-swap failed (none moved).
   */
  commit(moves: readonly RefMove[]): Promise<void>;
  /** Ends it with nothing sent: git moves nothing and exits. Never throws. */
  abort(): Promise<void>;
  /** git's process id (null when it could not start), kept in the record for recovery to wait on. */
  pid: number | null;
}

/**
 * Starts `git update-ref --stdin` now and sends the moves later ({@link moveRefs} in two
 * halves), so git's start-up overlaps the caller's other steps (an apply's staging and
 * publish): the spawn was the one git process left on apply's path. Until `commit`, git has
 * read nothing; if hagent dies meanwhile, git sees the end of its input and exits, and a
 * transaction cut off before its `commit` line moves nothing.
 */
export function openRefTransaction(cwd: string, message: string): OpenRefTransaction {
  // In a process group of its own: a kill of hagent's group after the moves were sent leaves
  // git to finish them (or, cut off before `commit`, to move nothing) instead of dying between
  // `prepare` and `commit` with every ref locked; recovery waits for it (transaction/recover.ts).
  const {
    child,
    exited,
    stderr: stderrText,
  } = spawnGitFedLater(['update-ref', '--create-reflog', '-m', message, '--stdin', '-z'], cwd);
  return {
    pid: child.pid ?? null,
    async commit(moves) {
      const real = moves.filter(isRealMove);
      child.stdin.end(real.length ? refTransactionInput(real) : '');
      const code = await exited;
      if (code !== 0 && real.length) throw refusedMove(real, stderrText());
    },
    async abort() {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * One `git update-ref --stdin -z` kept running by a long-lived process (the MCP server) and fed
 * one transaction per command: git takes a new `start` after a `commit` and answers each
 * `start`, `prepare` and `commit` with a `<command>: ok` line, so a command's ref moves cost a
 * write and a read instead of a git process (spawning one from the server's ~110 MB blocks it
 * 2–5 ms here). Between transactions git has read nothing and holds no lock.
 *
 * The same guarantees as {@link openRefTransaction}: git runs in a process group of its own, a
 * transaction cut off before its `commit` line (hagent killed) moves nothing, and a failed
 * compare-and-swap moves nothing and ends git. Whenever git has ended (a refusal, or it was
 * killed between calls) the next transaction starts a new one; a git found dead while sending
 * that never answered `start` has moved nothing, and the transaction is sent once more to a new
 * git. The reflog line is fixed when git starts: `message`, for every transaction it runs.
 */
export class RefTransactionProcess {
  private git: { fed: FedLater; cwd: string; out: string; ended: boolean } | null = null;
  private busy = false;

  constructor(private readonly message: string) {}

  /** The running git for `cwd`, started if none is (or it ended, or ran elsewhere). */
  private start(cwd: string): NonNullable<RefTransactionProcess['git']> {
    if (this.git && !this.git.ended && this.git.cwd === cwd) return this.git;
    this.close();
    const fed = spawnGitFedLater(
      ['update-ref', '--create-reflog', '-m', this.message, '--stdin', '-z'],
      cwd,
    );
    const git = { fed, cwd, out: '', ended: false };
    fed.child.stdout.on('data', (d: Buffer) => (git.out += d.toString('utf8')));
    void fed.exited.then(() => (git.ended = true));
    this.hold(git, false);
    this.git = git;
    return git;
  }

  /** Whether git keeps this process alive: only while a transaction waits for it. */
  private hold(git: NonNullable<RefTransactionProcess['git']>, held: boolean): void {
    const { child } = git.fed;
    for (const s of [child, child.stdin, child.stdout, child.stderr])
      (s as unknown as { ref?: () => void; unref?: () => void })[held ? 'ref' : 'unref']?.();
  }

  /**
   * A transaction on this process ({@link OpenRefTransaction}); `cwd` as for
   * {@link openRefTransaction}. While one is open, another gets a git of its own.
   */
  open(cwd: string): OpenRefTransaction {
    if (this.busy) return openRefTransaction(cwd, this.message);
    this.busy = true;
    const first = this.start(cwd);
    const send = async (git: typeof first, input: string): Promise<'ok' | 'unanswered'> => {
      git.out = '';
      this.hold(git, true);
      git.fed.child.stdin.write(input);
      const ended = git.fed.exited.then(() => 'ended' as const);
      for (;;) {
        if (git.out.includes('commit: ok\n')) return 'ok';
        const next = new Promise<void>((res) => git.fed.child.stdout.once('data', () => res()));
        if ((await Promise.race([next, ended])) === 'ended') {
          if (git.out.includes('commit: ok\n')) return 'ok';
          if (git.out === '') return 'unanswered';
          throw new Error('ended'); // answered `start` and died: as a failed transaction
        }
      }
    };
    return {
      pid: first.fed.child.pid ?? null,
      commit: async (moves) => {
        try {
          const real = moves.filter(isRealMove);
          if (real.length === 0) return;
          const input = refTransactionInput(real);
          let git = first;
          let outcome = await send(git, input).catch(() => 'failed' as const);
          if (outcome === 'unanswered') {
            git = this.start(cwd);
            outcome = await send(git, input).catch(() => 'failed' as const);
          }
          if (outcome !== 'ok') throw refusedMove(real, git.fed.stderr());
        } finally {
          if (this.git) this.hold(this.git, false);
          this.busy = false;
        }
      },
      abort: async () => {
        this.busy = false; // nothing was sent: git waits for the next `start`
      },
    };
  }

  /** Ends git (it moves nothing more and exits). Never throws. */
  close(): void {
    if (this.git && !this.git.ended) this.git.fed.child.stdin.end();
    this.git = null;
  }
}

/**
 * The current ids of `refs` (null: missing): from git's ref files when they can be read that
 * way (no spawn), else one `git rev-parse` per ref.
 * @throws HagentError GIT_FAILED when git cannot be run.
 */
export async function readRefs(
  cwd: string,
  commonDir: string,
  refs: readonly string[],
): Promise<Map<string, string | null>> {
  const direct = await readRefsDirect(commonDir, refs);
  if (direct) return direct;
  const out = new Map<string, string | null>();
  for (const ref of refs) out.set(ref, await readRef(cwd, ref));
  return out;
}
