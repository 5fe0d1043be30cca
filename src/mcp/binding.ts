/**
 * The session one MCP server serves, and what it keeps warm between calls: the repository
 * context, the parsed configuration (re-read every call, re-parsed only when its text changed),
 * one `git cat-file --batch-command` process, and the blob id of every file this server read or
 * wrote (the "prior read" that lets `write` replace a file).
 *
 * Nothing about the session itself is cached: each call reads the session's metadata and refs
 * again, so an apply, undo, land or end made by another process meanwhile is seen at once.
 */
import { cachedConfigLoader } from '../config/index.js';
import { CatFileBatch } from '../git/index.js';
import type { EffectiveConfig } from '../policy/index.js';
import { readSession, type RepoContext, type Session } from '../session/index.js';

/** One server's session and warm state. */
export class SessionBinding {
  private readonly loadConfig = cachedConfigLoader();
  /** Warm object reader for trees that are not loose (packed repositories). */
  readonly objects: CatFileBatch;
  /** path → blob id of the bytes this server last read or wrote there (null: it wrote a delete). */
  readonly known = new Map<string, string | null>();

  constructor(readonly ctx: RepoContext, readonly sessionId: string, readonly env: Readonly<Record<string, string | undefined>>) {
    this.objects = new CatFileBatch(ctx.commonDir);
  }

  /**
   * The session as it is now on disk (never a cached copy).
   * @throws HagentError SESSION_NOT_FOUND once the session has ended.
   */
  session(): Promise<Session> {
    return readSession(this.ctx.commonDir, this.sessionId);
  }

  /** The effective configuration, `.hagent/config.json` read afresh. @throws HagentError CONFIG_INVALID. */
  config(): Promise<EffectiveConfig & { root: string | null }> {
    return this.loadConfig(this.ctx, this.env);
  }

  /** Ends the warm processes. */
  close(): void {
    this.objects.close();
  }
}
