/**
 * The git rules of the guard. Inside the session worktree every change is a hagent commit, so
 * discards there (restore, checkout --, clean, reset --hard HEAD) pass; what is refused is git
 * pointed elsewhere, pushes, and what destroys hagent's safety net: its branches and refs, the
 * reflog, unreachable objects, worktrees, stash entries, shared configuration.
 */
import path from 'node:path';
import { placeOf } from './paths.js';
import { resolveIn, type Run, type Walker } from './walk.js';
import type { Field } from './words.js';

/** Global options of git that take the next word as their value. */
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix', '--list-cmds', '--attr-source']);

/** Variables that send git to another repository or working tree. */
const GIT_PLACE_VARS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY'];

/** Subcommands whose arguments must be known: a dynamic word there could be a force or a delete. */
const DANGEROUS = new Set(['push', 'branch', 'update-ref', 'reset', 'reflog', 'gc', 'prune', 'repack', 'worktree', 'stash', 'config', 'symbolic-ref', 'checkout', 'switch', 'notes', 'filter-branch', 'filter-repo', 'clone', 'init', 'tag']);

/** Splits short-option clusters: `-fu` → `f`, `u`. Long options come back whole. */
function flags(args: readonly Field[]): { short: Set<string>; long: Set<string>; operands: Field[] } {
  const short = new Set<string>();
  const long = new Set<string>();
  const ops: Field[] = [];
  let dashdash = false;
  for (const a of args) {
    const v = a.value;
    if (dashdash || a.dynamic || !v.startsWith('-') || v === '-') { ops.push(a); continue; }
    if (v === '--') { dashdash = true; continue; }
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

/** True for a branch or ref name hagent protects: hagent/*, refs/hagent/*, its notes, HEAD, the target branches. */
export function protectedRef(name: string, protectedBranches: readonly string[]): boolean {
  let n = name.replace(/^\+/, '');
  if (n === 'HEAD' || n === '@') return true;
  if (n.startsWith('refs/hagent/') || n === 'refs/notes/hagent') return true;
  n = n.replace(/^refs\/heads\//, '').replace(/^heads\//, '');
  if (n.startsWith('hagent/')) return true;
  if (protectedBranches.includes(n)) return true;
  if (/[*?[]/.test(n)) {
    const re = new RegExp(`^${n.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
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
export function checkGit(w: Walker, args: Field[], r: Run): void {
  const { frame, protectedBranches } = w.session;
  let cwd = r.scope.cwd;
  const aliases = new Map<string, string>();
  const elsewhere = (what: string, p: string | null): void => {
    if (p === null) return w.block('unresolved', `${what} is only known when it runs`, r.text);
    const place = placeOf(frame, p, true);
    if (place !== 'inside' && place !== 'worktree-root') w.block('git-elsewhere', `${what} is ${p}, outside the session worktree`, r.text);
  };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    const v = a.value;
    if (a.dynamic) return w.block('unresolved', `git gets ${v}, only known when it runs`, r.text);
    if (!v.startsWith('-')) break;
    const [opt, inline] = v.startsWith('--') && v.includes('=') ? [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)] : [v, undefined];
    if (opt === '--version' || opt === '--help' || opt === '--html-path' || opt === '--man-path' || opt === '--info-path') return;
    let value: Field | undefined;
    if (inline !== undefined) value = { ...a, value: inline };
    else if (GLOBAL_WITH_VALUE.has(opt)) value = args[++i];
    else if (opt.startsWith('-C') && opt.length > 2) value = { ...a, value: opt.slice(2) };
    else if (opt.startsWith('-c') && opt.length > 2) value = { ...a, value: opt.slice(2) };
    if (opt === '-C' || (opt.startsWith('-C') && !opt.startsWith('--'))) {
      if (!value || value.dynamic) return w.block('unresolved', 'git -C gets a folder only known when it runs', r.text);
      cwd = resolveIn(value, cwd);
      elsewhere(`git -C ${value.value}`, cwd);
    } else if (opt === '--git-dir' || opt === '--work-tree') {
      if (!value || value.dynamic) return w.block('unresolved', `git ${opt} gets a path only known when it runs`, r.text);
      elsewhere(`git ${opt}`, resolveIn(value, cwd));
    } else if (opt === '-c' || (opt.startsWith('-c') && !opt.startsWith('--'))) {
      if (!value) continue;
      if (value.dynamic) return w.block('unresolved', 'git -c gets a setting only known when it runs', r.text);
      const m = /^alias\.([^=]+)=(.*)$/s.exec(value.value);
      if (m) aliases.set(m[1]!, m[2]!);
      // Settings whose value git runs as a shell command.
      const run = /^(core\.sshcommand|core\.pager|core\.editor|core\.fsmonitor|sequence\.editor|diff\.external|credential\.helper|pager\.[^=]+|gpg\.program|core\.askpass)=(.*)$/is.exec(value.value);
      if (run) w.shellString({ ...value, value: run[2]!.replace(/^!/, '') }, { ...r, scope: { cwd, vars: r.scope.vars } }, []);
      if (/^core\.worktree=/i.test(value.value)) elsewhere('git -c core.worktree', resolveIn({ ...value, value: value.value.slice(value.value.indexOf('=') + 1) }, cwd));
    }
  }
  for (const name of GIT_PLACE_VARS) {
    if (!r.env.has(name)) continue;
    const v = r.env.get(name);
    elsewhere(name, v === null || v === undefined ? null : path.resolve(cwd ?? '/', v));
  }
  const subField = args[i];
  if (!subField) return;
  const rest = args.slice(i + 1);
  let sub = subField.value;
  const alias = aliases.get(sub);
  if (alias !== undefined) {
    if (alias.startsWith('!')) return w.shellString({ value: alias.slice(1), dynamic: false, glob: false }, { ...r, scope: { cwd, vars: r.scope.vars } }, [{ value: 'git', dynamic: false, glob: false }, ...rest]);
    const words = alias.split(/\s+/).filter(Boolean).map((value) => ({ value, dynamic: false, glob: false }));
    return checkGit(w, [...args.slice(0, i), ...words, ...rest], r);
  }
  if (sub === 'help' || sub === 'version' || rest.some((a) => a.value === '--help')) return;
  // git run from a folder outside the worktree works on another repository.
  if (sub !== 'clone' && sub !== 'init' && sub !== 'ls-remote') elsewhere('the folder git runs in', cwd);
  if (DANGEROUS.has(sub)) requireKnown(w, sub, rest, r);
  const f = flags(rest);
  const has = (s: string, ...long: string[]): boolean => f.short.has(s) || long.some((l) => f.long.has(l));
  switch (sub) {
    case 'push': {
      const force = has('f', '--force', '--force-with-lease', '--force-if-includes', '--mirror', '--prune', '--delete') || f.short.has('d')
        || f.operands.some((o) => o.value.startsWith('+') || o.value.startsWith(':') || /^[^:]*:\+/.test(o.value));
      if (force) return w.block('git-push-force', `git push ${rest.map((x) => x.value).join(' ')}`, r.text);
      return w.block('git-push', `git push ${rest.map((x) => x.value).join(' ')}`.trim(), r.text);
    }
    case 'branch': {
      const del = has('d', '--delete') || has('D');
      const move = has('m', '--move') || has('M');
      const copy = has('c', '--copy') || has('C');
      const force = has('f', '--force') || has('D') || has('M') || has('C');
      const names = f.operands;
      if (del) { for (const n of names) if (protectedRef(n.value, protectedBranches)) return w.block('git-protected-ref', `git branch deletes ${n.value}`, r.text); return; }
      if (move || copy) {
        if (move && names.length <= 1) return w.block('git-protected-ref', 'git branch -m renames the current branch, the session branch hagent/<id>', r.text);
        for (const n of move ? names : names.slice(-1)) if (protectedRef(n.value, protectedBranches)) return w.block('git-protected-ref', `git branch ${move ? 'renames' : 'overwrites'} ${n.value}`, r.text);
        return;
      }
      if (force && names[0] && protectedRef(names[0].value, protectedBranches)) return w.block('git-protected-ref', `git branch -f moves ${names[0].value}`, r.text);
      return;
    }
    case 'checkout': case 'switch': {
      const reset = optionAfter(rest, sub === 'checkout' ? ['-B'] : ['-C', '--force-create']);
      if (reset && protectedRef(reset, protectedBranches)) return w.block('git-protected-ref', `git ${sub} resets the branch ${reset}`, r.text);
      return;
    }
    case 'update-ref': {
      if (f.long.has('--stdin')) return w.block('unresolved', 'git update-ref --stdin reads its ref updates from input the guard cannot see', r.text);
      const ref = f.operands[0];
      if (ref && protectedRef(ref.value, protectedBranches)) return w.block('git-protected-ref', `git update-ref ${has('d') ? 'deletes' : 'moves'} ${ref.value}`, r.text);
      return;
    }
    case 'symbolic-ref': {
      if (f.operands.length >= 2 || has('d', '--delete')) return w.block('git-protected-ref', 'git symbolic-ref repoints HEAD away from the session branch', r.text);
      return;
    }
    case 'tag': return;
    case 'reset': {
      if (!has('', '--hard', '--keep', '--merge')) return;
      const rev = f.operands[0]?.value;
      if (rev === undefined || rev === 'HEAD' || rev === '@') return;
      return w.block('git-reset-hard', `git reset ${[...f.long].join(' ')} ${rev}`, r.text);
    }
    case 'reflog': {
      const action = f.operands[0]?.value;
      if (action === 'expire' || action === 'delete' || action === 'drop') return w.block('git-reflog-expire', `git reflog ${action}`, r.text);
      return;
    }
    case 'gc': {
      if ([...f.long].some((l) => l === '--prune')) return w.block('git-gc-prune', 'git gc --prune', r.text);
      return;
    }
    case 'prune': return w.block('git-gc-prune', 'git prune', r.text);
    case 'repack': {
      if (f.short.has('a') && f.short.has('d') && !f.short.has('A') && !f.long.has('--keep-unreachable')) return w.block('git-gc-prune', 'git repack -a -d drops unreachable objects', r.text);
      return;
    }
    case 'worktree': {
      const action = f.operands[0]?.value;
      if (action === 'remove' || action === 'prune' || action === 'move') return w.block('git-worktree', `git worktree ${action}`, r.text);
      if (action === 'add') {
        const dest = f.operands[1];
        if (dest) w.checkWrite(dest, { cwd, vars: r.scope.vars }, 'git worktree add', r.text);
      }
      return;
    }
    case 'stash': {
      const action = f.operands[0]?.value;
      if (action === 'drop' || action === 'clear') return w.block('git-stash-drop', `git stash ${action}`, r.text);
      return;
    }
    case 'config': {
      const reads = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '--show-origin', '--show-scope'];
      const writes = ['--unset', '--unset-all', '--add', '--replace-all', '--rename-section', '--remove-section', '--edit'];
      const first = f.operands[0]?.value;
      if (first === 'get' || first === 'list') return;
      if (writes.some((x) => f.long.has(x)) || f.short.has('e') || ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(first ?? '')) return w.block('git-config-write', `git config ${rest.map((x) => x.value).join(' ')}`, r.text);
      if (reads.some((x) => f.long.has(x)) || f.short.has('l')) return;
      if (f.operands.length >= 2) return w.block('git-config-write', `git config ${rest.map((x) => x.value).join(' ')}`, r.text);
      return;
    }
    case 'notes': {
      const action = f.operands[0]?.value;
      if (action === 'remove' || action === 'prune' || action === 'merge') return w.block('git-protected-ref', `git notes ${action} can drop hagent's notes (the patch text of each commit)`, r.text);
      return;
    }
    case 'filter-branch': case 'filter-repo':
      return w.block('git-history-rewrite', `git ${sub}`, r.text);
    case 'clone': {
      const dest = f.operands[1];
      if (dest) w.checkWrite(dest, { cwd, vars: r.scope.vars }, 'git clone', r.text);
      else elsewhere('the folder git clone writes into', cwd);
      return;
    }
    case 'init': {
      const dest = f.operands[0];
      w.checkWrite(dest ?? { value: '.', dynamic: false, glob: false }, { cwd, vars: r.scope.vars }, 'git init', r.text);
      return;
    }
    case 'submodule': {
      const k = rest.findIndex((a) => a.value === 'foreach');
      if (k >= 0) {
        const cmd = rest.slice(k + 1).filter((a) => !a.value.startsWith('--'));
        if (cmd.some((a) => a.dynamic)) return w.block('unresolved', 'git submodule foreach runs code only known when it runs', r.text);
        return w.shellString({ value: cmd.map((a) => a.value).join(' '), dynamic: false, glob: false }, r, []);
      }
      return;
    }
    case 'rebase': {
      for (let k = 0; k < rest.length; k++) {
        const v = rest[k]!.value;
        if (v === '-x' || v === '--exec') { const c = rest[k + 1]; if (c) w.shellString(c, r, []); }
        else if (v.startsWith('--exec=')) w.shellString({ ...rest[k]!, value: v.slice(7) }, r, []);
      }
      return;
    }
    case 'archive': {
      const out = rest.find((a) => a.value.startsWith('--output='));
      const k = rest.findIndex((a) => a.value === '-o' || a.value === '--output');
      const file = out ? { ...out, value: out.value.slice(9) } : k >= 0 ? rest[k + 1] : undefined;
      if (file) w.checkWrite(file, { cwd, vars: r.scope.vars }, 'git archive -o', r.text);
      return;
    }
    default:
      return;
  }
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
