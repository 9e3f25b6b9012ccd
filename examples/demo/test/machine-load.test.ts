/**
 * The demo tells when the machine itself is the bottleneck (issue 23, item 7): timers of
 * this process firing late, as the link emulator's do on a loaded machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MachineLoad } from '../src/cluster/machine-load.js';

let load: MachineLoad | undefined;
afterEach(() => load?.close());

/** Holds the event loop for `ms`: every timer due meanwhile fires that late. */
function hold(ms: number): void {
  const untilMs = Date.now() + ms;
  while (Date.now() < untilMs) {
    // busy, as an overloaded machine keeps the emulator from running
  }
}

describe('MachineLoad', () => {
  it('reports timers running hundreds of ms late as an overloaded machine', async () => {
    load = new MachineLoad(60_000);
    for (let block = 0; block < 12; block++) {
      hold(150);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const view = load.view();
    expect(view.timerLagMaxMs).toBeGreaterThanOrEqual(100);
    expect(view.timerLagP95Ms).toBeGreaterThanOrEqual(50);
    expect(view.overloaded).toBe(true);
    expect(view.cores).toBeGreaterThan(0);
  });
});
