/**
 * What each public worker option means and when a site owner would change it: the text of
 * the docs table (scripts/docs-options.ts writes it into docs/service-worker.md). Kept out
 * of options-schema.ts so that the worker bundle does not carry it; the type makes every
 * row of the schema have its text.
 */
import type { PublicOptionName } from './options-schema.js';

export const WORKER_OPTION_DOCS: Readonly<Record<PublicOptionName, string>> = {
  policy:
    'The replica policy, by name: `webpp` (the default), or the paper\'s extended Refresh with the paper\'s values (`paper`, Figure 10) or with short TTLs and probe intervals (`fast`); the evaluation\'s `refresh`, `hedged`, `random`, `round-robin`, `single-<n>`, `optimal`, `optimal-complete`. Any other than `webpp` loads the `policies` add-on. Change it to reproduce the paper or to compare policies on your own site.',
  features:
    'Opt-in features, comma-separated: `batch` ([batch transmission](batching.md)), `offline` ([offline copies](#offline-when-every-replica-is-down)), `integrity` (checks bodies against the origin\'s content digests) and `aggregate` (the client aggregate for first visits); each loads its add-on script. Turn one on when your site serves many small resources (`batch`), should keep working offline (`offline`), or its origin runs with `--content-digests` (`integrity`) or `--client-aggregate` (`aggregate`); an origin that injects the tag adds the last two itself.',
  timeoutFloorMs:
    'No attempt times out sooner than this. Raise it when your replicas sometimes pause for longer (a cold start of a serverless replica, a slow TLS handshake) and you see failovers to slower replicas.',
  timeoutCeilingMs:
    'No attempt waits longer than this for its first byte before the next replica is tried; also the limit of the worker\'s own background requests. Raise it for replicas that are slow but never dead (large generated pages); lower it when a hanging replica must cost visitors less.',
  initialTimeoutMs:
    'The timeout while a replica has too few samples for its own. Raise it when your replicas are far from most visitors (an intercontinental first request).',
  extraBudgetShare:
    'The most extra requests (hedges, background refreshes, probes, failovers) as a share of the page\'s own requests, beyond a floor of 3. Lower it when every request to a replica costs you (metered CDN, rate limits); 0.05 keeps the extra load within 5 %.',
  hedgeBudgetShare:
    'Of that budget, the most hedges (a second request to another replica when the first is late) as a share of requests. 0 turns hedges off, for replicas where a duplicated request has side effects on your accounting.',
  ejectAfterFailures:
    'Refused or reset connections in a row that take a replica out of use until a probe finds it back. Timeouts take it out only when two in a row come with no answer from it meanwhile, and 5xx when five do. Raise it when a replica drops a connection now and then but is otherwise healthy.',
  probeBackoffCapMs:
    'The longest wait between probes of a failed replica (the waits double from about a second). Lower it when a replica that comes back must be in use again sooner; raise it to probe a long outage less.',
  controlCheckMs:
    'After a navigation served by a replica, the worker asks your own origin with one background `HEAD` when it has not heard from it for this long, so that its `webpp-control` and digests still arrive. Lower it (0: on every such navigation) when a switch-off must reach visitors within seconds.',
  offRetryMs:
    'After a [remote switch-off](#switching-the-worker-off-remotely), the worker stays off (and the page script does not register it) for this long. Lower it when you switch the worker off only briefly.',
  offlineMaxBytes:
    '[Offline copies](#offline-when-every-replica-is-down) (with `features=offline`): total body bytes kept in each visitor\'s browser. Lower it to use less of your visitors\' storage; 0 turns offline copies off.',
  offlineMaxEntryBytes: 'Offline copies: a larger response is not kept. Raise it to keep large media offline.',
  offlineMaxAgeMs: 'Offline copies: a copy saved longer ago than this is not served. Lower it when stale pages would mislead (prices, schedules).',
};
