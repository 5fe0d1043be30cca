/**
 * Where each command is documented: its section of docs/commands.md, whose heading is
 * `## hagent <command>` (so the anchor is GitHub's slug of it). `--help` prints it, and
 * test/unit/docs.test.ts checks that every command's anchor exists.
 */
import type { CommandName } from './options.js';

/** The page of the command reference, relative to the package root. */
export const COMMANDS_PAGE = 'docs/commands.md';

/** `docs/commands.md#hagent-session-start` for `session start`. */
export function commandDocsLink(name: CommandName): string {
  return `${COMMANDS_PAGE}#hagent-${name.replace(/ /g, '-')}`;
}
