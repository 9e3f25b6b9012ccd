/**
 * Approximated global access counts (GOS: Chen, Wang, Lau, "A Scalable Cluster-based Web
 * Server with Cooperative Caching Support", Section 4.1 and 4.3).
 *
 * - Every server counts its own hits of an object in a local access counter (LAC).
 * - The object's home server keeps the approximated global access counter (AGAC). Other
 *   servers report their LACs to it periodically, or at once when a LAC reaches
 *   `reportThreshold` ("requests for Web objects tend to come in bursts"); the home adds
 *   each report to the AGAC and answers with the new AGAC, which the reporter keeps as its
 *   copy and then clears its LAC.
 * - A server's estimate of an object's global count is its AGAC copy plus its LAC (at the
 *   home: the AGAC itself, to which its own hits are added directly).
 * - Aging (LFU-Aging, Section 4.4): "the AGAC values in objects' home nodes are halved at the
 *   end of a pre-set time interval". We halve the copies at the other servers too, at the
 *   same interval, so that a server that stops seeing an object does not keep its old
 *   count forever while it has nothing to report (GOS refreshes copies only on reports).
 *
 * The home also keeps which servers hold a copy in memory (the GOT's "node number(s) of
 * existing cached copies", Section 4.1): reports carry each reporter's holding state, so
 * the home can say where a copy is (Section 4.2).
 *
 * Pure: the clock is injected, nothing here does I/O.
 */

/** One line of a report to a home: path, hits since the last report, and whether the reporter holds a copy. */
export type CountReportEntry = [path: string, hits: number, holds: boolean];

interface LocalCount {
  /** Copy of the home's AGAC, from the last feedback. */
  globalCopy: number;
  /** Hits since the last report (LAC). */
  localHits: number;
  holds: boolean;
  /** Holding state changed since the last report. */
  holdsChanged: boolean;
}

interface HomedCount {
  /** AGAC. */
  global: number;
  holders: Set<string>;
}

export interface AccessCountsOptions {
  /** This server's name (public origin). */
  self: string;
  /** A LAC reaching this many hits is reported at once. */
  reportThreshold: number;
  /** AGACs (and their copies) are halved every this many ms; 0: never. */
  agingIntervalMs: number;
  /** At most this many objects are tracked, in each table; the least counted go first. */
  maxObjects: number;
  now?: () => number;
}

export class AccessCounts {
  private readonly local = new Map<string, LocalCount>();
  private readonly homed = new Map<string, HomedCount>();
  private readonly now: () => number;
  private lastAgingAtMs: number;

  constructor(private readonly options: AccessCountsOptions) {
    this.now = options.now ?? Date.now;
    this.lastAgingAtMs = this.now();
  }

  /**
   * Counts one hit of `path`, whose home is `home`. Returns true when the LAC reached the
   * report threshold (the caller reports to the home now).
   */
  hit(path: string, home: string | undefined): boolean {
    this.ageIfDue();
    if (home === undefined || home === this.options.self) {
      this.homedEntry(path).global += 1;
      return false;
    }
    const entry = this.localEntry(path);
    entry.localHits += 1;
    return entry.localHits >= this.options.reportThreshold;
  }

  /** This server's estimate of the global count of `path`. */
  countOf(path: string): number {
    this.ageIfDue();
    const homed = this.homed.get(path);
    const local = this.local.get(path);
    return Math.max(homed?.global ?? 0, (local?.globalCopy ?? 0) + (local?.localHits ?? 0));
  }

  /** Records whether this server holds a copy of `path` (reported to its home with the next report). */
  setHolds(path: string, holds: boolean, home: string | undefined): void {
    if (home === undefined || home === this.options.self) {
      const entry = this.homedEntry(path);
      if (holds) entry.holders.add(this.options.self);
      else entry.holders.delete(this.options.self);
      return;
    }
    const entry = this.local.get(path);
    if (entry === undefined && !holds) return;
    const target = entry ?? this.localEntry(path);
    if (target.holds !== holds) {
      target.holds = holds;
      target.holdsChanged = true;
    }
  }

  /**
   * Takes what is to be reported, grouped by home (`homeOf` gives each path's current home),
   * and clears the LACs of what it takes. `onlyPath`: just that path (a threshold report).
   * Paths whose home is this server are folded into the home table at once.
   */
  takeReports(homeOf: (path: string) => string | undefined, onlyPath?: string): Map<string, CountReportEntry[]> {
    const reports = new Map<string, CountReportEntry[]>();
    const paths = onlyPath === undefined ? [...this.local.keys()] : [onlyPath];
    for (const path of paths) {
      const entry = this.local.get(path);
      if (entry === undefined || (entry.localHits === 0 && !entry.holdsChanged)) continue;
      const home = homeOf(path);
      if (home === undefined || home === this.options.self) {
        // Rehomed here: the counts come home.
        const homed = this.homedEntry(path);
        homed.global += entry.localHits;
        if (entry.holds) homed.holders.add(this.options.self);
        entry.globalCopy = homed.global;
      } else {
        const list = reports.get(home) ?? [];
        list.push([path, entry.localHits, entry.holds]);
        reports.set(home, list);
      }
      entry.localHits = 0;
      entry.holdsChanged = false;
    }
    return reports;
  }

  /** A report could not be delivered: its counts go back, to be sent with the next one. */
  restoreReport(entries: readonly CountReportEntry[]): void {
    for (const [path, hits] of entries) {
      const entry = this.localEntry(path);
      entry.localHits += hits;
      entry.holdsChanged = true;
    }
  }

  /** The home's answer to a report: the new AGAC of each reported path. */
  applyFeedback(counts: readonly [path: string, global: number][]): void {
    for (const [path, global] of counts) {
      const entry = this.local.get(path);
      if (entry !== undefined) entry.globalCopy = global;
    }
  }

  /** At the home: adds a peer's report and answers with the new AGACs (GOS Section 4.3). */
  receiveReport(from: string, entries: readonly CountReportEntry[]): [path: string, global: number][] {
    this.ageIfDue();
    return entries.map(([path, hits, holds]) => {
      const entry = this.homedEntry(path);
      entry.global += hits;
      if (holds) entry.holders.add(from);
      else entry.holders.delete(from);
      return [path, entry.global];
    });
  }

  /** At the home: the servers that reported holding a copy of `path` (this one included). */
  holdersOf(path: string): string[] {
    return [...(this.homed.get(path)?.holders ?? [])];
  }

  /** Forgets a server as a holder of anything (it died or restarted with an empty memory). */
  forgetHolder(server: string): void {
    for (const entry of this.homed.values()) entry.holders.delete(server);
  }

  /** Forgets every holder of the paths that `matches` (an invalidation removed the copies). */
  forgetCopies(matches: (path: string) => boolean): void {
    for (const [path, entry] of this.homed) if (matches(path)) entry.holders.clear();
    for (const [path, entry] of this.local) if (matches(path)) entry.holds = false;
  }

  /** Sends every holding state again with the next reports (homes moved, or a home forgot us). */
  reannounceHolds(): void {
    for (const entry of this.local.values()) if (entry.holds) entry.holdsChanged = true;
  }

  /** The estimated global count of every tracked object (for the hot threshold). */
  *trackedCounts(): Iterable<number> {
    for (const path of this.homed.keys()) yield this.countOf(path);
    for (const path of this.local.keys()) if (!this.homed.has(path)) yield this.countOf(path);
  }

  get trackedObjects(): number {
    return this.local.size + this.homed.size;
  }

  private ageIfDue(): void {
    const { agingIntervalMs } = this.options;
    if (agingIntervalMs <= 0) return;
    const nowMs = this.now();
    const periods = Math.floor((nowMs - this.lastAgingAtMs) / agingIntervalMs);
    if (periods <= 0) return;
    this.lastAgingAtMs += periods * agingIntervalMs;
    // Halving once per elapsed period (GOS Section 4.4); 2^-periods at once.
    const factor = 2 ** -Math.min(periods, 60);
    for (const entry of this.homed.values()) entry.global = Math.floor(entry.global * factor);
    for (const entry of this.local.values()) entry.globalCopy = Math.floor(entry.globalCopy * factor);
  }

  private localEntry(path: string): LocalCount {
    let entry = this.local.get(path);
    if (entry === undefined) {
      entry = { globalCopy: 0, localHits: 0, holds: false, holdsChanged: false };
      this.local.set(path, entry);
      this.bound(this.local, (value) => value.globalCopy + value.localHits + (value.holds ? Number.MAX_SAFE_INTEGER / 2 : 0));
    }
    return entry;
  }

  private homedEntry(path: string): HomedCount {
    let entry = this.homed.get(path);
    if (entry === undefined) {
      entry = { global: 0, holders: new Set() };
      this.homed.set(path, entry);
      this.bound(this.homed, (value) => value.global + (value.holders.size > 0 ? Number.MAX_SAFE_INTEGER / 2 : 0));
    }
    return entry;
  }

  /** Over the bound: drops the least counted tenth (objects held somewhere are dropped last). */
  private bound<T>(table: Map<string, T>, weight: (value: T) => number): void {
    if (table.size <= this.options.maxObjects) return;
    const drop = Math.max(1, Math.floor(this.options.maxObjects / 10));
    const sorted = [...table.entries()].sort((a, b) => weight(a[1]) - weight(b[1]));
    for (const [path] of sorted.slice(0, drop)) table.delete(path);
  }
}
