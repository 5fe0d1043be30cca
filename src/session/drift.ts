/**
 * Drift: the session branch or its worktree's HEAD moved without hagent — the agent ran `git
 * commit`, `git reset`, `git rebase`, `git checkout -b` or `git switch --detach` itself.
 *
 * hagent's own moves of a session branch leave reflog lines whose message starts with `hagent`
 * (and `git worktree add -b` leaves `branch: Created from …`); the newest of them names the last
 * head hagent knew. A branch that is elsewhere now was moved by someone else. The worktree's HEAD
 * must name the session branch. Commits a move dropped stay reachable: hagent keeps them under
 * `refs/hagent/<id>/dropped/<commit>` as soon as it sees the drift.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  countCommits,
  createRef,
  firstParentChain,
  isAncestor,
  readRef,
  worktreeGitDirSync,
} from '../git/index.js';
import type { RepoContext } from './context.js';
import type { Session } from './store.js';

/** How a session moved without hagent (JSON `drift` of status, list and review). */
export type Drift =
  /** The worktree's HEAD is detached (`git switch --detach`, a rebase in progress): hagent's commits go nowhere until it is back. */
  | { kind: 'detached'; head: string | null; hint: string }
  /** The worktree has another branch checked out (`git checkout -b`). */
  | { kind: 'other-branch'; branch: string; hint: string }
  /** Commits on the session branch that hagent did not make (the agent's `git commit`): adopted as patches, checked by policy at land. */
  | { kind: 'outside-commits'; commits: string[]; hint: string }
  /**
   * The branch moved off hagent's last head (reset, rebase, amend). `dropped` counts the commits
   * no longer on it, kept as `keptAs`; `pastBase` when the branch no longer holds the session's
   * base (a land would then take back the target's own commits: refused).
   */
  | {
      kind: 'rewound';
      lastHead: string;
      dropped: number;
      keptAs: string;
      pastBase: boolean;
      hint: string;
    };

/**
 * The newest head of the session branch that hagent made, from the branch's reflog; null when
 * the reflog is missing or names none (reflogs off, expired).
 */
export function lastHagentHead(ctx: RepoContext, session: Pick<Session, 'id'>): string | null {
  let log: string;
  try {
    log = readFileSync(
      path.join(ctx.commonDir, 'logs', 'refs', 'heads', 'hagent', ...session.id.split('/')),
      'utf8',
    );
  } catch {
    return null;
  }
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const message = line.slice(tab + 1);
    if (message.startsWith('hagent') || message.startsWith('branch: Created from'))
      return line.split(' ')[1] ?? null;
  }
  return null;
}

/**
 * The drift of the worktree's HEAD alone (`detached` or `other-branch`), or null when it names
 * the session branch (or cannot be read: a missing worktree is reported elsewhere). Reads
 * git's HEAD file only: cheap enough for every pre-tool hook, which refuses native edits while
 * it is off (they would land on another branch, where hagent cannot record them).
 */
export function worktreeHeadDrift(
  session: Pick<Session, 'id' | 'worktree'>,
): Extract<Drift, { kind: 'detached' | 'other-branch' }> | null {
  const branch = `refs/heads/hagent/${session.id}`;
  const gitDir = worktreeGitDirSync(session.worktree);
  if (gitDir) {
    let text = '';
    try {
      text = readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    } catch {
      // a missing worktree is reported elsewhere (worktreeExists, doctor)
    }
    if (text && text !== `ref: ${branch}`) {
      if (text.startsWith('ref: ')) {
        const other = text.slice(5).replace('refs/heads/', '');
        return {
          kind: 'other-branch',
          branch: text.slice(5),
          hint: `git -C ${session.worktree} switch hagent/${session.id}, then bring what was committed on ${other} with git -C ${session.worktree} merge ${other} (hagent adopts those commits as patches)`,
        };
      }
      const rebasing = ['rebase-merge', 'rebase-apply'].some((d) =>
        existsSync(path.join(gitDir, d)),
      );
      const hint = rebasing
        ? `a git rebase is in progress in ${session.worktree}: finish it (git rebase --continue) or abort it (git rebase --abort)`
        : `in ${session.worktree}: git switch hagent/${session.id} (to keep commits made on the detached HEAD first: git branch keep-me, then git merge keep-me after the switch)`;
      return { kind: 'detached', head: /^[0-9a-f]{40,64}$/.test(text) ? text : null, hint };
    }
  }
  return null;
}

/**
 * The drift of a session whose branch is at `head`, or null. A rewound branch's dropped commits
 * are made reachable here (`refs/hagent/<id>/dropped/<commit>`), before anything else can happen.
 * @throws HagentError GIT_FAILED.
 */
export async function readDrift(
  ctx: RepoContext,
  session: Session,
  head: string,
): Promise<Drift | null> {
  const off = worktreeHeadDrift(session);
  if (off) return off;
  const last = lastHagentHead(ctx, session);
  if (!last || last === head) return null;
  if (await isAncestor(ctx.cwd, last, head)) {
    const commits = await firstParentChain(ctx.cwd, last, head);
    return {
      kind: 'outside-commits',
      commits,
      hint: 'they are patches of the session now: hagent review shows them, and land checks their paths against the policy',
    };
  }
  const keptAs = `refs/hagent/${session.id}/dropped/${last}`;
  const [dropped, pastBase, kept] = await Promise.all([
    countCommits(ctx.cwd, `${head}..${last}`),
    isAncestor(ctx.cwd, session.base, head).then((v) => !v),
    readRef(ctx.cwd, keptAs),
  ]);
  if (!kept)
    await createRef(ctx.cwd, keptAs, last, 'hagent: commits dropped by a move outside hagent');
  const restore = `in ${session.worktree}: git reset --hard ${last.slice(0, 12)} brings hagent's commits back (kept as ${keptAs})`;
  return {
    kind: 'rewound',
    lastHead: last,
    dropped,
    keptAs,
    pastBase,
    hint: pastBase
      ? `the session branch no longer holds its base, so a land would take back the target's own commits; ${restore}`
      : `the session goes on from here (hagent adopts it); ${restore}`,
  };
}
