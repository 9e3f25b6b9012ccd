/**
 * Options of the server push (issue 13, Fei et al. 1998): the service time this server
 * measures and pushes in `Server-Timing`, the values of its peers it forwards in
 * `webpp-load`, and the concurrency limit that gives it a finite capacity. Composed into
 * the plugin's schema (plugin-schema.ts); docs/origin.md "Server push" explains each.
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

export const pushOptionProperties = {
  pushServiceTime: defaulted(
    Type.Boolean({
      default: true,
      description:
        'Send this server\'s smoothed service time on every response (`Server-Timing: webpp;dur=12.5`) and the latest values of its peers (`webpp-load`), see [Server push](#server-push-and-capacity). Off, workers rank this server by their own measurements only.',
      cli: { group: 'Behaviour' },
    }),
  ),
  serviceTimeIntervalMs: defaulted(
    Type.Integer({
      minimum: 10,
      maximum: 3_600_000,
      default: 1_000,
      description:
        "I: the service time (and the utilisation pushed with it) is averaged over intervals this long, and may change once per interval (Fei used 4 s and 10 s; browser sessions are short). Raise it when few requests per interval make the pushed value noisy; lower it so that workers see a load change sooner, at the cost of noisier values.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
  maxConcurrentRequests: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      default: 0,
      description:
        "Requests for content served at once; the rest wait in a FIFO queue (the wait counts in the pushed service time). `0`: no limit. The origin's own endpoints are never queued. Set it to what the server serves well at once, so that overload shows in the pushed service time and workers move to other replicas.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
  maxQueuedRequests: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      default: 1_000,
      description: 'With `maxConcurrentRequests`: requests waiting beyond this many are answered 503 `WEBPP_ERR_OVERLOADED` with `Retry-After: 1`. Lower: overload is refused sooner (a worker then tries another replica); higher: longer waits.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
};
