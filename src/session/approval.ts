/**
 * A session's approval lives in a ref, `refs/hagent/<id>/approved`, so that it moves in the same
 * atomic ref transaction as the target a land moves (a kill can never leave a landed target with
 * the approval of before, or the other way round). The ref names an internal commit (fixed
 * identity, git/merge.ts) whose only parent is the approved head — which it keeps reachable —
 * whose tree is that head's tree, and whose message holds the approved paths as one JSON line:
 *
 *     hagent: approval of session <id>
 *
 *     {"paths":null,"at":"2026-01-01T00:00:00.000Z"}
 *
 * Sessions made by earlier versions kept their approval in the session's JSON file: it is read
 * while the ref does not exist, and the first approval or land replaces it with the ref.
 */
import { readRefPreferDirect, writeInternalCommit, commitText, treeIdsOf } from '../git/index.js';
import type { LooseObjectStore, RefMove } from '../git/index.js';
import { shellWord } from '../output/index.js';
import type { RepoContext } from './context.js';
import type { Approval, Session } from './store.js';

/** Ref of a session's approval. */
export function approvalRef(session: Pick<Session, 'id'>): string {
  return `refs/hagent/${session.id}/approved`;
}

/** A session's approval and where it was read from. */
export interface ApprovalState {
  approval: Approval | null;
  /** The approval ref's id now (null: no ref), for the compare-and-swap of the next move. */
  ref: string | null;
}

/**
 * The approval in a commit written by {@link writeApproval}, from `git cat-file commit` text;
 * null when the text is not one (a ref moved by hand to something else). Pure.
 */
export function parseApprovalCommit(text: string): Approval | null {
  const split = text.indexOf('\n\n');
  if (split < 0) return null;
  const parents = [...text.slice(0, split).matchAll(/^parent ([0-9a-f]+)$/gm)].map((m) => m[1]!);
  const line = text
    .slice(split + 2)
    .split('\n')
    .find((l) => l.startsWith('{'));
  if (parents.length !== 1 || !line) return null;
  try {
    const body = JSON.parse(line) as { paths?: unknown; at?: unknown };
    const paths = body.paths;
    const valid =
      paths === null || (Array.isArray(paths) && paths.every((p) => typeof p === 'string'));
    if (!valid) return null;
    return {
      head: parents[0]!,
      paths: paths as string[] | null,
      at: typeof body.at === 'string' ? body.at : '',
    };
  } catch {
    return null;
  }
}

/**
 * Reads a session's approval: from its ref, else (sessions of earlier versions) from its JSON
 * record. A ref that holds no approval commit counts as no approval.
 * @throws HagentError GIT_FAILED.
 */
export async function readApproval(ctx: RepoContext, session: Session): Promise<ApprovalState> {
  const ref = await readRefPreferDirect(ctx.cwd, ctx.commonDir, approvalRef(session));
  if (!ref) return { approval: session.approval ?? null, ref: null };
  const text = await commitText(ctx.cwd, ref);
  return { approval: parseApprovalCommit(text), ref };
}

/**
 * Writes the commit of `approval` (unreferenced: a ref transaction points the approval ref at
 * it). @returns its id. @throws HagentError GIT_FAILED.
 */
export async function writeApproval(
  ctx: RepoContext,
  store: LooseObjectStore | null,
  session: Pick<Session, 'id'>,
  approval: Approval,
): Promise<string> {
  const [tree] = await treeIdsOf(ctx.cwd, [approval.head]);
  const body = JSON.stringify({ paths: approval.paths, at: approval.at });
  return writeInternalCommit(
    ctx.cwd,
    store,
    tree!,
    [approval.head],
    `hagent: approval of session ${session.id}\n\n${body}\n`,
  );
}

/**
 * The ref move that makes `approval` the session's approval, from the state read before
 * (`now`): the approval ref created or moved to a new commit; when the approval is the one
 * already in the ref, a check that it still is (`old` = `new`: git verifies it).
 */
export async function approvalMove(
  ctx: RepoContext,
  store: LooseObjectStore | null,
  session: Pick<Session, 'id'>,
  now: ApprovalState,
  approval: Approval,
): Promise<RefMove> {
  const ref = approvalRef(session);
  if (now.ref && now.approval === approval)
    return { ref, old: now.ref, new: now.ref, verify: true };
  return { ref, old: now.ref, new: await writeApproval(ctx, store, session, approval) };
}

/**
 * What an approval covers of a session's changes to land (`pending`: what changed since its land
 * base, as `review` lists it), so that review, land and session end tell the same story of a
 * partial approval. Pure.
 */
export interface ApprovalCoverage {
  /** The approval is of the session's current head (false: none, or the head moved since). */
  current: boolean;
  /** Approved changes that have not landed: what `hagent land` brings. */
  toLand: string[];
  /** Approved paths that are no longer among the changes to land: they have landed. */
  landed: string[];
  /** Changes to land that the approval does not cover: `hagent review --approve` them first. */
  notApproved: string[];
}

/** The {@link ApprovalCoverage} of `approval` over `pending` at `head`. Pure. */
export function approvalCoverage(
  approval: Approval | null,
  head: string,
  pending: readonly string[],
): ApprovalCoverage {
  if (!approval || approval.head !== head)
    return { current: false, toLand: [], landed: [], notApproved: [...pending] };
  if (approval.paths === null)
    return { current: true, toLand: [...pending], landed: [], notApproved: [] };
  const approved = new Set(approval.paths);
  const changed = new Set(pending);
  return {
    current: true,
    toLand: pending.filter((p) => approved.has(p)),
    landed: approval.paths.filter((p) => !changed.has(p)),
    notApproved: pending.filter((p) => !approved.has(p)),
  };
}

/**
 * The approval a new `review --approve` records at `head`: `paths` (null: every path) added to
 * the approval of the same head already recorded, so approving in steps never drops what was
 * approved before; an approval of an older head is replaced (the changes moved under it). Pure.
 */
export function widenApproval(
  previous: Approval | null,
  head: string,
  paths: readonly string[] | null,
  at: string,
): Approval {
  const kept = previous?.head === head ? previous.paths : [];
  if (paths === null || kept === null) return { head, paths: null, at };
  return { head, paths: [...new Set([...kept, ...paths])].sort(), at };
}

/**
 * The command that approves `paths` of a session (all of them when the list is long), for
 * hints. Pure.
 */
export function approveCommand(session: string, paths: readonly string[]): string {
  const words = paths.map(shellWord);
  const dash = paths.some((p) => p.startsWith('-')) ? ' --' : '';
  return paths.length === 0 || paths.length > 5
    ? `hagent review --session ${session} --approve`
    : `hagent review --session ${session} --approve${dash} ${words.join(' ')}`;
}
