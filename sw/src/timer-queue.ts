/**
 * One native timer for all of the engine's timers (attempt timeouts, hedges, deadlines).
 * A page's burst arms a timeout per attempt and cancels almost all of them a few
 * milliseconds later, when the answers come: with setTimeout/clearTimeout per timer that
 * cost ~0.5 ms of the worker thread per request (docs/handover/page-cost-findings.md §2).
 * Here a timer is an entry in a list sorted by due time, a cancel only marks it, and the
 * one native timer is re-armed only when a new entry is due before the armed one.
 */
import type { Cancel } from '@webpp/core';

interface Entry {
  dueMs: number;
  run: () => void;
  cancelled: boolean;
}

export interface TimerQueueOptions {
  now?: () => number;
}

/** A `setTimer(delayMs, run) → cancel` with one native timer behind it. */
export function timerQueue(options: TimerQueueOptions = {}): (delayMs: number, run: () => void) => Cancel {
  const now = options.now ?? (() => performance.now());
  let entries: Entry[] = [];
  let cancelled = 0;
  let armed: { dueMs: number; handle: ReturnType<typeof setTimeout> } | undefined;

  const arm = (): void => {
    while (entries.length > 0 && entries[0]!.cancelled) {
      entries.shift();
      cancelled--;
    }
    const next = entries[0];
    if (next === undefined) {
      if (armed) clearTimeout(armed.handle);
      armed = undefined;
      return;
    }
    if (armed && armed.dueMs <= next.dueMs) return; // fires first; it re-arms for the rest
    if (armed) clearTimeout(armed.handle);
    armed = { dueMs: next.dueMs, handle: setTimeout(fire, Math.max(0, next.dueMs - now())) };
  };

  const fire = (): void => {
    armed = undefined;
    const nowMs = now();
    const due: Entry[] = [];
    while (entries.length > 0 && entries[0]!.dueMs <= nowMs) {
      const entry = entries.shift()!;
      if (entry.cancelled) cancelled--;
      else due.push(entry);
    }
    arm();
    for (const entry of due) {
      entry.cancelled = true; // ran: a later cancel is a no-op
      try {
        entry.run();
      } catch {
        // One timer's callback must not stop the others (a native timer would not either).
      }
    }
  };

  return (delayMs, run) => {
    const entry: Entry = { dueMs: now() + Math.max(0, delayMs), run, cancelled: false };
    // Binary search: after every entry due at the same time or earlier (FIFO among equals).
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (entries[mid]!.dueMs <= entry.dueMs) low = mid + 1;
      else high = mid;
    }
    entries.splice(low, 0, entry);
    arm();
    return () => {
      if (entry.cancelled) return;
      entry.cancelled = true;
      cancelled++;
      // Mostly cancelled: drop the marks in one pass instead of one splice per cancel.
      if (cancelled > 64 && cancelled * 2 > entries.length) {
        entries = entries.filter((candidate) => !candidate.cancelled);
        cancelled = 0;
      }
    };
  };
}
