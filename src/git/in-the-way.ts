/**
 * What a checkout would lose to `git read-tree -m -u`: the files git overwrites without a word
 * when a tree change adds a path. A land (the user's checkout) and a session update (the
 * session worktree) both refuse, naming them, before writing anything.
 */
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { dirtyPaths } from './objects.js';

/**
 * What `git read-tree -m -u` would overwrite without a word in the checkout `worktree`, among
 * the files a tree change changes there (`files`, relative paths with diff-tree status letters):
 * anything at a path the change adds — an untracked or ignored file, a folder — or on the way to
 * it (a file or a symlink where the change needs a folder, unless it deletes it); and a file the
 * change changes that is missing from the checkout, when `git status` calls it deleted (a sparse checkout's files are missing and not
 * deleted). Changes to tracked files are read-tree's own refusal. A folder at an added path is
 * not in the way when it holds only files the change deletes (a folder replaced by a file or a
 * symlink: read-tree removes them first); an untracked or ignored file in it is.
 * @returns the paths, in `files` order.
 */
export async function pathsInTheWay(
  worktree: string,
  files: readonly { path: string; status: string }[],
): Promise<string[]> {
  const deleted = new Set(files.filter((f) => f.status === 'D').map((f) => f.path));
  const kind = (rel: string): 'missing' | 'folder' | 'other' => {
    try {
      return lstatSync(path.join(worktree, rel)).isDirectory() ? 'folder' : 'other';
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'other';
    }
  };
  const out: string[] = [];
  const missing: string[] = [];
  for (const f of files) {
    if (f.status === 'A') {
      const parts = f.path.split('/');
      let blocked = false;
      let replaced = false; // a file or symlink on the way that the land deletes first
      for (let i = 1; i < parts.length && !blocked && !replaced; i++) {
        const prefix = parts.slice(0, i).join('/');
        const k = kind(prefix);
        if (k === 'missing') break;
        if (k === 'other') {
          replaced = deleted.has(prefix);
          blocked = !replaced;
        }
      }
      const here = replaced ? 'missing' : kind(f.path);
      if (blocked || (here === 'folder' && !onlyDeleted(worktree, f.path, deleted)))
        out.push(f.path);
      else if (here === 'other') out.push(f.path);
    } else if (f.status !== 'D' && kind(f.path) === 'missing') {
      missing.push(f.path);
    }
  }
  if (missing.length) {
    const dirty = new Set(await dirtyPaths(worktree, missing));
    out.push(...missing.filter((p) => dirty.has(p)));
  }
  const order = new Map(files.map((f, i) => [f.path, i]));
  return out.sort((a, b) => order.get(a)! - order.get(b)!);
}

/**
 * Whether folder `rel` of `worktree` holds nothing but files in `deleted` (and folders of such
 * files): what a change that puts a file in its place removes anyway. Unreadable: false.
 */
function onlyDeleted(worktree: string, rel: string, deleted: ReadonlySet<string>): boolean {
  try {
    return readdirSync(path.join(worktree, rel), { withFileTypes: true }).every((e) => {
      const child = `${rel}/${e.name}`;
      return e.isDirectory() ? onlyDeleted(worktree, child, deleted) : deleted.has(child);
    });
  } catch {
    return false;
  }
}
