/**
 * Brownouts (issue 22 §2): a replica that answers some requests with a quick 5xx (it sheds
 * load, or a backend behind it fails now and then). Two things pull apart: ejecting it
 * protects a shedding server, and keeping it uses its fast answers.
 *
 * The rule, after Envoy's outlier detection (envoy.config.cluster.v3.OutlierDetection):
 * - consecutive_5xx: CONSECUTIVE_5XX_TO_EJECT 5xx in a row eject (Envoy's default is 5);
 * - failure_percentage: a time-decayed 5xx share of at least FAILURE_SHARE_TO_EJECT over at
 *   least MIN_REQUEST_WEIGHT requests ejects (Envoy's failure_percentage_threshold is 85 %
 *   with a request volume of 50 per interval, sized for a proxy's traffic; a browser sends a
 *   server tens of requests a minute, so the volume is smaller and the share is a majority:
 *   a server that fails most of what it is sent is shedding, and is spared);
 * - and below those, a 5xx is no ejection: the request fails over at once (a quick 5xx costs
 *   its first byte), and the server is ranked by what its errors cost, the expected time of
 *   trying until an answer, E / (1 − p) for a 5xx share p (the mean of a geometric number of
 *   tries), so its load falls in proportion to its errors while its good answers are used.
 * Refused or reset connections and bodies cut off still eject at once (ejectAfterFailures;
 * Envoy's local-origin errors): they are what a dead server does; timeouts eject only as the
 * second silent one in a row (server-record.ts, learnSample). The ejected server is probed
 * with the usual backoff.
 */

/** 5xx in a row that eject a server (Envoy's consecutive_5xx default). */
const CONSECUTIVE_5XX_TO_EJECT = 5;
/** A decayed 5xx share at or above this ejects (a server failing most of what it is sent). */
const FAILURE_SHARE_TO_EJECT = 0.5;
/** ... once its decayed request count is at least this (Envoy's request_volume, client-sized). */
const MIN_REQUEST_WEIGHT = 5;
/** Half-life of the share, in requests to the server: recent behaviour decides (a brownout ends). */
const SHARE_HALF_LIFE_REQUESTS = 10;
/** A share above this is counted as this in the ranking: a server that almost always fails is ranked very late, not at infinity. */
const MAX_RANKED_SHARE = 0.9;

const DECAY = 2 ** (-1 / SHARE_HALF_LIFE_REQUESTS);

/** A server's recent 5xx share (decayed per request) and its 5xx streak. */
export class ErrorShare {
  private errorWeight = 0;
  private requestWeight = 0;
  streak = 0;

  /** One answer from the server: a 5xx or not. */
  add(serverError: boolean): void {
    this.errorWeight = this.errorWeight * DECAY + (serverError ? 1 : 0);
    this.requestWeight = this.requestWeight * DECAY + 1;
    this.streak = serverError ? this.streak + 1 : 0;
  }

  get share(): number {
    return this.requestWeight === 0 ? 0 : this.errorWeight / this.requestWeight;
  }

  /** True when the 5xx so far eject the server (the rule above). */
  ejects(): boolean {
    if (this.streak >= CONSECUTIVE_5XX_TO_EJECT) return true;
    return this.requestWeight >= MIN_REQUEST_WEIGHT && this.share >= FAILURE_SHARE_TO_EJECT;
  }

  /** The expected time of a server with this share, trying until an answer: E / (1 − p). */
  penalisedMs(expectedMs: number): number {
    const share = Math.min(MAX_RANKED_SHARE, this.share);
    return share <= 0 ? expectedMs : expectedMs / (1 - share);
  }

  /** After an ejection the server starts afresh when it comes back (its probes decide). */
  reset(): void {
    this.errorWeight = 0;
    this.requestWeight = 0;
    this.streak = 0;
  }
}
