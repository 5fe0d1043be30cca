/**
 * Parser of unified diffs (git `diff --git` and plain `diff -u`) → the same ops as the Codex
 * language. Hunk line numbers are kept only as hints: chunks are located by content, under the
 * same rules (patch-language.md §2 "A unified diff", §3).
 */

import type { LineSource } from './lines.js';
import { HagentError } from '../errors.js';
import { EXPECTED, isFenceLine, syntax } from './markers.js';
import type { Chunk, FileMode, Leniency, PatchOp } from './types.js';

const HUNK = /^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+/;

interface Section {
  kind: 'git' | 'plain';
  headerLine: number;
  aPath?: string | undefined; // old path (prefix stripped), undefined for /dev/null
  bPath?: string | undefined;
  gitA?: string;
  gitB?: string;
  newFile: boolean;
  deleted: boolean;
  renameFrom?: string;
  renameTo?: string;
  copyFrom?: string;
  copyTo?: string;
  oldMode?: string;
  newMode?: string;
  newFileMode?: string;
  binary: boolean;
  /** Mode of the `index OLD..NEW MODE` line (a submodule's is 160000). */
  indexMode?: string;
  chunks: Chunk[];
}

/**
 * Parses the unified diff that starts at `lines.at(start)` (0-based) and runs at most to `end`.
 * The diff ends at the first Markdown fence line that stands OUTSIDE every hunk (a closing fence),
 * or at `end`: a hunk's own lines are never cut, so a context line " ```" or an added line "+```"
 * (a Markdown file's fence) is content, not the end of the patch (patch-language.md §2.2).
 * Inside a hunk, a line is a hunk line while the `@@` counts are not used up; a line starting
 * with "```" or "~~~" (no " ", "+", "-" prefix) can never be one, so it ends a hunk whose counts
 * are too large. After the counts are used up the hunk ends, as git reads it: the `-- ` line and
 * version of a git format-patch signature, prose and mail headers are trailing text, and an
 * indented fence line (" ```") closes a fenced diff (`options.fenced`) unless more hunk lines
 * follow it; only lines that are hunk lines by their prefix (" ", "-", "+") extend a hunk whose
 * counts are too small (leniency `hunk-counts`, for hand-written hunks).
 * A CR before a line's break is content (the caller passes the unconverted lines unless the diff's
 * headers end in CRLF): a new file keeps it; hunk lines carry it as `crMarks` when the diff holds
 * any. Lines outside file sections that are not diff syntax are taken as prose (leniency `prose`).
 * @returns the ops, and `end`: the 0-based index just past the diff's last line.
 * @throws HagentError `PATCH_SYNTAX` (malformed header or hunk, with 1-based `line`),
 *   `UNSUPPORTED_FILE` (binary patch, symlink or submodule mode, with `path`).
 */
export function parseUnifiedDiff(
  lines: LineSource,
  start: number,
  end: number,
  leniencies: Leniency[],
  options: { fenced?: boolean } = {},
): { ops: PatchOp[]; end: number } {
  const note = (l: Leniency): void => {
    if (!leniencies.includes(l)) leniencies.push(l);
  };
  const ctx: HunkContext = { note, fenced: options.fenced === true, sawCr: false };
  const ops: PatchOp[] = [];
  let i = start;
  while (i < end) {
    const line = stripCr(lines.at(i)!);
    if (line.startsWith('diff --git ')) {
      const section = newSection('git', i);
      const paths = parseGitHeaderPaths(line.slice('diff --git '.length));
      if (!paths)
        throw syntax(
          i,
          'cannot read the paths of this "diff --git" line',
          'write "diff --git a/PATH b/PATH"',
          EXPECTED.gitHeader,
        );
      section.gitA = paths[0];
      section.gitB = paths[1];
      i = readExtendedHeaders(lines, i + 1, end, section);
      i = readFileLines(lines, i, end, section);
      i = readHunks(lines, i, end, section, ctx);
      ops.push(toOp(section));
      continue;
    }
    if (line.startsWith('--- ') && i + 1 < end && lines.at(i + 1)!.startsWith('+++ ')) {
      const section = newSection('plain', i);
      i = readFileLines(lines, i, end, section);
      i = readHunks(lines, i, end, section, ctx);
      ops.push(toOp(section));
      continue;
    }
    // A fence line here is outside every hunk and header: the closing fence of a fenced diff.
    if (isFenceLine(line)) break;
    if (HUNK.test(line))
      throw syntax(
        i,
        'a hunk "@@" without a file header before it',
        'start each file with "--- a/PATH" and "+++ b/PATH" (or "diff --git")',
        EXPECTED.fileHeader,
      );
    if (line.trim() !== '' && !/^(diff |index |Only in |similarity index )/.test(line))
      note('prose');
    i++;
  }
  if (ops.length === 0)
    throw syntax(
      start,
      'the diff changes no file',
      'send a diff with at least one file',
      EXPECTED.fileHeader,
    );
  // Without a CR anywhere, added lines take the ending of the line they replace (§4): no marks.
  if (!ctx.sawCr) for (const c of chunksOf(ops)) delete c.crMarks;
  return { ops, end: i };
}

interface HunkContext {
  note: (l: Leniency) => void;
  /** Some hunk line ended in CR (the diff is read byte for byte: its CRs are content). */
  sawCr: boolean;
  /** An opening fence stands before the diff. */
  fenced: boolean;
}

/** A header line without the CR of a CRLF line (a diff read byte for byte may hold some). */
function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function chunksOf(ops: readonly PatchOp[]): Chunk[] {
  return ops.flatMap((op) =>
    op.kind === 'update' ? op.chunks : op.kind === 'add' ? (op.chunks ?? []) : [],
  );
}

/** A line that opens or closes a Markdown fence and carries no hunk prefix: never a hunk line. */
function isBareFence(line: string): boolean {
  const c = line[0];
  return c !== ' ' && c !== '+' && c !== '-' && isFenceLine(line);
}

function newSection(kind: 'git' | 'plain', at: number): Section {
  return { kind, headerLine: at + 1, newFile: false, deleted: false, binary: false, chunks: [] };
}

function readExtendedHeaders(lines: LineSource, i: number, end: number, s: Section): number {
  for (; i < end; i++) {
    const line = stripCr(lines.at(i)!);
    let m: RegExpExecArray | null;
    if ((m = /^old mode (\d+)\s*$/.exec(line))) s.oldMode = m[1] as string;
    else if ((m = /^new mode (\d+)\s*$/.exec(line))) s.newMode = m[1] as string;
    else if ((m = /^deleted file mode (\d+)\s*$/.exec(line))) {
      s.deleted = true;
      s.oldMode = m[1] as string;
    } else if ((m = /^new file mode (\d+)\s*$/.exec(line))) {
      s.newFile = true;
      s.newFileMode = m[1] as string;
    } else if (line.startsWith('rename from ')) s.renameFrom = unquotePath(line.slice(12), i);
    else if (line.startsWith('rename to ')) s.renameTo = unquotePath(line.slice(10), i);
    else if (line.startsWith('copy from ')) s.copyFrom = unquotePath(line.slice(10), i);
    else if (line.startsWith('copy to ')) s.copyTo = unquotePath(line.slice(8), i);
    else if (/^(similarity|dissimilarity) index /.test(line)) continue;
    else if ((m = /^index [0-9a-f]+\.\.[0-9a-f]+(?: (\d+))?\s*$/.exec(line))) {
      if (m[1] !== undefined) s.indexMode = m[1];
    } else if (
      line.startsWith('GIT binary patch') ||
      (line.startsWith('Binary files ') && line.endsWith(' differ'))
    )
      s.binary = true;
    else break;
  }
  return i;
}

/** Reads `--- OLD` / `+++ NEW` when present. */
function readFileLines(lines: LineSource, i: number, end: number, s: Section): number {
  if (i + 1 < end && lines.at(i)!.startsWith('--- ') && lines.at(i + 1)!.startsWith('+++ ')) {
    s.aPath = readFilePath(lines.at(i)!.slice(4), i) ?? undefined;
    s.bPath = readFilePath(lines.at(i + 1)!.slice(4), i + 1) ?? undefined;
    const aNull = isDevNull(lines.at(i)!.slice(4));
    const bNull = isDevNull(lines.at(i + 1)!.slice(4));
    if (aNull) s.newFile = true;
    if (bNull) s.deleted = true;
    // Strip the a/ and b/ prefixes: always in a git diff, in a plain diff only when both carry
    // them.
    const bothPrefixed =
      s.aPath?.startsWith('a/') !== false &&
      s.bPath?.startsWith('b/') !== false &&
      !(aNull && bNull);
    if (s.kind === 'git' || bothPrefixed) {
      if (s.aPath?.startsWith('a/')) s.aPath = s.aPath.slice(2);
      if (s.bPath?.startsWith('b/')) s.bPath = s.bPath.slice(2);
    }
    return i + 2;
  }
  return i;
}

function isDevNull(field: string): boolean {
  return /^\/dev\/null(\t.*)?\s*$/.test(field);
}

/**
 * The path of a `---`/`+++` line: quoted or not, without a tab-separated timestamp; null for
 * /dev/null.
 */
function readFilePath(field: string, at: number): string | null {
  if (isDevNull(field)) return null;
  if (field.startsWith('"')) {
    const q = readQuoted(field, 0);
    if (!q)
      throw syntax(
        at,
        'malformed quoted path',
        'quote paths as git does: "a/x\\ty"',
        EXPECTED.quotedPath,
      );
    return q.value;
  }
  const tab = field.indexOf('\t');
  return (tab === -1 ? field : field.slice(0, tab)).trimEnd();
}

function unquotePath(field: string, at: number): string {
  const f = field.trimEnd();
  if (f.startsWith('"')) {
    const q = readQuoted(f, 0);
    if (!q)
      throw syntax(at, 'malformed quoted path', 'quote paths as git does', EXPECTED.quotedPath);
    return q.value;
  }
  return f;
}

/** Splits the `a/X b/Y` of a `diff --git` line (quoted or not) and strips `a/`, `b/`. */
function parseGitHeaderPaths(rest: string): [string, string] | undefined {
  const strip = (p: string, prefix: string): string =>
    p.startsWith(prefix) ? p.slice(prefix.length) : p;
  if (rest.startsWith('"')) {
    const a = readQuoted(rest, 0);
    if (!a || rest[a.end] !== ' ') return undefined;
    const bField = rest.slice(a.end + 1);
    const b = bField.startsWith('"') ? readQuoted(bField, 0)?.value : bField;
    if (b === undefined) return undefined;
    return [strip(a.value, 'a/'), strip(b, 'b/')];
  }
  if (rest.endsWith('"')) {
    const at = rest.lastIndexOf(' "');
    if (at === -1) return undefined;
    const b = readQuoted(rest.slice(at + 1), 0);
    if (!b) return undefined;
    return [strip(rest.slice(0, at), 'a/'), strip(b.value, 'b/')];
  }
  if (rest.length % 2 === 1) {
    const mid = (rest.length - 1) / 2;
    if (rest[mid] === ' ') {
      const a = strip(rest.slice(0, mid), 'a/');
      const b = strip(rest.slice(mid + 1), 'b/');
      if (a === b) return [a, b];
    }
  }
  const at = rest.indexOf(' b/');
  if (at !== -1) return [strip(rest.slice(0, at), 'a/'), rest.slice(at + 3)];
  const sp = rest.indexOf(' ');
  if (sp === -1) return undefined;
  return [rest.slice(0, sp), rest.slice(sp + 1)];
}

const C_ESCAPES: Record<string, number> = {
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

/**
 * Reads a git C-quoted string starting at `from` (a `"`): escapes and octal bytes, decoded as
 * UTF-8.
 */
function readQuoted(s: string, from: number): { value: string; end: number } | undefined {
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = from + 1; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '"') return { value: new TextDecoder().decode(new Uint8Array(bytes)), end: i + 1 };
    if (c === '\\') {
      const d = s[i + 1];
      if (d === undefined) return undefined;
      if (/[0-7]/.test(d)) {
        const oct = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4)) as RegExpExecArray;
        bytes.push(parseInt(oct[0], 8) & 0xff);
        i += oct[0].length;
        continue;
      }
      const code = C_ESCAPES[d];
      if (code === undefined) return undefined;
      bytes.push(code);
      i++;
      continue;
    }
    const cp = s.codePointAt(i) as number;
    if (cp > 0xffff) i++;
    bytes.push(...enc.encode(String.fromCodePoint(cp)));
  }
  return undefined;
}

function readHunks(
  lines: LineSource,
  i: number,
  end: number,
  s: Section,
  ctx: HunkContext,
): number {
  while (i < end) {
    const line = lines.at(i)!;
    const m = HUNK.exec(line);
    if (!m) break;
    i = readHunk(lines, i, end, m, s, ctx);
  }
  return i;
}

function isHeaderAt(lines: LineSource, i: number, end: number): boolean {
  const line = lines.at(i)!;
  if (line.startsWith('diff --git ') || HUNK.test(line)) return true;
  return line.startsWith('--- ') && i + 1 < end && lines.at(i + 1)!.startsWith('+++ ');
}

/**
 * A line that continues a hunk: " ", "+", "-" or "\\" first (an empty line is not counted here).
 */
function isHunkLine(line: string | undefined): boolean {
  if (line === undefined || line === '') return false;
  const c = line[0];
  return (c === ' ' || c === '+' || c === '-' || c === '\\') && !isFenceLine(line);
}

function readHunk(
  lines: LineSource,
  at: number,
  end: number,
  m: RegExpExecArray,
  s: Section,
  ctx: HunkContext,
): number {
  const { note } = ctx;
  const oldStart = Number(m[1]);
  const oldCount = m[2] === undefined ? 1 : Number(m[2]);
  const newCount = m[4] === undefined ? 1 : Number(m[4]);
  const chunk: Chunk = {
    anchors: [],
    oldLines: [],
    newLines: [],
    endOfFile: false,
    patchLine: at + 1,
  };
  const kinds: string[] = [];
  const marks: string[] = [];
  let o = 0;
  let nw = 0;
  let i = at + 1;
  let last = '';
  let countsWrong = false;
  for (; i < end; i++) {
    let line = lines.at(i)!;
    const done = o >= oldCount && nw >= newCount;
    const c = line[0];
    if (c === '\\') {
      if (last === '-' || last === ' ') chunk.oldNoFinalNewline = true;
      if (last === '+' || last === ' ') chunk.newNoFinalNewline = true;
      continue;
    }
    if (done) {
      // The counts are used up: the hunk ends here, as git reads it. What follows is the next
      // header, or trailing text: the "-- " signature of git format-patch, prose.
      if (
        line === '' ||
        line === '\r' ||
        isHeaderAt(lines, i, end) ||
        (c !== ' ' && c !== '-' && c !== '+')
      )
        break;
      if (isSignature(lines, i, end)) break;
      // An indented fence line after the hunk closes a fenced diff, unless hunk lines follow it.
      if (ctx.fenced && isFenceLine(line) && !isHunkLine(lines.at(i + 1))) break;
      // More hunk lines: the counts are too small (a hand-written hunk); the body wins.
      countsWrong = true;
    } else if (isHeaderAt(lines, i, end) || isBareFence(line)) {
      countsWrong = true;
      break;
    }
    let cr = '0';
    if (line.endsWith('\r')) {
      // In a diff read byte for byte a CR before the line break is content (git writes a CRLF
      // file's lines so): kept as a mark, the text compared without it (§2.4, §4).
      line = line.slice(0, -1);
      cr = '1';
      ctx.sawCr = true;
    }
    if (line === '' || c === ' ') {
      const text = line === '' ? '' : line.slice(1);
      chunk.oldLines.push(text);
      chunk.newLines.push(text);
      kinds.push(' ');
      o++;
      nw++;
      last = ' ';
    } else if (c === '-') {
      chunk.oldLines.push(line.slice(1));
      kinds.push('-');
      o++;
      last = '-';
    } else if (c === '+') {
      chunk.newLines.push(line.slice(1));
      kinds.push('+');
      nw++;
      last = '+';
    } else {
      throw syntax(
        i,
        `unexpected line in a hunk: ${JSON.stringify(line.slice(0, 60))}`,
        'hunk lines start with " ", "-" or "+"; check the @@ line counts',
        EXPECTED.hunkLine,
      );
    }
    marks.push(cr);
  }
  if (countsWrong) note('hunk-counts');
  chunk.lineKinds = kinds.join('');
  chunk.crMarks = marks.join('');
  if (chunk.oldLines.length === 0) chunk.insertAfterLine = oldStart;
  else chunk.oldStartHint = oldStart;
  if (chunk.oldNoFinalNewline) chunk.endOfFile = true;
  if (chunk.oldLines.length > 0 || chunk.newLines.length > 0) s.chunks.push(chunk);
  return i;
}

/**
 * The signature git format-patch ends each commit with: a line "-- " and the git version (or any
 * line that is not a hunk line), or the end of the text. Read as trailing text, never as the
 * removed line "- " (patch-language.md §2: a hunk is read by its counts).
 */
function isSignature(lines: LineSource, i: number, end: number): boolean {
  const line = lines.at(i)!;
  if (line !== '-- ' && line !== '-- \r') return false;
  if (i + 1 >= end) return true;
  const next = lines.at(i + 1)!;
  const c = next[0];
  return next === '' || (c !== ' ' && c !== '+' && c !== '-');
}

/**
 * The new side of a chunk with its CRs put back (a new file's lines are written as the diff has
 * them).
 */
function newSideWithCr(c: Chunk): string[] {
  const kinds = c.lineKinds ?? '';
  const marks = c.crMarks ?? '';
  const out: string[] = [];
  let w = 0;
  for (let q = 0; q < kinds.length; q++) {
    if (kinds[q] === '-') continue;
    out.push((c.newLines[w] as string) + (marks[q] === '1' ? '\r' : ''));
    w++;
  }
  return out;
}

/** A submodule's hunk: every line is "Subproject commit <id>" (git's diff of a gitlink). */
function isSubmoduleHunk(c: Chunk): boolean {
  const all = [...c.oldLines, ...c.newLines];
  return all.length > 0 && all.every((l) => /^Subproject commit [0-9a-f]{7,64}(-dirty)?$/.test(l));
}

function mode(raw: string | undefined, path: string): FileMode | undefined {
  if (raw === undefined) return undefined;
  if (raw === '100644' || raw === '100755') return raw;
  if (raw === '100664') return '100644';
  if (raw === '160000') throw submodule(path);
  throw new HagentError(
    'UNSUPPORTED_FILE',
    `${path}: mode ${raw} ` +
      `(${raw === '120000' ? 'a symlink' : 'not a regular file'}) is not supported`,
    { path, reason: raw === '120000' ? 'symlink' : 'mode' },
    'hagent patches regular files only',
  );
}

/**
 * A submodule entry (mode 160000, "Subproject commit"): one refusal wherever it shows. Rule: §2.
 */
function submodule(path: string): HagentError {
  return new HagentError(
    'UNSUPPORTED_FILE',
    `${path}: a submodule cannot be patched`,
    { path, reason: 'submodule' },
    'hagent patches regular files only; change the submodule inside its own repository',
  );
}

/** Submodules and binary patches are refused whatever else the section says. Rule: §2. */
function refuseUnsupported(s: Section, shown: string): void {
  if (
    s.indexMode === '160000' ||
    s.oldMode === '160000' ||
    s.newMode === '160000' ||
    s.newFileMode === '160000' ||
    (s.chunks.length > 0 && s.chunks.every(isSubmoduleHunk))
  )
    throw submodule(shown);
  if (s.binary) {
    throw new HagentError(
      'UNSUPPORTED_FILE',
      `${shown}: binary patches are not supported`,
      { path: shown, line: s.headerLine },
      'edit text files only; binary files cannot be patched by hagent',
    );
  }
}

/** A new file: its hunks may only add lines (no context, nothing removed). */
function addedFile(s: Section, newPath: string | undefined): PatchOp {
  const at = s.headerLine;
  if (newPath === undefined)
    throw syntax(
      at - 1,
      'a new file with no path',
      'name the file in "+++ b/PATH"',
      EXPECTED.fileHeader,
    );
  const body: string[] = [];
  let finalNewline = true;
  for (const c of s.chunks) {
    if (c.oldLines.length > 0)
      throw syntax(
        c.patchLine - 1,
        `new file ${newPath}: the hunk has context or removed lines`,
        'a new file\'s hunk holds only "+" lines',
        EXPECTED.newFileHunk,
      );
    body.push(...newSideWithCr(c));
    if (c.newNoFinalNewline) finalNewline = false;
  }
  const op: PatchOp = { kind: 'add', path: newPath, lines: body, finalNewline, patchLine: at };
  const m = mode(s.newFileMode, newPath);
  if (m) op.mode = m;
  return op;
}

/** A deleted file: the lines it removes, when its hunks are given, are checked by the planner. */
function deletedFile(s: Section, oldPath: string | undefined): PatchOp {
  const at = s.headerLine;
  if (oldPath === undefined)
    throw syntax(
      at - 1,
      'a deleted file with no path',
      'name the file in "--- a/PATH"',
      EXPECTED.fileHeader,
    );
  const removed = s.chunks.flatMap((c) => c.oldLines);
  return s.chunks.length > 0
    ? { kind: 'delete', path: oldPath, removedLines: removed, patchLine: at }
    : { kind: 'delete', path: oldPath, patchLine: at };
}

/**
 * The op of one file's section: an add, a delete, a copy, or an update (with a rename or a mode).
 */
function toOp(s: Section): PatchOp {
  const oldPath = s.renameFrom ?? s.copyFrom ?? s.aPath ?? s.gitA;
  const newPath = s.renameTo ?? s.copyTo ?? s.bPath ?? s.gitB;
  const at = s.headerLine;
  const shown = newPath ?? oldPath ?? '?';
  refuseUnsupported(s, shown);
  if (s.newFile) return addedFile(s, newPath);
  if (s.deleted) return deletedFile(s, oldPath);
  if (oldPath === undefined || newPath === undefined)
    throw syntax(
      at - 1,
      'cannot tell which file this diff changes',
      'write "--- a/PATH" and "+++ b/PATH"',
      EXPECTED.fileHeader,
    );
  const newMode = mode(s.newMode, newPath);
  mode(s.oldMode, oldPath);
  if (s.copyFrom !== undefined && s.copyTo !== undefined) {
    const op: PatchOp = {
      kind: 'add',
      path: s.copyTo,
      lines: [],
      finalNewline: true,
      copyFrom: s.copyFrom,
      chunks: s.chunks,
      patchLine: at,
    };
    if (newMode) op.mode = newMode;
    return op;
  }
  let path = oldPath;
  let moveTo: string | undefined;
  let altPath: string | undefined;
  if (s.kind === 'git') {
    if (oldPath !== newPath) moveTo = newPath;
  } else if (oldPath !== newPath) {
    // Plain `diff -u a.orig a.new` cannot rename: the planner updates the one that exists, the
    // `+++` name when both do (GNU patch's choice; patch-language.md §2).
    path = newPath;
    altPath = oldPath;
  }
  if (s.chunks.length === 0 && moveTo === undefined && newMode === undefined) {
    throw syntax(
      at - 1,
      `the diff of ${path} has no hunks`,
      'include the "@@" hunks of the change',
      EXPECTED.hunk,
    );
  }
  const op: PatchOp = { kind: 'update', path, chunks: s.chunks, patchLine: at };
  if (moveTo !== undefined) op.moveTo = moveTo;
  if (newMode) op.newMode = newMode;
  if (altPath !== undefined) op.altPath = altPath;
  return op;
}
