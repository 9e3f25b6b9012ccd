/**
 * What the evaluation baselines share: they model a browser *without* Web++ (paper Section
 * 6.1's single server, plain DNS-style rotation, "optimal"), so they never time out on their
 * own (a browser waits until the page gives up), never fail over and send no background
 * requests.
 */

/** The longest timer a browser accepts (2^31 − 1 ms, about 24.8 days): in effect no timeout. */
export const NO_TIMEOUT_MS = 2_147_483_647;
