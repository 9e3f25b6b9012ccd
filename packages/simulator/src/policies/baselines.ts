/**
 * Baseline policies without a latency table: a single server (no replication), random and
 * round-robin choice (no failover, like plain DNS rotation), and "optimal" (paper Section
 * 6.1: send to every replica in parallel and take the first complete response).
 */
import type { ExchangeHandle } from '../network.js';
import type { CancelRequest, LogicalRequest, Policy, PolicyEnvironment, RequestResult } from '../policy.js';

/** Sends one GET to `server` and reports its outcome; no retry. */
function fetchFrom(environment: PolicyEnvironment, server: string, request: LogicalRequest, done: (result: RequestResult) => void): CancelRequest {
  let started = false;
  const handle = environment.network.send(
    { server, method: 'GET', bodyBytes: request.sizeBytes, key: request.key, purpose: 'request' },
    {
      onFirstByte: () => {
        started = true;
      },
      onComplete: () => done({ ok: true, server }),
      onError: () => done({ ok: false, failure: started ? 'cut-mid-body' : 'no-replica' }),
    },
  );
  return () => {
    handle.cancel();
    return started ? 'cut-mid-body' : undefined;
  };
}

export function singleServerPolicy(server: string): Policy {
  return {
    name: `single-${server}`,
    description: `every request to server ${server} only (no replication)`,
    start(environment) {
      if (!environment.servers.includes(server)) throw new RangeError(`the scenario has no server "${server}"`);
      return { client: () => ({ request: (request, done) => fetchFrom(environment, server, request, done) }) };
    },
  };
}

export function randomPolicy(): Policy {
  return {
    name: 'random',
    description: 'a uniformly random replica per request, no failover',
    start(environment) {
      return {
        client(clientIndex) {
          const random = environment.random('random', clientIndex);
          return {
            request: (request, done) => {
              const server = environment.servers[Math.floor(random() * environment.servers.length)]!;
              return fetchFrom(environment, server, request, done);
            },
          };
        },
      };
    },
  };
}

export function roundRobinPolicy(): Policy {
  return {
    name: 'round-robin',
    description: 'replicas in turn (each client starting at its own offset), no failover',
    start(environment) {
      return {
        client(clientIndex) {
          let turn = clientIndex;
          return {
            request: (request, done) => {
              const server = environment.servers[turn++ % environment.servers.length]!;
              return fetchFrom(environment, server, request, done);
            },
          };
        },
      };
    },
  };
}

export function optimalPolicy(): Policy {
  return {
    name: 'optimal',
    description: 'every replica in parallel; the first complete response wins (paper Section 6.1)',
    start(environment) {
      return {
        client: () => ({
          request: (request, done) => {
            const handles: ExchangeHandle[] = [];
            let pending = environment.servers.length;
            let started = false;
            let settled = false;
            const cancelAll = (): void => handles.forEach((handle) => handle.cancel());
            environment.servers.forEach((server, position) => {
              handles.push(
                environment.network.send(
                  { server, method: 'GET', bodyBytes: request.sizeBytes, key: request.key, purpose: position === 0 ? 'request' : 'parallel' },
                  {
                    onFirstByte: () => {
                      started = true;
                    },
                    onComplete: () => {
                      if (settled) return;
                      settled = true;
                      cancelAll();
                      done({ ok: true, server });
                    },
                    onError: () => {
                      if (--pending === 0 && !settled) {
                        settled = true;
                        done({ ok: false, failure: started ? 'cut-mid-body' : 'no-replica' });
                      }
                    },
                  },
                ),
              );
            });
            return () => {
              cancelAll();
              return started ? 'cut-mid-body' : undefined;
            };
          },
        }),
      };
    },
  };
}

/**
 * Not a real policy: it knows the scenario (every link's current parameters and outages)
 * and sends each request to the server with the lowest expected response time, failing
 * over only if a response breaks off. It bounds what any one-request-at-a-time selection
 * can achieve, so the gap between Web++ and optimal splits into a learning part (Web++ →
 * oracle) and a part only parallel requests can win (oracle → optimal).
 */
export function oraclePolicy(): Policy {
  return {
    name: 'oracle',
    description: 'knows every link\'s current parameters; picks the lowest expected response time (a bound, not a policy)',
    start(environment) {
      return {
        client: () => ({
          request: (request, done) => {
            const tried = new Set<string>();
            let cancelCurrent: CancelRequest = () => undefined;
            const attempt = (): void => {
              const candidates = environment.servers.filter((server) => !tried.has(server));
              const expected = candidates.map((server) => environment.network.expectedResponseMs(server, request.sizeBytes));
              const best = expected.indexOf(Math.min(...expected));
              const server = candidates[best];
              if (server === undefined || !Number.isFinite(expected[best]!)) {
                done({ ok: false, failure: 'no-replica' });
                return;
              }
              tried.add(server);
              const purpose = tried.size === 1 ? 'request' : 'retry';
              let started = false;
              const handle = environment.network.send(
                { server, method: 'GET', bodyBytes: request.sizeBytes, key: request.key, purpose },
                {
                  onFirstByte: () => {
                    started = true;
                  },
                  onComplete: () => done({ ok: true, server }),
                  onError: () => attempt(),
                  onStall: (_atMs, resumesAtMs) => {
                    // It knows a frozen body will never resume: go elsewhere at once.
                    if (resumesAtMs === null) {
                      handle.cancel();
                      attempt();
                    }
                  },
                },
              );
              cancelCurrent = () => {
                handle.cancel();
                return started ? 'cut-mid-body' : undefined;
              };
            };
            attempt();
            return () => cancelCurrent();
          },
        }),
      };
    },
  };
}
