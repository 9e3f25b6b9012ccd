/**
 * The oracle: a bound, not a policy a client could run (it reads the scenario), so it lives
 * here and not in @webpp/core's registry like every policy the worker runs.
 */
import type { CancelRequest, Policy } from '../policy.js';

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
