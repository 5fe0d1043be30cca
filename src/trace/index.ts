/**
 * `HAGENT_TRACE=1` prints where the time of one command goes, on stderr: one line per step and
 * per git process, in milliseconds since the process started (`performance.now()`), e.g.
 * `hagent-trace  212.4 ms  git rev-parse (3.1 ms)`. Off by default; costs one branch when off.
 */
const enabled = !!process.env.HAGENT_TRACE;

/** Writes `label` with the time since process start (ms) to stderr when HAGENT_TRACE is set. */
export function trace(label: string): void {
  if (enabled)
    process.stderr.write(`hagent-trace ${performance.now().toFixed(1).padStart(7)} ms  ${label}\n`);
}

/** True when HAGENT_TRACE is set (to skip building a costly label). */
export function tracing(): boolean {
  return enabled;
}
