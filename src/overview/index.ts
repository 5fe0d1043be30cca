/**
 * overview: the repository at a glance for `hagent status` — every session's agent, land state,
 * commits, files, drift and worktree, read with one `for-each-ref` and one `diff-tree --stdin`
 * for all of them (./read.ts), rendered as aligned columns (./render.ts), and watched by a cheap
 * poll of the files behind it (./watch.ts). Reads only: it writes nothing but what session/drift
 * keeps reachable. Imports session/, git/ and output/ types; never transaction/ or fsx/.
 */
export { readOverview, type Overview, type OverviewRow, type OverviewState } from './read.js';
export { COLUMNS, renderOverview, type Column } from './render.js';
export { fingerprint, watchedPaths, watchOverview, type WatchOptions } from './watch.js';
