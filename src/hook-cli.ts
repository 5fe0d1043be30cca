/**
 * `hagent hook AGENT [EVENT]` as a program of its own (dist/hook.cjs, started by the same
 * launcher as the CLI): an agent runs it twice per tool call, so it loads only the hook's code —
 * no yargs, no command table — with a V8 code cache of its own that holds the hook's functions
 * and nothing else (deserialising the CLI's whole cache cost a hook ~3 ms more). The launcher
 * sends only the plain `hook AGENT [EVENT]` line here; anything else (`--help`, an option) goes
 * to the CLI, which reads it the same way. Exit statuses as everywhere (patch-language.md §6).
 */
import { runHook } from './commands/hook.js';
import { toHagentError } from './errors.js';
import { printError, processIo, type Io } from './output/index.js';
import { trace } from './trace/index.js';

trace('cli: loaded');
process.once('exit', () => trace('exit'));

const io: Io = processIo();

const [, agent = '', event] = process.argv.slice(2);
runHook({ agent, ...(event !== undefined ? { event } : {}) }, io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const e = toHagentError(error);
    if (e.code === 'USAGE')
      process.stderr.write(
        `error[USAGE]: ${e.message}\n  hint: ${e.hint ?? 'hagent hook --help'}\n`,
      );
    else printError(io, e, false);
    process.exitCode = e.exitStatus;
  },
);
