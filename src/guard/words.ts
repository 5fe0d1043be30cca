/**
 * Word expansion as far as it can be known without running anything: quotes removed, ANSI-C
 * strings decoded (the parser does both), `~` and variables whose value the command itself set
 * (or that hagent knows: HOME, PWD, IFS) substituted, unquoted expansions split on blanks as
 * bash does (`rm${IFS}-rf${IFS}/` is three words), brace alternatives expanded, and `$(echo …)`,
 * `$(pwd)` resolved. Anything else (`$X` never set, `$(curl …)`) makes the field *dynamic*: its
 * value is unknown, and the rules refuse a dynamic word where a dangerous verb would read it.
 */
import type { Word, WordPart, DoubleQuotedChild, Script } from 'unbash';
import { patternSource } from './paths.js';

/** One field of a command line after expansion. */
export interface Field {
  /** The expanded text; for a dynamic field, the word's source text (for messages). */
  value: string;
  /** Its value depends on something the guard cannot know. */
  dynamic: boolean;
  /** Holds unquoted glob characters (`*`, `?`, `[`). */
  glob: boolean;
}

/** Variables known while walking; `null` marks one set to something unknown. */
export type Vars = Map<string, string | null>;

/** What expansion needs from the walk: variables, the folder, and resolution of `$(…)`. */
export interface ExpandScope {
  vars: Vars;
  cwd: string | null;
  home: string;
  /** The system temp folder (`$TMPDIR` as the command will see it). */
  tmp?: string;
  /** Output of a command substitution when it is knowable (`echo x`, `pwd`), else null. */
  substitute(script: Script | undefined): string | null;
}

const MAX_FIELDS = 64;

/** The value of a variable, or null when it is unknown. Unset variables the command never saw are unknown. */
export function lookup(name: string, scope: ExpandScope): string | null {
  if (scope.vars.has(name)) return scope.vars.get(name) ?? null;
  if (name === 'HOME') return scope.home;
  if (name === 'PWD') return scope.cwd;
  if (name === 'IFS') return ' \t\n';
  if (name === 'TMPDIR' && scope.tmp) return scope.tmp;
  return null;
}

class Builder {
  fields: Field[] = [];
  private cur = '';
  private started = false;
  dynamic = false;
  glob = false;
  /** Assignments do not split (`X=$Y` keeps blanks). */
  noSplit = false;

  text(s: string): void {
    this.cur += s;
    this.started = true;
  }

  /** Field separators: $IFS when the command set it, else blanks. */
  ifs = ' \t\n';

  /** An unquoted expansion: $IFS characters split it into fields. */
  split(s: string): void {
    if (this.noSplit) return this.text(s);
    if (this.ifs === '') return this.text(s);
    const esc = (chars: string) => chars.replace(/[\]\\^-]/g, '\\$&');
    const white = [...this.ifs].filter((c) => ' \t\n'.includes(c)).join('');
    const other = [...this.ifs].filter((c) => !' \t\n'.includes(c)).join('');
    if (!other) {
      const pieces = s.split(new RegExp(`[${esc(white)}]+`));
      pieces.forEach((piece, i) => {
        if (i > 0 && this.started) this.flush();
        if (piece) this.text(piece);
      });
      return;
    }
    // bash: IFS blanks around a non-blank separator belong to it; each non-blank separator ends a
    // field, so `a,,b` is three fields; blanks at the ends are dropped, a separator at the end
    // makes no empty field.
    const ws = white ? `[${esc(white)}]*` : '';
    let rest = s;
    if (white) {
      const lead = new RegExp(`^[${esc(white)}]+`).exec(rest);
      if (lead) {
        if (this.started) this.flush();
        rest = rest.slice(lead[0].length);
      }
      rest = rest.replace(new RegExp(`[${esc(white)}]+$`), '');
    }
    const pieces = rest.split(
      new RegExp(`${ws}[${esc(other)}]${ws}${white ? `|[${esc(white)}]+` : ''}`),
    );
    pieces.forEach((piece, i) => {
      if (i > 0) {
        this.started = true;
        this.flush();
      }
      if (i < pieces.length - 1 || piece) this.text(piece);
    });
  }

  flush(): void {
    if (this.started) this.fields.push({ value: this.cur, dynamic: false, glob: this.glob });
    this.cur = '';
    this.started = false;
    this.glob = false;
  }
}

/** `${x%pat}`, `${x%%pat}`, `${x#pat}`, `${x##pat}`: the shortest or longest match removed. */
function removeMatch(value: string, operator: string, pat: string): string {
  const src = patternSource(pat, '[\\s\\S]');
  const suffix = operator.startsWith('%');
  const longest = operator.length === 2;
  const candidates: number[] = [];
  for (let k = 0; k <= value.length; k++) {
    const piece = suffix ? value.slice(k) : value.slice(0, k);
    if (new RegExp(`^${src}$`).test(piece)) candidates.push(k);
  }
  if (candidates.length === 0) return value;
  // suffix: the smallest k removes the longest suffix; prefix: the largest k the longest prefix.
  const k = suffix
    ? longest
      ? Math.min(...candidates)
      : Math.max(...candidates)
    : longest
      ? Math.max(...candidates)
      : Math.min(...candidates);
  return suffix ? value.slice(0, k) : value.slice(k);
}

function parameter(
  part: Extract<WordPart, { type: 'ParameterExpansion' }>,
  scope: ExpandScope,
): string | null {
  if (part.index) return null;
  const value = lookup(part.parameter, scope);
  if (part.prefix === '#' && !part.operation) return value === null ? null : String(value.length);
  if (part.prefix) return null;
  const op = part.operation;
  if (!op) return value;
  if (value === null) return null;
  const literal = (w: Word | undefined): string | null => (w ? expandAssignment(w, scope) : '');
  switch (op.type) {
    case 'Default':
      if (op.operator === ':-' || op.operator === '-')
        return value !== '' || op.operator === '-' ? value : literal(op.operand);
      if (op.operator === ':+' || op.operator === '+')
        return value !== '' || op.operator === '+' ? literal(op.operand) : '';
      return value;
    case 'Remove': {
      const pat = literal(op.operand);
      return pat === null ? null : removeMatch(value, op.operator, pat);
    }
    case 'Replace': {
      const pat = literal(op.pattern);
      const rep = literal(op.replacement);
      if (pat === null || rep === null || pat === '') return pat === '' ? value : null;
      const src = patternSource(pat, '[\\s\\S]');
      const anchored =
        op.operator === '/#' ? `^(?:${src})` : op.operator === '/%' ? `(?:${src})$` : src;
      return value.replace(new RegExp(anchored, op.operator === '//' ? 'g' : ''), () => rep);
    }
    case 'CaseModification':
      if (op.operand) return null;
      return op.operator === '^^'
        ? value.toUpperCase()
        : op.operator === ',,'
          ? value.toLowerCase()
          : op.operator === '^'
            ? value.charAt(0).toUpperCase() + value.slice(1)
            : value.charAt(0).toLowerCase() + value.slice(1);
    default:
      return null;
  }
}

function simpleName(text: string): string {
  return text.replace(/^\$\{?/, '').replace(/\}$/, '');
}

function parts(
  b: Builder,
  list: readonly (WordPart | DoubleQuotedChild)[],
  quoted: boolean,
  scope: ExpandScope,
  first: boolean,
): void {
  list.forEach((part, i) => {
    switch (part.type) {
      case 'Literal': {
        let v = part.value;
        if (!quoted && first && i === 0) v = tilde(v, scope);
        b.text(v);
        break;
      }
      case 'SingleQuoted':
      case 'AnsiCQuoted':
        b.text(part.value);
        break;
      case 'DoubleQuoted':
      case 'LocaleString':
        b.text('');
        parts(b, part.parts, true, scope, false);
        break;
      case 'SimpleExpansion':
      case 'ParameterExpansion': {
        const v =
          part.type === 'SimpleExpansion'
            ? lookup(simpleName(part.text), scope)
            : parameter(part, scope);
        if (v === null) b.dynamic = true;
        else if (quoted) b.text(v);
        else b.split(v);
        break;
      }
      case 'CommandExpansion': {
        const v = scope.substitute(part.script);
        if (v === null) b.dynamic = true;
        else if (quoted) b.text(v.replace(/\n+$/, ''));
        else b.split(v);
        break;
      }
      case 'ProcessSubstitution':
        b.text('/dev/fd/63');
        break;
      case 'ArithmeticExpansion':
        b.dynamic = true;
        break;
      case 'Glob':
      case 'ExtendedGlob':
        b.text(part.text);
        if (!quoted) b.glob = true;
        break;
      case 'BraceExpansion':
        b.text(part.text);
        break;
    }
  });
}

/** `~` and `~/x` at the start of an unquoted word become the home folder. */
function tilde(v: string, scope: ExpandScope): string {
  // bash also expands a tilde after the `=` of an argument that looks like an assignment (dd of=~/x).
  const assign = /^([A-Za-z_][A-Za-z0-9_]*=)(~.*)$/s.exec(v);
  if (assign) return assign[1]! + tilde(assign[2]!, scope);
  if (v === '~' || v.startsWith('~/')) return scope.home + v.slice(1);
  // ~user names another user's home (outside anyway); `~:` and the like are no tilde prefix for bash.
  const user = /^~([A-Za-z0-9._][A-Za-z0-9._-]*)(\/.*)?$/s.exec(v);
  if (user) return `/home/${user[1]}${user[2] ?? ''}`;
  return v;
}

/** `{1..3}`, `{a..c}`, `{1..9..2}` as bash expands them; null for anything else. */
function sequence(body: string): string[] | null {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (!m) return null;
  const numeric = /\d/.test(m[1]!);
  if (numeric !== /\d/.test(m[2]!)) return null;
  const from = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
    if (out.length >= MAX_FIELDS) break;
  }
  return out;
}

/** `{a,b}c` → `ac`, `bc`; `{1..3}` → `1`, `2`, `3`, as bash expands braces. */
export function expandBraces(s: string): string[] {
  const open = s.indexOf('{');
  if (open < 0) return [s];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) {
        if (commas.length === 0) {
          const seq = sequence(s.slice(open + 1, i));
          if (seq)
            return seq
              .flatMap((v) => expandBraces(s.slice(0, open) + v + s.slice(i + 1)))
              .slice(0, MAX_FIELDS);
          return expandBraces(s.slice(i + 1)).map((rest) => s.slice(0, i + 1) + rest);
        }
        const pre = s.slice(0, open);
        const alts: string[] = [];
        let from = open + 1;
        for (const c2 of [...commas, i]) {
          alts.push(s.slice(from, c2));
          from = c2 + 1;
        }
        const out: string[] = [];
        for (const alt of alts)
          for (const rest of expandBraces(alt + s.slice(i + 1))) out.push(pre + rest);
        return out.slice(0, MAX_FIELDS);
      }
    } else if (c === ',' && depth === 1) commas.push(i);
  }
  return [s];
}

/**
 * Expands a word into fields. A word with an unknown part becomes one dynamic field.
 */
export function expandWord(word: Word, scope: ExpandScope): Field[] {
  const b = new Builder();
  b.ifs = lookup('IFS', scope) ?? ' \t\n';
  if (!word.parts) {
    b.text(tilde(word.value, scope));
  } else {
    parts(b, word.parts, false, scope, true);
  }
  if (b.dynamic) return [{ value: word.text, dynamic: true, glob: false }];
  b.flush();
  const hasBrace = word.parts?.some((p) => p.type === 'BraceExpansion') ?? false;
  if (!hasBrace) return b.fields;
  // Brace expansion comes before tilde expansion in bash: {src,~} names the home folder.
  return b.fields.flatMap((f) =>
    expandBraces(f.value).map((value) => ({ ...f, value: tilde(value, scope) })),
  );
}

/** The value of an assignment's word (no splitting, no globbing), or null when unknown. */
export function expandAssignment(word: Word, scope: ExpandScope): string | null {
  const b = new Builder();
  b.noSplit = true;
  if (!word.parts) b.text(tilde(word.value, scope));
  else parts(b, word.parts, false, scope, true);
  if (b.dynamic) return null;
  b.flush();
  return b.fields.map((f) => f.value).join('');
}

/**
 * A dynamic word that is not one double-quoted word may expand to several words, options among
 * them (`git reset $X` with X="--hard HEAD~3", `cp $X dest` with X="-t ~ a"): next to a command
 * that deletes or writes, such a word is refused.
 */
export function mayBeOptions(a: Field): boolean {
  return a.dynamic && !/^"[^"]*"$/s.test(a.value);
}
