/**
 * `hagent config show|schema`: the effective configuration with the source of each value, and
 * the JSON Schema of `.hagent/config.json`.
 */
import { loadConfig } from '../config/index.js';
import { openRepo } from '../session/index.js';
import { palette, printJson, printLines, type Io } from '../output/index.js';

export async function runConfigShow(argv: { json?: boolean }, io: Io): Promise<number> {
  const c = await loadConfig(await openRepo(io.cwd), io.env);
  const values: Record<string, unknown> = { ...c.policy, ...c.runtime, guard: c.guard };
  if (argv.json) {
    printJson(io, { file: c.file, values, sources: c.sources });
    return 0;
  }
  const p = palette(io.color);
  const lines = [`config file: ${c.file ?? p.dim(`none (${c.root ? `${c.root}/.hagent/config.json` : 'bare repository'} would be read)`)}`];
  for (const [key, value] of Object.entries(values)) lines.push(`  ${key.padEnd(20)} ${JSON.stringify(value)}  ${p.dim(`(${c.sources[key] ?? 'default'})`)}`);
  printLines(io, lines);
  return 0;
}

export async function runConfigSchema(_argv: unknown, io: Io): Promise<number> {
  printJson(io, (await import('../policy/config-schema.js')).configJsonSchema());
  return 0;
}
