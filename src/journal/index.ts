/**
 * journal: the append-only record of every writing attempt, successful or refused
 * (design.md "Where things live").
 *
 * Owns `<commonDir>/hagent/journal.jsonl` (and creates `<commonDir>/hagent/` when missing); writes
 * nothing else. Imports only node built-ins, zod, errors.ts and its own redact.ts (no git, no
 * fsx, no session).
 *
 * Format: one JSON object per line ({@link JournalEntrySchema}), UTF-8, `\n`-terminated, oldest
 * first. Each line is written with ONE `write(2)` on a descriptor opened with O_APPEND, so lines
 * from concurrent writers (several hagent processes on one repository) never interleave: the
 * kernel places each whole write at the end of the file. A reader skips and counts lines that do
 * not parse (a crash mid-write on a filesystem without that guarantee, a hand edit).
 * The file is created with mode 0600: it holds patch text, even if redacted.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { HagentError } from '../errors.js';
import { redactSecrets } from './redact.js';

export { redactSecrets, type Redacted } from './redact.js';

/** Patch text longer than this (in UTF-16 characters) is cut in the journal copy; the hash covers it all. */
export const MAX_JOURNAL_PATCH_CHARS = 256 * 1024;

/**
 * One journal line. `time` is ISO 8601 UTC; `ok` false marks a refusal, then `code`, `message` and
 * `hint` are the HagentError's; `files` are repo-relative `/` paths the attempt concerned; `base`
 * and `head` are the session head before and after (commit ids); `patchSha256` is the hex SHA-256
 * of the original patch text (UTF-8) and `patch` its redacted copy; `redactions` counts what was
 * hidden; `durationMs` is wall time in ms. Unknown keys are kept on read (`passthrough`).
 */
export const JournalEntrySchema = z.looseObject({
  time: z.string(),
  session: z.string(),
  command: z.string(),
  ok: z.boolean(),
  code: z.optional(z.string()),
  message: z.optional(z.string()),
  hint: z.optional(z.string()),
  files: z.optional(z.array(z.string())),
  base: z.optional(z.string()),
  head: z.optional(z.string()),
  patchSha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/))),
  patch: z.optional(z.string()),
  patchTruncated: z.optional(z.boolean()),
  redactions: z.optional(z.number().check(z.int(), z.nonnegative())),
  durationMs: z.optional(z.number().check(z.nonnegative())),
});

/** A journal line as read back. */
export type JournalEntry = z.infer<typeof JournalEntrySchema>;

/**
 * What a caller passes to {@link appendJournal}: an entry whose `time` defaults to now, and
 * whose `patch` is the ORIGINAL text (the journal hashes it, then redacts and caps the copy).
 */
export interface JournalInput {
  /** ISO 8601; defaults to now. */
  time?: string;
  session: string;
  command: string;
  ok: boolean;
  code?: string;
  message?: string;
  hint?: string;
  files?: string[];
  base?: string;
  head?: string;
  /** The original patch text; the journal keeps its hash and a redacted copy. */
  patch?: string;
  durationMs?: number;
}

/** Absolute path of the journal: `<commonDir>/hagent/journal.jsonl`. */
export function journalPath(commonDir: string): string {
  return path.join(commonDir, 'hagent', 'journal.jsonl');
}

/** Hex SHA-256 of a text's UTF-8 bytes. */
function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Builds the line that {@link appendJournal} writes: fills `time`, hashes the original patch into
 * `patchSha256`, replaces `patch` by its redacted copy (cut at {@link MAX_JOURNAL_PATCH_CHARS},
 * then `patchTruncated: true`), records `redactions`, and validates the result. Pure but for the
 * clock when `time` is absent.
 * @throws HagentError INTERNAL when the entry does not fit the schema (a bug in the caller).
 */
export function journalLine(entry: JournalInput): string {
  const { patch, time, ...rest } = entry;
  const full: Record<string, unknown> = { time: time ?? new Date().toISOString(), ...rest };
  if (patch !== undefined) {
    const { text, redactions } = redactSecrets(patch);
    full.patchSha256 = sha256(patch);
    full.patch =
      text.length > MAX_JOURNAL_PATCH_CHARS ? text.slice(0, MAX_JOURNAL_PATCH_CHARS) : text;
    if (text.length > MAX_JOURNAL_PATCH_CHARS) full.patchTruncated = true;
    full.redactions = redactions;
  }
  const parsed = JournalEntrySchema.safeParse(full);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HagentError(
      'INTERNAL',
      `journal entry does not fit the schema: ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? ''}`,
      {},
      'this is a bug in hagent; the attempt itself is unaffected',
    );
  }
  return `${JSON.stringify(parsed.data)}\n`;
}

/**
 * Appends one attempt to `<commonDir>/hagent/journal.jsonl` as one JSON line, creating the folder
 * and the file (mode 0600) as needed. The line goes out in one `write` on an O_APPEND descriptor,
 * so concurrent writers never interleave (see the module header). `entry.patch` is the original
 * patch text: the line keeps its SHA-256 and a redacted copy ({@link redactSecrets}).
 * @param commonDir absolute git common dir. @param entry the attempt; `time` defaults to now.
 * @returns the entry as written (redacted).
 * @throws HagentError INTERNAL for an entry that does not fit the schema; the I/O error (e.g.
 *   EACCES, ENOSPC) when the journal cannot be written: callers decide whether that is fatal.
 */
export async function appendJournal(commonDir: string, entry: JournalInput): Promise<JournalEntry> {
  const line = journalLine(entry);
  const file = journalPath(commonDir);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.open(file, 'a', 0o600);
  try {
    const bytes = Buffer.from(line, 'utf8');
    let offset = 0;
    // One write for the whole line; the loop only runs again after a short write (disk full,
    // signal), where finishing the line is better than leaving half of it.
    while (offset < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  } finally {
    await handle.close();
  }
  return JournalEntrySchema.parse(JSON.parse(line));
}

/** Filters of {@link readJournal}. */
export interface ReadJournalOptions {
  /** Only refused attempts (`ok: false`). */
  failed?: boolean;
  /** Only the newest N entries after the other filters (N ≥ 0). */
  limit?: number;
  /** Only this session's entries. */
  session?: string;
}

/** The journal as read: entries oldest first, newest last; `damaged` counts skipped lines. */
export interface JournalRead {
  entries: JournalEntry[];
  /** Lines that were not a valid entry (bad JSON, wrong shape, or an unterminated last line). */
  damaged: number;
}

/**
 * Reads the journal, skipping and counting damaged lines. A missing journal reads as empty.
 * @param commonDir absolute git common dir.
 * @param options `failed`, `session` filter; `limit` keeps the newest N of what remains.
 * @returns entries in file order (newest last) and the count of damaged lines in the whole file.
 * @throws the I/O error when the journal exists but cannot be read.
 */
export async function readJournal(
  commonDir: string,
  options: ReadJournalOptions = {},
): Promise<JournalRead> {
  let text: string;
  try {
    text = await fs.readFile(journalPath(commonDir), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], damaged: 0 };
    throw e;
  }
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  let damaged = last === '' ? 0 : 1; // an unterminated last line is a write cut short (or in progress)
  const entries: JournalEntry[] = [];
  for (const line of lines) {
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      damaged++;
      continue;
    }
    const r = JournalEntrySchema.safeParse(value);
    if (!r.success) {
      damaged++;
      continue;
    }
    if (options.failed && r.data.ok) continue;
    if (options.session !== undefined && r.data.session !== options.session) continue;
    entries.push(r.data);
  }
  const limit = options.limit;
  return {
    entries:
      limit !== undefined && limit >= 0
        ? entries.slice(Math.max(0, entries.length - limit))
        : entries,
    damaged,
  };
}
