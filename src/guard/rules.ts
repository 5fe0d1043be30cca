/**
 * The guard's rule names and what each refuses. A rule name is stable: it is in every verdict
 * and it is what `.hagent/config.json` `guard.allow` names to relax a rule for a repository.
 */

/** Every rule the guard applies, with the reason shown when it refuses. */
export const GUARD_RULES = {
  'rm-outside': 'deletes files outside the session worktree (or the home folder, or /)',
  'write-outside': 'writes outside the session worktree',
  'worktree-git': 'removes or overwrites the session worktree itself or its .git link',
  unresolved:
    'uses something the guard cannot resolve (a variable, a substitution, code read from a pipe) where a dangerous command reads it',
  'git-elsewhere':
    'points git at another repository or folder (-C, --git-dir, --work-tree, GIT_DIR, or a folder outside the worktree)',
  'git-push': 'pushes to a remote',
  'git-push-force':
    'force-pushes or deletes on a remote (--force, +refspec, :refspec, --delete, --mirror, --prune)',
  'git-protected-ref':
    "deletes, moves or renames hagent's branches and refs (hagent/*, refs/hagent/*, its notes), the session's target branch or a tag, or checks the target branch out (git switch main, git worktree add DIR main)",
  'git-reset-hard':
    'resets --hard to another revision, dropping hagent commits from the session branch',
  'git-reflog-expire': 'expires or deletes reflog entries (the way back to dropped commits)',
  'git-gc-prune':
    'prunes unreachable objects (gc --prune, prune, repack -a -d), destroying what undo and the reflog keep',
  'git-worktree': 'removes, prunes or moves git worktrees (the session worktree among them)',
  'git-stash-drop': 'drops or clears stash entries',
  'git-config-write':
    "changes the repository's or the user's git configuration or remotes (shared by every worktree)",
  'git-history-rewrite':
    'rewrites history of every branch or of the target branch (filter-branch, filter-repo, replace refs, rebasing the target)',
  'hagent-human-only':
    "runs one of hagent's human-only commands (review --approve, land, land --undo, undo --land, session end, session update --all, integrate)",
  'agent-marker':
    'unsets or overrides HAGENT_AGENT, the marker that tells hagent it runs for an agent',
} as const;

/** A rule name. */
export type GuardRule = keyof typeof GUARD_RULES;

/** Rule names, for the config schema and docs. */
export const GUARD_RULE_NAMES = Object.keys(GUARD_RULES) as GuardRule[];

/** The hint that follows a refusal: what the agent can do instead. */
export const GUARD_HINTS: Record<GuardRule, string> = {
  'rm-outside':
    'delete only inside the session worktree (every change there is a hagent commit and can be undone); ask the user for anything else',
  'write-outside':
    'write inside the session worktree (or a scratch file under the temp folder); ask the user to change files elsewhere',
  'worktree-git':
    'remove or overwrite files inside the worktree instead; the session itself is ended by the user with hagent session end',
  unresolved:
    'spell the command out with literal words (no $VAR or $(...) where a command or path of rm/git/writes is read, no code piped into a shell)',
  'git-elsewhere':
    'run git inside the session worktree only, without -C/--git-dir/--work-tree/GIT_DIR',
  'git-push':
    'do not push from a session: the user reviews and lands the work with hagent review / hagent land (a repository may allow it: guard.allow ["git-push"] in .hagent/config.json)',
  'git-push-force': 'never force-push from a session; the user lands the work with hagent land',
  'git-protected-ref':
    'stay on the session branch and leave hagent/*, the target branch and tags alone: hagent commits your work there, undo it with hagent undo; the user lands it onto the target or ends the session',
  'git-reset-hard':
    'to drop applied work use hagent undo (it stays undoable); git reset --hard HEAD (discarding uncommitted edits) is allowed',
  'git-reflog-expire': 'leave the reflog alone; hagent undo works without it',
  'git-gc-prune': 'leave garbage collection to the user; plain git gc without --prune is allowed',
  'git-worktree': 'leave worktrees alone; the user ends sessions with hagent session end',
  'git-stash-drop':
    'keep stash entries (git stash pop/apply are allowed); ask the user to drop them',
  'git-config-write':
    'read configuration only (git config --get, git remote -v); pass settings per command with git -c key=value; ask the user to change remotes',
  'git-history-rewrite':
    'do not rewrite history outside the session branch (rebasing the session branch itself is fine); hagent undo rolls back applied work',
  'hagent-human-only':
    'tell the user the work is ready: they review, approve and land it (and end sessions, change hook or MCP settings) from their own shell; hagent status, review, apply, check, undo, sync and log stay yours',
  'agent-marker':
    'leave HAGENT_AGENT alone; what it stops is for the user to run from their own shell',
};
