/**
 * hagent's own command line run from a session: the verbs that are the human's are refused
 * (approving, landing, taking a land back, ending a session, changing the agents' hook and MCP
 * configuration), and so is every way of dropping the agent marker the CLI reads to refuse them
 * itself (agents/marker.ts). Everything else hagent does from a session (status, review, apply,
 * check, undo, sync, log, session status and update) runs; the words of `hagent exec -- …` are
 * walked as the shell code they are.
 */
import { AGENT_MARKER } from '../agents/marker.js';
import { shellQuote } from './quote.js';
import type { Run, Walker } from './walk.js';
import type { Field } from './words.js';

/** Options of hagent that take a value (`--session ID`): their value is not a command word. */
const VALUE_OPTIONS = new Set([
  '--session',
  '--name',
  '--base',
  '--message',
  '-m',
  '--dir',
  '--timeout',
  '--max-output',
  '--lock-timeout',
]);

/** Node's options that take a value before the script (`node -r x hagent.cjs`). */
const NODE_VALUE_OPTIONS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-C',
  '--conditions',
  '--env-file',
  '--title',
  '--inspect-port',
  '--stack-size',
]);

/** True when `name` (a command name reduced to its basename) starts hagent: `hagent`, `hagent-cli`. */
export function isHagentName(name: string): boolean {
  return /^hagent(-cli)?$/i.test(name);
}

/** True for a script path that is hagent's CLI: `…/hagent`, `…/hagent.cjs`, `…/dist/cli.cjs`. */
export function isHagentScript(file: string): boolean {
  return (
    /(^|\/)hagent(-cli)?(\.[cm]?js)?$/i.test(file) ||
    /(^|\/)dist\/cli\.[cm]?js$/i.test(file) ||
    /(^|\/)hagent-cli\/.*\.[cm]?js$/i.test(file)
  );
}

/** `node [options] SCRIPT ARGS…` where SCRIPT is hagent's CLI: the index of SCRIPT, else -1. */
export function nodeScriptIndex(args: readonly Field[]): number {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === '--') return args[i + 1] && isHagentScript(args[i + 1]!.value) ? i + 1 : -1;
    if (NODE_VALUE_OPTIONS.has(v)) {
      i++;
      continue;
    }
    if (v.startsWith('-')) continue;
    return isHagentScript(v) ? i : -1;
  }
  return -1;
}

/** True when `name` names the marker (an assignment, `unset`, `env -u`): the agent must not drop it. */
export function namesMarker(value: string): boolean {
  return value === AGENT_MARKER || value.startsWith(`${AGENT_MARKER}=`);
}

/** Refuses dropping or overriding the marker; `how` is the spelling seen (for the reason). */
export function refuseMarkerChange(w: Walker, how: string, text: string): void {
  w.block(
    'agent-marker',
    `${how} changes ${AGENT_MARKER}, which tells hagent it runs for an agent`,
    text,
  );
}

/** The command words of a hagent command line (options and their values skipped). */
function commandWords(args: readonly Field[]): { words: Field[]; rest: number } {
  const words: Field[] = [];
  let i = 0;
  let dashes = false;
  for (; i < args.length && words.length < 2; i++) {
    const a = args[i]!;
    // `hagent -- land` still lands (yargs takes the words after -- as its commands); so does `npm exec hagent -- land`.
    if (a.value === '--' && !dashes) {
      dashes = true;
      continue;
    }
    if (!dashes && !a.dynamic && VALUE_OPTIONS.has(a.value)) {
      i++;
      continue;
    }
    if (!dashes && !a.dynamic && a.value.startsWith('-')) continue;
    words.push(a);
    if (words.length === 1 && a.value !== 'session' && a.value !== 'config') {
      i++;
      break;
    }
  }
  return { words, rest: i };
}

/** True when one of `args` is the boolean flag `--NAME` set (not `--no-NAME`, not `--NAME=false`). */
function flagSet(args: readonly Field[], name: string): boolean {
  return args.some(
    (a) =>
      a.dynamic ||
      a.value === `--${name}` ||
      (a.value.startsWith(`--${name}=`) && a.value !== `--${name}=false`),
  );
}

/**
 * Checks `hagent ARGS…` (after its launcher was unwrapped).
 * Refuses with `hagent-human-only` for review --approve, land (and --undo), undo --land, session end,
 * session update --all and integrate; with `agent-marker` when the command line's environment dropped the marker
 * (`env -i hagent …`); with `unresolved` when the verb is only known when it runs.
 */
export function checkHagent(w: Walker, args: readonly Field[], r: Run): void {
  if (r.env.has(AGENT_MARKER))
    return refuseMarkerChange(w, 'the environment of this hagent command', r.text);
  if (args.some((a) => !a.dynamic && (a.value === '--help' || a.value === '-h'))) return; // prints help, runs nothing
  const { words, rest } = commandWords(args);
  const [verb, sub] = words;
  if (!verb) return;
  if (verb.dynamic)
    return w.block(
      'unresolved',
      `the hagent command ${verb.value} is only known when it runs`,
      r.text,
    );
  const human = (what: string): void =>
    w.block('hagent-human-only', `${what} is for the human`, r.text);
  switch (verb.value) {
    case 'land':
      return human('hagent land');
    case 'integrate':
      return human('hagent integrate');
    case 'review':
      if (flagSet(args, 'approve')) human('hagent review --approve');
      return;
    case 'undo':
      if (flagSet(args, 'land')) human('hagent undo --land');
      return;
    case 'session':
      if (sub?.dynamic)
        return w.block(
          'unresolved',
          `the hagent session command ${sub.value} is only known when it runs`,
          r.text,
        );
      if (sub?.value === 'end') human('hagent session end');
      // Every session, not the agent's own: its own is `hagent session update`.
      if (sub?.value === 'update' && flagSet(args, 'all')) human('hagent session update --all');
      return;
    case 'exec': {
      // The words after the options are the command as hagent exec reads them: one word is
      // shell code, several a program and its arguments (each quoted).
      const code = args.slice(rest);
      let start = 0;
      while (
        start < code.length &&
        code[start]!.value.startsWith('-') &&
        code[start]!.value !== '--' &&
        !code[start]!.dynamic
      )
        start += VALUE_OPTIONS.has(code[start]!.value) ? 2 : 1;
      if (code[start]?.value === '--') start++;
      const words2 = code.slice(start);
      // No command words: hagent exec reads the command from stdin.
      if (words2.length === 0) {
        if (r.stdin?.literal !== undefined)
          w.source(r.stdin.literal, { cwd: r.scope.cwd, vars: new Map(r.env) }, r.depth + 1);
        return;
      }
      const dyn = words2.find((a) => a.dynamic);
      if (dyn)
        return w.block('unresolved', `the code ${dyn.value} is only known when it runs`, r.text);
      return w.source(
        words2.length === 1 ? words2[0]!.value : words2.map((a) => shellQuote(a.value)).join(' '),
        { cwd: r.scope.cwd, vars: new Map(r.env) },
        r.depth + 1,
      );
    }
    default:
      return;
  }
}
