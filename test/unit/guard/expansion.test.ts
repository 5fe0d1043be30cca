/**
 * The guard's word expansion against bash's own: each line is run by the real bash (HOME and
 * the folder pinned, globbing off) printing the fields of its last command, and the guard must
 * see the same fields — quotes, escapes, ANSI-C strings, tilde, braces, $IFS splitting,
 * parameter operations and known substitutions.
 */
import { spawnSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeFrame } from '../../../src/guard/paths.js';
import { Walker } from '../../../src/guard/walk.js';
import { tempDir } from '../../helpers/index.js';

const test = suite('guard: expansion against bash');
const HOME = '/home/dev';

const LINES = [
  `printf '%s\\0' r''m "a b" $'\\x72\\x6d' $'a\\tb' \\r\\m ch\\mod a"b"'c'$'d'`,
  `printf '%s\\0' ~ ~/x "~" a~ x=~/y "$HOME/x" $HOME`,
  `printf '%s\\0' {a,b}c {src,~} x{1..3} {a..c}`,
  `A='x  y'; printf '%s\\0' $A "$A" a$A`,
  `IFS=,; A=a,b,,c; printf '%s\\0' $A`,
  `F=-rf; D=/; printf '%s\\0' $F $D"x" "$D"`,
  `unset X; printf '%s\\0' \${X:-def} "\${X:+alt}" "\${X}" x\${X}y`,
  `f=src/a.test.ts; printf '%s\\0' "\${f%.ts}" "\${f%%.*}" "\${f##*/}" "\${f#*/}" "\${f/a/b}" "\${f//s/S}" "\${#f}"`,
  `n=Widget; printf '%s\\0' "\${n,,}" "\${n^^}" "\${n,}"`,
  `printf '%s\\0' "$(echo hi there)" $(echo a b) "$(printf x)" $(basename src/a.ts .ts) "$(dirname src/a.ts)"`,
  `EMPTY=; printf '%s\\0' "" '' $EMPTY a\${EMPTY}b "$EMPTY"`,
  `export G=/etc; printf '%s\\0' $G/passwd`,
  `x=rm; y=-rf; $x$IFS$y 2>/dev/null; printf '%s\\0' $x$IFS$y`,
  `IFS=' ,'; A=' a , b ,c '; printf '%s\\0' $A`,
  `printf '%s\\0' \\$HOME '$HOME' "\\$HOME" "\${HOME}"/x`,
  `printf '%s\\0' "a\\\\b" 'a\\b' a\\\\b $'\\'' "it's"`,
  `printf '%s\\0' "$(echo "a b")" {a,b{c,d}} ~/{a,b} {x..z}{1,2}`,
];

/** The fields bash gives the last command of `line` (printf's arguments after the format). */
function bashFields(line: string, cwd: string): string[] {
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `set -f; ${line}`], {
    cwd,
    env: { PATH: process.env.PATH, HOME },
    encoding: 'utf8',
  });
  assert.is(r.status, 0, r.stderr);
  return r.stdout.split('\0').slice(0, -1);
}

/** The fields the guard sees for the same command. */
function guardFields(line: string, cwd: string): string[] {
  const w = new Walker({ frame: makeFrame(cwd, HOME), protectedBranches: [], allow: new Set() });
  let last: string[] = [];
  w.observe = (r) => {
    if (r.argv[0]?.value === 'printf')
      last = r.argv.slice(2).map((f) => (f.dynamic ? `<dynamic ${f.value}>` : f.value));
  };
  w.source(line, { cwd, vars: new Map() }, 0);
  return last;
}

test('the guard splits and expands words as bash does', () => {
  const cwd = tempDir();
  for (const line of LINES) assert.equal(guardFields(line, cwd), bashFields(line, cwd), line);
});

test.run();
