/**
 * The tools of `hagent mcp`, each a thin call into the library face with the CLI's `--json`
 * shape as its structured result. A refusal is a tool error (`isError`) whose structured content
 * is the CLI's `{ok: false, error: {code, message, hint, …}}` and whose text is the CLI's
 * `error[CODE]` lines, so an agent learns from it as from `hagent apply`.
 *
 * Writes (apply_patch, edit, write, exec, undo, redo, sync) run one at a time per server (a queue in
 * front of the session lock, which still serialises them against other processes); reads run
 * at once. Approve, land and ending the session are the human's and are not offered.
 */
import { Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/server';
import type * as z from 'zod';
import { applyPatch, mergeLine, type ApplyOptions, type ApplyResult } from '../apply/index.js';
import { checkPatch } from '../check/index.js';
import { execInSession, type ExecResult } from '../exec/index.js';
import { toHagentError, HagentError } from '../errors.js';
import { blobId, formatOfOid, lsTree, objectFormat, readRef, countCommits } from '../git/index.js';
import { readEntry } from '../fsx/index.js';
import { sessionHead } from '../session/index.js';
import { readJournal } from '../journal/index.js';
import { printError } from '../output/index.js';
import { planEdit, planWrite, type ParsedPatch } from '../patch/index.js';
import { reviewSession } from '../review/index.js';
import { sandboxSettings, sandboxStatus } from '../sandbox/index.js';
import { ADOPT_OUTSIDE, syncSession } from '../sync/index.js';
import { redo, undo } from '../undo/index.js';
import { sessionStatusWithMerge } from '../update/index.js';
import type { SessionBinding } from './binding.js';
import { resolveToolPath } from './paths.js';
import { readFile } from './read.js';
import * as S from './schemas.js';
import { trace } from '../trace/index.js';

/** What a tool handler returns to the SDK. */
type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** The CLI's human error lines (`error[CODE]: …`, details, hint) as a string. */
function errorText(error: HagentError): string {
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  printError(
    {
      stdout: sink,
      stderr: sink,
      stdin: process.stdin,
      color: false,
      interactive: false,
      cwd: '/',
      env: {},
    },
    error,
    false,
  );
  return text.trimEnd();
}

/**
 * Runs one tool body; any throw becomes a tool error carrying hagent's code, message and hint.
 * `structured` picks what goes into the structured content (default: the whole value).
 */
async function answer<T extends object>(
  body: () => Promise<T>,
  render: (value: T) => string,
  structured: (value: T) => object = (v) => v,
): Promise<ToolResult> {
  try {
    trace('mcp: call');
    const value = await body();
    trace('mcp: answered');
    return {
      content: [{ type: 'text', text: render(value) }],
      structuredContent: structured(value) as Record<string, unknown>,
    };
  } catch (e) {
    const error = toHagentError(e);
    return {
      content: [{ type: 'text', text: errorText(error) }],
      structuredContent: { ok: false, error: error.toJSON() },
      isError: true,
    };
  }
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Codex's success text, then the commit and each file's new blob id. */
function applyText(r: ApplyResult): string {
  const lines = [
    r.dryRun
      ? 'Dry run: the change applies. It would update the following files:'
      : 'Success. Updated the following files:',
  ];
  for (const f of r.files)
    lines.push(`${f.op === 'add' ? 'A' : f.op === 'delete' ? 'D' : 'M'} ${f.path}`);
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  if (r.leniencies.length) lines.push(`(accepted with leniencies: ${r.leniencies.join(', ')})`);
  const merge = mergeLine(r);
  if (merge) lines.push(merge);
  if (r.commit) lines.push(`commit ${r.commit} on hagent/${r.session}`);
  for (const [p, b] of Object.entries(r.blobs ?? {})) lines.push(`blob ${p} ${b ?? '(deleted)'}`);
  return lines.join('\n');
}

/** How the command ended, its output, and the commit of what it changed. */
function execText(r: ExecResult): string {
  const end = r.timedOut
    ? 'timed out; its process group was killed'
    : r.signal
      ? `ended by ${r.signal}`
      : `exit ${r.exitCode}`;
  const cut = r.truncated
    ? ` (output cut: ${[r.truncated.stdout ? `stdout ${r.truncated.stdout.bytes} bytes` : '', r.truncated.stderr ? `stderr ${r.truncated.stderr.bytes} bytes` : ''].filter(Boolean).join(', ')})`
    : '';
  const commit = r.commit
    ? `${r.changed.length} file${r.changed.length === 1 ? '' : 's'} changed, commit ${r.commit}`
    : 'no files changed';
  return [
    `${end} in ${(r.durationMs / 1000).toFixed(1)} s${cut}; ${commit}`,
    ...(r.outside ? [`WARNING: ${r.outside.message}`, `hint: ${r.outside.hint}`] : []),
    ...(r.sandbox.on
      ? r.sandbox.denied.map((d) => `hagent sandbox: ${d.path}: ${d.reason}`)
      : r.sandbox.configured
        ? []
        : [`WARNING: ${r.sandbox.reason}; the shell guard alone checked this command`]),
    ...(r.stdout ? ['--- stdout', r.stdout.trimEnd()] : []),
    ...(r.stderr ? ['--- stderr', r.stderr.trimEnd()] : []),
  ].join('\n');
}

/** A one-op change for `edit` and `write`: the path is checked and snapshotted as a patch's would be. */
function oneFile(path: string): ParsedPatch {
  return {
    format: 'codex',
    ops: [{ kind: 'update', path, chunks: [], patchLine: 1 }],
    leniencies: [],
  };
}

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;
/** Every write is a commit that undo takes back, and an outside edit is never overwritten: not destructive. */
const WRITES = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
} as const;

/**
 * An MCP server offering hagent's tools on `binding`'s session.
 * @param version hagent's version, reported to the client.
 */
export function createServer(binding: SessionBinding, version: string): McpServer {
  const server = new McpServer(
    { name: 'hagent', version },
    {
      capabilities: { tools: {} },
      instructions: [
        'hagent tools change files of one session worktree; every change is a commit that undo takes back.',
        'read returns a file with line numbers and its blob id; pass that id as expected_blob (edit, write) or in base_blobs (apply_patch) so a file changed since is refused (STALE_FILE) instead of overwritten.',
        'A refusal carries a code, a message and a hint: follow the hint, then try again.',
      ].join(' '),
    },
  );
  let writes: Promise<unknown> = Promise.resolve();
  /** Queues a writing body behind this server's other writes. */
  const serial = <T>(body: () => Promise<T>): Promise<T> => {
    const run = writes.then(body, body);
    writes = run.catch(() => undefined);
    return run;
  };
  const applyWith = async (
    extra: Partial<ApplyOptions> & { patchText?: string },
  ): Promise<ApplyResult> => {
    const [session, config] = await Promise.all([binding.session(), binding.config()]);
    trace('mcp: session and config read');
    if (extra.expectBlobs) await adoptExpected(session, extra.expectBlobs);
    const r = await applyPatch(binding.ctx, session, {
      patchText: '',
      env: binding.env,
      config,
      objects: binding.objects,
      refs: binding.refs,
      reportBlobs: true,
      howToConfirm: 'call the tool again with yes: true',
      staleHint:
        'call the status tool to see outside edits; the sync tool keeps them as a commit of their own',
      ...extra,
    });
    if (r.commit) for (const [p, b] of Object.entries(r.blobs ?? {})) binding.known.set(p, b);
    return r;
  };
  /**
   * A file the caller read after an outside change (its expected blob is what the disk holds,
   * not the session head) is edited on top of that change: the change is adopted first as an
   * outside commit of its own (as sync does), so the edit's commit holds only the edit.
   */
  const adoptExpected = async (
    session: Awaited<ReturnType<typeof binding.session>>,
    expected: Readonly<Record<string, string | null>>,
  ): Promise<void> => {
    const named = Object.entries(expected).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    );
    if (named.length === 0) return;
    const head = await sessionHead(binding.ctx, session);
    const inHead = await lsTree(
      session.worktree,
      head,
      named.map(([p]) => p),
    );
    const adopt: string[] = [];
    for (const [p, want] of named) {
      const entry = await readEntry(session.worktree, p).catch(() => null);
      if (entry?.kind !== 'file') continue;
      const disk = blobId(entry.bytes, formatOfOid(want));
      if (disk === want && inHead.get(p)?.oid !== disk) adopt.push(p);
    }
    if (adopt.length)
      await syncSession(binding.ctx, session, binding.env, { ...ADOPT_OUTSIDE, paths: adopt });
  };
  /** A tool's path argument by the one rule (paths.ts); apply then maps it the same way, with its warning. */
  const toolPath = async (raw: string): Promise<string> => {
    const [session, config] = await Promise.all([binding.session(), binding.config()]);
    return resolveToolPath(raw, session.worktree, config.root, config.policy);
  };
  const forget = (files: readonly { path: string }[]) =>
    files.forEach((f) => binding.known.delete(f.path));
  const register = <I extends z.ZodObject, O extends z.ZodObject>(
    name: string,
    title: string,
    description: string,
    input: I,
    output: O,
    annotations: object,
    handler: (args: z.infer<I>) => Promise<ToolResult>,
  ) => {
    server.registerTool(
      name,
      { title, description, inputSchema: input, outputSchema: output, annotations },
      ((args: z.infer<I>) => handler(args)) as never,
    );
  };

  register(
    'status',
    'Session status',
    'The session: base, head, patches, files changed against the base, outside edits pending in the worktree, an interrupted command, how the session branch moved without hagent (drift), how far the target branch moved since the base (targetDrift), and a merge waiting in the worktree with its conflicted files (merge).',
    S.StatusInput,
    S.StatusOutput,
    READ_ONLY,
    () =>
      answer(async () => {
        const s = await sessionStatusWithMerge(binding.ctx, (await binding.session()).id);
        const targetHead = s.target ? await readRef(binding.ctx.cwd, s.target) : null;
        const targetDrift = targetHead
          ? {
              targetHead,
              commits: await countCommits(binding.ctx.cwd, `${s.base}..${targetHead}`),
            }
          : null;
        const config = await binding.config();
        const sandbox = sandboxStatus(
          sandboxSettings(config.sandbox, binding.env.HOME || undefined),
          binding.env,
        );
        return { ok: true as const, sandbox, ...s, targetDrift };
      }, json),
  );

  // The lines travel in both contents: clients differ in which one the model sees (the real
  // Claude Code gives it the structured content whenever a tool returns one, never the text).
  register(
    'read',
    'Read a file',
    'A file of the session worktree: the text is a header line (path, line range, blob id), then the lines as "<n>\\t<text>"; the structured result holds the same lines (text), the blob id, the token that edit, write and apply_patch compare against, and the line counts. offset/limit select lines (default: the first 2000); a line longer than 2,000 characters is shown cut, with its length.',
    S.ReadInput,
    S.ReadOutput,
    READ_ONLY,
    (a) =>
      answer(
        () => readFile(binding, a.path, a.offset, a.limit),
        (r) =>
          `${r.path}: lines ${r.startLine}-${r.endLine} of ${r.totalLines}, blob ${r.blob}${r.outsideEdit ? ' (differs from the session head: an outside edit; sync adopts it)' : ''}${r.conflicted ? ' (conflicted by the merge in progress: resolving every conflicted file in one change concludes it)' : ''}${r.cutLines ? ` (${r.cutLines} line${r.cutLines === 1 ? '' : 's'} longer than 2,000 characters shown cut)` : ''}${(r.warnings ?? []).map((w) => ` (warning: ${w})`).join('')}\n${r.text}`,
      ),
  );

  register(
    'apply_patch',
    'Apply a patch',
    'Applies a patch (Codex "*** Begin Patch" language or a unified diff) all-or-nothing as one commit. base (a head) or base_blobs (path → blob id from read) refuse it if a target changed since.',
    S.ApplyPatchInput,
    S.ApplyOutput,
    WRITES,
    (a) =>
      answer(
        () =>
          serial(async () => {
            const [session, config] = await Promise.all([binding.session(), binding.config()]);
            const expectBlobs = a.base_blobs
              ? Object.fromEntries(
                  await Promise.all(
                    Object.entries(a.base_blobs).map(async ([p, b]) => [
                      await resolveToolPath(p, session.worktree, config.root, config.policy),
                      b,
                    ]),
                  ),
                )
              : undefined;
            return applyWith({
              patchText: a.patch,
              dryRun: !!a.dry_run,
              yes: !!a.yes,
              ...(a.base ? { base: a.base } : {}),
              ...(expectBlobs ? { expectBlobs } : {}),
            });
          }),
        applyText,
      ),
  );

  register(
    'edit',
    'Edit a file',
    'Replaces old_string with new_string in one file, exactly (whitespace included); old_string must occur once unless replace_all. An empty old_string creates the file. Applied as one commit, like a patch.',
    S.EditInput,
    S.ApplyOutput,
    WRITES,
    (a) =>
      answer(
        () =>
          serial(async () => {
            const path = await toolPath(a.path);
            return applyWith({
              yes: !!a.yes,
              ...(a.expected_blob ? { expectBlobs: { [path]: a.expected_blob } } : {}),
              change: {
                parsed: oneFile(a.path),
                plan: (parsed, snapshot) =>
                  planEdit(
                    {
                      path: parsed.ops[0]!.path,
                      oldString: a.old_string,
                      newString: a.new_string,
                      replaceAll: !!a.replace_all,
                    },
                    snapshot.get(parsed.ops[0]!.path)!,
                  ),
              },
            });
          }),
        applyText,
      ),
  );

  register(
    'write',
    'Write a file',
    "Creates a file, or replaces the whole content of one. Replacing needs the file's blob id: expected_blob, or a read of it by this server; otherwise STALE_FILE.",
    S.WriteInput,
    S.ApplyOutput,
    WRITES,
    (a) =>
      answer(
        () =>
          serial(
            async () => (
              await toolPath(a.path),
              applyWith({
                yes: !!a.yes,
                change: {
                  parsed: oneFile(a.path),
                  plan: (parsed, snapshot) => {
                    const path = parsed.ops[0]!.path;
                    const state = snapshot.get(path)!;
                    const token = a.expected_blob ?? binding.known.get(path);
                    const now =
                      state.kind === 'file'
                        ? blobId(state.bytes, objectFormat(binding.ctx.commonDir))
                        : null;
                    if (now !== null && token === undefined)
                      throw new HagentError(
                        'STALE_FILE',
                        `write would replace ${path}, which this server has not read`,
                        { path, diskBlob: now },
                        `read ${path} first (or pass its blob id as expected_blob), then write again`,
                      );
                    if (token !== undefined && token !== now)
                      throw new HagentError(
                        'STALE_FILE',
                        `${path} ${now === null ? 'no longer exists' : 'changed'} since blob ${token === null ? '(deleted)' : token.slice(0, 12)} was read`,
                        { path, expectedBlob: token, diskBlob: now },
                        `read ${path} again and write from its current content`,
                      );
                    return planWrite(path, a.content, state);
                  },
                },
              })
            ),
          ),
        applyText,
      ),
  );

  register(
    'check',
    'Check a patch',
    'Where a patch would land (file, chunk, 1-based lines, match level) in the session worktree, writing nothing.',
    S.CheckInput,
    S.CheckOutput,
    READ_ONLY,
    (a) =>
      answer(async () => {
        const [session, config] = await Promise.all([binding.session(), binding.config()]);
        return checkPatch(session.worktree, a.patch, config.policy);
      }, json),
  );

  for (const direction of ['undo', 'redo'] as const) {
    register(
      direction,
      direction === 'undo' ? 'Undo patches' : 'Redo patches',
      direction === 'undo'
        ? 'Moves the session back N applied patches (default 1), updating their files; undone patches stay reachable and redo brings them back.'
        : 'Brings back N undone patches (default 1).',
      S.StepsInput,
      S.UndoOutput,
      WRITES,
      (a) =>
        answer(
          () =>
            serial(async () => {
              const session = await binding.session();
              const r =
                direction === 'undo'
                  ? await undo(binding.ctx, session, a.steps ?? 1, binding.env)
                  : await redo(binding.ctx, session, a.steps ?? 1, binding.env);
              forget(r.files);
              return r;
            }),
          json,
        ),
    );
  }

  register(
    'exec',
    'Run a shell command',
    "Runs a shell command in the session worktree after hagent's guard (what reaches outside the worktree or destroys hagent's refs is refused, GUARD_BLOCKED), with stdin closed, a timeout (default 120 s, the whole process group killed) and capped output. The files it changed become one commit that undo takes back. A failed or timed-out command is a result with ok false, exitCode and timedOut; never exit code 0 for a timeout.",
    S.ExecInput,
    S.ExecOutput,
    { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    (a) =>
      answer(
        () =>
          serial(async () => {
            const r = await execInSession(binding.ctx, await binding.session(), a.command, {
              env: { ...binding.env },
              ...(a.timeout !== undefined ? { timeoutS: a.timeout } : {}),
              ...(a.max_output !== undefined ? { maxOutputBytes: a.max_output } : {}),
            });
            forget(r.changed);
            return r;
          }),
        execText,
      ),
  );

  register(
    'sync',
    'Adopt outside edits',
    'Commits the edits made in the session worktree outside hagent (by a build, a shell command, by hand) as one commit marked outside, so they can be reviewed and undone.',
    S.SyncInput,
    S.SyncOutput,
    { ...WRITES, idempotentHint: true },
    () =>
      answer(
        () =>
          serial(async () => {
            const r = await syncSession(binding.ctx, await binding.session(), binding.env);
            forget(r.files);
            return r;
          }),
        json,
      ),
  );

  register(
    'review',
    'Review the session',
    'What the session changed against its base: per-file stat, the applied patches (newest first) and the unified diff. stat: only the stat; patches: each patch with its text. Approval stays with the human.',
    S.ReviewInput,
    S.ReviewOutput,
    READ_ONLY,
    (a) =>
      answer(
        async () =>
          reviewSession(binding.ctx, await binding.session(), {
            diff: !a.stat && !a.patches,
            color: false,
            withPatchText: !!a.patches,
          }),
        json,
      ),
  );

  register(
    'log',
    'Journal',
    'Every writing attempt on this session, applied or refused, oldest first, with the code, message and hint of each refusal. failed: only refusals; n: the newest N.',
    S.LogInput,
    S.LogOutput,
    READ_ONLY,
    (a) =>
      answer(async () => {
        const read = await readJournal(binding.ctx.commonDir, {
          session: (await binding.session()).id,
          ...(a.failed ? { failed: true } : {}),
          ...(a.n !== undefined ? { limit: a.n } : {}),
        });
        return { ok: true as const, entries: read.entries, damaged: read.damaged };
      }, json),
  );

  return server;
}
