/**
 * policy: which paths a patch may touch, how large it may be, when it needs a human yes, and
 * the `.hagent/config.json` schema that configures it.
 * PURE: imports no fs, no git, reads no clock; the caller reads the config file.
 */
export * from './rules.js';
export * from './config.js';
