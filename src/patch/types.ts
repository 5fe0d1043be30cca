/**
 * Shapes shared by the pure patch engine: parsed operations, the file snapshot it plans against,
 * and the plan it returns. No fs, no git, no clock (style.md §5).
 */

/** Comparison level at which a chunk matched, strictest first. Rule: patch-language.md §3.2. */
export type MatchLevel = 'exact' | 'trim-end' | 'trim' | 'unicode';

/**
 * A leniency the intake or parser used to accept imperfect input. Rule: patch-language.md §2.
 * Reported in every result so the agent can learn its habits.
 */
export type Leniency =
  | 'marker-whitespace' // §2.1
  | 'fence' // §2.2
  | 'prose' // §2.2
  | 'heredoc' // §2.3
  | 'crlf-patch' // §2.4
  | 'json-wrapper' // §2.5
  | 'header-prefix' // §2.6
  | 'add-without-plus' // §2.7
  | 'stray-blank-line' // §2.8
  | 'decorated-marker' // §2.9
  | 'letter-case' // §2.9
  | 'invisible-chars' // §2.10
  | 'udiff-anchor' // §2.11
  | 'one-blank-line-retry' // §3.6
  | 'absolute-path' // §5b: an absolute path inside the session worktree, made relative
  | 'main-checkout-path' // §5b: an absolute path inside the user's main checkout, mapped to the session
  | 'line-number-tiebreak' // a unified-diff hunk matching several places, taken at the one its `@@ -l` names (§2 "the numbers are hints")
  | 'hunk-counts'; // a unified-diff hunk whose line counts disagree with its body (the body wins)

/** git file modes hagent can write. */
export type FileMode = '100644' | '100755';

/** One chunk of an Update. Lines carry no terminators. `patchLine` is 1-based in the patch text. */
export interface Chunk {
  /** `@@ TEXT` anchors in order; an empty `@@` adds nothing. */
  anchors: string[];
  /** Context and removed lines, in order (the text the chunk expects to find). */
  oldLines: string[];
  /** Context and added lines, in order (the text that replaces oldLines). */
  newLines: string[];
  /** `*** End of File`: the chunk must match at the very end (§3.4). */
  endOfFile: boolean;
  /** Unified diff only: line-number hint (1-based) from `@@ -l,n`; matching is still by content. */
  oldStartHint?: number;
  /** Unified diff only: `\ No newline at end of file` after the old / new side. */
  oldNoFinalNewline?: boolean;
  newNoFinalNewline?: boolean;
  /**
   * One character per chunk line, in patch order: `' '` context, `'-'` removed, `'+'` added.
   * Lets the planner keep context lines byte for byte from the file (§4). When absent, context is
   * taken to be the common prefix and suffix of oldLines and newLines.
   */
  lineKinds?: string;
  /**
   * Unified diff only, for a hunk with no old side (`@@ -5,0 +6,2 @@`): the 1-based line after
   * which the new lines go (0 = top of file). Without it a pure insertion follows §3.5.
   */
  insertAfterLine?: number;
  /**
   * Unified diff read byte for byte (its CRs are content, patch-language.md §2.4), set when the
   * diff holds a line ending in CR: one character per chunk line, in patch order, `'1'` when that
   * patch line ended in CR (stripped from the texts above), else `'0'`. An added line then ends in
   * CRLF or LF as the patch says, instead of taking the ending of the line it replaces (§4).
   */
  crMarks?: string;
  patchLine: number;
}

export type PatchOp =
  | {
      kind: 'add';
      path: string;
      /**
       * Content lines, no terminators. A Codex Add File body is kept whole (`text`) and these are
       * split from it the first time they are read.
       */
      lines: string[];
      /** When present: the content lines joined by `\n` (no final terminator); equals `lines.join('\n')`. */
      text?: string;
      /** Codex: always true. Unified diff: false after `\ No newline at end of file`. */
      finalNewline: boolean;
      mode?: FileMode;
      /**
       * Unified diff `copy from` / `copy to`: the new file's content is this source file's
       * current content with `chunks` applied (the source is left untouched).
       */
      copyFrom?: string;
      /** With `copyFrom`: the hunks to apply to the source content. */
      chunks?: Chunk[];
      patchLine: number;
    }
  | {
      kind: 'delete';
      path: string;
      /**
       * Unified diff only: the removed lines of the deletion's hunks (CRs stripped), which must be
       * the file's lines (patch-language.md §2 "A deletion"); absent for a Codex Delete File or a
       * deletion without hunks: nothing to check.
       */
      removedLines?: string[];
      patchLine: number;
    }
  | {
      kind: 'update';
      path: string;
      moveTo?: string;
      chunks: Chunk[];
      /** Unified diff `new mode` / rename with mode change. */
      newMode?: FileMode;
      /**
       * Plain `diff -u OLD NEW` whose two names differ (neither /dev/null): `path` is the `+++` name
       * and this the `---` name. The planner updates the one that exists (`path` when both do), as
       * GNU patch does (patch-language.md §2 "A unified diff").
       */
      altPath?: string;
      patchLine: number;
    };

/** The parsed patch. `cwd` is the `cd DIR &&` of a heredoc wrapper (§2.3), relative, unchecked. */
export interface ParsedPatch {
  /** Rule: patch-language.md §2: a unified diff is a format, reported as such, not a leniency. */
  format: 'codex' | 'unified';
  ops: PatchOp[];
  leniencies: Leniency[];
  cwd?: string;
  /** Set by the caller's path checks (a main-checkout path mapped to the session, §5b): warnings the plan carries. */
  warnings?: string[];
}

/** What the planner knows of one path. Bytes are the file's raw bytes. */
export type FileState =
  | { kind: 'file'; bytes: Uint8Array; mode: FileMode }
  | {
      kind: 'missing';
      /**
       * Set when a parent component is a file (or anything but a folder): `'a'` for the path
       * `a/b` when `a` is a file. Such a path is a free Add/Move destination only when the same
       * patch deletes or moves away that file (a file becomes a folder); otherwise FILE_EXISTS.
       */
      underFile?: string;
    }
  | {
      kind: 'directory';
      /**
       * Every non-directory entry under it, recursively (regular files, symlinks, anything), as
       * `/`-separated paths relative to this directory (`x/a/b` → `'a/b'` for the directory `x`);
       * empty subdirectories are not listed. Optional: filled in only for a path that an Add, copy
       * or Move would create. When present and the same patch deletes or moves away every listed
       * file, the directory is free for that Add/Move (a folder becomes a file; the writer must
       * remove the emptied directory tree before writing the file). When absent, a directory is
       * never free (`FILE_EXISTS`).
       */
      files?: readonly string[];
    }
  | { kind: 'other' }; // symlink, submodule, socket… (policy refuses these before planning)

/** path → state, for every path returned by `pathsToRead(parsed)`. */
export type Snapshot = ReadonlyMap<string, FileState>;

/** Where one chunk landed. Lines are 1-based in the original file. */
export interface ChunkPlacement {
  chunk: number; // 1-based
  level: MatchLevel;
  startLine: number;
  oldCount: number;
  newCount: number;
}

export interface PlannedFile {
  op: 'add' | 'update' | 'delete' | 'move';
  /** Destination path (for a move, the new path). */
  path: string;
  /** Source path of a move (or of a unified-diff copy, whose op is `add`). */
  from?: string;
  /** Bytes to write; absent for a delete. */
  bytes?: Uint8Array;
  mode: FileMode;
  added: number;
  removed: number;
  /** Loosest level any chunk of this file matched at (absent when no chunk). */
  level?: MatchLevel;
  chunks: ChunkPlacement[];
  /** True when the result equals the original (a no-op update). */
  noop: boolean;
  /** `'added'`: the patch gave the file the final newline it lacked (patch-language.md §4). */
  finalNewline?: 'added';
}

export interface Plan {
  files: PlannedFile[];
  leniencies: Leniency[];
  warnings: string[];
}
