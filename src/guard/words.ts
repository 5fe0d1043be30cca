/**
 * Word expansion as far as it can be known without running anything: quotes removed, ANSI-C
 * strings decoded (the parser does both), `~` and variables whose value the command itself set
 * (or that hagent knows: HOME, PWD, IFS) substituted, unquoted expansions split on blanks as
 * bash does (`rm${IFS}-rf${IFS}/` is three words), brace alternatives expanded, and `$(echo …)`,
 * `$(pwd)` resolved. Anything else (`$X` never set, `$(curl …)`) makes the field *dynamic*: its
 * value is unknown, and the rules refuse a dynamic word where a dangerous verb would read it.
 */
import type { Word, WordPart, DoubleQuotedChild, Script } from 'unbash';

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
    const pieces = s.split(new RegExp(`[${this.ifs.replace(/[\]\\^-]/g, '\\$&')}]+`));
    pieces.forEach((piece, i) => {
      if (i > 0 && this.started) this.flush();
      if (piece) this.text(piece);
    });
  }

  flush(): void {
    if (this.started) this.fields.push({ value: this.cur, dynamic: false, glob: this.glob });
    this.cur = '';
    this.started = false;
    this.glob = false;
  }
}

function parameter(part: Extract<WordPart, { type: 'ParameterExpansion' }>, scope: ExpandScope): string | null {
  if (part.prefix || part.index) return null;
  const value = lookup(part.parameter, scope);
  const op = part.operation;
  if (!op) return value;
  if (op.type === 'Default' && (op.operator === ':-' || op.operator === '-')) {
    if (value !== null && (value !== '' || op.operator === '-')) return value;
    return null;
  }
  return null;
}

function simpleName(text: string): string {
  return text.replace(/^\$\{?/, '').replace(/\}$/, '');
}

function parts(b: Builder, list: readonly (WordPart | DoubleQuotedChild)[], quoted: boolean, scope: ExpandScope, first: boolean): void {
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
        const v = part.type === 'SimpleExpansion' ? lookup(simpleName(part.text), scope) : parameter(part, scope);
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
  if (v.startsWith('~')) return `/home/${v.slice(1)}`; // another user's home: outside anyway
  return v;
}

/** `{a,b}c` → `ac`, `bc`; sequences `{1..3}` are left as they are (they only make more words). */
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
        if (commas.length === 0) return expandBraces(s.slice(i + 1)).map((rest) => s.slice(0, i + 1) + rest);
        const pre = s.slice(0, open);
        const alts: string[] = [];
        let from = open + 1;
        for (const c2 of [...commas, i]) {
          alts.push(s.slice(from, c2));
          from = c2 + 1;
        }
        const out: string[] = [];
        for (const alt of alts) for (const rest of expandBraces(alt + s.slice(i + 1))) out.push(pre + rest);
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
  return b.fields.flatMap((f) => expandBraces(f.value).map((value) => ({ ...f, value: tilde(value, scope) })));
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
