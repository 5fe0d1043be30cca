/**
 * Whether the operating-system sandbox can start on this machine: undefined when it can, else
 * why not (the tests that need it report themselves skipped with that reason).
 */
import { probeSandbox } from '../../src/sandbox/index.js';

const probe = probeSandbox(process.env);

/** Why no sandbox can start here, or undefined when one can. */
export const sandboxMissing: string | undefined = probe.available ? undefined : probe.reason;
