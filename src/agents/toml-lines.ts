/**
 * Line edits of a TOML file that keep every byte of the user's own content (comments, order,
 * spacing): a whole table with its sub-tables replaced, added or taken out as a block of lines,
 * and one key of a table set or removed. PURE. They know standard `[table]` headers and
 * `key = value` lines only; the caller parses the result and refuses it when the edit did not
 * change exactly what it meant to (inline tables, dotted keys, a header inside a multi-line
 * string), so a layout they do not handle is never written.
 */

/** A table header line (`[a.b]` or `[[a.b]]`, an optional comment after it). */
const HEADER = /^\s*(\[\[?)\s*([A-Za-z0-9_\-."' ]+?)\s*\]\]?\s*(#.*)?$/;

/** A header's dotted name without quotes or spaces (`mcp_servers."hagent"` → `mcp_servers.hagent`). */
function normalName(name: string): string {
  return name
    .split('.')
    .map((part) =>
      part
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .replace(/^'(.*)'$/, '$1'),
    )
    .join('.');
}

interface Block {
  /** The table's name; null for the lines before the first header. */
  name: string | null;
  /** An array-of-tables header (`[[…]]`). */
  array: boolean;
  /** First line (the header) and the line after the last. */
  start: number;
  end: number;
}

function blocks(lines: readonly string[]): Block[] {
  const out: Block[] = [{ name: null, array: false, start: 0, end: lines.length }];
  lines.forEach((line, i) => {
    const m = HEADER.exec(line);
    if (!m) return;
    out[out.length - 1]!.end = i;
    out.push({ name: normalName(m[2]!), array: m[1] === '[[', start: i, end: lines.length });
  });
  return out;
}

/** `text` as lines, without the empty piece after a final newline. */
function toLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const fromLines = (lines: readonly string[]): string =>
  lines.length ? `${lines.join('\n')}\n` : '';

/** Lines appended at the end, one blank line apart from what is there. */
function append(lines: string[], added: readonly string[]): string[] {
  const out = [...lines];
  while (out.length && out[out.length - 1]!.trim() === '') out.pop();
  if (out.length) out.push('');
  return [...out, ...added];
}

/**
 * `text` with table `table` (and its sub-tables `table.*`) as `body` lines under its header, in
 * the place of the first one there (else at the end), or taken out when `body` is null.
 */
export function setTable(text: string, table: string, body: readonly string[] | null): string {
  const lines = toLines(text);
  const ours = blocks(lines).filter(
    (b) => b.name !== null && (b.name === table || b.name.startsWith(`${table}.`)),
  );
  const added = body ? [`[${table}]`, ...body] : [];
  if (!ours.length) return body ? fromLines(append(lines, added)) : text;
  const out: string[] = [];
  let next = 0;
  ours.forEach((b, i) => {
    out.push(...lines.slice(next, b.start));
    if (i === 0 && added.length) {
      out.push(...added);
      // Keep a blank line before whatever header follows.
      if (b.end < lines.length) out.push('');
    }
    next = b.end;
  });
  out.push(...lines.slice(next));
  while (out.length && out[out.length - 1]!.trim() === '') out.pop();
  return fromLines(out);
}

/**
 * `text` with `key = value` (a TOML value, as written) in table `table` — replacing the key's
 * line, or first in the table, or in a new table at the end — or that line taken out when
 * `value` is null (and the table with it when nothing but blank lines is left in it). Other lines
 * stay as they are.
 */
export function setKey(text: string, table: string, key: string, value: string | null): string {
  const lines = toLines(text);
  const block = blocks(lines).find((b) => b.name === table && !b.array);
  const line = `${key} = ${value}`;
  if (!block) return value === null ? text : fromLines(append(lines, [`[${table}]`, line]));
  const keyLine = new RegExp(`^\\s*${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*=`);
  const at = lines.findIndex((l, i) => i > block.start && i < block.end && keyLine.test(l));
  const out = [...lines];
  if (at >= 0) {
    if (value === null) {
      out.splice(at, 1);
      // A table left with nothing but blank lines goes, header and all (a comment keeps it).
      const rest = out.slice(block.start + 1, block.end - 1);
      if (rest.every((l) => l.trim() === '')) {
        out.splice(block.start, block.end - 1 - block.start);
        while (out.length && out[out.length - 1]!.trim() === '') out.pop();
      }
    } else out[at] = line;
  } else if (value !== null) out.splice(block.start + 1, 0, line);
  else return text;
  return fromLines(out);
}
