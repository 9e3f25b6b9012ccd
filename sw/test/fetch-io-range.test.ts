/**
 * A ranged background GET (the webpp policy's throughput refresh) ends with its body: the
 * worker's driver must report the body's end to the engine. Before this was fixed the
 * engine waited until its timeout and counted a live server as failed, so the webpp policy
 * ejected B and C at their first ranged refresh (the evaluation's slow-body scenario).
 */
import { describe, expect, it } from 'vitest';
import type { Exchange, ExchangeEvents } from '@webpp/core';
import { fetchIO, type ExchangeSender } from '../src/fetch-io.js';

function sender(body: Uint8Array<ArrayBuffer>, status = 206): ExchangeSender {
  return {
    build: (exchange, signal) => new Request(exchange.target, { signal, headers: { range: `bytes=0-${(exchange.rangeBytes ?? 1) - 1}` } }),
    fetch: () => Promise.resolve(new Response(body, { status })),
  };
}

function send(exchange: Exchange, background: ExchangeSender): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve) => {
    const events: ExchangeEvents<Response> = {
      head: (head) => seen.push(`head ${head.status}`),
      bodyComplete: (body) => {
        seen.push(`body ${body.bodyBytes}`);
        resolve(seen);
      },
      stalled: () => seen.push('stalled'),
      error: (message) => {
        seen.push(`error ${message}`);
        resolve(seen);
      },
    };
    fetchIO(background).send(exchange, events, undefined);
    setTimeout(() => resolve(seen), 500);
  });
}

describe('the worker driver and ranged background GETs', () => {
  it('reports the end of a ranged refresh with its byte count', async () => {
    const exchange: Exchange = { server: 'http://b.localhost:1', target: 'http://b.localhost:1/big.bin', purpose: 'refresh', method: 'range', rangeBytes: 32_768 };
    expect(await send(exchange, sender(new Uint8Array(32_768)))).toEqual(['head 206', 'body 32768']);
  });

  it('does not read the body of a HEAD', async () => {
    const exchange: Exchange = { server: 'http://b.localhost:1', target: 'http://b.localhost:1/big.bin', purpose: 'refresh', method: 'head' };
    expect(await send(exchange, sender(new Uint8Array(0), 200))).toEqual(['head 200']);
  });
});
