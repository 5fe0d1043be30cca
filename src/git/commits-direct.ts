/**
 * Reading commit history without spawning git, from loose commit objects (the session's own
 * commits, written by `commit-tree`), for land's squash message. Answers null — ask git —
 * whenever a commit is not at hand that way.
 */
import { looseObjectStore, readLooseObject } from './loose.js';

/**
 * `git log --first-parent --format=%s base..head`, oldest first, from loose commit objects: the
 * subject is the message's first paragraph, lines joined by spaces. Null (ask git) when a
 * commit is not loose, carries an encoding header, or the chain does not reach `base` within
 * 10,000 commits. Never throws.
 * @param commonDir absolute git common dir; `base`, `head`: full commit ids.
 */
export async function firstParentSubjectsDirect(
  commonDir: string,
  base: string,
  head: string,
): Promise<string[] | null> {
  try {
    const store = await looseObjectStore(commonDir, head);
    if (!store) return null;
    const subjects: string[] = [];
    for (let at = head; at !== base;) {
      if (subjects.length >= 10_000) return null;
      const object = readLooseObject(store, at);
      if (object?.type !== 'commit') return null;
      const text = object.content.toString('utf8');
      const split = text.indexOf('\n\n');
      if (split < 0) return null;
      const headers = text.slice(0, split);
      if (/^encoding /m.test(headers)) return null;
      const parent = /^parent ([0-9a-f]{40}(?:[0-9a-f]{24})?)$/m.exec(headers)?.[1];
      if (!parent) return null; // the root: base is not on the chain
      // pretty.c format_subject: blank lines skipped, then lines up to the next blank one,
      // each without its trailing white space, joined by spaces.
      const lines = text
        .slice(split + 2)
        .split('\n')
        .map((l) => l.replace(/[ \t\r\v\f]+$/, ''));
      let i = 0;
      while (i < lines.length && lines[i] === '') i++;
      const first: string[] = [];
      while (i < lines.length && lines[i] !== '') first.push(lines[i++]!);
      if (first.length) subjects.push(first.join(' ')); // git log's empty lines are dropped too
      at = parent;
    }
    return subjects.reverse();
  } catch {
    return null;
  }
}
