/**
 * The kill switch: while it is on, every response carries `webpp-control: off`, and the
 * page script and the worker switch themselves off (paper Section 3.5: a server must be
 * able to withdraw the client code). The bindings header and batches pause meanwhile; they
 * read the same KillSwitch.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { CONTROL_HEADER, CONTROL_OFF } from '@webpp/core';
import { pathStep } from '../compose/path-hooks.js';

/** The switch itself, shared by the plugins that pause while it is on. */
export class KillSwitch {
  constructor(public on: boolean) {}
}

export interface KillSwitchPluginOptions {
  killSwitch: KillSwitch;
}

async function killSwitchPlugin(app: FastifyInstance, { killSwitch }: KillSwitchPluginOptions): Promise<void> {
  const step = pathStep(app, 'webpp-kill-switch');
  step.addHook('onSend', async (_request, reply, payload) => {
    if (killSwitch.on) reply.header(CONTROL_HEADER, CONTROL_OFF);
    return payload;
  });
}

export const webppKillSwitch = fp(killSwitchPlugin, { fastify: '5.x', name: 'webpp-kill-switch' });
