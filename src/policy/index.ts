/**
 * policy: which paths a patch may touch, how large it may be, when it needs a human yes, and
 * the `.hagent/config.json` schema that configures it.
 * PURE: imports no fs, no git, reads no clock; the caller reads the config file.
 * `config-schema.ts` (the zod schema) is its second public face, imported lazily with
 * `await import()` so that commands without a config file never load zod's classic build.
 */
export * from './rules.js';
export * from './config.js';
