/**
 * Test helper: parses `git diff` output (with or without `-M`) into files and hunks, and turns it
 * into the Codex `*** Begin Patch` language (patch-language.md §1) when Codex can express it.
 *
 * Codex cannot express: mode changes (and executable new files), binary files, symlinks and
 * submodules, a file added without a final newline, a change of a file's final-newline state
 * (an Update keeps it), CR / CRLF line endings, and paths a header line cannot carry. Such a diff
 * gets `patch: null` and the list of reasons; the caller counts it as skipped, never silently.
 *
 * A Codex chunk is located by content, not by line number, and must match once (§3.3). With
 * `oldText` (the old content of a path) the converter widens the context of a hunk whose old side
 * occurs more than once after the cursor, merging it with its neighbour when they meet, so that
 * every chunk names exactly one place, as a careful agent would.
 */

/** One line of a hunk: kind and text (no terminator). `noEol`: followed by `\ No newline at end of file`. */
export interface HunkLine {
  kind: ' ' | '-' | '+';
  text: string;
  noEol: boolean;
}

/** One `@@ -a,b +c,d @@` hunk. `oldStart` is 1-based as in the header (0 when the old side is empty). */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  lines: HunkLine[];
}

/** One file section of a git diff. Paths have no `a/` `b/` prefix; null is /dev/null. */
export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  status: 'add' | 'delete' | 'modify' | 'rename' | 'copy';
  oldMode?: string;
  newMode?: string;
  binary: boolean;
  similarity?: number;
  hunks: Hunk[];
}

/** Decodes a git C-style quoted path (`"a/\303\251 b"`), or returns it as is when not quoted. */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  const bytes: number[] = [];
  const esc: Record<string, number> = {
    a: 7,
    b: 8,
    t: 9,
    n: 10,
    v: 11,
    f: 12,
    r: 13,
    '"': 34,
    '\\': 92,
  };
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') break;
    if (c === '\\') {
      const n = raw[i + 1]!;
      if (/[0-7]/.test(n)) {
        bytes.push(parseInt(raw.slice(i + 1, i + 4), 8));
        i += 3;
      } else {
        bytes.push(esc[n] ?? n.charCodeAt(0));
        i += 1;
      }
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function stripPrefix(p: string, prefix: string): string {
  return p.startsWith(prefix) ? p.slice(prefix.length) : p;
}

/** Paths of a `diff --git a/X b/Y` line when both sides are the same name (the only reliable case). */
function gitLinePaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*"|\S.*)$/.exec(rest);
    if (!m) return null;
    return [stripPrefix(unquoteGitPath(m[1]!), 'a/'), stripPrefix(unquoteGitPath(m[2]!), 'b/')];
  }
  if ((rest.length - 1) % 2 === 0) {
    const half = (rest.length - 1) / 2;
    const a = rest.slice(0, half);
    const b = rest.slice(half + 1);
    if (a.slice(2) === b.slice(2)) return [stripPrefix(a, 'a/'), stripPrefix(b, 'b/')];
  }
  const m = /^(\S+) (\S+)$/.exec(rest);
  return m ? [stripPrefix(m[1]!, 'a/'), stripPrefix(unquoteGitPath(m[2]!), 'b/')] : null;
}

function fileLinePath(raw: string, prefix: string): string | null {
  const p = raw.replace(/\t$/, '');
  if (p === '/dev/null') return null;
  return stripPrefix(unquoteGitPath(p), prefix);
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Parses the output of `git diff [--binary] [-M]` (default `a/` `b/` prefixes, no colour).
 * Lines are split on `\n` only, so a CR stays part of its line.
 */
export function parseGitDiff(text: string): DiffFile[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const files: DiffFile[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.startsWith('diff --git ')) {
      i++;
      continue;
    }
    const gl = gitLinePaths(line.slice('diff --git '.length));
    const f: DiffFile = {
      oldPath: gl?.[0] ?? null,
      newPath: gl?.[1] ?? null,
      status: 'modify',
      binary: false,
      hunks: [],
    };
    i++;
    let m: RegExpExecArray | null;
    for (; i < lines.length; i++) {
      const h = lines[i]!;
      if (h.startsWith('diff --git ') || h.startsWith('@@ ')) break;
      if ((m = /^old mode (\d+)$/.exec(h))) f.oldMode = m[1]!;
      else if ((m = /^new mode (\d+)$/.exec(h))) f.newMode = m[1]!;
      else if ((m = /^new file mode (\d+)$/.exec(h))) {
        f.status = 'add';
        f.newMode = m[1]!;
        f.oldPath = null;
      } else if ((m = /^deleted file mode (\d+)$/.exec(h))) {
        f.status = 'delete';
        f.oldMode = m[1]!;
        f.newPath = null;
      } else if (h.startsWith('rename from ')) {
        f.status = 'rename';
        f.oldPath = unquoteGitPath(h.slice('rename from '.length));
      } else if (h.startsWith('rename to '))
        f.newPath = unquoteGitPath(h.slice('rename to '.length));
      else if (h.startsWith('copy from ')) {
        f.status = 'copy';
        f.oldPath = unquoteGitPath(h.slice('copy from '.length));
      } else if (h.startsWith('copy to ')) f.newPath = unquoteGitPath(h.slice('copy to '.length));
      else if ((m = /^similarity index (\d+)%$/.exec(h))) f.similarity = Number(m[1]);
      else if ((m = /^index [0-9a-f]+\.\.[0-9a-f]+(?: (\d+))?$/.exec(h))) {
        if (m[1]) {
          f.oldMode ??= m[1];
          f.newMode ??= m[1];
        }
      } else if (h.startsWith('--- ')) {
        if (f.status !== 'add') f.oldPath = fileLinePath(h.slice(4), 'a/') ?? f.oldPath;
      } else if (h.startsWith('+++ ')) {
        if (f.status !== 'delete') f.newPath = fileLinePath(h.slice(4), 'b/') ?? f.newPath;
      } else if (h === 'GIT binary patch' || /^Binary files .* differ$/.test(h)) {
        f.binary = true;
        // skip the base85 payload up to the next section
        for (i++; i < lines.length && !lines[i]!.startsWith('diff --git '); i++);
        i--;
      }
    }
    while (i < lines.length && (m = HUNK_HEADER.exec(lines[i]!))) {
      const hunk: Hunk = {
        oldStart: Number(m[1]),
        oldCount: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newCount: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
      };
      i++;
      let oldLeft = hunk.oldCount;
      let newLeft = hunk.newCount;
      while (i < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i]!.startsWith('\\'))) {
        const l = lines[i]!;
        if (l.startsWith('\\')) {
          const last = hunk.lines[hunk.lines.length - 1];
          if (last) last.noEol = true;
        } else {
          const kind = l[0] as ' ' | '-' | '+';
          if (kind !== ' ' && kind !== '-' && kind !== '+')
            throw new Error(`unexpected hunk line ${JSON.stringify(l)}`);
          if (kind !== '+') oldLeft--;
          if (kind !== '-') newLeft--;
          hunk.lines.push({ kind, text: l.slice(1), noEol: false });
        }
        i++;
      }
      f.hunks.push(hunk);
    }
    files.push(f);
  }
  return files;
}

/** Number of `@@` hunks in parsed files. */
export function countHunks(files: readonly DiffFile[]): number {
  return files.reduce((n, f) => n + f.hunks.length, 0);
}

/** Why Codex cannot express this file's change, or [] when it can. */
export function codexLimits(f: DiffFile): string[] {
  const name = f.newPath ?? f.oldPath ?? '?';
  const out: string[] = [];
  const special = (m?: string) =>
    m === '120000' ? 'symlink' : m === '160000' ? 'submodule' : null;
  const sp = special(f.oldMode) ?? special(f.newMode);
  if (sp) out.push(`${sp} (${name})`);
  if (f.binary) out.push(`binary file (${name})`);
  if (f.status === 'copy') out.push(`copy (${name})`);
  if (f.status === 'add' && f.newMode === '100755') out.push(`executable new file (${name})`);
  if (
    f.status !== 'add' &&
    f.status !== 'delete' &&
    f.oldMode &&
    f.newMode &&
    f.oldMode !== f.newMode
  )
    out.push(`mode change ${f.oldMode}→${f.newMode} (${name})`);
  for (const p of [f.oldPath, f.newPath]) {
    if (p !== null && (p !== p.trim() || /[\u0000-\u001f\u007f]/.test(p)))
      out.push(`path a header line cannot carry (${JSON.stringify(p)})`);
  }
  if (sp) return out;
  const marker =
    /^\*\*\* (begin patch|end patch|end of file|add file:|delete file:|update file:|move to:)/i;
  if (f.hunks.some((h) => h.lines.some((l) => l.kind === ' ' && marker.test(l.text.trim())))) {
    out.push(`context line that reads as a patch marker (${name})`);
  }
  if (f.status !== 'delete') {
    let oldNoEol = false;
    let newNoEol = false;
    let cr = false;
    for (const h of f.hunks) {
      for (const l of h.lines) {
        if (l.text.includes('\r')) cr = true;
        if (l.noEol) {
          if (l.kind !== '+') oldNoEol = true;
          if (l.kind !== '-') newNoEol = true;
        }
      }
    }
    if (cr && (f.status === 'add' || !crFollowsEndingRule(f)))
      out.push(`CR/CRLF line endings (${name})`);
    if (f.status === 'add' && newNoEol) out.push(`new file without a final newline (${name})`);
    else if (oldNoEol !== newNoEol)
      out.push(`final newline ${oldNoEol ? 'added' : 'removed'} (${name})`);
    else if (f.status !== 'add' && newNoEol) {
      // kept-without-final-newline and changed: an Update keeps the state, so it is expressible
      // unless one side is empty (the empty file's state is not defined by the language).
      const h = f.hunks;
      if (h.some((x) => x.oldCount === 0 || x.newCount === 0))
        out.push(`empty side of a file without a final newline (${name})`);
    }
  }
  return out;
}

/**
 * True when a Codex update (whose lines carry no CR: there CRLF is transport) gives exactly the
 * diff's line endings under patch-language.md §4: in each group of removed and added lines the i-th
 * added line ends as the i-th removed one (extra ones as the last), and an added line that replaces
 * none ends as the line before it (at the top of the file, as the line after it). A CR anywhere but
 * at a line's end, or on a line without newline, is not expressible.
 */
function crFollowsEndingRule(f: DiffFile): boolean {
  const cr = (l: HunkLine | undefined): boolean | undefined =>
    l === undefined ? undefined : l.text.endsWith('\r');
  for (const h of f.hunks) {
    const ls = h.lines;
    if (ls.some((l) => l.text.slice(0, -1).includes('\r') || (l.noEol && l.text.endsWith('\r'))))
      return false;
    let q = 0;
    while (q < ls.length) {
      if (ls[q]!.kind === ' ') {
        q++;
        continue;
      }
      let e = q;
      while (e < ls.length && ls[e]!.kind !== ' ') e++;
      const group = ls.slice(q, e);
      const removed = group.filter((l) => l.kind === '-').map((l) => cr(l) as boolean);
      const before = q > 0 ? cr(ls[q - 1]) : h.oldStart <= 1 ? cr(ls[e]) : undefined;
      let i = 0;
      for (const l of group) {
        if (l.kind !== '+') continue;
        const want = removed.length > 0 ? removed[Math.min(i, removed.length - 1)] : before;
        if (want === undefined || want !== cr(l)) return false;
        i++;
      }
      q = e;
    }
  }
  return true;
}

/** Codex text of one file's change; `chunks` are already disambiguated. */
interface Chunk {
  /** 0-based line of the old file where the chunk's old side starts. */
  start: number;
  lines: HunkLine[];
}

function oldSide(c: Chunk): string[] {
  return c.lines.filter((l) => l.kind !== '+').map((l) => l.text);
}

/** Lines of a text as the patch language sees them (a final newline ends the last line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function matchesFrom(file: readonly string[], needle: readonly string[], from: number): number[] {
  const out: number[] = [];
  for (let s = from; s + needle.length <= file.length; s++) {
    let ok = true;
    for (let k = 0; k < needle.length; k++) {
      if (file[s + k] !== needle[k]) {
        ok = false;
        break;
      }
    }
    if (ok) out.push(s);
  }
  return out;
}

function mergeChunks(a: Chunk, b: Chunk, file: readonly string[]): Chunk {
  const aEnd = a.start + oldSide(a).length;
  const gap: HunkLine[] = [];
  for (let k = aEnd; k < b.start; k++) gap.push({ kind: ' ', text: file[k]!, noEol: false });
  return { start: a.start, lines: [...a.lines, ...gap, ...b.lines] };
}

/**
 * Widens chunks until each old side matches exactly once at or after the cursor (exact level).
 * Returns the chunks and how many were widened.
 */
export function disambiguate(
  hunks: readonly Hunk[],
  file: readonly string[],
): { chunks: Chunk[]; widened: number } {
  const chunks: Chunk[] = hunks.map((h) => ({
    start: h.oldCount === 0 ? h.oldStart : h.oldStart - 1,
    lines: h.lines.map((l) => ({ ...l })),
  }));
  const cursors: number[] = [];
  let widened = 0;
  let i = 0;
  let guard = 0;
  while (i < chunks.length) {
    if (++guard > 1_000_000) throw new Error('disambiguate: no progress');
    const cursor = i === 0 ? 0 : cursors[i - 1]!;
    const ch = chunks[i]!;
    const old = oldSide(ch);
    if (old.length === 0 || matchesFrom(file, old, cursor).length <= 1) {
      cursors[i] = ch.start + old.length;
      i++;
      continue;
    }
    widened++;
    const end = ch.start + old.length;
    const next = chunks[i + 1];
    if (next && next.start <= end) {
      chunks.splice(i, 2, mergeChunks(ch, next, file));
    } else if (end < file.length) {
      ch.lines.push({ kind: ' ', text: file[end]!, noEol: false });
    } else if (ch.start > cursor) {
      ch.start--;
      ch.lines.unshift({ kind: ' ', text: file[ch.start]!, noEol: false });
    } else if (i > 0) {
      chunks.splice(i - 1, 2, mergeChunks(chunks[i - 1]!, ch, file));
      i--;
    } else {
      // the chunk spans the whole file from the cursor: it cannot match twice; stop widening
      cursors[i] = end;
      i++;
    }
  }
  return { chunks, widened };
}

/** Result of {@link toCodex}. */
export interface CodexConversion {
  /** The Codex patch, or null when some change is inexpressible. */
  patch: string | null;
  /** Why not (one entry per inexpressible change). */
  inexpressible: string[];
  /** Chunks widened to make them unique. */
  widened: number;
}

/**
 * Converts parsed git-diff files to one Codex patch. `oldText(path)` gives the old content of an
 * updated file (for the uniqueness of chunks); without it chunks are emitted as the diff has them.
 */
export function toCodex(
  files: readonly DiffFile[],
  oldText?: (path: string) => string | undefined,
): CodexConversion {
  const inexpressible = files.flatMap(codexLimits);
  if (inexpressible.length) return { patch: null, inexpressible, widened: 0 };
  const out: string[] = ['*** Begin Patch'];
  let widened = 0;
  for (const f of files) {
    if (f.status === 'add') {
      out.push(`*** Add File: ${f.newPath}`);
      for (const h of f.hunks) for (const l of h.lines) if (l.kind === '+') out.push(`+${l.text}`);
    } else if (f.status === 'delete') {
      out.push(`*** Delete File: ${f.oldPath}`);
    } else {
      out.push(`*** Update File: ${f.oldPath}`);
      if (f.status === 'rename' && f.newPath !== f.oldPath) out.push(`*** Move to: ${f.newPath}`);
      const text = oldText?.(f.oldPath!);
      const chunks =
        text === undefined
          ? f.hunks.map((h) => ({ start: h.oldStart - 1, lines: h.lines }))
          : (() => {
              const d = disambiguate(f.hunks, splitLines(text));
              widened += d.widened;
              return d.chunks;
            })();
      for (const c of chunks) {
        out.push('@@');
        // A CR at a line's end is left to hagent's ending rule (checked by codexLimits).
        for (const l of c.lines)
          out.push(`${l.kind}${l.text.endsWith('\r') ? l.text.slice(0, -1) : l.text}`);
      }
    }
  }
  out.push('*** End Patch');
  return { patch: `${out.join('\n')}\n`, inexpressible: [], widened };
}

/** Parses a git diff and converts it: {@link parseGitDiff} then {@link toCodex}. */
export function udiffToCodex(
  diffText: string,
  oldText?: (path: string) => string | undefined,
): CodexConversion {
  return toCodex(parseGitDiff(diffText), oldText);
}
