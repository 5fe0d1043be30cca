/**
 * The session one MCP server serves, and what it keeps warm between calls: the repository
 * context, the parsed configuration (re-read every call, re-parsed only when its text changed),
 * one `git cat-file --batch-command` and one `git update-ref --stdin` process, and the blob id of every file this server read or
 * wrote (the "prior read" that lets `write` replace a file).
 *
 * Each call re-checks the session: its metadata file by one stat (re-read whenever the file was
 * replaced; every write of it is a rename), its refs read afresh, so an apply, undo, land or end
 * made by another process meanwhile is seen at once. What is kept is immutable or keyed so: the
 * head commit's trees for `read`, per head.
 */
import { cachedConfigLoader } from '../config/index.js';
import { HagentError } from '../errors.js';
import { promises as fs } from 'node:fs';
import {
  CatFileBatch,
  looseObjectStore,
  readCommitTrees,
  RefTransactionProcess,
  type CommitTrees,
} from '../git/index.js';
import type { EffectiveConfig } from '../policy/index.js';
import {
  readSession,
  readSessionRecord,
  sessionAsFound,
  sessionFilePath,
  type RepoContext,
  type Session,
} from '../session/index.js';

/** One server's session and warm state. */
export class SessionBinding {
  private readonly loadConfig = cachedConfigLoader();
  /** Warm object reader for trees that are not loose (packed repositories). */
  readonly objects: CatFileBatch;
  /**
   * One `git update-ref --stdin` kept for the applies' ref moves (no git spawned per apply); its
   * reflog line says the move came from this server.
   */
  readonly refs = new RefTransactionProcess('hagent apply (hagent mcp)');
  /** path → blob id of the bytes this server last read or wrote there (null: it wrote a delete). */
  readonly known = new Map<string, string | null>();
  /** The session record and the stat of the file it came from (see {@link session}). */
  private record: { key: string; value: Session } | null = null;
  /** When the served session was created: a later session of the same name is another one. */
  private createdAt: string | undefined;
  private trees: { head: string; byPath: Map<string, CommitTrees> } = {
    head: '',
    byPath: new Map(),
  };

  constructor(
    readonly ctx: RepoContext,
    readonly sessionId: string,
    readonly env: Readonly<Record<string, string | undefined>>,
  ) {
    this.objects = new CatFileBatch(ctx.commonDir);
  }

  /**
   * The session as it is now on disk: the record is re-read whenever a stat of its file differs
   * from the one it was read with (device, inode, size, mtime, ctime).
   * @throws HagentError SESSION_NOT_FOUND once the session has ended, also when a new session
   *   of the same name has taken its place.
   */
  async session(): Promise<Session> {
    const file = sessionFilePath(this.ctx.commonDir, this.sessionId);
    const st = await fs.stat(file, { bigint: true }).catch(() => null);
    if (!st) return readSession(this.ctx.commonDir, this.sessionId); // gone: says SESSION_NOT_FOUND
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    if (this.record?.key !== key) {
      const value = await readSessionRecord(this.ctx.commonDir, this.sessionId);
      // The session this server started with, not a later one given the same name: the blob ids
      // it remembers, and the agent's view, belong to the first.
      this.createdAt ??= value.createdAt;
      if (value.createdAt !== this.createdAt)
        throw new HagentError(
          'SESSION_NOT_FOUND',
          `session ${this.sessionId} that this server served has ended; a new session has the same name`,
          { session: this.sessionId, servedSince: this.createdAt, newCreatedAt: value.createdAt },
          'restart the MCP server (reconnect it in the agent) to serve the new session',
        );
      this.record = { key, value };
    }
    return sessionAsFound(this.ctx.commonDir, structuredClone(this.record.value));
  }

  /**
   * The head's trees on the way to `rel`, for `read`: kept per head commit (a commit's trees
   * never change), dropped when the head moves. The head itself is read afresh by the caller.
   */
  async headTrees(head: string, rel: string, worktree: string): Promise<CommitTrees> {
    if (this.trees.head !== head) this.trees = { head, byPath: new Map() };
    const kept = this.trees.byPath.get(rel);
    if (kept) return kept;
    const store = await looseObjectStore(this.ctx.commonDir, head);
    const trees = await readCommitTrees(worktree, head, [rel], store, this.objects);
    if (this.trees.head === head && this.trees.byPath.size < 1000)
      this.trees.byPath.set(rel, trees);
    return trees;
  }

  /** The effective configuration, `.hagent/config.json` read afresh. @throws HagentError CONFIG_INVALID. */
  config(): Promise<EffectiveConfig & { root: string | null }> {
    return this.loadConfig(this.ctx, this.env);
  }

  /** Ends the warm processes. */
  close(): void {
    this.objects.close();
    this.refs.close();
  }
}
