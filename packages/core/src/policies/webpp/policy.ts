/**
 * The `webpp` policy (issue 11; docs/selection.md, "The webpp policy"): size-aware
 * expected times from time-decayed distributions, budgeted hedging at a learned quantile,
 * budgeted refreshes of servers not in use, outlier ejection with jittered exponential
 * probing, and the origin's order at a cold start. Pure: the engine passes the clock
 * (nowMs) and the random source; no DOM, no Node.
 */
import type {
  AggregateResponseTime,
  BackgroundRequest,
  ClientPolicy,
  ExchangeSample,
  HeadFacts,
  HeadRedecision,
  InFlightExchange,
  MaintenanceInput,
  PlanInput,
  PlannedAttempt,
  PolicyDeps,
  PolicyServerView,
} from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { probeDelayMs } from './backoff.js';
import { queueingAtTimeout } from './busy.js';
import { sendableAttempt } from './cold-window.js';
import { MIN_PACE_BYTES, redecideAtHead, WORTH_FACTOR as WORTH_FACTOR_AT_HEAD } from './head-redecision.js';
import { connectionsFor, exchangesAtOnce } from './queue-ahead.js';
import { SizeEstimates } from './size-estimate.js';
import { dueBackground, nextProbeAtMs } from './maintenance.js';
import { resolveWebppOptions, type WebppOptions } from './options.js';
import { EquivalentSet } from './equivalent-set.js';
import { SpreadStates } from './load-spread.js';
import { planAttempts, soleFirstChoice, type HerdContext } from './plan.js';
import { PushedLoads } from './pushed-load.js';
import { Aggregates } from './seed.js';
import { learnSample, ServerRecord, timeoutMsOf } from './server-record.js';
import { mergeSnapshot, toSnapshot } from './snapshot.js';
import { TokenBucket } from './token-bucket.js';

/**
 * Outcomes of a request's attempt after which the engine tries the next replica at once
 * (a timeout asks admitFailover first, which pays for it).
 */
const FAILOVER_OUTCOMES: ReadonlySet<ExchangeSample['outcome']> = new Set(['network-error', 'server-error', 'stale', 'cut-mid-body']);

/** Large resources count as "in use" for this long after the last one was planned (ms). */
const LARGE_IN_USE_MS = 60_000;

export class WebppPolicy implements ClientPolicy {
  readonly name = 'webpp';
  /** Late binding of bursts (ClientPolicy.bindsLate; the engine's late-binding.ts). */
  readonly bindsLate = true;
  readonly options: Readonly<WebppOptions>;
  private readonly records = new Map<ServerId, ServerRecord>();
  private readonly hedgeBucket: TokenBucket;
  private readonly refreshBucket: TokenBucket;
  /**
   * The one budget every extra request spends from (budget-options.ts): hedges, refreshes,
   * probes, cold-start measurements, failovers and resumes.
   */
  private readonly extraBudget: TokenBucket;
  private readonly listeners = new Set<(server: ServerId) => void>();
  private lastLargeSizeAtMs = -Infinity;
  private lastChangeRefreshAtMs = 0;
  /** Push, equivalent-server set and first-visit seeding (issue 13). */
  private readonly herd: HerdContext;
  /** Servers a cold-start race was planned to (plan.ts, coldRace): their hedge is admitted from the extra budget. */
  private readonly coldRace = new Set<ServerId>();
  /** The cold-start race is run once per client (its first request). */
  private coldRaced = false;
  /** Unknown sizes: what the sizes learnt say of a URL never fetched (size-estimate.ts). */
  private readonly sizes = new SizeEstimates();

  constructor(
    private readonly deps: PolicyDeps,
    options: Record<string, unknown> = {},
  ) {
    this.options = resolveWebppOptions(options);
    this.hedgeBucket = new TokenBucket(this.options.hedgeBudgetShare, this.options.bucketCapacityTokens);
    this.refreshBucket = new TokenBucket(this.options.refreshBudgetShare, this.options.bucketCapacityTokens);
    this.hedgeBucket.overflowTo = this.refreshBucket;
    const floor = this.options.extraBudgetFloorTokens;
    this.extraBudget = new TokenBucket(this.options.extraBudgetShare, Math.max(floor, this.options.bucketCapacityTokens), floor);
    this.herd = { pushed: new PushedLoads(), aggregates: new Aggregates(), equivalentSet: new EquivalentSet(), random: deps.random, spreads: new SpreadStates() };
  }

  plan(input: PlanInput): PlannedAttempt[] {
    // Every planned request earns its share of hedges and refreshes (the budgets); a held request planned again is not a new one.
    if (input.rebind !== true) {
      this.hedgeBucket.earn();
      this.refreshBucket.earn();
      this.extraBudget.earn();
    }
    // Unknown sizes (issue 22 §2): ranked by the size the site's sizes predict, not by first byte alone.
    const sizeBytes = input.sizeBytes ?? this.sizes.estimate(input.logicalUrl);
    if ((sizeBytes ?? 0) >= this.options.rangeRefreshBytes) this.lastLargeSizeAtMs = input.nowMs;
    for (const server of input.candidates) this.recordOf(server);
    const sized = input.sizeBytes === undefined ? { ...input, sizeBytes } : input;
    if (input.rebind !== true) this.coldRace.clear();
    const attempts = planAttempts(sized, this.records, this.options, this.hedgeBucket.canSpend(), this.herd, !this.coldRaced && input.rebind !== true);
    for (const attempt of attempts) {
      if (attempt.reason !== 'cold-start-race') continue;
      this.coldRace.add(attempt.server);
      this.coldRaced = true;
    }
    const first = attempts[0] === undefined ? undefined : this.records.get(attempts[0].server);
    if (first !== undefined) first.requestedAtMs = input.nowMs;
    return attempts;
  }

  /** Late binding (ClientPolicy.sendableAttempt): a server whose first byte, or pace for a large body, is unknown takes one exchange of this client at a time (cold-window.ts). */
  sendableAttempt(servers: readonly ServerId[], inFlight: readonly InFlightExchange[], sizeBytes: number, _nowMs: number): number | undefined {
    return sendableAttempt(servers, this.records, inFlight, sizeBytes, this.options);
  }

  /**
   * ClientPolicy.isSoleFirstChoice (plan.ts, soleFirstChoice): `server` is in the equivalent
   * set, measured, available and would not be hedged. Nothing is earned or spent: no request
   * was planned.
   */
  isSoleFirstChoice(input: PlanInput, server: ServerId): boolean {
    const sizeBytes = input.sizeBytes ?? this.sizes.estimate(input.logicalUrl);
    const sized = input.sizeBytes === undefined ? { ...input, sizeBytes } : input;
    return soleFirstChoice(sized, this.records, this.options, this.hedgeBucket.canSpend(), this.herd, server);
  }

  /** ClientPolicy.exchangesAtOnce (queue-ahead.ts): the browser's connections for its protocol, or the server's own concurrency when lower. */
  exchangesAtOnce(server: ServerId): number {
    return exchangesAtOnce(this.records.get(server));
  }

  /**
   * A hedge spends a hedge token and one of the extra budget, which it may borrow (down to
   * the bucket's capacity in debt) as failovers may: the tail comes first, background
   * measurements wait until the debt is paid back.
   */
  admitHedge(server: ServerId, _nowMs: number): boolean {
    // The cold start's race (plan.ts, coldRace): once per client, outside the budget as the
    // cold start's first measurements are (maintenance.ts: a server never measured is measured
    // at once); it leaves the floor's tokens to the throughput measurements that follow.
    if (this.coldRace.delete(server)) return true;
    if (!this.hedgeBucket.canSpend() || !this.extraBudget.borrow()) return false;
    return this.hedgeBucket.trySpend();
  }

  /**
   * A request's attempt on `server` timed out (ClientPolicy.admitFailover; docs/selection.md,
   * "A failover after a timeout"). The timed-out attempt keeps running beside the failover
   * (the engine's deadline), so the failover is one extra request:
   * - on a server whose pushed service time says it queues (busy.ts, queueingAtTimeout) only
   *   for a token in hand, else the client keeps waiting on it: a saturated cluster must not
   *   get more load from its clients' timeouts (Envoy's retry budget; Finagle's RetryBudget);
   * - after any other timeout (a stall, a hang, a dead server) always, paid from the one
   *   budget while it can borrow, free when it cannot. Refused for want of a token, it held
   *   pages on stalled or hung servers up to the 5 s deadline (the chaos bench's tail). The
   *   timeout (3 × the p99 of the server's answers) and ejection after two silent ones bound
   *   how often it happens.
   */
  admitFailover(server: ServerId, nowMs: number): boolean {
    const record = this.records.get(server);
    const queueing = record?.state === 'available' && queueingAtTimeout(this.herd.pushed.get(server), timeoutMsOf(record, this.options), nowMs, this.options);
    if (queueing ? this.extraBudget.trySpend() : this.extraBudget.borrow()) {
      this.refreshBucket.charge();
      return true;
    }
    return !queueing;
  }

  /**
   * Every replica failed (ClientPolicy.retryAfterMs): the plan again after the probes'
   * jittered exponential backoff (backoff.ts), while the request is younger than
   * retryWindowMs. Its attempts are extra requests, paid as failovers are (observe).
   * The window waits for a replica that failed lately (a restart, a flap) to be back. When
   * every server of the plan was ejected longer than a window ago already, and none has
   * answered since, nothing says one is about to return: their probes (backoff.ts) bring them
   * back, and the request fails now rather than hold its page for the window, load after
   * load (a file whose every replica is gone then costs what it costs without webpp).
   */
  retryAfterMs(round: number, elapsedMs: number, servers?: readonly ServerId[]): number | undefined {
    const { retryWindowMs } = this.options;
    if (servers !== undefined && servers.length > 0 && servers.every((server) => this.goneLongerThan(server, retryWindowMs))) return undefined;
    const delayMs = probeDelayMs(round, this.options, this.deps.random);
    return elapsedMs + delayMs <= retryWindowMs ? delayMs : undefined;
  }

  /** Ejected by this client more than `windowMs` ago, and not back since. */
  private goneLongerThan(server: ServerId, windowMs: number): boolean {
    const record = this.records.get(server);
    return record !== undefined && record.state === 'failed' && record.ejectedAtMs > 0 && this.deps.now() - record.ejectedAtMs > windowMs;
  }

  observe(sample: ExchangeSample): void {
    // Failovers and resumes are extra requests too: they are paid from the refresh budget,
    // so that refreshes make room for them and the total stays within the budgets. Not the
    // failover after a refused or reset connection: the server did no work (nothing to
    // protect it from), and the failover is the request itself, not one more. Charged, they
    // kept the budget at its debt limit through a run of kills and partitions (the chaos
    // bench: 93 of 124 failovers), and starved what the budget is for: the probes that see a
    // replica come back, the hedges and the fetch elsewhere of a crawling body.
    if ((sample.purpose === 'request' && FAILOVER_OUTCOMES.has(sample.outcome) && sample.outcome !== 'network-error') || (sample.purpose === 'resume' && sample.outcome !== 'cancelled')) {
      this.refreshBucket.charge();
      this.extraBudget.charge();
    }
    // A large body served tells that large resources are in use even when no plan knew its
    // size (the worker learns sizes from responses when the bindings carry none).
    if (sample.outcome === 'served' && (sample.bodyBytes ?? 0) >= this.options.rangeRefreshBytes) {
      this.lastLargeSizeAtMs = Math.max(this.lastLargeSizeAtMs, sample.nowMs);
    }
    const record = this.recordOf(sample.server);
    // A probe of an ejected server is paid when the server answers it (maintenance.ts); a
    // refused or reset one did no work there, and is free as such a failover is.
    if (sample.purpose === 'probe' && record.unpaidProbes > 0) {
      record.unpaidProbes--;
      if (sample.outcome !== 'network-error') this.extraBudget.charge();
    }
    // A timeout behind as many of this client's own exchanges as the server takes at once
    // (its connections, or its own concurrency) is the client's queue, not the server's
    // failure (issue 22 §2, bursts).
    const ownQueue = (sample.queuedAhead ?? 0) >= Math.min(connectionsFor(sample.protocol ?? record.protocol), exchangesAtOnce(record));
    const timeoutMs = timeoutMsOf(record, this.options);
    // A silence on a server that answered this client meanwhile (a head in the ledger, or a sample since), or queues, is no failure (server-record.ts, learnSample).
    const busy =
      sample.answeredWhileWaiting === true ||
      (sample.outcome === 'timeout' && (ownQueue || record.lastHeadAtMs > sample.nowMs - timeoutMs || queueingAtTimeout(this.herd.pushed.get(sample.server), timeoutMs, sample.nowMs, this.options)));
    const result = learnSample(record, sample, this.options, this.deps.random, busy);
    if (result === 'ejected') {
      this.herd.equivalentSet.remove(sample.server);
      for (const listener of [...this.listeners]) listener(sample.server);
    }
    const { ttfbMs } = sample;
    if ((sample.outcome === 'served' || sample.outcome === 'stale') && ttfbMs !== undefined) {
      const sentAtMs = sample.nowMs - ttfbMs - (sample.bodyMs ?? 0);
      this.herd.pushed.of(sample.server).learnResponse(ttfbMs, sentAtMs, sample.nowMs, sample.serviceMs, this.options);
    }
  }

  /** Unknown sizes (ClientPolicy.estimateSizeBytes; size-estimate.ts). */
  estimateSizeBytes(logicalUrl: string): number | undefined {
    return this.sizes.estimate(logicalUrl);
  }

  learnSize(logicalUrl: string, sizeBytes: number): void {
    this.sizes.learn(logicalUrl, sizeBytes);
  }

  /**
   * Decide again at the response head (ClientPolicy.reconsiderAtHead; head-redecision.ts):
   * the fetch elsewhere, when it is worth its cost and the one extra budget admits it. It is
   * the failover of a body that crawls or stalls (saving more than it costs, by the rule), so
   * it may borrow as a failover after a timeout does (admitFailover), down to the bucket's
   * capacity in debt. Beyond, a body proven slow by its own bytes is still moved (the rest
   * fetched, the first dropped); a copy of a whole body waits for a doubled price, and a
   * driver that can wait looks again after one fetch elsewhere: later requests pay the debt
   * back while the body runs.
   */
  reconsiderAtHead(facts: HeadFacts): HeadRedecision | undefined {
    if (facts.logicalUrl !== undefined) this.sizes.learn(facts.logicalUrl, facts.contentLengthBytes);
    // A large Content-Length at the head: large resources are in use (maintenance.ts measures the links' pace then), before any such body ended.
    if (facts.contentLengthBytes >= this.options.rangeRefreshBytes) this.lastLargeSizeAtMs = Math.max(this.lastLargeSizeAtMs, facts.nowMs);
    const decision = redecideAtHead(facts, this.records, this.options);
    if (decision === undefined) return undefined;
    // Asking again later costs nothing; a fetch started now spends from the one extra budget.
    if ((decision.startAfterMs ?? 0) > 0) return decision;
    const paced = (facts.bodyBytesSoFar ?? 0) >= MIN_PACE_BYTES;
    if (!(this.extraBudget.trySpend() || this.extraBudget.borrow())) {
      // In debt at its limit. A body whose own bytes prove it (its pace measured,
      // HeadFacts.bodyBytesSoFar; a prediction from the server's past is no proof) slower than
      // twice the rest elsewhere is moved, not copied: such a driver fetches only the rest and
      // drops the first body once the rest answers (the worker: head-race.ts, raced-body.ts), so
      // the servers carry the same bytes, plus the overlap. The move replaces an attempt proven
      // to lose, as the failover after a timeout does (admitFailover): charged, never refused for
      // want of a token, at most one per body. Refused, bodies at 100–500 kB/s ran on for 2–10 s
      // beside a healthy replica in the chaos bench, the budget held at its limit by the faults.
      //
      // A driver that cannot count the body's bytes (the simulator) races a whole second copy:
      // extra work, priced by the debt. Its price doubles with every token the budget is short
      // of (C3's load penalty, priced in time: the more the client owes, the larger the saving
      // an extra request must bring). Its one proof is the time the body has taken, the rent
      // paid so far: rent or buy (head-redecision.ts) at that doubled price, the fetch bought
      // once the body has run for longer than that and its predicted rest (if any) is longer
      // too, so a body about to end is left to end. Without it such a driver never bought with
      // the debt at its limit, and nothing pays the debt back while a page waits for its own
      // burst: a first page's bodies, bound to a replica whose link then fell to a fifteenth,
      // ran on past the page's 5 minutes.
      const rentPaidMs = facts.bodyBytesSoFar === undefined ? (facts.bodyElapsedMs ?? 0) : 0;
      const provenMs = Number.isNaN(decision.restHereMs) ? rentPaidMs : Math.min(rentPaidMs, decision.restHereMs);
      if (!(paced || provenMs > WORTH_FACTOR_AT_HEAD * 2 ** (1 - this.extraBudget.balance) * decision.elsewhereMs)) {
        return facts.deferrable ? { ...decision, startAfterMs: Math.max(1, decision.elsewhereMs) } : undefined;
      }
      this.extraBudget.charge();
    }
    // The fetch elsewhere starts. The body here will end cancelled, and a cancelled exchange
    // teaches nothing (learnSample): its server kept the pace of its last complete body, and
    // the next large body went there again, to crawl again (the nine scenarios' flapping: a
    // replica in its bad phase). What it did so far is learnt now: from a driver that counts
    // its bytes (at least MIN_PACE_BYTES), those bytes over the time since the head, a sample
    // of the link's pace as a complete body is; else the whole length was not there after that
    // time, so the link is at most that fast, a censored sample (throughput.ts, addAtMost).
    // A slower link is news as from a complete body (learnSample): the others are re-measured.
    // (redecideAtHead decides only for a server it knows.)
    // (Its exchange is taken as sent at the head: its first byte only shifts the gap share.)
    const here = this.records.get(facts.server)!;
    const elapsedMs = facts.bodyElapsedMs ?? 0;
    const halfLifeMs = this.options.estimateHalfLifeMs;
    if (elapsedMs > 0 && (paced ? here.throughput.add(facts.bodyBytesSoFar!, elapsedMs, facts.nowMs, halfLifeMs) : here.throughput.addAtMost(facts.contentLengthBytes, elapsedMs, facts.nowMs, halfLifeMs))) {
      here.changeSuspectedAtMs = facts.nowMs;
    }
    return decision;
  }

  /** Server push (ClientPolicy.learnPushedServiceTime; pushed-load.ts). A value dated in the future is ignored. */
  learnPushedServiceTime(server: ServerId, serviceMs: number, atMs: number, utilisation?: number): void {
    if (!(atMs <= this.deps.now())) return;
    this.herd.pushed.of(server).learnService(serviceMs, atMs, this.options, utilisation);
  }

  /** First visits (ClientPolicy.learnAggregateResponseTimes; seed.ts). */
  learnAggregateResponseTimes(rows: readonly AggregateResponseTime[], _atMs: number): void {
    if (Array.isArray(rows)) this.herd.aggregates.learn(rows);
  }

  maintenance(input: MaintenanceInput): BackgroundRequest[] {
    const context = {
      records: this.records,
      recordOf: (server: ServerId) => this.recordOf(server),
      options: this.options,
      refreshBucket: this.refreshBucket,
      extraBudget: this.extraBudget,
      largeResourcesInUse: input.nowMs - this.lastLargeSizeAtMs < LARGE_IN_USE_MS,
      // A URL never named: the site's mean size (the type '' of extensionless URLs shrunk toward it).
      meanSizeBytes: this.sizes.estimate('') ?? 0,
      random: this.deps.random,
      lastChangeRefreshAtMs: this.lastChangeRefreshAtMs,
    };
    const due = dueBackground(input, context);
    this.lastChangeRefreshAtMs = context.lastChangeRefreshAtMs;
    return due;
  }

  nextMaintenanceAtMs(_nowMs: number): number | undefined {
    return nextProbeAtMs(this.records.values());
  }

  onServerFailed(listener: (server: ServerId) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): unknown {
    return toSnapshot(this.records.values());
  }

  /** Merges stored state into what is in memory (snapshot.ts, mergeSnapshot); malformed state changes nothing. */
  restore(state: unknown): void {
    mergeSnapshot(this.records, state, this.options, this.deps.now());
  }

  describe(nowMs: number): PolicyServerView[] {
    return [...this.records.values()].map((record) => {
      const view: PolicyServerView = {
        server: record.server,
        state: record.state === 'failed' ? 'failed' : record.measured ? 'available' : 'unknown',
        sampleCount: record.sampleCount,
        lastSampleAtMs: record.lastSampleAtMs,
      };
      if (record.measured) view.ttfbEstimateMs = record.ttfb.meanMs();
      view.timeoutMs = timeoutMsOf(record, this.options);
      const rate = record.throughput.bytesPerMs();
      if (rate !== undefined) view.throughputBytesPerMs = rate;
      if (record.state === 'failed') view.nextProbeAtMs = Math.max(nowMs, record.nextProbeAtMs);
      if (record.protocol !== undefined) view.protocol = record.protocol;
      return view;
    });
  }

  private recordOf(server: ServerId): ServerRecord {
    let record = this.records.get(server);
    if (record === undefined) {
      record = new ServerRecord(server);
      this.records.set(server, record);
    }
    return record;
  }
}

/** The registry's factory (PolicyFactory): `createWebppPolicy(deps, options)`. */
export function createWebppPolicy(deps: PolicyDeps, options?: Record<string, unknown>): WebppPolicy {
  return new WebppPolicy(deps, options);
}
