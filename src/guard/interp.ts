/**
 * Inline code of interpreters (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, or a
 * heredoc fed to them). The guard does not parse Python or JavaScript; it reads the code's
 * string literals, best effort:
 * - when the code runs a shell (os.system, subprocess, child_process, backticks, …), each
 *   literal that reads as a command, and each run of literals that starts with a command name
 *   (`['git', 'push', '--force']`), is checked as shell code;
 * - when the code deletes files (rmtree, rmSync, unlink, …), each literal that is a path
 *   (absolute, `~`, `..`) is checked as a deletion target; when it writes files (open(…, 'w'),
 *   writeFileSync, awk's `print > "/abs"`, …) as a write target (interp-writes.ts), and the home
 *   folder named through the language (`os.homedir()`, `Path.home()`, `expanduser('~')`) counts
 *   as the home folder.
 */
import type { Run, Walker } from './walk.js';
import type { Field } from './words.js';
import { checkInlineWrites, writesFiles } from './interp-writes.js';

/** Interpreters whose inline code the guard reads. The value is the option that carries code. */
export const INTERPRETERS = new Map<string, readonly string[]>([
  ['python', ['-c']],
  ['python2', ['-c']],
  ['python3', ['-c']],
  ['pypy', ['-c']],
  ['pypy3', ['-c']],
  ['node', ['-e', '--eval', '-p', '--print']],
  ['nodejs', ['-e', '--eval', '-p', '--print']],
  ['deno', ['eval']],
  ['bun', ['-e', '--eval']],
  ['perl', ['-e', '-E']],
  ['ruby', ['-e']],
  ['php', ['-r']],
  ['lua', ['-e']],
  ['Rscript', ['-e']],
  ['osascript', ['-e']],
  // awk's program is its first operand (unless -f names a file); its system() and pipes run shell code.
  ['awk', []],
  ['gawk', []],
  ['mawk', []],
  ['nawk', []],
]);

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);

const RUNS_SHELL =
  /\|\s*"|\b(os\.system|os\.popen|os\.exec\w*|subprocess|popen|spawn\w*|exec(Sync|File\w*)?|child_process|system\s*[("'[]|shell_exec|passthru|proc_open|Open3|IO\.popen|Command\s*\(|do shell script)|`|%x[({[]|\bqx[({[]/;
/** APIs that delete (or move away) files; those that write are in interp-writes.ts. */
const DELETES =
  /\b(rmtree|rmSync|rmdirSync|rm_rf|rm_r|unlinkSync|unlink|remove|removedirs|rmdir|rm\s*\(|rimraf|delete|rename\w*|move|truncate)/;
const HOME_API =
  /\bos\.homedir\s*\(|\bhomedir\s*\(|Path\.home\s*\(|expanduser\s*\(\s*['"]~['"]\s*\)|process\.env\.HOME\b|os\.environ\s*\[\s*['"]HOME['"]\s*\]|getenv\s*\(\s*['"]HOME['"]\s*\)|ENV\s*\[\s*['"]HOME['"]\s*\]|Dir\.home|\$ENV\{\s*['"]?HOME/;

/** Commands whose arguments are deleted or overwritten. */
const DELETING_COMMANDS = new Set([
  'rm',
  'rmdir',
  'shred',
  'truncate',
  'mv',
  'dd',
  'find',
  'chmod',
  'chown',
]);

/** Command names that make a run of string literals worth reading as a command line. */
const COMMAND_WORDS = new Set([
  'rm',
  'git',
  'sh',
  'bash',
  'mv',
  'dd',
  'find',
  'xargs',
  'chmod',
  'chown',
  'cp',
  'tee',
  'truncate',
  'shred',
  'rmdir',
  'sudo',
  'env',
  'mkfs',
  'hagent',
  'npx',
]);

function literals(code: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g;
  for (let m = re.exec(code); m; m = re.exec(code))
    out.push((m[1] ?? m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1'));
  return out;
}

/** The inline code of an interpreter command line, if it has some. */
function inlineCode(name: string, args: readonly Field[], r: Run): Field | null {
  if (AWKS.has(name)) {
    if (args.some((a) => a.value === '-f' || a.value.startsWith('--file'))) return null;
    for (let i = 0; i < args.length; i++) {
      const v = args[i]!.value;
      if (
        v === '-F' ||
        v === '-v' ||
        v === '-i' ||
        v === '--assign' ||
        v === '--field-separator' ||
        v === '--include'
      ) {
        i++;
        continue;
      }
      if (v.startsWith('-') && v !== '-' && !args[i]!.dynamic) continue;
      return args[i]!;
    }
    return null;
  }
  const opts = INTERPRETERS.get(name) ?? [];
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (opts.includes(v)) return args[i + 1] ?? null;
    for (const o of opts)
      if (
        o.length === 2 &&
        v.startsWith('-') &&
        !v.startsWith('--') &&
        v.endsWith(o[1]!) &&
        /^-[a-zA-Z]+$/.test(v)
      )
        return args[i + 1] ?? null;
    if (!v.startsWith('-')) {
      // `python -`, `node -`, or a script file: a heredoc or a pipe is the code only for `-` / no file.
      return v === '-' && r.stdin?.literal !== undefined
        ? { value: r.stdin.literal, dynamic: false, glob: false }
        : null;
    }
  }
  return r.stdin?.literal !== undefined
    ? { value: r.stdin.literal, dynamic: false, glob: false }
    : null;
}

/**
 * Checks the inline code of `name ARGS` (see the file comment for what is read).
 * Refuses with the shell rules (rm-outside, git-…) or `unresolved` for code only known at run time.
 */
export function checkInlineCode(w: Walker, name: string, args: readonly Field[], r: Run): void {
  const code = inlineCode(name, args, r);
  if (!code) return;
  if (code.dynamic)
    return w.block(
      'unresolved',
      `${name} runs code ${code.value}, only known when it runs`,
      r.text,
    );
  const text = code.value;
  const lits = literals(text);
  if (RUNS_SHELL.test(text)) {
    for (const lit of lits) {
      const first = lit.trim().split(/\s+/)[0] ?? '';
      if (COMMAND_WORDS.has(first.replace(/^.*\//, '')))
        w.source(lit, { cwd: r.scope.cwd, vars: new Map(r.env) }, r.depth + 1);
    }
    lits.forEach((lit, i) => {
      if (COMMAND_WORDS.has(lit)) {
        const argv = lits.slice(i, i + 12).map((value) => ({ value, dynamic: false, glob: false }));
        w.run({ ...r, argv, stdin: null });
      }
    });
    // system('rm', '-rf', $ENV{HOME}) / spawnSync('rm', ['-rf', os.homedir()]): the home folder as an argument.
    if (HOME_API.test(text) && lits.some((l) => DELETING_COMMANDS.has(l)))
      w.block('rm-outside', `the ${name} code runs a deleting command on the home folder`, r.text);
  }
  const writes = writesFiles(name, text);
  if (writes && HOME_API.test(text))
    w.block('write-outside', `the ${name} code writes in the home folder`, r.text);
  if (writes) checkInlineWrites(w, name, text, lits, r);
  if (DELETES.test(text)) {
    if (HOME_API.test(text))
      w.block('rm-outside', `the ${name} code deletes in the home folder`, r.text);
    for (const lit of lits) {
      if (/^(\/|~|\.\.)/.test(lit) && !/\s/.test(lit))
        w.checkDelete(
          {
            value: lit.startsWith('~') ? w.session.frame.home + lit.slice(1) : lit,
            dynamic: false,
            glob: false,
          },
          r.scope,
          true,
          `the ${name} code`,
          r.text,
        );
    }
  }
}
