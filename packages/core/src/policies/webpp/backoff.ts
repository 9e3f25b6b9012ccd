import type { WebppOptions } from './options.js';

/**
 * Delay before the next probe of an ejected server: jittered exponential backoff with
 * "equal jitter", m/2 + u·m/2 where m = min(cap, base · 2^(n+1)), u uniform in [0, 1) and
 * n the probes already sent: the first probe after 1–2 × base, then about twice as long
 * each time, never more than cap. Envoy's outlier detection grows a host's ejection time
 * with each ejection (base_ejection_time × times ejected, up to max_ejection_time, with
 * jitter); doubling reaches the cap in a handful of probes. The jitter keeps the clients of
 * one outage from probing in lockstep ("Exponential Backoff and Jitter", AWS Architecture
 * Blog, 2015).
 */
export function probeDelayMs(probesSent: number, options: Pick<WebppOptions, 'probeBackoffBaseMs' | 'probeBackoffCapMs'>, random: () => number): number {
  const exponent = Math.min(probesSent, 30) + 1;
  const ceilingMs = Math.min(options.probeBackoffCapMs, options.probeBackoffBaseMs * 2 ** exponent);
  return ceilingMs / 2 + (random() * ceilingMs) / 2;
}
