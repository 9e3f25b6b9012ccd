/**
 * The worker's side of the background requests (paper Section 4.1, Figure 4: the
 * asynchronous refreshes and probes). Which server, when, and what an answer means is the
 * policy's and core's engine's business (packages/core/src/engine/maintenance.ts); here a
 * background exchange becomes a request: a HEAD (or a small ranged GET) of "a randomly
 * chosen resource" the server is known to hold, never from the HTTP cache and without
 * cookies across origins. Its answer below 500 is a time-to-first-byte sample, taken from
 * Resource Timing like a request's (ttfb-sampler.ts).
 */
import type { BackgroundRequest, ClientEngine, Exchange, RandomSource, ServerId } from '@webpp/core';
import type { ExchangeSender } from './fetch-io.js';
import type { WorkerPlugin } from './plugins.js';
import type { PolicyStore } from './policy-store.js';
import type { PushedLoad } from './pushed-load.js';
import { buildProbeRequest } from './physical-request.js';
import type { SampleStage } from './samples.js';
import type { ProbeUrls } from './server-memory.js';

export interface BackgroundSenderOptions {
  selfOrigin: string;
  probeUrls: ProbeUrls;
  random: RandomSource;
  /** Sends it (the plain fetch, tracked per host by the connection queue). */
  fetch(request: Request): Promise<Response>;
  samples: SampleStage;
  /** Server push in the answers (pushed-load.ts). */
  pushed?: PushedLoad;
}

/** A physical URL the server is known to hold, for the engine's backgroundTarget; for a ranged GET, one at least as large as its range when known. */
export function backgroundTarget(probeUrls: ProbeUrls, random: RandomSource): (server: ServerId, request: BackgroundRequest) => string {
  return (server, request) => probeUrls.pick(server, random, request.method === 'range' ? request.rangeBytes : undefined);
}

export function backgroundSender(options: BackgroundSenderOptions): ExchangeSender {
  return {
    build: (exchange: Exchange, signal) => buildProbeRequest(exchange.target, options.selfOrigin, signal, exchange.method === 'range' ? exchange.rangeBytes : undefined),
    fetch: (request) => options.fetch(request),
    onResponse: (exchange, response, elapsedMs, sentAtMs) => {
      // A ranged GET is read to its end by the driver (fetch-io.ts), so its timing entry has
      // the body's figures; a HEAD has no body to read.
      if (exchange.method !== 'range') response.body?.cancel().catch(() => undefined);
      // A HEAD can wait behind a burst to the same server too: its sample comes from Resource Timing.
      if (response.status < 500) options.samples.add(exchange, response, elapsedMs, sentAtMs, false);
      options.pushed?.read(response, exchange.server);
    },
  };
}

/** handlerDidComplete: after every bound request, the policy's background requests (Figure 4), then a batched state write. */
export function backgroundPlugin(options: { engine: ClientEngine<Response, ExchangeSender>; samples: SampleStage; store: PolicyStore }): WorkerPlugin {
  const { engine, samples, store } = options;
  return {
    async handlerDidComplete(bound) {
      samples.expire();
      await new Promise<void>((resolve) => engine.maintain(bound.candidates, resolve));
      await store.changed();
    },
  };
}
