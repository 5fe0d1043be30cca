/**
 * Writes by interpreter one-liners: the file paths an inline script (`awk`, `perl -e`,
 * `python -c`, `node -e`, `ruby -e`, …) opens for writing. Kept apart from deletions so the
 * refusal says what the code does: a script that writes outside the worktree is refused as
 * `write-outside` ("writes…"), one that deletes as `rm-outside`.
 *
 * Best effort, like the rest of interp.ts: the code is not parsed; a write API in the text makes
 * every absolute (or `~`, `..`) path literal of it a write target, and awk's output redirections
 * (`print > "/abs"`, `printf … >> "/abs"`) name their targets directly.
 */
import type { Run, Walker } from './walk.js';

/** APIs that create or overwrite a file named by a string in the code. */
const WRITES =
  /\b(writeFileSync|writeFile|appendFile\w*|copyFile\w*|createWriteStream|outputFile\w*|write_text|write_bytes|File\.write|IO\.write|File\.open\s*\([^)]*['"][wa]|open\s*\([^)]*['"][wax+]|open\s*\([^,)]*,\s*['"]\+?>|open\s+[^,;]*,\s*['"]\+?>|file_put_contents|fopen\s*\([^)]*['"][wax])/;

/** awk's output redirections to a quoted file: `> "/path"`, `>> "/path"` (a pipe `| "cmd"` is shell code, read elsewhere). */
const AWK_REDIRECT = /(?<![<>=!])>>?\s*"((?:[^"\\\n]|\\.)*)"/g;

/** A path-looking literal: absolute, home-relative or going up, without spaces. */
const PATHLIKE = /^(\/|~|\.\.)/;

/** The file a perl/ruby open mode string names (`">/abs"`, `"+>>/abs"`), else the literal itself. */
function modeTarget(lit: string): string {
  return lit.replace(/^\+?(>>?|<)\s*/, '');
}

/**
 * True when the inline code of `name` writes files by an API or (awk) a redirection. Pure.
 */
export function writesFiles(name: string, code: string): boolean {
  AWK_REDIRECT.lastIndex = 0;
  return WRITES.test(code) || (/awk$/.test(name) && AWK_REDIRECT.test(code));
}

/**
 * Checks each path the inline code of `name` writes: outside the worktree (and outside scratch
 * space that holds no checkout) it is refused as `write-outside`.
 * @param lits the string literals of the code (interp.ts reads them)
 */
export function checkInlineWrites(
  w: Walker,
  name: string,
  code: string,
  lits: readonly string[],
  r: Run,
): void {
  const targets: string[] = [];
  if (/awk$/.test(name)) {
    AWK_REDIRECT.lastIndex = 0;
    for (let m = AWK_REDIRECT.exec(code); m; m = AWK_REDIRECT.exec(code))
      targets.push(m[1]!.replace(/\\(.)/g, '$1'));
  }
  if (WRITES.test(code)) for (const lit of lits) targets.push(modeTarget(lit));
  for (const t of targets) {
    if (!PATHLIKE.test(t) || /\s/.test(t)) continue;
    w.checkWrite(
      {
        value: t.startsWith('~') ? w.session.frame.home + t.slice(1) : t,
        dynamic: false,
        glob: false,
      },
      r.scope,
      `the ${name} code's write`,
      r.text,
    );
  }
}
