/**
 * Tunables of the webpp policy for many clients (issue 13; Fei et al., INFOCOM 1998):
 * server push (pushed-load.ts), equivalent-server sets (equivalent-set.ts) and first-visit
 * seeding (seed.ts). Part of WebppOptions (options.ts); every default says why.
 */

import { NON_NEGATIVE, SHARE, type OptionRule } from './option-rules.js';

export interface HerdOptions {
  /**
   * τ_join: a server joins the equivalent-server set when its estimate is within this share
   * of the best (E ≤ (1 + τ_join) · E_best). 0.1: Fei's Figures 8 and 10 — the best
   * response times with τ_join 0.1 or 0.2 and τ_leave 0.3 or 0.4, and no oscillation at
   * 0.1 / 0.4. Fei's thresholds are differences |R_j − R_top|; ours are relative to R_top so
   * that one value suits nearby and distant servers alike. 0 with τ_leave 0: no sets (the
   * single best, issue 11).
   */
  equivalentSetJoinRatio: number;
  /**
   * τ_leave: a member leaves when its estimate falls behind the best by more than this
   * share (E > (1 + τ_leave) · E_best); τ_leave ≥ τ_join gives the hysteresis. 0.4: Fei's
   * Figure 10 (no oscillation); Figure 9 (0.05 / 0.05) shows the herd.
   */
  equivalentSetLeaveRatio: number;
  /**
   * A request picks a member with weight (E_best / E)^k. 0: uniform, as Fei's resolver
   * ("picks at random from this set"). Default 2: a member 40 % slower gets about half the
   * best one's share (1 / 1.96), one 10 % slower 83 %; so a single client still leans to the
   * faster server (issue 13: keep single-client quality — with k = 1 the flapping-replica
   * test of issue 11 lost 5 % on its mean, with 2 it keeps it), while many clients spread.
   */
  equivalentSetWeightExponent: number;
  /**
   * σ: how strongly the servers' pushed utilisation u spreads the requests (load-spread.ts):
   * servers outside the set get a spill of min(1, σ · the members' mean queued(u)) of the
   * weight. 0: off (the set alone: the herd of docs/evaluation.md "Herding" comes back).
   * 1: as much as the members are busy.
   */
  loadSpreadShare: number;
  /**
   * A server busy for less than this share of its last interval counts as idle for the
   * spread; above it, the load is rescaled to [0, 1). 0.2: a few clients' own page loads
   * (an origin's event loop a few per cent busy) must not send one client's requests to
   * farther servers; the herd's servers are busier than that (0.5–0.8 in the simulator).
   */
  loadSpreadFloorShare: number;
  /**
   * k_spread: the requests passed on outside the set lean to the nearer servers with weight
   * (E_best / E)^k_spread. 0.5: a server twice as slow gets 71 % of the share. In the
   * simulator's herd of 10 000 clients on 10 servers, 1 kept too much on the near servers
   * (load_cv above half the single best's) and 0 sent too much far (mean above random's).
   */
  loadSpreadExponent: number;
  /**
   * While the servers are busy, the share of requests on which the client draws its first
   * attempt's server again; on the others it keeps the one it drew (load-spread.ts,
   * keepDrawn). 1: a new draw every request (the herd returns). 0.2: the clients together
   * move at most a fifth of their requests at a time.
   */
  spreadRedrawShare: number;
  /** Half-life with which the spill falls back after the members' load drops (ms). 10 000: two of the simulator's think times. */
  loadSpreadReleaseHalfLifeMs: number;
  /**
   * A pushed service time older than this is not used (ms); 0 turns push off. 60 000: the
   * origin forwards peers' values for up to 60 s (peerLoadMaxAgeMs), and Fei's servers
   * pushed at least every 50 s (T / R · I with I = 10 s).
   */
  pushMaxAgeMs: number;
  /**
   * A server's pushed S replaces the client's own estimate (as A × S) only when S is newer
   * than the client's last own sample of it by more than this (ms): Fei's "in between
   * consecutive probes". 30 000: in the simulator (docs/evaluation.md, "Herding") 2 000 let
   * every client re-rank every server it was not using by the same relayed values at once,
   * and the herd followed (1 000 clients, 3 servers: load_cv 0.88, mean 570 ms against
   * 122 ms without push); at 30 s push reaches the servers a client has not heard from for
   * half a minute (a returning visitor's table, a replica it never uses) and no herd formed.
   */
  pushAfterSilenceMs: number;
  /**
   * Share of the change of a server's pushed S since the client last measured it that is
   * added to the client's own estimate of it (pushed-load.ts, queueShiftMs), on every plan.
   * 1: the whole change of the queue, as Fei's resolver follows every push; 0: off (push
   * then acts only after pushAfterSilenceMs).
   */
  pushSteerShare: number;
  /**
   * An S pairs with a response R when it was valid between the send and this long after
   * the response (ms), so that the Server-Timing read just before or after the sample pairs
   * with it. 250: well under the origin's averaging interval (serviceTimeIntervalMs 1 000).
   */
  pushPairSlackMs: number;
  /**
   * First visit, no aggregate: a never-measured server whose pushed S exceeds the lowest
   * pushed S of the candidates by more than this (ms) goes behind the others (which keep
   * the origin's order). 100: more than a continental round trip, so that queueing inside a
   * server, not distance, is what moves it.
   */
  seedServiceGapMs: number;
}

export const HERD_DEFAULTS: Readonly<HerdOptions> = Object.freeze({
  equivalentSetJoinRatio: 0.1,
  equivalentSetLeaveRatio: 0.4,
  equivalentSetWeightExponent: 2,
  loadSpreadShare: 1,
  loadSpreadFloorShare: 0.2,
  loadSpreadExponent: 0.5,
  spreadRedrawShare: 0.2,
  loadSpreadReleaseHalfLifeMs: 10_000,
  pushMaxAgeMs: 60_000,
  pushAfterSilenceMs: 30_000,
  pushPairSlackMs: 250,
  pushSteerShare: 1,
  seedServiceGapMs: 100,
});

export const HERD_RULES: Record<keyof HerdOptions, OptionRule> = {
  equivalentSetJoinRatio: NON_NEGATIVE,
  equivalentSetLeaveRatio: NON_NEGATIVE,
  equivalentSetWeightExponent: NON_NEGATIVE,
  loadSpreadShare: SHARE,
  loadSpreadFloorShare: [(v) => v >= 0 && v < 1, 'in [0, 1)'],
  loadSpreadExponent: NON_NEGATIVE,
  spreadRedrawShare: [(v) => v > 0 && v <= 1, 'in (0, 1]'],
  loadSpreadReleaseHalfLifeMs: NON_NEGATIVE,
  pushMaxAgeMs: NON_NEGATIVE,
  pushAfterSilenceMs: NON_NEGATIVE,
  pushPairSlackMs: NON_NEGATIVE,
  pushSteerShare: SHARE,
  seedServiceGapMs: NON_NEGATIVE,
};

