/**
 * The page's body when the policy decides again at the response head (engine-hooks.ts, hook
 * C): the first body, until a second fetch of the same resource elsewhere answers with the
 * same entity (checked as resumable-body.ts checks a resume: continuation()); from then on
 * the second body, from the byte the page has on. Whichever happens first decides; the other
 * is cancelled. The second fetch may start at the head or later (rent or buy, or the body's
 * own pace), or never: `second` resolves with its answer, or with undefined when there will be
 * none. It asks for the whole body or, started mid-body, for the rest from the byte the page
 * had then (a 206); the page may have had more bytes since, which are skipped (continuation()).
 */
import { afterSkipped, continuation } from './resumable-body.js';
import type { BodyExtent } from './resumable-body.js';

interface RaceEvents {
  /** The page's bytes come from the second body from now on (`atByte` bytes came from the first). */
  switched(atByte: number): void;
  /** The first body stays (it ended, no second answer came or it is another entity, or the page cancelled). */
  keptFirst(reason: string, atByte: number): void;
  /** The first body broke while no second answer was in: a second fetch not started by now will not start. */
  firstBroke(): void;
  /** The page cancelled the body. */
  cancelled(): void;
}

type Step = { kind: 'read'; result: ReadableStreamReadResult<Uint8Array> } | { kind: 'error'; error: unknown } | { kind: 'second'; response: Response | undefined };

/** The bytes the page has had so far (the driver's HeadFacts.bodyBytesSoFar, and where a ranged second fetch starts). */
export interface BodyProgress {
  bytes: number;
}

export function racedBody(
  firstBody: ReadableStream<Uint8Array>,
  extent: BodyExtent,
  second: Promise<Response | undefined>,
  events: RaceEvents,
  progress: BodyProgress = { bytes: 0 },
): ReadableStream<Uint8Array> {
  let reader = firstBody.getReader();
  let pendingRead: Promise<Step> | undefined;
  let waiting: Promise<Step> | undefined = second.then((response) => ({ kind: 'second', response }));
  let delivered = 0;
  let skipBytes = 0;
  const keepFirst = (reason: string): void => {
    if (waiting === undefined) return;
    waiting = undefined;
    events.keptFirst(reason, delivered);
  };
  /** The second answered (or will not): switch to it when it continues the same entity. */
  const trySwitch = (response: Response | undefined): boolean => {
    waiting = undefined;
    const plan = response ? continuation(response, extent, delivered) : { error: 'no second answer' };
    if (!response?.body || 'error' in plan) {
      response?.body?.cancel().catch(() => undefined);
      events.keptFirst('error' in plan ? plan.error : 'answer without a body', delivered);
      return false;
    }
    reader.cancel().catch(() => undefined);
    reader = response.body.getReader();
    pendingRead = undefined;
    skipBytes = plan.skipBytes;
    events.switched(delivered);
    return true;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          pendingRead ??= reader.read().then(
            (result): Step => ({ kind: 'read', result }),
            (error: unknown): Step => ({ kind: 'error', error }),
          );
          const step = await (waiting === undefined ? pendingRead : Promise.race([pendingRead, waiting]));
          if (step.kind === 'second') {
            trySwitch(step.response);
            continue;
          }
          pendingRead = undefined;
          if (step.kind === 'error') {
            // The first body broke before the second answered: wait for the second, if one runs.
            if (waiting !== undefined) {
              events.firstBroke();
              if (trySwitch(await second)) continue;
            }
            controller.error(step.error);
            return;
          }
          if (step.result.done) {
            keepFirst('first body ended first');
            controller.close();
            return;
          }
          let chunk = step.result.value;
          ({ chunk, skipBytes } = afterSkipped(chunk, skipBytes));
          if (chunk.byteLength === 0) continue;
          delivered += chunk.byteLength;
          progress.bytes = delivered;
          controller.enqueue(chunk);
          return;
        }
      },
      cancel(reason) {
        keepFirst('page cancelled');
        events.cancelled();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
