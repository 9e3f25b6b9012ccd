/**
 * The response path at run time. Each step of the table (response-path.ts) adds its hooks with
 * `pathStep(app, name).addHook` instead of `app.addHook`; webppOrigin gives Fastify one hook per kind
 * (onRequest, onSend, onResponse, onRequestAbort), which runs the steps' hooks of that kind in
 * the table's order, whenever each step was registered. So a feature registered after
 * webppOrigin (`app.register(webppBatch)`, `@webpp/origin/batch`) lands at its row of the
 * table, not behind every hook webppOrigin added: Fastify itself runs hooks in the order they
 * were added (https://fastify.dev/docs/latest/Reference/Hooks/), and offers no way to insert
 * one between two others.
 *
 * Each runner keeps Fastify's own rules (lib/hooks.js): an onRequest step runs only while the
 * reply is not sent; an onSend step's result, when not undefined, is the payload the next one
 * gets; a step that throws ends the kind's run with its error. A feature that is off adds no
 * step, and a kind without steps adds no hook.
 *
 * Without webppOrigin (registerBatching on its own), `pathStep` adds plain Fastify hooks.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WEBPP_ERR_BAD_OPTIONS } from '../errors.js';

type RequestStep = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
type SendStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
type AbortStep = (request: FastifyRequest) => Promise<unknown>;

/** The hooks one step adds, by kind. */
interface PathHooks {
  onRequest?: RequestStep;
  onSend?: SendStep;
  onResponse?: RequestStep;
  onRequestAbort?: AbortStep;
}
type PathHookKind = keyof PathHooks;

interface Placed<F> {
  plugin: string;
  rank: number;
  run: F;
}

const kResponsePath = Symbol.for('webpp.origin.responsePath');

export class ResponsePathHooks {
  private readonly placed: { [K in PathHookKind]: Array<Placed<NonNullable<PathHooks[K]>>> } = { onRequest: [], onSend: [], onResponse: [], onRequestAbort: [] };
  /** The functions each runner calls, in table order (kept beside `placed` so the runners loop over plain functions). */
  private readonly runs: { [K in PathHookKind]: Array<NonNullable<PathHooks[K]>> } = { onRequest: [], onSend: [], onResponse: [], onRequestAbort: [] };

  /** `rankOf`: the row of a step in the table; undefined for a name the table does not list. */
  constructor(
    private readonly app: FastifyInstance,
    private readonly rankOf: (plugin: string) => number | undefined,
  ) {}

  /** Places a step's hook at its row; a hook added twice is refused (a feature registered twice, or by option and by plugin). */
  add<K extends PathHookKind>(plugin: string, kind: K, run: NonNullable<PathHooks[K]>): void {
    const rank = this.rankOf(plugin);
    if (rank === undefined) throw new TypeError(`${plugin}: not a step of the response path (compose/response-path.ts)`);
    if (this.placed[kind].some((step) => step.plugin === plugin)) {
      throw new WEBPP_ERR_BAD_OPTIONS(`${plugin} is registered twice: register a feature either by its option to webppOrigin or as a plugin, once`);
    }
    this.place(kind, { plugin, rank, run });
  }

  private place<K extends PathHookKind>(kind: K, step: Placed<NonNullable<PathHooks[K]>>): void {
    const steps = this.placed[kind];
    const at = steps.findIndex((placed) => placed.rank > step.rank);
    const index = at === -1 ? steps.length : at;
    steps.splice(index, 0, step);
    this.runs[kind].splice(index, 0, step.run);
    if (steps.length === 1) this.addRunner(kind);
  }

  private addRunner(kind: PathHookKind): void {
    const app = this.app;
    if (kind === 'onRequest') {
      const runs = this.runs.onRequest;
      app.addHook('onRequest', async (request, reply) => {
        for (const run of runs) {
          if (reply.sent) return; // Fastify's own rule between two onRequest hooks
          await run(request, reply);
        }
      });
    } else if (kind === 'onResponse') {
      const runs = this.runs.onResponse;
      app.addHook('onResponse', async (request, reply) => {
        for (const run of runs) await run(request, reply);
      });
    } else if (kind === 'onSend') {
      const runs = this.runs.onSend;
      app.addHook('onSend', async (request, reply, payload) => {
        let current: unknown = payload;
        for (const run of runs) {
          const next = await run(request, reply, current);
          if (next !== undefined) current = next;
        }
        return current;
      });
    } else {
      const runs = this.runs.onRequestAbort;
      app.addHook('onRequestAbort', async (request) => {
        for (const run of runs) await run(request);
      });
    }
  }
}

/** Gives `app` (webppOrigin's instance) the response path; `rankOf` is the table's order. */
export function declareResponsePath(app: FastifyInstance, rankOf: (plugin: string) => number | undefined): ResponsePathHooks {
  const path = new ResponsePathHooks(app, rankOf);
  app.decorate(kResponsePath, path);
  return path;
}

/** The response path webppOrigin gave this app, if it is registered. */
function responsePathOf(app: FastifyInstance): ResponsePathHooks | undefined {
  return app.hasDecorator(kResponsePath) ? ((app as unknown as Record<symbol, unknown>)[kResponsePath] as ResponsePathHooks) : undefined;
}

/** What a step plugin adds its hooks with (in place of `app.addHook`), under its name in the table. */
interface PathStep {
  addHook<K extends PathHookKind>(kind: K, run: NonNullable<PathHooks[K]>): void;
}

/**
 * The step `plugin` of `app`: its hooks go to their row of webppOrigin's response path, or,
 * without webppOrigin (registerBatching on its own), straight to Fastify.
 */
export function pathStep(app: FastifyInstance, plugin: string): PathStep {
  const path = responsePathOf(app);
  if (path !== undefined) return { addHook: (kind, run) => path.add(plugin, kind, run) };
  return { addHook: (kind, run) => void app.addHook(kind as 'onRequest', run as never) };
}
