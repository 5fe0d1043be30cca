/**
 * gc: what sessions leave behind, found and (on the human's word) dropped — the refs and agent
 * folders of sessions that no longer exist, and the worktree folders of repositories that no
 * longer exist (session/orphans.ts).
 *
 * The rule, conservative: nothing of a live session (a session file, readable or not, or an
 * interrupted transaction) is ever dropped. Of a session that is gone:
 * - dropped: `landed/<n>` (the land commit on the target holds what landed), `land-base`,
 *   `approved`, its notes ref `refs/notes/hagent-sessions/<id>`, `<git-common-dir>/hagent/agents/<id>/`;
 * - kept unless the human names the session or gives `--older-than DAYS` (the ref's commit is
 *   older): `ended` (the only copy of work that never landed, what an ended session's recovery
 *   reads), `dropped/…`, `undone/…`, `rebased/…`, `redo`, and `refs/hagent/pool-kept/…`.
 * Worktree folders of a repository that is gone are dropped; of one that may only be unmounted,
 * only when the human names the folder.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { moveRefs, refsWithDates } from '../git/index.js';
import { loadConfig } from '../config/index.js';
import {
  folderBytes,
  hagentDir,
  orphanFolders,
  removeOrphanFolder,
  worktreeRootFor,
  type OrphanFolder,
  type RepoContext,
} from '../session/index.js';
import { readIntent } from '../transaction/index.js';

/** One thing gc found. `action` is what `hagent gc` does with it (or did, once run). */
export interface GcItem {
  /** `ref`, an agent `folder` of the git dir, or a `worktrees` folder of a repository that is gone. */
  kind: 'ref' | 'folder' | 'worktrees';
  /** The ref's full name, or the folder's path. */
  name: string;
  /** The session it belonged to (null: a pool's kept ref, a worktree folder). */
  session: string | null;
  /** Object id of a ref. */
  oid?: string;
  /** Size of a folder, in bytes. */
  bytes?: number;
  /** For `worktrees`: the git common dir its worktrees name (null: none). */
  repository?: string | null;
  action: 'drop' | 'keep';
  /** Why, in words: what it is and why it goes or stays. */
  reason: string;
}

/** What gc found, and what it would do (`--dry-run`) or did. */
export interface GcPlan {
  /** The folder shared by every repository's session worktrees (null: `worktreeRoot: "git-dir"`). */
  shared: string | null;
  items: GcItem[];
}

/** Options of {@link planGc}. */
export interface GcOptions {
  /** Sessions (and worktree folders, by path or name) the human names: all of theirs goes. */
  names?: readonly string[];
  /** Kept kinds of a gone session go too when their commit is older than this many days. */
  olderThanDays?: number;
  env?: Readonly<Record<string, string | undefined>>;
}

const ALWAYS_DROPPED = new Set(['landed', 'land-base', 'approved']);

/** Ids of the sessions with a metadata file, readable or not. */
async function sessionFileIds(commonDir: string): Promise<Set<string>> {
  const names = await fs
    .readdir(path.join(hagentDir(commonDir), 'sessions'))
    .catch(() => [] as string[]);
  return new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)));
}

/**
 * What gc would drop and keep in the repository of `ctx` and the shared worktree folder (rule:
 * module header). Reads only.
 * @throws HagentError GIT_FAILED; CONFIG_INVALID.
 */
export async function planGc(ctx: RepoContext, options: GcOptions = {}): Promise<GcPlan> {
  const names = new Set(options.names ?? []);
  const cutoff =
    options.olderThanDays === undefined ? null : Date.now() / 1000 - options.olderThanDays * 86400;
  const files = await sessionFileIds(ctx.commonDir);
  const liveMemo = new Map<string, boolean>();
  const live = async (id: string) => {
    if (!liveMemo.has(id))
      liveMemo.set(
        id,
        // An unreadable record counts as one: conservative.
        files.has(id) || (await readIntent(ctx.commonDir, id).catch(() => 'damaged')) !== null,
      );
    return liveMemo.get(id)!;
  };
  const items: GcItem[] = [];
  const refs = await refsWithDates(ctx.cwd, ['refs/hagent/', 'refs/notes/hagent-sessions/']);
  for (const r of refs) {
    const notes = r.ref.startsWith('refs/notes/hagent-sessions/');
    const rest = r.ref.slice(notes ? 'refs/notes/hagent-sessions/'.length : 'refs/hagent/'.length);
    const [first = '', kind = ''] = rest.split('/');
    const item = (action: GcItem['action'], session: string | null, reason: string): GcItem => ({
      kind: 'ref',
      name: r.ref,
      session,
      oid: r.oid,
      action,
      reason,
    });
    const old = cutoff !== null && r.committed !== null && r.committed < cutoff;
    if (first === 'pool-kept') {
      items.push(
        old
          ? item(
              'drop',
              null,
              `kept from a pooled worktree, older than ${options.olderThanDays} days`,
            )
          : item('keep', null, 'kept from a pooled worktree: may hold files found nowhere else'),
      );
      continue;
    }
    const id = first;
    if (await live(id)) continue; // a live session's refs are its own, not left behind
    if (names.has(id)) items.push(item('drop', id, `session ${id} is gone, and you named it`));
    else if (notes || ALWAYS_DROPPED.has(kind))
      items.push(
        item(
          'drop',
          id,
          notes
            ? `the patch notes of session ${id}, which is gone`
            : `${kind} of session ${id}, which is gone: no undo can use it`,
        ),
      );
    else if (old)
      items.push(
        item('drop', id, `${kind} of session ${id}, older than ${options.olderThanDays} days`),
      );
    else
      items.push(
        item(
          'keep',
          id,
          kind === 'ended'
            ? `the work session ${id} ended with: name the session or use --older-than to drop it`
            : `${kind || 'a ref'} of session ${id}: may hold work found nowhere else; name the session or use --older-than to drop it`,
        ),
      );
  }
  // The patch notes go with the session's last kept ref, not before: they are its history's text.
  for (const i of items) {
    if (i.action !== 'drop' || !i.name.startsWith('refs/notes/hagent-sessions/')) continue;
    if (items.some((k) => k.session === i.session && k.action === 'keep'))
      Object.assign(i, {
        action: 'keep',
        reason: `the patch notes of the work kept for session ${i.session}`,
      });
  }
  const agents = path.join(hagentDir(ctx.commonDir), 'agents');
  for (const id of await fs.readdir(agents).catch(() => [] as string[])) {
    if (await live(id)) continue;
    const dir = path.join(agents, id);
    items.push({
      kind: 'folder',
      name: dir,
      session: id,
      bytes: await folderBytes(dir),
      action: 'drop',
      reason: `the agent state of session ${id}, which is gone`,
    });
  }
  const config = await loadConfig(ctx, options.env ?? {});
  const shared =
    config.runtime.worktreeRoot === 'git-dir'
      ? null
      : path.dirname(
          worktreeRootFor(
            ctx.commonDir,
            config.root,
            config.runtime.worktreeRoot,
            options.env ?? {},
          ),
        );
  if (shared) {
    for (const o of await orphanFolders(shared, { measure: true }))
      items.push(orphanItem(o, names));
  }
  return { shared, items };
}

/** The gc item of a worktree folder whose repository is not there. Pure. */
function orphanItem(o: OrphanFolder, names: ReadonlySet<string>): GcItem {
  const named = names.has(o.path) || names.has(path.basename(o.path));
  const what = `${o.worktrees.length} session worktree${o.worktrees.length === 1 ? '' : 's'} of ${o.repository ?? 'no repository'}`;
  return {
    kind: 'worktrees',
    name: o.path,
    session: null,
    bytes: o.bytes ?? 0,
    repository: o.repository,
    action: o.state === 'gone' || named ? 'drop' : 'keep',
    reason:
      o.state === 'gone'
        ? `${what}, which no longer exists`
        : named
          ? `${what}, which may only be unmounted; you named it`
          : `${what}, which is not there but may be on a disk not mounted now: name the folder to drop it`,
  };
}

/**
 * Drops the items of `plan` marked `drop`: the refs in one ref transaction (each checked
 * against the id the plan read), then the folders.
 * @returns the items dropped (a worktree folder whose repository came back is left, and not listed).
 * @throws HagentError GIT_FAILED when a ref moved since the plan (nothing of the refs dropped).
 */
export async function dropGc(ctx: RepoContext, plan: GcPlan): Promise<GcItem[]> {
  const drop = plan.items.filter((i) => i.action === 'drop');
  const refs = drop.filter((i) => i.kind === 'ref');
  await moveRefs(
    ctx.cwd,
    refs.map((i) => ({ ref: i.name, old: i.oid!, new: null })),
    'hagent gc',
  );
  const done: GcItem[] = [...refs];
  for (const i of drop) {
    if (i.kind === 'folder') {
      await fs.rm(i.name, { recursive: true, force: true });
      done.push(i);
    } else if (i.kind === 'worktrees' && plan.shared) {
      const o: OrphanFolder = {
        path: i.name,
        repository: i.repository ?? null,
        state: 'gone',
        worktrees: [],
        bytes: i.bytes ?? null,
      };
      if (await removeOrphanFolder(plan.shared, o)) done.push(i);
    }
  }
  return done;
}
