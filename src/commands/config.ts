/**
 * `hagent config show|schema`: the effective configuration with the source of each value, and
 * the JSON Schema of `.hagent/config.json`.
 */
import { loadConfig } from '../config/index.js';
import { sandboxSettings } from '../sandbox/index.js';
import { openRepo, worktreeRootFor } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';

export async function runConfigShow(argv: { json?: boolean }, io: Io): Promise<number> {
  const ctx = await openRepo(io.cwd);
  const c = await loadConfig(ctx, io.env);
  // worktreeRoot is shown resolved: the folder this repository's session worktrees go to.
  const values: Record<string, unknown> = {
    ...c.policy,
    ...c.runtime,
    worktreeRoot: worktreeRootFor(ctx.commonDir, c.root, c.runtime.worktreeRoot, io.env),
    guard: c.guard,
    sandbox: sandboxSettings(c.sandbox),
  };
  if (argv.json) {
    printJson(io, { ok: true, file: c.file, values, sources: c.sources });
    return 0;
  }
  const p = palette(io.color);
  const lines = [
    `config file: ${c.file ?? p.dim(`none (${c.root ? `${c.root}/.hagent/config.json` : 'bare repository: no worktree holds its HEAD branch, so nothing'} would be read)`)}`,
  ];
  for (const [key, value] of Object.entries(values))
    lines.push(
      `  ${key.padEnd(20)} ${JSON.stringify(value)}  ${p.dim(`(${c.sources[key] ?? 'default'})`)}`,
    );
  printLines(io, lines);
  return 0;
}

/** The schema alone (for `> .hagent/config.schema.json`), or with `--json` inside hagent's envelope. */
export async function runConfigSchema(argv: { json?: boolean }, io: Io): Promise<number> {
  const schema = (await import('../policy/config-schema.js')).configJsonSchema();
  printJson(io, argv.json ? { ok: true, schema } : schema);
  return 0;
}
