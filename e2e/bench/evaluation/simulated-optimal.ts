/**
 * The worker's "optimal" in the simulator: every replica at once, the first response *head*
 * wins and the other requests are cancelled; the winner's body is then streamed to the end
 * (sw/src/policies/optimal.ts through sw/src/attempt-runner.ts). The simulator's own
 * `optimal` waits for the first *complete* body instead (the bench's "optimal-complete").
 */
import type { CancelRequest, ExchangeHandle, Policy } from '@webpp/simulator';

export function optimalFirstResponsePolicy(): Policy {
  return {
    name: 'optimal',
    description: 'every replica in parallel; the first response head wins, the others are cancelled (the worker\'s optimal)',
    start(environment) {
      return {
        client: () => ({
          request: (request, done): CancelRequest => {
            const handles: ExchangeHandle[] = [];
            let pending = environment.servers.length;
            let winner: number | undefined;
            let settled = false;
            const settle = (ok: boolean, server?: string): void => {
              if (settled) return;
              settled = true;
              done(ok ? { ok, server: server! } : { ok, failure: winner === undefined ? 'no-replica' : 'cut-mid-body' });
            };
            environment.servers.forEach((server, position) => {
              handles.push(
                environment.network.send(
                  { server, method: 'GET', bodyBytes: request.sizeBytes, key: request.key, purpose: position === 0 ? 'request' : 'parallel' },
                  {
                    onFirstByte: () => {
                      if (winner !== undefined || settled) return;
                      winner = position;
                      handles.forEach((handle, other) => {
                        if (other !== position) handle.cancel();
                      });
                    },
                    onComplete: () => {
                      if (winner === position) settle(true, server);
                    },
                    onError: () => {
                      // The winner's body broke off: no failover mid-body, as in the worker.
                      if (winner === position) settle(false);
                      else if (winner === undefined && --pending === 0) settle(false);
                    },
                  },
                ),
              );
            });
            return () => {
              handles.forEach((handle) => handle.cancel());
              return winner === undefined ? undefined : 'cut-mid-body';
            };
          },
        }),
      };
    },
  };
}
