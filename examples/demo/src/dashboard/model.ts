/** The dashboard's view model: what it draws, independent of where the data came from. */
import type { ServerId } from '@webpp/core';

/** One replica server of the demo cluster, as the launcher's control endpoint reports it. */
export interface ReplicaView {
  /** "a", "b", "c". */
  id: string;
  /** The replica's origin as the browser sees it, e.g. "http://a.localhost:8081": a ServerId. */
  server: ServerId;
  /** "Near and steady" etc. */
  title: string;
  /** The emulated link in words, e.g. "5 ms ± 1 ms". */
  linkDescription: string;
  running: boolean;
  slowed: boolean;
  /** Requests the replica answered since the demo started, by method. */
  requestCounts: { get: number; head: number; other: number };
}

/** Which replica delivered one resource of a page load. */
export interface ServedResourceView {
  url: string;
  /** The server that finally delivered it; undefined when every replica failed. */
  server: ServerId | undefined;
  /** Servers tried before it, in order. */
  failedServers: ServerId[];
  /** True when the worker let the request through unbound (no bindings). */
  passThrough: boolean;
}

type TimelineKind = 'failover' | 'failed' | 'refresh' | 'probe' | 'recovered' | 'control' | 'error';

export interface TimelineEventView {
  /** Stable identity, so a polled event is listed once. */
  id: string;
  atMs: number;
  kind: TimelineKind;
  server?: ServerId;
  detail: string;
}

/** A colour slot per replica, in order: blue, orange, green (dashboard.css --a/--b/--c). */
export const REPLICA_COLORS = ['var(--a)', 'var(--b)', 'var(--c)', '#7a5af8', '#c026d3', '#0891b2'] as const;

/** How late the demo process's timers run (cluster/machine-load.ts): the machine as the bottleneck. */
export interface MachineLoadView {
  /** 95th percentile and maximum of how late timers fired over the last window, in ms. */
  timerLagP95Ms: number;
  timerLagMaxMs: number;
  windowMs: number;
  /** 1-minute load average and the cores it is shared by. */
  loadAverage: number;
  cores: number;
  /** True when the timers run late enough to distort the emulated links. */
  overloaded: boolean;
}
