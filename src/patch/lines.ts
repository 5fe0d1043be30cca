/**
 * The lines of a patch text, read on demand. Splitting a 10 MB patch into an array keeps one
 * string per line alive through the whole parse, beside the content strings the parse keeps:
 * twice the live objects, and V8's young-generation collections copy every one of them (a 10 MB
 * patch took 4–8 × the time of a 5 MB one). Here only the line starts are kept (one typed
 * array); `at(i)` makes a short-lived slice each time it is asked.
 * Pure: no I/O.
 */

/** What the parsers read lines through: an array of strings satisfies it too. */
export interface LineSource {
  readonly length: number;
  /** Line `index` (0-based) without its `\n`; undefined outside `[0, length)`. */
  at(index: number): string | undefined;
}

/** Lines `[from, to)` of `lines` joined by `\n` (one string, sliced from the text when it can). */
export function joinLines(lines: LineSource, from: number, to: number): string {
  if (lines instanceof TextLines) return lines.range(from, to);
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(lines.at(i)!);
  return out.join('\n');
}

/** The lines of one text, as `text.split('\n')` would give them (minus a final empty line). */
export class TextLines implements LineSource {
  readonly length: number;
  private readonly text: string;
  /** starts[i] = offset of line i; starts[length] = one past the `\n` ending the last line. */
  private readonly starts: Float64Array;

  /**
   * @param text the whole text; `\n` separates lines. Like `split('\n')` followed by dropping a
   *   final empty line when there is more than one line.
   */
  constructor(text: string) {
    this.text = text;
    let count = 1;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
    const starts = new Float64Array(count + 1);
    let k = 1;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts[k++] = i + 1;
    starts[count] = text.length + 1;
    // A text ending in '\n' has an empty last "line": not a line (as the parsers always read it).
    if (count > 1 && starts[count - 1] === text.length) count--;
    this.length = count;
    this.starts = starts;
  }

  /** Lines `[from, to)` joined by `\n`, as one slice of the text (empty when from >= to). */
  range(from: number, to: number): string {
    if (from >= to) return '';
    return this.text.slice(this.starts[from], this.starts[to]! - 1);
  }

  at(index: number): string | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    return this.text.slice(this.starts[index], this.starts[index + 1]! - 1);
  }
}
