/**
 * The walk over a parsed command: every statement, pipeline, list and compound command, every
 * command and process substitution (they run), heredocs fed to shells, and the strings of
 * `bash -c`, `eval`, `xargs`, `find -exec`, `env -S`, `alias`, `trap`, `watch`, git aliases,
 * re-parsed and walked the same way. It keeps the folder (`cd`) and the variables a command set,
 * strips launcher prefixes (sudo, doas, env, command, nohup, timeout, nice, …) and reduces
 * executable paths to their names, then hands each command line to the verb rules.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  forEachChild,
  parse,
  type Command,
  type ParsedScript,
  type Redirection,
  type Script,
  type Statement,
  type SyntaxNode,
  type Word,
} from 'unbash';
import { resolveIn } from './args.js';
import {
  checkHagent,
  isHagentName,
  namesMarker,
  nodeScriptIndex,
  refuseMarkerChange,
} from './hagent.js';
import { checkInlineCode, INTERPRETERS } from './interp.js';
import { AGENT_MARKER } from '../agents/marker.js';
import { isLineFilter, listedPaths } from './lists.js';
import { globBase, globRegExp, placeOf, whose, type Frame, type Place } from './paths.js';
import { GUARD_HINTS, GUARD_RULES, type GuardRule } from './rules.js';
import { VERBS } from './verbs.js';
import {
  expandAssignment,
  expandWord,
  mayBeOptions,
  type ExpandScope,
  type Field,
  type Vars,
} from './words.js';

/** Thrown inside the walk at the first refusal; turned into a verdict by index.ts. */
export class Blocked {
  constructor(
    readonly rule: GuardRule,
    readonly reason: string,
    readonly hint: string,
    readonly command: string,
  ) {}
}

/** What the walk knows at a point of the script. */
export interface Scope {
  /** The working folder, or null after `cd $X` (unknown). */
  cwd: string | null;
  vars: Vars;
}

/** What a pipe or a heredoc feeds a command. */
export interface Stdin {
  /** Known text (echo/printf of literals, a heredoc, a here-string). */
  literal?: string;
  /** Paths standing for what a producer lists (find ROOT, ls DIR): what xargs will append. */
  paths?: string[];
  /** Fed by a pipe whose output is unknown. */
  unknown?: boolean;
}

/** One command line ready for the verb rules. */
export interface Run {
  argv: Field[];
  scope: Scope;
  /** Variables of this command's environment (the scope's plus its own prefix assignments). */
  env: Vars;
  stdin: Stdin | null;
  /** Source text of the command, for the verdict. */
  text: string;
  depth: number;
}

/** The session facts the rules need. */
export interface Session {
  frame: Frame;
  protectedBranches: readonly string[];
  allow: ReadonlySet<string>;
}

const MAX_DEPTH = 16;
const MAX_LOOP = 32;

/** Words that make a parse error worth refusing: the command may be one of these in disguise. */
const RISKY_WORDS = new RegExp(
  `\\b(${[
    ...['rm', 'rmdir', 'git', 'dd', 'mv', 'cp', 'find', 'xargs', 'eval', 'exec', 'sh', 'bash'],
    ...['zsh', 'dash', 'chmod', 'chown', 'truncate', 'shred', 'tee', 'sudo', 'doas', 'env'],
    ...['mkfs\\S*', 'rsync', 'unlink', 'ln', 'install', 'python\\d*', 'node', 'perl', 'ruby'],
  ].join('|')})\\b|>`,
);

export class Walker {
  /** Sees every command line before its rule (tests compare the expansion with bash's). */
  observe?: (r: Run) => void;

  /**
   * Code that runs later than where it is written (trap handlers): checked once the script is
   * walked.
   */
  private readonly deferred: (() => void)[] = [];

  /**
   * Symlinks the command makes itself (`ln -s ~ h`), link → target, followed like those on disk.
   */
  private readonly links = new Map<string, string>();

  constructor(readonly session: Session) {}

  /** Checks `check` once the whole script is walked (code that runs later than written). */
  defer(check: () => void): void {
    this.deferred.push(check);
  }

  /** Records a symlink the command makes, so later paths through it are followed. */
  addLink(link: string, target: string): void {
    this.links.set(link, target);
  }

  /** Refuses (throws Blocked) unless the repository relaxed this rule. */
  block(rule: GuardRule, detail: string, text: string): void {
    if (this.session.allow.has(rule)) return;
    throw new Blocked(rule, `${GUARD_RULES[rule]}: ${detail}`, GUARD_HINTS[rule], text.trim());
  }

  /** Parses `source` and walks it. Parse errors next to a risky word refuse (fail closed). */
  source(source: string, scope: Scope, depth: number, stdin: Stdin | null = null): void {
    if (depth > MAX_DEPTH)
      this.block(
        'unresolved',
        'the command nests shells or substitutions too deeply to follow',
        source,
      );
    const ast = parse(source);
    this.script(ast, source, scope, depth, stdin);
    if (depth === 0) for (let k = 0; k < this.deferred.length; k++) this.deferred[k]!();
  }

  script(
    ast: ParsedScript | Script,
    source: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null = null,
  ): void {
    const src = ast.source ?? source;
    const errors = (ast as ParsedScript).errors;
    for (const st of ast.commands) this.statement(st, src, scope, depth, stdin);
    if (errors?.length && RISKY_WORDS.test(src)) {
      this.block('unresolved', `the shell parser could not read it (${errors[0]!.message})`, src);
    }
  }

  private statement(
    st: Statement,
    src: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null,
  ): void {
    this.node(st.command, src, scope, depth, stdin);
  }

  private expandScope(scope: Scope, src: string, depth: number): ExpandScope {
    return {
      vars: scope.vars,
      cwd: scope.cwd,
      home: this.session.frame.home,
      tmp: this.session.frame.temps[0],
      substitute: (script) => this.substituteOutput(script, src, scope, depth),
    };
  }

  /**
   * The output of `$(…)` when it is knowable without running anything: echo/printf of literals,
   * pwd, dirname/basename/realpath of literals, mktemp (a temp file), date (a word), git's top
   * level.
   */
  private substituteOutput(
    script: Script | undefined,
    src: string,
    scope: Scope,
    depth: number,
  ): string | null {
    const st = script?.commands;
    if (!script || st?.length !== 1) return null;
    if (st[0]!.command.type === 'Pipeline')
      return this.listedBy(st[0]!.command.commands, script.source ?? src, scope, depth);
    if (st[0]!.command.type !== 'Command') return null;
    const cmd = st[0]!.command;
    if (!cmd.name || cmd.prefix.length) return null;
    const es = this.expandScope(scope, script.source ?? src, depth + 1);
    const argv: Field[] = [];
    for (const a of cmd.suffix) {
      if (a.type !== 'Word') return null;
      argv.push(...expandWord(a, es));
    }
    if (argv.some((f) => f.dynamic)) return null;
    const name = cmd.name.value;
    const words = argv.map((f) => f.value);
    if (name === 'echo') return words.filter((w, i) => !(i === 0 && /^-[neE]+$/.test(w))).join(' ');
    if (name === 'printf' && words.length && !words[0]!.includes('%'))
      return words[0]!.replace(/\\n/g, '\n');
    if (name === 'pwd') return scope.cwd;
    if (name === 'dirname' && words.length === 1) return path.posix.dirname(words[0]!);
    if (name === 'basename' && (words.length === 1 || words.length === 2))
      return path.posix.basename(words[0]!, words[1]);
    if (name === 'realpath' && words.length === 1 && scope.cwd)
      return path.resolve(scope.cwd, words[0]!);
    // date prints digits, letters and separators of its format: a word, no folder, unless the
    // format has one.
    if (name === 'date' && !words.some((w2) => w2.includes('/') && w2.startsWith('+')))
      return 'date';
    // mktemp makes its file in the temp folder unless told otherwise (-p DIR, a template with a
    // folder).
    if (name === 'mktemp' && !words.some((w2) => w2.includes('/') || /^(-p|--tmpdir)/.test(w2)))
      return path.join(this.session.frame.temps[0]!, 'tmp.guard');
    if (
      name === 'git' &&
      words.join(' ') === 'rev-parse --show-toplevel' &&
      scope.cwd &&
      ['inside', 'worktree-root'].includes(placeOf(this.session.frame, scope.cwd, true))
    )
      return this.session.frame.worktree;
    return listedPaths(name, words, scope.cwd)?.join('\n') ?? null;
  }

  /**
   * The output of a pipeline inside `$(…)` when it is a list of paths: a lister, then only line
   * filters (`git diff --name-only | grep '\.ts$'`). Null otherwise.
   */
  private listedBy(
    commands: readonly SyntaxNode[],
    src: string,
    scope: Scope,
    depth: number,
  ): string | null {
    let feed: Stdin | null = null;
    for (const c of commands) {
      feed = this.producedBy(c, scope, src, depth + 1, feed);
      if (!feed.paths) return null;
    }
    return feed?.paths?.join('\n') ?? null;
  }

  /** Walks every command/process substitution below `node` (they run before the command). */
  private substitutions(node: SyntaxNode, src: string, scope: Scope, depth: number): void {
    forEachChild(node, (child) => {
      if (child.type === 'Script')
        this.script(child, src, { cwd: scope.cwd, vars: new Map(scope.vars) }, depth + 1);
      else this.substitutions(child, src, scope, depth);
    });
  }

  private node(
    node: SyntaxNode,
    src: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null,
  ): void {
    switch (node.type) {
      case 'Command':
        return this.command(node, src, scope, depth, stdin);
      case 'Pipeline': {
        let feed: Stdin | null = stdin;
        node.commands.forEach((c, i) => {
          const sub: Scope =
            node.commands.length > 1 ? { cwd: scope.cwd, vars: new Map(scope.vars) } : scope;
          const input = i === 0 ? feed : (feed ?? { unknown: true });
          this.node(c, src, sub, depth, input);
          feed = this.producedBy(c, sub, src, depth, input);
        });
        return;
      }
      case 'AndOr':
        for (const c of node.commands) this.node(c, src, scope, depth, stdin);
        return;
      case 'Subshell':
        return this.list(
          node.body.commands,
          src,
          { cwd: scope.cwd, vars: new Map(scope.vars) },
          depth,
          stdin,
        );
      case 'BraceGroup':
        return this.list(node.body.commands, src, scope, depth, stdin);
      case 'For':
      case 'Select':
        return this.loop(node, src, scope, depth, stdin);
      case 'Function':
        // The body is checked as if it ran: a function is defined to be called.
        return this.node(
          node.body,
          src,
          { cwd: scope.cwd, vars: new Map(scope.vars) },
          depth,
          null,
        );
      case 'Redirected':
        for (const r of node.redirects) this.substitutions(r, src, scope, depth);
        this.redirects(node.redirects, src, scope, depth, `${src.slice(node.pos, node.end)}`);
        return this.node(
          node.command,
          src,
          scope,
          depth,
          this.fedBy(node.redirects, scope, src, depth) ?? stdin,
        );
      case 'CompoundList':
        return this.list(node.commands, src, scope, depth, stdin);
      case 'Statement':
        return this.statement(node, src, scope, depth, stdin);
      default:
        // If, While, Case, Coproc, tests, arithmetic: walk their lists in order, and the
        // substitutions in their words.
        forEachChild(node, (child) => {
          if (NESTED.has(child.type)) {
            this.node(child, src, scope, depth, stdin);
          } else if (child.type === 'Script') {
            this.script(child, src, { cwd: scope.cwd, vars: new Map(scope.vars) }, depth + 1);
          } else this.substitutions(child, src, scope, depth);
        });
    }
  }

  /**
   * A for/select loop's body is walked once per value of the loop variable (null when only known
   * when it runs, or without a word list), for the first MAX_LOOP values; with more, once more with
   * the variable unknown.
   */
  private loop(
    node: Extract<SyntaxNode, { type: 'For' | 'Select' }>,
    src: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null,
  ): void {
    const es = this.expandScope(scope, src, depth);
    this.substitutions(node.name, src, scope, depth);
    const values: (string | null)[] = [];
    if (node.wordlist) {
      for (const w of node.wordlist) {
        this.substitutions(w, src, scope, depth);
        for (const f of expandWord(w, es)) values.push(f.dynamic ? null : f.value);
      }
    } else values.push(null);
    const name = node.name.value;
    for (const v of values.slice(0, MAX_LOOP)) {
      scope.vars.set(name, v);
      this.list(node.body.commands, src, scope, depth, stdin);
    }
    if (values.length > MAX_LOOP) {
      scope.vars.set(name, null);
      this.list(node.body.commands, src, scope, depth, stdin);
    }
  }

  private list(
    list: readonly Statement[],
    src: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null,
  ): void {
    for (const st of list) this.statement(st, src, scope, depth, stdin);
  }

  /** What a pipeline member writes on stdout, as far as it is known. */
  private producedBy(
    node: SyntaxNode,
    scope: Scope,
    src: string,
    depth: number,
    input: Stdin | null,
  ): Stdin {
    if (node.type !== 'Command' || !node.name) return { unknown: true };
    const es = this.expandScope(scope, src, depth);
    const argv = [node.name, ...node.suffix]
      .filter((a): a is Word => a.type === 'Word')
      .flatMap((w) => expandWord(w, es));
    if (argv.some((f) => f.dynamic) || argv.length === 0) return { unknown: true };
    const name = path.basename(argv[0]!.value);
    const args = argv.slice(1).map((f) => f.value);
    if (name === 'echo')
      return { literal: args.filter((a, i) => !(i === 0 && /^-[neE]+$/.test(a))).join(' ') };
    if (name === 'printf' && args.length && !args[0]!.includes('%'))
      return { literal: args[0]!.replace(/\\n/g, '\n') };
    const paths = listedPaths(name, args, scope.cwd);
    if (paths) return { paths };
    // grep PATTERN, sort, head… pass a list of paths on as it came.
    if (input?.paths && isLineFilter(name, args)) return input;
    return { unknown: true };
  }

  /** Heredocs and here-strings give a command known input. */
  private fedBy(
    redirects: readonly Redirection[],
    scope: Scope,
    src: string,
    depth: number,
  ): Stdin | null {
    for (const r of redirects) {
      if (
        r.type === 'Redirect' &&
        (r.operator === '<' || r.operator === '<>') &&
        (!r.descriptor || (r.descriptor.type === 'FileDescriptor' && r.descriptor.value === 0))
      )
        return { unknown: true };
      if (r.type === 'HereDoc') return { literal: r.body.text };
      if (r.type === 'HereString' && r.target) {
        const v = expandAssignment(r.target, this.expandScope(scope, src, depth));
        return v === null ? { unknown: true } : { literal: v };
      }
    }
    return null;
  }

  /** Every output redirection must land inside the worktree, on a device, or in scratch space. */
  private redirects(
    redirects: readonly Redirection[],
    src: string,
    scope: Scope,
    depth: number,
    text: string,
  ): void {
    const es = this.expandScope(scope, src, depth);
    for (const r of redirects) {
      if (r.type !== 'Redirect' || !r.target) continue;
      const writes =
        r.operator === '>' ||
        r.operator === '>>' ||
        r.operator === '>|' ||
        r.operator === '&>' ||
        r.operator === '&>>' ||
        r.operator === '<>' ||
        (r.operator === '>&' && !/^(\d+|-)$/.test(r.target.value));
      if (!writes) continue;
      const fields = expandWord(r.target, es);
      for (const f of fields)
        this.checkWrite(f, scope, `the redirection ${r.operator} ${r.target.text}`, text);
    }
  }

  private command(
    cmd: Command,
    src: string,
    scope: Scope,
    depth: number,
    stdin: Stdin | null,
  ): void {
    const text = src.slice(cmd.pos, cmd.end);
    this.substitutions(cmd, src, scope, depth);
    const es = this.expandScope(scope, src, depth);
    const env: Vars = new Map(scope.vars);
    for (const p of cmd.prefix) {
      if (p.type !== 'Assignment') continue;
      if (namesMarker(p.name)) refuseMarkerChange(this, `the assignment ${p.name}=`, text);
      const v = p.value.type === 'Word' ? expandAssignment(p.value, es) : null;
      env.set(p.name, v);
    }
    this.redirects(cmd.redirects, src, scope, depth, text);
    if (!cmd.name) {
      // Plain assignments stay for the rest of the script.
      for (const [k, v] of env) if (scope.vars.get(k) !== v) scope.vars.set(k, v);
      return;
    }
    const argv: Field[] = [];
    for (const a of [cmd.name, ...cmd.suffix]) {
      if (a.type === 'Word') argv.push(...expandWord(a, es));
      else if (a.type === 'Assignment') {
        const v = a.value.type === 'Word' ? expandAssignment(a.value, es) : null;
        argv.push(
          v === null
            ? { value: a.text, dynamic: true, glob: false }
            : { value: `${a.name}=${v}`, dynamic: false, glob: false },
        );
      }
    }
    this.run({
      argv,
      scope,
      env,
      stdin: this.fedBy(cmd.redirects, scope, src, depth) ?? stdin,
      text,
      depth,
    });
  }

  /**
   * A command line after expansion: refuses names and options only known when it runs, then
   * applies the verb's rule (VERBS), or the generic one of shells, interpreters and disk tools.
   */
  run(r: Run): void {
    this.observe?.(r);
    const { argv } = r;
    if (argv.length === 0) return;
    const head = argv[0]!;
    if (head.dynamic)
      return this.block(
        'unresolved',
        `the command name ${head.value} is only known when it runs`,
        r.text,
      );
    const name = path.basename(head.value);
    const args = argv.slice(1);
    const rest = (i: number, patch: Partial<Run> = {}): void =>
      this.run({ ...r, ...patch, argv: args.slice(i) });
    if (WRITERS.has(name)) {
      const loose = args.find(mayBeOptions);
      if (loose)
        return this.block(
          'unresolved',
          `${name} gets ${loose.value}, which may expand to options or paths ` +
            'only known when it runs',
          r.text,
        );
    }
    if (name === 'node' || name === 'nodejs' || name === 'bun') {
      const script = nodeScriptIndex(args);
      if (script >= 0) return checkHagent(this, args.slice(script + 1), r);
    }
    if (isHagentName(name)) return checkHagent(this, args, r);
    const verb = VERBS.get(name);
    if (verb) return verb({ w: this, name, args, r, rest });
    if (/^mkfs(\.|$)|^(fdisk|sfdisk|parted|wipefs|mkswap)$/.test(name))
      return this.block('write-outside', `${name} writes a disk or partition`, r.text);
    if (SHELLS.has(name)) return this.shell(name, args, r);
    if (INTERPRETERS.has(name)) return checkInlineCode(this, name, args, r);
  }

  env(args: Field[], r: Run): void {
    const env = new Map(r.env);
    let scope = r.scope;
    let i = 0;
    for (; i < args.length; i++) {
      const a = args[i]!;
      const v = a.value;
      if (a.dynamic)
        return this.block('unresolved', `env reads ${v}, only known when it runs`, r.text);
      if (v === '--') {
        i++;
        break;
      }
      if (
        v === '-S' ||
        v === '--split-string' ||
        v.startsWith('--split-string=') ||
        (/^-[a-zA-Z]*S/.test(v) && !v.startsWith('--'))
      ) {
        let str: string;
        if (v === '-S' || v === '--split-string') str = args[++i]?.value ?? '';
        else if (v.startsWith('--split-string=')) str = v.slice('--split-string='.length);
        else str = v.slice(v.indexOf('S') + 1);
        const fields = splitWords(str, this, r);
        return this.run({ ...r, argv: [...fields, ...args.slice(i + 1)], env, scope });
      }
      if (v === '-u' || v === '--unset') {
        if (args[i + 1] && namesMarker(args[i + 1]!.value))
          refuseMarkerChange(this, `env ${v}`, r.text);
        i++;
        continue;
      }
      if (
        (/^-[a-zA-Z]*u./.test(v) &&
          !v.startsWith('--') &&
          namesMarker(v.slice(v.indexOf('u') + 1))) ||
        (v.startsWith('--unset=') && namesMarker(v.slice(8)))
      )
        refuseMarkerChange(this, `env ${v}`, r.text);
      // env -i: the command starts with an empty environment, the marker dropped with the rest.
      if (
        v === '-' ||
        v === '--ignore-environment' ||
        (/^-[a-zA-Z]*i/.test(v) && !v.startsWith('--'))
      ) {
        env.set(AGENT_MARKER, '');
        continue;
      }
      if (v === '-C' || v === '--chdir' || v.startsWith('--chdir=')) {
        const dir = v.startsWith('--chdir=') ? { ...a, value: v.slice(8) } : args[++i];
        scope = { cwd: dir ? resolveIn(dir, scope.cwd) : null, vars: scope.vars };
        continue;
      }
      if (v.startsWith('-')) continue;
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(v);
      if (m) {
        if (namesMarker(m[1]!)) refuseMarkerChange(this, `env ${m[1]}=`, r.text);
        env.set(m[1]!, m[2]!);
        continue;
      }
      break;
    }
    return this.run({ ...r, argv: args.slice(i), env, scope });
  }

  cd(args: Field[], r: Run): void {
    const target = args.find((a) => !/^-[LPe@]+$/.test(a.value) || a.dynamic);
    if (!target) {
      r.scope.cwd = this.session.frame.home;
      return;
    }
    if (target.value === '-' && !target.dynamic) {
      r.scope.cwd = null;
      return;
    }
    r.scope.cwd = resolveIn(target, r.scope.cwd);
  }

  /** `bash -c STRING [ARG0 ARGS…]`, `sh -lc …`, a shell reading a heredoc or a pipe. */
  private shell(name: string, args: Field[], r: Run): void {
    let i = 0;
    let command = false;
    // -s (and a lone -) read the code from stdin; the words after are its arguments.
    let fromStdin = false;
    for (; i < args.length; i++) {
      const v = args[i]!.value;
      if (args[i]!.dynamic)
        return this.block('unresolved', `${name} gets ${v}, only known when it runs`, r.text);
      if (v === '-') {
        fromStdin = true;
        break;
      }
      if (v === '--') {
        i++;
        break;
      }
      if (
        v === '-o' ||
        v === '+o' ||
        v === '-O' ||
        v === '+O' ||
        v === '--rcfile' ||
        v === '--init-file'
      ) {
        i++;
        continue;
      }
      if (/^-[a-zA-Z]+$/.test(v)) {
        if (v.includes('c')) command = true;
        else if (v.includes('s')) fromStdin = true;
        continue;
      }
      if (v.startsWith('--') || v.startsWith('+')) continue;
      break;
    }
    if (command) {
      const str = args[i];
      if (!str) return;
      return this.shellString(str, r, args.slice(i + 1));
    }
    if (i < args.length && !fromStdin) {
      const file = args[i]!.value;
      // bash <(curl …), sh /dev/stdin: the code comes from somewhere the guard cannot read.
      if (/^\/dev\/(fd\/\d+|stdin)$|^\/proc\/self\/fd\//.test(file)) {
        if (file === '/dev/stdin' && r.stdin?.literal !== undefined)
          return this.source(
            r.stdin.literal,
            { cwd: r.scope.cwd, vars: new Map(r.env) },
            r.depth + 1,
          );
        return this.block(
          'unresolved',
          `${name} runs code from ${file}, which the guard cannot see`,
          r.text,
        );
      }
      return; // a script file: its text is not the command's
    }
    const stdin = r.stdin;
    if (!stdin) return; // an interactive shell
    if (stdin.literal !== undefined)
      return this.source(stdin.literal, { cwd: r.scope.cwd, vars: new Map(r.env) }, r.depth + 1);
    return this.block(
      'unresolved',
      `${name} runs code read from a pipe that the guard cannot see`,
      r.text,
    );
  }

  /** Re-parses a string as shell code, with `$0 $1 …` bound to `positional`. */
  shellString(str: Field, r: Run, positional: Field[]): void {
    if (str.dynamic)
      return this.block('unresolved', `the code ${str.value} is only known when it runs`, r.text);
    const vars: Vars = new Map(r.env);
    positional.forEach((p, k) => vars.set(String(k), p.dynamic ? null : p.value));
    const rest = positional.slice(1);
    vars.set('@', rest.some((p) => p.dynamic) ? null : rest.map((p) => p.value).join(' '));
    vars.set('*', vars.get('@') ?? null);
    vars.set('#', String(rest.length));
    this.source(str.value, { cwd: r.scope.cwd, vars }, r.depth + 1);
  }

  /** `eval WORDS` and `watch WORDS`: the words joined by blanks are shell code. */
  joined(args: Field[], r: Run, sameScope = false): void {
    if (args.length === 0) return;
    const dyn = args.find((a) => a.dynamic);
    if (dyn)
      return this.block('unresolved', `the code ${dyn.value} is only known when it runs`, r.text);
    const code = args.map((a) => a.value).join(' ');
    this.source(
      code,
      sameScope ? r.scope : { cwd: r.scope.cwd, vars: new Map(r.env) },
      r.depth + 1,
    );
  }

  /**
   * `xargs [options] CMD ARGS`: CMD runs with the input's words appended (or put at -I's place).
   */
  xargs(args: Field[], r: Run): void {
    const withValue = [
      '-d',
      '--delimiter',
      '-E',
      '-e',
      '-L',
      '-l',
      '-n',
      '--max-args',
      '-P',
      '--max-procs',
      '-s',
      '--max-chars',
      '-a',
      '--arg-file',
      '-I',
      '--replace',
    ];
    let i = 0;
    let replace: string | null = null;
    let fromFile = false;
    for (; i < args.length; i++) {
      const v = args[i]!.value;
      if (args[i]!.dynamic)
        return this.block('unresolved', `xargs gets ${v}, only known when it runs`, r.text);
      if (v === '--') {
        i++;
        break;
      }
      if (v === '-I' || v === '--replace') {
        replace = args[i + 1]?.value ?? '{}';
        i++;
        continue;
      }
      if (v.startsWith('-I')) {
        replace = v.slice(2);
        continue;
      }
      if (v.startsWith('-i') || v.startsWith('--replace=')) {
        replace = v.includes('=') ? v.slice(v.indexOf('=') + 1) : v.slice(2) || '{}';
        continue;
      }
      if (v === '-a' || v === '--arg-file' || v.startsWith('--arg-file=')) fromFile = true;
      if (withValue.includes(v)) {
        i++;
        continue;
      }
      if (v.startsWith('-')) continue;
      break;
    }
    const cmd = args.slice(i);
    const input = inputFields(fromFile ? { ...r, stdin: { unknown: true } } : r);
    if (cmd.length === 0) return;
    const runs =
      replace === null
        ? [[...cmd, ...input]]
        : input.map((item) =>
            cmd.map((a) =>
              a.value.includes(replace!)
                ? {
                    ...a,
                    value: a.value.split(replace!).join(item.value),
                    dynamic: a.dynamic || item.dynamic,
                  }
                : a,
            ),
          );
    for (const argv of runs) this.run({ ...r, argv, stdin: null });
  }

  /**
   * `find ROOTS… EXPR`: -delete removes below the roots; -exec/-execdir/-ok run a command on what
   * it finds.
   */
  find(args: Field[], r: Run): void {
    let start = 0;
    while (start < args.length && /^-([HLP]|D|O\d*)$/.test(args[start]!.value))
      start += args[start]!.value === '-D' ? 2 : 1;
    args = args.slice(start);
    let i = 0;
    while (i < args.length && !/^[-(!]/.test(args[i]!.value) && args[i]!.value !== ')') i++;
    const roots = i === 0 ? [{ value: '.', dynamic: false, glob: false }] : args.slice(0, i);
    // The options before the roots (-H, -L, -P) are not roots.
    const expr = args.slice(i);
    for (let k = 0; k < expr.length; k++) {
      const v = expr[k]!.value;
      if (
        expr[k]!.dynamic &&
        k > 0 &&
        /^-(exec|execdir|ok|okdir|delete)$/.test(expr[k - 1]?.value ?? '')
      )
        this.block('unresolved', `find's action gets ${v}, only known when it runs`, r.text);
      if (v === '-delete') {
        // find deletes what its tests select below each root; with no test it takes the root too.
        const filtered = expr.some((e) => FIND_TESTS.test(e.value));
        for (const root of roots) {
          if (
            filtered &&
            !root.dynamic &&
            resolveIn(root, r.scope.cwd) === this.session.frame.worktree
          )
            continue;
          this.checkDelete(root, r.scope, true, 'find -delete', r.text);
        }
      }
      if (v === '-fprint' || v === '-fprint0' || v === '-fls' || v === '-fprintf') {
        const f = expr[k + 1];
        if (f) this.checkWrite(f, r.scope, `find ${v}`, r.text);
      }
      if (v === '-exec' || v === '-execdir' || v === '-ok' || v === '-okdir') {
        let end = k + 1;
        while (end < expr.length && expr[end]!.value !== ';' && expr[end]!.value !== '+') end++;
        const sub = expr.slice(k + 1, end);
        for (const root of roots) {
          const found = root.dynamic
            ? root
            : { ...root, value: path.posix.join(root.value, 'found') };
          this.run({
            ...r,
            argv: sub.map((a) =>
              a.value.includes('{}')
                ? {
                    ...a,
                    value: a.value.split('{}').join(found.value),
                    dynamic: a.dynamic || found.dynamic,
                  }
                : a,
            ),
            stdin: null,
          });
        }
        k = end;
      }
    }
  }

  /**
   * A path a command writes (or, with `removes`, takes away, as mv does with its sources).
   * Allowed inside the worktree (not its .git link), on devices, in scratch space, and into the
   * temp folder itself (not taking it away).
   */
  checkWrite(f: Field, scope: Scope, what: string, text: string, removes = false): void {
    const p = this.locate(f, scope, what, removes ? 'rm-outside' : 'write-outside', text);
    if (p === null) return;
    const place = p.place;
    if (place === 'inside' || place === 'device' || place === 'scratch') return;
    if (place === 'worktree-git')
      return this.block('worktree-git', `${what} reaches ${f.value}`, text);
    if (place === 'worktree-root' && removes)
      return this.block('worktree-git', `${what} moves the worktree itself`, text);
    if (place === 'worktree-root') return; // writing into the worktree folder (cp x .)
    // Writing into the temp folder itself (cp -r dist /tmp, tar -C /tmp) makes scratch files.
    if (place === 'temp-root' && !removes) return;
    const note = whose(this.session.frame, p.resolved);
    this.block(
      removes ? 'rm-outside' : 'write-outside',
      `${what} reaches ${p.resolved}${note ? ` (${note})` : ''}`,
      text,
    );
  }

  /** A path a command deletes. Allowed inside the worktree and in scratch space. */
  checkDelete(f: Field, scope: Scope, recursive: boolean, verb: string, text: string): void {
    const p = this.locate(f, scope, verb, 'rm-outside', text);
    if (p === null) return;
    const { place } = p;
    if (place === 'inside' || place === 'device') return;
    if (place === 'scratch' && !(recursive && p.holdsGit)) return;
    if (place === 'worktree-root' || place === 'worktree-git')
      return this.block(
        'worktree-git',
        `${verb} ${f.value} removes ` +
          (place === 'worktree-root' ? 'the session worktree itself' : "the worktree's .git link"),
        text,
      );
    const note =
      place === 'home-or-root'
        ? 'the home folder, / or a folder holding the worktree'
        : whose(this.session.frame, p.resolved);
    this.block('rm-outside', `${verb} reaches ${p.resolved}${note ? ` (${note})` : ''}`, text);
  }

  /**
   * A glob in the temp folder is scratch when what it matches now is: no checkout, nothing
   * holding the worktree. A pattern without a literal start of two characters in the temp
   * folder itself (a lone star there) is not, whatever is there today.
   */
  private scratchGlob(
    base: string,
    pattern: string,
    tempRoot: boolean,
    deeper: boolean,
  ): { place: Place; holdsGit: boolean } {
    if (tempRoot && !/^[^*?[]{2,}/.test(pattern)) return { place: 'outside', holdsGit: false };
    // Matches below the first component are not listed: taken as holding a checkout.
    if (deeper) return { place: 'scratch', holdsGit: true };
    let names: string[];
    try {
      names = readdirSync(base);
    } catch {
      return { place: 'scratch', holdsGit: false };
    }
    const re = globRegExp(pattern);
    let git = false;
    for (const name of names) {
      if (!re.test(name)) continue;
      const place = placeOf(this.session.frame, path.join(base, name), false);
      if (place !== 'scratch')
        return { place: place === 'home-or-root' ? 'home-or-root' : 'outside', holdsGit: false };
      git ||= holdsGit(path.join(base, name));
    }
    return { place: 'scratch', holdsGit: git };
  }

  /**
   * A path with the links this command made replaced by their targets (the last component only when
   * followed).
   */
  private throughLinks(p: string, followLast: boolean): string {
    for (const [link, target] of this.links) {
      if (p === link && followLast) return target;
      if (p.startsWith(`${link}/`)) return target + p.slice(link.length);
    }
    return p;
  }

  private locate(
    f: Field,
    scope: Scope,
    what: string,
    rule: GuardRule,
    text: string,
  ): { place: Place; resolved: string; holdsGit: boolean } | null {
    if (f.dynamic) {
      this.block('unresolved', `${what} gets ${f.value}, only known when it runs`, text);
      return null;
    }
    if (f.value === '' || f.value === '-') return null;
    const named = resolveIn(f, scope.cwd);
    if (named === null) {
      this.block('unresolved', `${what} names ${f.value} after a cd the guard cannot follow`, text);
      return null;
    }
    const abs = this.throughLinks(named, rule !== 'rm-outside' || /\/\.?$/.test(f.value));
    const frame = this.session.frame;
    if (f.glob) {
      const { base, pattern } = globBase(abs);
      const place = placeOf(frame, base, true);
      if (place === 'worktree-root') {
        return {
          place: globRegExp(pattern).test('.git') ? 'worktree-git' : 'inside',
          resolved: abs,
          holdsGit: false,
        };
      }
      if (place === 'temp-root' || place === 'scratch')
        return {
          ...this.scratchGlob(base, pattern, place === 'temp-root', followsOn(abs, pattern)),
          resolved: abs,
        };
      return { place, resolved: abs, holdsGit: false };
    }
    // rm of a symlink removes the link itself, unless a trailing slash makes it its target (rm -rf
    // link/).
    const place = placeOf(frame, abs, rule !== 'rm-outside' || /\/\.?$/.test(f.value));
    return { place, resolved: abs, holdsGit: place === 'scratch' && holdsGit(abs) };
  }
}

/**
 * True when a glob path goes on below its first pattern component (a folder pattern with a path
 * after it).
 */
function followsOn(abs: string, pattern: string): boolean {
  const parts = abs.split('/');
  return parts.indexOf(pattern) < parts.length - 1;
}

function holdsGit(p: string): boolean {
  return existsSync(path.join(p, '.git'));
}

/** Commands that delete or write the paths and options they are given. */
const WRITERS = new Set([
  'rm',
  'rimraf',
  'trash',
  'trash-put',
  'srm',
  'shred',
  'unlink',
  'rmdir',
  'del',
  'mv',
  'cp',
  'install',
  'ln',
  'rsync',
  'scp',
  'tee',
  'touch',
  'mkdir',
  'truncate',
  'mkfifo',
  'mknod',
  'chmod',
  'chown',
  'chgrp',
  'setfacl',
  'chattr',
  'dd',
  'tar',
  'bsdtar',
  'zip',
  '7z',
  '7za',
  'jar',
  'unzip',
  'find',
]);

/** The tests of find that select what `-delete` removes (without one it takes the root too). */
const FIND_TESTS = new RegExp(
  `^-(${[
    ...['i?name', 'i?path', 'i?regex', 'type', 'newer', 'mtime', 'mmin', 'ctime', 'atime'],
    ...['size', 'empty', 'iwholename', 'wholename', 'user', 'group', 'perm', 'links', 'inum'],
    'samefile',
  ].join('|')})$`,
);

/** Nodes below an If, While, Case, … that the walk visits as commands of their own. */
const NESTED: ReadonlySet<string> = new Set([
  'CompoundList',
  'Statement',
  'Elif',
  'CaseItem',
  'Command',
  'Pipeline',
  'AndOr',
  'Subshell',
  'BraceGroup',
  'If',
  'While',
  'For',
  'Case',
  'Redirected',
  'Function',
  'Select',
  'Coproc',
  'ArithmeticFor',
]);

/** Shells whose `-c` string and stdin the guard reads as code. */
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish']);

/** Words of a string as the shell would split it (for `env -S`). */
function splitWords(str: string, w: Walker, r: Run): Field[] {
  const ast = parse(str);
  const st = ast.commands[0]?.command;
  if (!st || st.type !== 'Command') return [];
  const es: ExpandScope = {
    vars: r.env,
    cwd: r.scope.cwd,
    home: w.session.frame.home,
    substitute: () => null,
  };
  const words = [st.name, ...st.suffix].filter((a): a is Word => !!a && a.type === 'Word');
  return words.flatMap((x) => expandWord(x, es));
}

/** What xargs appends: the known input's words, or one name per listed root (a file below it). */
function inputFields(r: Run): Field[] {
  const s = r.stdin;
  if (s?.literal !== undefined) {
    const words = s.literal.split(/\s+/).filter(Boolean);
    return words.map((value) => ({ value, dynamic: false, glob: false }));
  }
  if (s?.paths) return s.paths.map((value) => ({ value, dynamic: false, glob: false }));
  // Input the guard cannot see (a file, an unknown producer, the terminal): its words are unknown.
  return [{ value: '(the words xargs reads)', dynamic: true, glob: false }];
}
