/**
 * A text file as lines that each keep their own terminator, so that bytes → lines → bytes is the
 * identity and an edit touches only the lines it changes. Rule: patch-language.md §4.
 */

/** A line terminator as found in the file; `''` only for a last line without one. */
export type Eol = '\n' | '\r\n' | '\r' | '';

/** A decoded text file. `texts[i]` has no terminator; `eols[i]` is its own terminator. */
export interface TextFile {
  /** The file started with a UTF-8 BOM (kept out of `texts[0]`, written back by {@link encodeTextFile}). */
  bom: boolean;
  texts: string[];
  eols: Eol[];
  /** The most frequent terminator (LF on a tie or when the file has none): new lines get it. */
  dominant: Exclude<Eol, ''>;
  /** The last line has a terminator (true for an empty file: new content gets one). */
  finalNewline: boolean;
  /** Set by {@link decodeTextFile}: every byte is ASCII (a UTF-16 unit is a byte; BOM aside). */
  ascii?: boolean;
}

/** Outcome of {@link decodeTextFile}: a text file, or why the bytes are not one. */
export type DecodeResult =
  { kind: 'text'; file: TextFile } | { kind: 'unsupported'; reason: string };

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Splits bytes into lines, each with its own terminator (LF, CRLF, lone CR, or none for a last line
 * without newline). A trailing blank line is a line of its own (`"a\n\n"` → `["a", ""]`).
 * Refuses bytes that hold a NUL or are not valid UTF-8 (returns `{kind: 'unsupported'}`; the
 * planner turns it into `UNSUPPORTED_FILE`). Rule: patch-language.md §4.
 */
export function decodeTextFile(bytes: Uint8Array): DecodeResult {
  if (bytes.indexOf(0) !== -1)
    return { kind: 'unsupported', reason: 'contains NUL bytes (binary file)' };
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { kind: 'unsupported', reason: 'is not valid UTF-8' };
  }
  const file = splitText(text);
  // UTF-8 bytes equal UTF-16 units only when every character is ASCII (the BOM is 3 bytes, 1 unit).
  file.ascii = bytes.length - (file.bom ? 3 : 0) === text.length - (file.bom ? 1 : 0);
  return { kind: 'text', file };
}

/** Splits an already-decoded string the same way as {@link decodeTextFile}. */
export function splitText(text: string): TextFile {
  let bom = false;
  if (text.charCodeAt(0) === 0xfeff) {
    bom = true;
    text = text.slice(1);
  }
  if (!text.includes('\r')) return splitLf(text, bom);
  const texts: string[] = [];
  const eols: Eol[] = [];
  let lf = 0;
  let crlf = 0;
  let cr = 0;
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      texts.push(text.slice(start, i));
      eols.push('\n');
      lf++;
      start = i + 1;
    } else if (c === 13) {
      texts.push(text.slice(start, i));
      if (text.charCodeAt(i + 1) === 10) {
        eols.push('\r\n');
        crlf++;
        i++;
      } else {
        eols.push('\r');
        cr++;
      }
      start = i + 1;
    }
  }
  if (start < n) {
    texts.push(text.slice(start));
    eols.push('');
  }
  let dominant: Exclude<Eol, ''> = '\n';
  if (crlf > lf && crlf >= cr) dominant = '\r\n';
  else if (cr > lf && cr > crlf) dominant = '\r';
  const finalNewline = eols.length === 0 || eols[eols.length - 1] !== '';
  return { bom, texts, eols, dominant, finalNewline };
}

/** The common case, a file without CR: the native split is several times faster than a char loop. */
function splitLf(text: string, bom: boolean): TextFile {
  const texts = text.split('\n');
  const finalNewline = text.length === 0 || text.charCodeAt(text.length - 1) === 10;
  if (finalNewline) texts.pop();
  const eols = new Array<Eol>(texts.length).fill('\n');
  if (!finalNewline) eols[eols.length - 1] = '';
  return { bom, texts, eols, dominant: '\n', finalNewline };
}

/** Joins lines and their terminators back into UTF-8 bytes, BOM first when `bom` is set. */
export function encodeTextFile(file: {
  bom: boolean;
  texts: readonly string[];
  eols: readonly Eol[];
}): Uint8Array {
  const n = file.texts.length;
  if (n > 1000) {
    // A large file whose lines (but the last) share one terminator: one native join, no deep rope.
    const eol = file.eols[0] ?? '\n';
    let uniform = eol !== '';
    for (let i = 1; i < n - 1 && uniform; i++) uniform = file.eols[i] === eol;
    if (uniform)
      return encoder.encode(
        (file.bom ? '\uFEFF' : '') + file.texts.join(eol) + (file.eols[n - 1] ?? ''),
      );
  }
  // String concatenation (ropes) beats Array.join on many small slices.
  let out = file.bom ? '\uFEFF' : '';
  for (let i = 0; i < file.texts.length; i++)
    out += (file.texts[i] as string) + (file.eols[i] ?? '');
  return encoder.encode(out);
}

/** UTF-8 bytes of a string. */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Number of lines in raw bytes (LF count, plus one for a last line without LF). Works on any
 * bytes, binary included: used to count a deleted file's lines (§5b).
 */
export function countLines(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) count++;
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) count++;
  return count;
}

/** True when two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
