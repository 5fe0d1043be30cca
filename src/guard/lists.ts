/**
 * Commands whose output is a list of paths below folders the guard can name: what `xargs` appends
 * when they feed it, and what `$(…)` becomes when they run inside it (`sed -i … $(git ls-files)`).
 * Each listed path is stood for by `<root>/found`, so a rule judges it as a file below its root;
 * find also lists its roots themselves and, asked for one by name, a `.git`.
 */
import path from 'node:path';

/** Options of grep and rg that take the next word as their value (not a pattern or a folder). */
const GREP_VALUE = new Set([
  ...['-e', '-f', '-m', '-A', '-B', '-C', '-g', '-t', '-T', '--include', '--exclude'],
  ...['--exclude-dir', '--glob', '--type', '--type-not', '--max-count', '--regexp', '--file'],
]);

/** Commands that pass their input's lines through (or drop some): a list stays a list. */
const LINE_FILTERS = new Set(['grep', 'egrep', 'fgrep', 'rg', 'sort', 'uniq', 'head', 'tail']);

/**
 * Absolute paths standing for what `name ARGS` prints (run in `cwd`), or null when its output is
 * not a list of paths or is only known when it runs. Listers: `git ls-files`, `git status`,
 * `git diff --name-only/--name-status`, `git grep -l`, `grep -l`/`rg -l`/`rg --files` (below the
 * folders they search), `find ROOTS` (without -exec, -ok or -printf, whose output is anything),
 * `ls`/`fd` (below their folders).
 */
export function listedPaths(
  name: string,
  args: readonly string[],
  cwd: string | null,
): string[] | null {
  const roots = listedRoots(name, args, cwd);
  if (!roots || name !== 'find')
    return roots?.map((root) => path.posix.join(root, 'found')) ?? null;
  const k = args.indexOf('-mindepth');
  const self = !(k >= 0 && Number(args[k + 1]) >= 1);
  const named = args.some((a) => /^(\.git|\.g\*|\*git|\.\*)$/.test(a));
  const raw = findRoots(args);
  return roots.flatMap((root, k) => [
    path.posix.join(root, 'found'),
    // find prints its roots too: `.` rm refuses by itself, a folder named may be the worktree.
    ...(self && !/^\.\/?$/.test(raw[k] ?? '.') ? [root] : []),
    ...(named ? [path.posix.join(root, '.git')] : []),
  ]);
}

/** The folders below which the paths `name ARGS` prints lie (see {@link listedPaths}). */
function listedRoots(name: string, args: readonly string[], cwd: string | null): string[] | null {
  if (cwd === null) return null;
  const at = (p: string): string => path.resolve(cwd, p);
  if (name === 'git') {
    const [sub, ...rest] = args;
    if (sub === 'ls-files' || sub === 'status') return [cwd];
    if (sub === 'diff' && rest.some((a) => a === '--name-only' || a === '--name-status'))
      return [cwd];
    if (sub === 'grep' && rest.some((a) => /^-[a-zA-Z]*[lL]|^--(name-only|files-with)/.test(a)))
      return [cwd];
    return null;
  }
  if (name === 'grep' || name === 'rg' || name === 'egrep' || name === 'fgrep') {
    const files = args.some((a) => a === '--files');
    const names = args.some((a) => /^-[a-zA-Z]*[lL]|^--files-with/.test(a));
    if (!files && !names) return null;
    const words: string[] = [];
    let pattern = !files && !args.some((a) => /^(-e|-f|--regexp|--file)/.test(a));
    for (let k = 0; k < args.length; k++) {
      const a = args[k]!;
      if (GREP_VALUE.has(a)) k++;
      else if (a === '--') continue;
      else if (!a.startsWith('-')) {
        if (pattern) pattern = false;
        else words.push(at(a));
      }
    }
    return words.length ? words : [cwd];
  }
  if (name === 'find') {
    if (args.some((a) => /^-(exec|execdir|ok|okdir|printf|fprintf|fprint|fls)$/.test(a)))
      return null;
    const roots = findRoots(args);
    return (roots.length ? roots : ['.']).map(at);
  }
  if (name === 'ls' || name === 'fd') {
    const roots = args.filter((a) => !a.startsWith('-'));
    return (name === 'ls' && roots.length ? roots : ['.']).map(at);
  }
  return null;
}

/** Options of the line filters that take the next word as their value. */
const FILTER_VALUE = new Set(['-n', '-k', '-t', '-e', '-m', '-A', '-B', '-C', '-g', '--lines']);

/**
 * True for a command reading its input that passes its lines through unchanged or filtered (grep
 * PATTERN, sort, uniq, head, tail): a list stays a list. Not with a file of its own to read, nor
 * with options that print something else (counts, only the matching part).
 */
export function isLineFilter(name: string, args: readonly string[]): boolean {
  if (!LINE_FILTERS.has(name)) return false;
  let operands = 0;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (/^-[a-zA-Z]*[oc]|^--(only-matching|count|files|output)/.test(a)) return false;
    if (FILTER_VALUE.has(a)) k++;
    else if (!a.startsWith('-') || a === '-') operands++;
  }
  const pattern =
    !['sort', 'uniq', 'head', 'tail'].includes(name) && !args.some((a) => /^(-e|-f)/.test(a));
  return operands === (pattern ? 1 : 0);
}

/** The folders find searches: the words before its expression (-H, -L, -P aside). */
function findRoots(args: readonly string[]): string[] {
  const start = args.findIndex((a) => !/^-[HLP]$/.test(a));
  if (start < 0) return [];
  const rest = args.slice(start);
  const end = rest.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
  return end < 0 ? rest : rest.slice(0, end);
}
