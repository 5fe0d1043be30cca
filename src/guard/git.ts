/**
 * The git rules of the guard. Inside the session worktree every change is a hagent commit, so
 * discards there (restore, checkout --, clean, reset --hard HEAD) pass; what is refused is git
 * pointed elsewhere, pushes, and what destroys hagent's safety net: its branches and refs, the
 * reflog, unreachable objects, worktrees, stash entries, shared configuration.
 */
import path from 'node:path';
import { placeOf, scratchRepo, whose, type Frame } from './paths.js';
import { resolveIn } from './args.js';
import type { Run, Walker } from './walk.js';
import { mayBeOptions, type Field } from './words.js';

/** Global options of git that take the next word as their value. */
const GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--exec-path',
  '--config-env',
  '--super-prefix',
  '--list-cmds',
  '--attr-source',
]);

/** Variables that send git to another repository or working tree. */
const GIT_PLACE_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
];

/** `-c NAME=VALUE` settings whose value git runs as a shell command (names as RegExp sources). */
const SHELL_SETTINGS = new RegExp(
  `^(${[
    ...['core\\.sshcommand', 'core\\.pager', 'core\\.editor', 'core\\.fsmonitor'],
    ...['sequence\\.editor', 'diff\\.external', 'credential\\.helper', 'pager\\.[^=]+'],
    ...['gpg\\.program', 'core\\.askpass', 'core\\.gitproxy', 'uploadpack\\.packobjectshook'],
    ...['filter\\.[^=]+\\.(?:clean|smudge|process)', 'diff\\.[^=]+\\.(?:textconv|command)'],
    'merge\\.[^=]+\\.driver',
  ].join('|')})=(.*)$`,
  'is',
);

/** Subcommands whose arguments must be known: a dynamic word there could be a force or a delete. */
const DANGEROUS = new Set([
  'push',
  'update-ref',
  'gc',
  'prune',
  'repack',
  'config',
  'symbolic-ref',
  'notes',
  'filter-branch',
  'filter-repo',
]);

/** Splits short-option clusters: `-fu` → `f`, `u`. Long options come back whole. */
function flags(args: readonly Field[]): {
  short: Set<string>;
  long: Set<string>;
  operands: Field[];
} {
  const short = new Set<string>();
  const long = new Set<string>();
  const ops: Field[] = [];
  let dashdash = false;
  for (const a of args) {
    const v = a.value;
    if (dashdash || a.dynamic || !v.startsWith('-') || v === '-') {
      ops.push(a);
      continue;
    }
    if (v === '--') {
      dashdash = true;
      continue;
    }
    if (v.startsWith('--')) long.add(v.split('=')[0]!);
    else for (const c of v.slice(1)) short.add(c);
  }
  return { short, long, operands: ops };
}

/** Rejects the arguments of a dangerous subcommand that are only known at run time. */
function requireKnown(w: Walker, sub: string, args: readonly Field[], r: Run): void {
  const dyn = args.find((a) => a.dynamic);
  if (dyn) w.block('unresolved', `git ${sub} gets ${dyn.value}, only known when it runs`, r.text);
}

/**
 * True for a branch or ref name hagent protects: hagent/*, refs/hagent/*, its notes, HEAD, the
 * target branches.
 */
export function protectedRef(name: string, protectedBranches: readonly string[]): boolean {
  let n = name.replace(/^\+/, '');
  if (n === 'HEAD' || n === '@') return true;
  if (n.startsWith('refs/hagent/') || /^refs\/notes\/hagent(-sessions\/|$)/.test(n)) return true;
  n = n.replace(/^refs\/heads\//, '').replace(/^heads\//, '');
  if (n.startsWith('hagent/')) return true;
  if (protectedBranches.includes(n)) return true;
  if (/[*?[]/.test(n)) {
    const re = new RegExp(
      `^${n
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    return re.test('hagent/x') || protectedBranches.some((b) => re.test(b));
  }
  return false;
}

/**
 * Applies the git rules to `git ARGS` (after launcher prefixes were stripped).
 * Rules: git-elsewhere, git-push, git-push-force, git-protected-ref, git-reset-hard,
 * git-reflog-expire, git-gc-prune, git-worktree, git-stash-drop, git-config-write,
 * git-history-rewrite; `unresolved` for dynamic subcommands or arguments of dangerous ones.
 */
export function checkGit(
  w: Walker,
  args: Field[],
  r: Run,
  expanded: ReadonlySet<string> = new Set(),
): void {
  const { frame, protectedBranches } = w.session;
  const elsewhere = placeCheck(w, r);
  const globals = globalOptions(w, args, r, elsewhere);
  if (!globals) return;
  const { end: i, cwd, aliases, settings } = globals;
  checkEnvironment(w, r, cwd, elsewhere);
  const subField = args[i];
  if (!subField) return;
  const rest = args.slice(i + 1);
  const sub = subField.value;
  const alias = aliases.get(sub);
  if (alias !== undefined) {
    if (expanded.has(sub))
      return w.block('unresolved', `the git alias ${sub} expands to itself`, r.text);
    if (alias.startsWith('!'))
      return w.shellString(
        { value: alias.slice(1), dynamic: false, glob: false },
        { ...r, scope: { cwd, vars: r.scope.vars } },
        [{ value: 'git', dynamic: false, glob: false }, ...rest],
      );
    const words = alias
      .split(/\s+/)
      .filter(Boolean)
      .map((value) => ({ value, dynamic: false, glob: false }));
    return checkGit(w, [...args.slice(0, i), ...words, ...rest], r, new Set([...expanded, sub]));
  }
  if (sub === 'help' || sub === 'version' || rest.some((a) => a.value === '--help')) return;
  // git run from a folder outside the worktree works on another repository.
  if (sub !== 'clone' && sub !== 'init' && sub !== 'ls-remote')
    elsewhere('the folder git runs in', cwd);
  if (DANGEROUS.has(sub)) requireKnown(w, sub, rest, r);
  if (['branch', 'checkout', 'switch', 'reset', 'reflog', 'worktree', 'stash'].includes(sub)) {
    const loose = rest.find(mayBeOptions);
    if (loose)
      return w.block(
        'unresolved',
        `git ${sub} gets ${loose.value}, which may expand to options only known when it runs`,
        r.text,
      );
  }
  const f = flags(rest);
  const has = (s: string, ...long: string[]): boolean =>
    f.short.has(s) || long.some((l) => f.long.has(l));
  const rule = SUBCOMMANDS.get(sub);
  if (rule) rule({ w, r, sub, rest, f, has, cwd, elsewhere, protectedBranches, frame, settings });
}

/**
 * A push publishes the session: refused, and named a force when it can overwrite or delete what is
 * there.
 */
function push({ w, r, rest, f, has }: GitCall): void {
  const force =
    has(
      'f',
      '--force',
      '--force-with-lease',
      '--force-if-includes',
      '--mirror',
      '--prune',
      '--delete',
    ) ||
    f.short.has('d') ||
    f.operands.some(
      (o) => o.value.startsWith('+') || o.value.startsWith(':') || /^[^:]*:\+/.test(o.value),
    );
  if (force)
    return w.block('git-push-force', `git push ${rest.map((x) => x.value).join(' ')}`, r.text);
  return w.block('git-push', `git push ${rest.map((x) => x.value).join(' ')}`.trim(), r.text);
}

/** git branch may not delete, rename, overwrite or force-move a branch hagent protects. */
function branch({ w, r, sub, rest, f, has, protectedBranches }: GitCall): void {
  const del = has('d', '--delete') || has('D');
  const move = has('m', '--move') || has('M');
  const copy = has('c', '--copy') || has('C');
  const force = has('f', '--force') || has('D') || has('M') || has('C');
  const names = f.operands;
  if (del || move || copy || force) requireKnown(w, sub, rest, r);
  if (del) {
    for (const n of names)
      if (protectedRef(n.value, protectedBranches))
        return w.block('git-protected-ref', `git branch deletes ${n.value}`, r.text);
    return;
  }
  if (move || copy) {
    if (move && names.length <= 1)
      return w.block(
        'git-protected-ref',
        'git branch -m renames the current branch, the session branch hagent/<id>',
        r.text,
      );
    for (const n of move ? names : names.slice(-1))
      if (protectedRef(n.value, protectedBranches))
        return w.block(
          'git-protected-ref',
          `git branch ${move ? 'renames' : 'overwrites'} ${n.value}`,
          r.text,
        );
    return;
  }
  if (force && names[0] && protectedRef(names[0].value, protectedBranches))
    return w.block('git-protected-ref', `git branch -f moves ${names[0].value}`, r.text);
  return;
}

/** `checkout -B` and `switch -C` reset a branch: not one hagent protects. */
function checkoutReset({ w, r, sub, rest, protectedBranches }: GitCall): void {
  const resetOpts = sub === 'checkout' ? ['-B'] : ['-C', '--force-create'];
  if (
    rest.some((a) =>
      resetOpts.some(
        (o) =>
          a.value === o ||
          (!o.startsWith('--') && a.value.startsWith(o)) ||
          a.value.startsWith(`${o}=`),
      ),
    )
  )
    requireKnown(w, sub, rest, r);
  const reset = optionAfter(rest, resetOpts);
  if (reset && protectedRef(reset, protectedBranches))
    return w.block('git-protected-ref', `git ${sub} resets the branch ${reset}`, r.text);
  // A lone branch operand switches the worktree to it (with a path after it, checkout only reads).
  const operands = withoutValues(rest, ['-b', '-c', '-B', '-C', '--orphan', '--conflict']);
  if (
    !reset &&
    !rest.some((a) => a.value === '--' || /^-[bcd]|^--(create|orphan|detach)/.test(a.value)) &&
    operands.length === 1 &&
    protectedBranches.includes(operands[0]!.replace(/^refs\/heads\//, ''))
  )
    return w.block(
      'git-protected-ref',
      `git ${sub} ${operands[0]} moves the session worktree off its branch onto ${operands[0]}`,
      r.text,
    );
  return;
}

/** The words of `args` that are neither options nor the value of one of `withValue`. */
function withoutValues(args: readonly Field[], withValue: readonly string[]): string[] {
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const v = args[k]!.value;
    if (v === '--') {
      out.push(...args.slice(k + 1).map((a) => a.value));
      break;
    }
    if (withValue.includes(v)) k++;
    else if (!v.startsWith('-')) out.push(v);
  }
  return out;
}

/**
 * git update-ref may not move or delete a ref hagent protects; `--stdin` hides which refs it
 * changes.
 */
function updateRef({ w, r, rest, f, has, protectedBranches }: GitCall): void {
  if (f.long.has('--stdin'))
    return w.block(
      'unresolved',
      'git update-ref --stdin reads its ref updates from input the guard cannot see',
      r.text,
    );
  // -m REASON takes a word that is not the ref.
  const words = rest.filter(
    (a, k) => !(a.value === '-m' || rest[k - 1]?.value === '-m') && !a.value.startsWith('-'),
  );
  const ref = words[0];
  if (ref?.value.startsWith('refs/replace/'))
    return w.block('git-history-rewrite', `git update-ref ${ref.value}`, r.text);
  if (ref?.value === 'refs/stash' && has('d'))
    return w.block(
      'git-stash-drop',
      'git update-ref -d refs/stash drops every stash entry',
      r.text,
    );
  if (ref && protectedRef(ref.value, protectedBranches))
    return w.block(
      'git-protected-ref',
      `git update-ref ${has('d') ? 'deletes' : 'moves'} ${ref.value}`,
      r.text,
    );
  return;
}

/** Setting or deleting a symbolic ref repoints HEAD away from the session branch. */
function symbolicRef({ w, r, f, has }: GitCall): void {
  if (f.operands.length >= 2 || has('d', '--delete'))
    return w.block(
      'git-protected-ref',
      'git symbolic-ref repoints HEAD away from the session branch',
      r.text,
    );
  return;
}

/**
 * `reset --hard` (or --keep, --merge) to another commit moves the session branch off its commits;
 * to HEAD it only discards.
 */
function reset({ w, r, sub, rest, f, has }: GitCall): void {
  if (!has('', '--hard', '--keep', '--merge')) return;
  requireKnown(w, sub, rest, r);
  const rev = f.operands[0]?.value;
  if (rev === undefined || rev === 'HEAD' || rev === '@') return;
  return w.block('git-reset-hard', `git reset ${[...f.long].join(' ')} ${rev}`, r.text);
}

/** Expiring or deleting reflog entries destroys the way back to earlier commits. */
function reflog({ w, r, sub, rest, f }: GitCall): void {
  if (f.operands[0]?.dynamic) requireKnown(w, sub, rest, r);
  const action = f.operands[0]?.value;
  if (action === 'expire' || action === 'delete' || action === 'drop')
    return w.block('git-reflog-expire', `git reflog ${action}`, r.text);
  return;
}

/** `gc --prune` drops unreachable objects (what undo may need), unless `--prune=never`. */
function gc({ w, r, sub, rest, settings }: GitCall): void {
  const prune = rest.find((a) => a.value === '--prune' || a.value.startsWith('--prune='));
  if (prune && prune.value !== '--prune=never')
    return w.block('git-gc-prune', `git gc ${prune.value}`, r.text);
  // -c gc.pruneExpire=now (or the reflog's expiry) makes a plain gc prune what undo may need.
  const expire = settings.find((x) =>
    /^gc\.(pruneexpire|reflogexpire|reflogexpireunreachable|worktreepruneexpire)=(?!never$)/i.test(
      x,
    ),
  );
  if (expire) return w.block('git-gc-prune', `git -c ${expire} ${sub}`, r.text);
  return;
}

/** `repack -a -d` drops unreachable objects unless they are kept. */
function repack({ w, r, f }: GitCall): void {
  if (
    f.short.has('a') &&
    f.short.has('d') &&
    !f.short.has('A') &&
    !f.long.has('--keep-unreachable')
  )
    return w.block('git-gc-prune', 'git repack -a -d drops unreachable objects', r.text);
  return;
}

/**
 * Removing, pruning or moving worktrees can take the session's own; `add` writes where it is told.
 */
function worktree({ w, r, sub, rest, f, cwd, protectedBranches }: GitCall): void {
  if (f.operands[0]?.dynamic) requireKnown(w, sub, rest, r);
  const action = f.operands[0]?.value;
  if (action === 'remove' || action === 'prune' || action === 'move')
    return w.block('git-worktree', `git worktree ${action}`, r.text);
  if (action === 'add') {
    const words = withoutValues(rest, ['-b', '-B', '--reason']);
    const dest = rest.find((a) => a.value === words[1]);
    if (dest) w.checkWrite(dest, { cwd, vars: r.scope.vars }, 'git worktree add', r.text);
    // A checkout of the target branch elsewhere would let commits there move it.
    const branch = optionAfter(rest, ['-B']) ?? (optionAfter(rest, ['-b']) ? undefined : words[2]);
    const detached = rest.some((a) => a.value === '--detach' || a.value === '-d');
    if (branch && !detached && protectedBranches.includes(branch.replace(/^refs\/heads\//, '')))
      return w.block('git-protected-ref', `git worktree add checks out ${branch}`, r.text);
  }
  return;
}

/** Dropping or clearing stash entries loses work for good. */
function stash({ w, r, sub, rest, f }: GitCall): void {
  if (f.operands[0]?.dynamic) requireKnown(w, sub, rest, r);
  const action = f.operands[0]?.value;
  if (action === 'drop' || action === 'clear')
    return w.block('git-stash-drop', `git stash ${action}`, r.text);
  return;
}

/**
 * Writing git's configuration changes every session of the repository; the worktree's own files
 * (`-f .gitmodules`) are edits inside it.
 */
function config({ w, r, rest, f, cwd, frame }: GitCall): void {
  const reads = [
    '--get',
    '--get-all',
    '--get-regexp',
    '--get-urlmatch',
    '--get-color',
    '--get-colorbool',
    '--list',
    '--show-origin',
    '--show-scope',
  ];
  const writes = [
    '--unset',
    '--unset-all',
    '--add',
    '--replace-all',
    '--rename-section',
    '--remove-section',
    '--edit',
  ];
  const first = f.operands[0]?.value;
  if (first === 'get' || first === 'list') return;
  // A config file of the worktree's own (git config -f .gitmodules …) is an edit inside it.
  const file = optionAfter(rest, ['-f', '--file']);
  if (file !== undefined) {
    const p = resolveIn({ value: file, dynamic: false, glob: false }, cwd);
    if (p && placeOf(frame, p, true) === 'inside') return;
  }
  if (
    writes.some((x) => f.long.has(x)) ||
    f.short.has('e') ||
    ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(first ?? '')
  )
    return w.block('git-config-write', `git config ${rest.map((x) => x.value).join(' ')}`, r.text);
  if (reads.some((x) => f.long.has(x)) || f.short.has('l')) return;
  if (f.operands.length >= 2)
    return w.block('git-config-write', `git config ${rest.map((x) => x.value).join(' ')}`, r.text);
  return;
}

/**
 * hagent keeps each commit's patch text in its notes refs: the user's notes are free, hagent's are
 * not.
 */
function notes({ w, r, rest }: GitCall): void {
  // hagent keeps each commit's patch text in refs/notes/hagent-sessions/<id> (before: in
  // refs/notes/hagent); other notes refs are the user's.
  const ref = optionAfter(rest, ['--ref']) ?? notesRefOf(r) ?? 'commits';
  const action = rest.find((a) => !a.value.startsWith('-') && a.value !== ref)?.value ?? 'list';
  const writes = !['list', 'show', 'get-ref'].includes(action);
  if (writes && /^(refs\/notes\/)?hagent(-sessions\/.+)?$/.test(ref))
    return w.block(
      'git-protected-ref',
      `git notes ${action} on hagent's notes (the patch text of each commit)`,
      r.text,
    );
  return;
}

/** git clone writes its destination (or a folder in the one it runs in). */
function clone({ w, r, f, cwd, elsewhere }: GitCall): void {
  const dest = f.operands[1];
  if (dest) w.checkWrite(dest, { cwd, vars: r.scope.vars }, 'git clone', r.text);
  else elsewhere('the folder git clone writes into', cwd);
  return;
}

/** git init writes its folder (the one it runs in by default). */
function init({ w, r, f, cwd }: GitCall): void {
  const dest = f.operands[0];
  w.checkWrite(
    dest ?? { value: '.', dynamic: false, glob: false },
    { cwd, vars: r.scope.vars },
    'git init',
    r.text,
  );
  return;
}

/** `submodule foreach` runs its words as shell code in every submodule. */
function submodule({ w, r, rest }: GitCall): void {
  const k = rest.findIndex((a) => a.value === 'foreach');
  if (k >= 0) {
    const cmd = rest.slice(k + 1).filter((a) => !a.value.startsWith('--'));
    if (cmd.some((a) => a.dynamic))
      return w.block(
        'unresolved',
        'git submodule foreach runs code only known when it runs',
        r.text,
      );
    return w.shellString(
      { value: cmd.map((a) => a.value).join(' '), dynamic: false, glob: false },
      r,
      [],
    );
  }
  return;
}

/**
 * `rebase -x CMD` runs CMD as shell code after each commit; `rebase UPSTREAM BRANCH` (or
 * `--root BRANCH`) first checks BRANCH out and rewrites it: not a branch hagent protects.
 */
function rebase({ w, r, rest, has, protectedBranches }: GitCall): void {
  const operands = withoutValues(rest, ['-x', '--exec', '--onto', '-s', '--strategy', '-X']);
  const branch = operands[has('', '--root') ? 0 : 1];
  if (branch && protectedBranches.includes(branch.replace(/^refs\/heads\//, '')))
    return w.block('git-history-rewrite', `git rebase rewrites the branch ${branch}`, r.text);
  for (let k = 0; k < rest.length; k++) {
    const v = rest[k]!.value;
    if (v === '-x' || v === '--exec') {
      const c = rest[k + 1];
      if (c) w.shellString(c, r, []);
    } else if (v.startsWith('--exec=')) w.shellString({ ...rest[k]!, value: v.slice(7) }, r, []);
  }
  return;
}

/** Remotes live in the repository's shared configuration: adding, changing or removing one writes it. */
function remote({ w, r, f }: GitCall): void {
  const action = f.operands[0]?.value;
  if (action && ['add', 'set-url', 'remove', 'rm', 'rename', 'set-branches'].includes(action))
    return w.block(
      'git-config-write',
      `git remote ${action} changes the repository's remotes`,
      r.text,
    );
  return;
}

/** Replace refs change what every branch of the repository shows: listing them only reads. */
function replace({ w, r, f, has }: GitCall): void {
  if (has('l', '--list') || (f.operands.length === 0 && !has('d', '--delete'))) return;
  return w.block('git-history-rewrite', 'git replace changes what every branch shows', r.text);
}

/**
 * A fetch refspec `SRC:DST` writes the local ref DST: not a branch or ref hagent protects (`git
 * fetch . +hagent/<id>:main` lands the session's work behind the user's back).
 */
function fetch({ w, r, f, protectedBranches }: GitCall): void {
  for (const o of f.operands.slice(1)) {
    const dst = o.value.includes(':') ? o.value.slice(o.value.lastIndexOf(':') + 1) : '';
    if (dst && protectedRef(dst, protectedBranches))
      return w.block(
        'git-protected-ref',
        `git fetch's refspec ${o.value} writes the branch ${dst}`,
        r.text,
      );
  }
  return;
}

/** Deleting or moving a tag changes one the user's checkout shares. */
function tag({ w, r, sub, rest, has }: GitCall): void {
  if (!has('d', '--delete') && !has('f', '--force')) return;
  requireKnown(w, sub, rest, r);
  return w.block(
    'git-protected-ref',
    `git tag ${has('d', '--delete') ? '-d deletes' : '-f moves'} a tag of the repository`,
    r.text,
  );
}

/**
 * `--output=FILE` (log, diff, show, …), `-o DIR` (format-patch) and `checkout-index --prefix=DIR`
 * write where they are told.
 */
function outputs({ w, r, sub, rest, cwd }: GitCall): void {
  const names =
    sub === 'checkout-index'
      ? ['--prefix']
      : sub === 'format-patch'
        ? ['--output', '-o', '--output-directory']
        : ['--output'];
  for (let k = 0; k < rest.length; k++) {
    const v = rest[k]!.value;
    const n = names.find((x) => v === x || v.startsWith(`${x}=`));
    if (!n) continue;
    const file = v === n ? rest[k + 1] : { ...rest[k]!, value: v.slice(n.length + 1) };
    if (file) w.checkWrite(file, { cwd, vars: r.scope.vars }, `git ${sub} ${n}`, r.text);
  }
  return;
}

/** `archive -o FILE` writes FILE. */
function archive({ w, r, rest, cwd }: GitCall): void {
  const out = rest.find((a) => a.value.startsWith('--output='));
  const k = rest.findIndex((a) => a.value === '-o' || a.value === '--output');
  const file = out ? { ...out, value: out.value.slice(9) } : k >= 0 ? rest[k + 1] : undefined;
  if (file) w.checkWrite(file, { cwd, vars: r.scope.vars }, 'git archive -o', r.text);
  return;
}

/** A git subcommand's rule: returns when the command is allowed, throws Blocked when refused. */
type GitRule = (g: GitCall) => void;

/** The subcommands with a rule of their own; the others (status, log, add, commit, …) pass. */
const GIT_RULES: [readonly string[], GitRule][] = [
  [['push'], push],
  [['branch'], branch],
  [['checkout', 'switch'], checkoutReset],
  [['update-ref'], updateRef],
  [['symbolic-ref'], symbolicRef],
  [['reset'], reset],
  [['reflog'], reflog],
  [['gc', 'maintenance'], gc],
  [['prune'], ({ w, r }) => w.block('git-gc-prune', 'git prune', r.text)],
  [['repack'], repack],
  [['worktree'], worktree],
  [['stash'], stash],
  [['config'], config],
  [['notes'], notes],
  [
    ['filter-branch', 'filter-repo'],
    ({ w, r, sub }) => w.block('git-history-rewrite', `git ${sub}`, r.text),
  ],
  [['clone'], clone],
  [['init'], init],
  [['submodule'], submodule],
  [['rebase'], rebase],
  [['archive'], archive],
  [['remote'], remote],
  [['replace'], replace],
  [['fetch'], fetch],
  [['tag'], tag],
  [
    ['log', 'diff', 'show', 'whatchanged', 'range-diff', 'diff-tree', 'diff-index', 'diff-files'],
    outputs,
  ],
  [['format-patch', 'checkout-index'], outputs],
];

const SUBCOMMANDS: ReadonlyMap<string, GitRule> = new Map(
  GIT_RULES.flatMap(([names, rule]) => names.map((n) => [n, rule] as const)),
);

/** One `git SUB …` line handed to the subcommand's rule. */
interface GitCall {
  w: Walker;
  r: Run;
  sub: string;
  /** The words after the subcommand. */
  rest: Field[];
  f: ReturnType<typeof flags>;
  /** True when short option `s` or one of the long options is given. */
  has(s: string, ...long: string[]): boolean;
  /** The folder git runs in (after -C), null when only known at run time. */
  cwd: string | null;
  elsewhere(what: string, p: string | null, gitDir?: boolean): void;
  protectedBranches: readonly string[];
  frame: Frame;
  /** The `-c NAME=VALUE` settings given before the subcommand. */
  settings: readonly string[];
}

/**
 * Refuses git pointed at a place outside the session worktree (or at one only known later). A git
 * folder (`gitDir`) may be the worktree's own `.git` link: git follows it to the session's admin
 * folder.
 */
function placeCheck(w: Walker, r: Run): (what: string, p: string | null, gitDir?: boolean) => void {
  return (what, p, gitDir = false) => {
    if (p === null) return w.block('unresolved', `${what} is only known when it runs`, r.text);
    const { frame } = w.session;
    const place = placeOf(frame, p, true);
    if (gitDir && place === 'worktree-git' && p === path.join(frame.worktree, '.git')) return;
    if (place === 'inside' || place === 'worktree-root' || scratchRepo(frame, p)) return;
    const note = whose(frame, p);
    w.block(
      'git-elsewhere',
      `${what} is ${p}, outside the session worktree${note ? ` (${note})` : ''}`,
      r.text,
    );
  };
}

/**
 * Reads git's global options (before the subcommand): -C and --git-dir/--work-tree must stay in
 * the worktree, `-c` settings git runs as shell code are walked, `-c alias.X=` is remembered.
 * Returns where the subcommand is, the folder git runs in and the aliases, or null when the line
 * is settled (--version, --help, or a refusal the repository allowed).
 */
function globalOptions(
  w: Walker,
  args: Field[],
  r: Run,
  elsewhere: (what: string, p: string | null, gitDir?: boolean) => void,
): { end: number; cwd: string | null; aliases: Map<string, string>; settings: string[] } | null {
  let cwd = r.scope.cwd;
  const aliases = new Map<string, string>();
  const settings: string[] = [];
  const unresolved = (detail: string): null => {
    w.block('unresolved', detail, r.text);
    return null;
  };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    const v = a.value;
    if (a.dynamic) return unresolved(`git gets ${v}, only known when it runs`);
    if (!v.startsWith('-')) break;
    const [opt, inline] =
      v.startsWith('--') && v.includes('=')
        ? [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]
        : [v, undefined];
    if (
      opt === '--version' ||
      opt === '--help' ||
      opt === '--html-path' ||
      opt === '--man-path' ||
      opt === '--info-path'
    )
      return null;
    let value: Field | undefined;
    if (inline !== undefined) value = { ...a, value: inline };
    else if (GLOBAL_WITH_VALUE.has(opt)) value = args[++i];
    else if (opt.startsWith('-C') && opt.length > 2) value = { ...a, value: opt.slice(2) };
    else if (opt.startsWith('-c') && opt.length > 2) value = { ...a, value: opt.slice(2) };
    if (opt === '-C' || (opt.startsWith('-C') && !opt.startsWith('--'))) {
      if (!value || value.dynamic)
        return unresolved('git -C gets a folder only known when it runs');
      cwd = resolveIn(value, cwd);
      elsewhere(`git -C ${value.value}`, cwd);
    } else if (opt === '--git-dir' || opt === '--work-tree') {
      if (!value || value.dynamic)
        return unresolved(`git ${opt} gets a path only known when it runs`);
      elsewhere(`git ${opt}`, resolveIn(value, cwd), opt === '--git-dir');
    } else if (
      opt === '-c' ||
      opt === '--config-env' ||
      (opt.startsWith('-c') && !opt.startsWith('--'))
    ) {
      if (!value) continue;
      if (opt === '--config-env') value = configEnv(value, r);
      if (value.dynamic) return unresolved(`git ${opt} gets a setting only known when it runs`);
      const m = /^alias\.([^=]+)=(.*)$/s.exec(value.value);
      if (m) aliases.set(m[1]!, m[2]!);
      settings.push(value.value);
      const run = SHELL_SETTINGS.exec(value.value);
      if (run)
        w.shellString(
          { ...value, value: run[2]!.replace(/^!/, '') },
          { ...r, scope: { cwd, vars: r.scope.vars } },
          [],
        );
      if (/^core\.worktree=/i.test(value.value))
        elsewhere(
          'git -c core.worktree',
          resolveIn({ ...value, value: value.value.slice(value.value.indexOf('=') + 1) }, cwd),
        );
    }
  }
  return { end: i, cwd, aliases, settings };
}

/**
 * `--config-env=NAME=VAR` as the `-c NAME=VALUE` it stands for: VAR's value when the command sets
 * it; unknown (dynamic) when the setting is one whose value matters (shell code, an alias, the
 * work tree, gc's expiry), else the name with an empty value.
 */
function configEnv(value: Field, r: Run): Field {
  const k = value.value.lastIndexOf('=');
  if (k < 0) return value;
  const name = value.value.slice(0, k);
  const v = r.env.get(value.value.slice(k + 1));
  if (typeof v === 'string') return { ...value, value: `${name}=${v}` };
  const matters = SHELL_SETTINGS.test(`${name}=`) || /^(alias\.|core\.worktree$|gc\.)/i.test(name);
  return { ...value, value: `${name}=`, dynamic: matters };
}

/** Variables that send git elsewhere, or that git runs as shell code (editors, pagers, ssh). */
function checkEnvironment(
  w: Walker,
  r: Run,
  cwd: string | null,
  elsewhere: (what: string, p: string | null, gitDir?: boolean) => void,
): void {
  for (const name of GIT_PLACE_VARS) {
    if (!r.env.has(name)) continue;
    const v = r.env.get(name);
    elsewhere(
      name,
      v === null || v === undefined ? null : path.resolve(cwd ?? '/', v),
      name === 'GIT_DIR',
    );
  }
  // Settings given through the environment: the guard does not read their encoding.
  for (const name of ['GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'])
    if (r.env.has(name))
      w.block('unresolved', `git reads settings from ${name}; pass them with git -c`, r.text);
  // Variables whose value git runs as a shell command.
  for (const name of [
    'GIT_SSH_COMMAND',
    'GIT_EDITOR',
    'GIT_SEQUENCE_EDITOR',
    'GIT_PAGER',
    'GIT_EXTERNAL_DIFF',
    'GIT_ASKPASS',
    'EDITOR',
    'VISUAL',
    'PAGER',
  ]) {
    if (!r.env.has(name)) continue;
    const v = r.env.get(name);
    w.shellString(
      v === null || v === undefined
        ? { value: `$${name}`, dynamic: true, glob: false }
        : { value: v, dynamic: false, glob: false },
      { ...r, scope: { cwd, vars: r.scope.vars } },
      [],
    );
  }
}

/** The notes ref git would use from the environment (GIT_NOTES_REF), if set. */
function notesRefOf(r: Run): string | undefined {
  const v = r.env.get('GIT_NOTES_REF');
  return v === null ? 'hagent' : (v ?? undefined); // unknown: taken as hagent's, to be safe
}

/** The word after the first of `names` (or glued to it: `-Bname`). */
function optionAfter(args: readonly Field[], names: readonly string[]): string | undefined {
  for (let k = 0; k < args.length; k++) {
    const v = args[k]!.value;
    for (const n of names) {
      if (v === n) return args[k + 1]?.value;
      if (!n.startsWith('--') && v.startsWith(n) && v.length > n.length) return v.slice(n.length);
      if (n.startsWith('--') && v.startsWith(`${n}=`)) return v.slice(n.length + 1);
    }
  }
  return undefined;
}
