import { describe, expect, it } from 'vitest';
import { SipHeaders } from './message';
import {
  formatSessionExpires,
  initialUacRequest,
  negotiateAsUas,
  parseMinSE,
  parseSessionExpires,
  retryAfter422,
  timerFromUacResponse,
  uacRequestHeaders,
} from './session-timer';

const headers = (...entries: [string, string][]) => new SipHeaders(entries);

describe('header grammar', () => {
  it.each([
    ['1800', { interval: 1800 }],
    ['1800;refresher=uac', { interval: 1800, refresher: 'uac' }],
    ['  600 ; Refresher = UAS ; x-ext=1', { interval: 600, refresher: 'uas' }],
    ['abc', null],
    ['1800;refresher=both', null],
    ['', null],
  ])('Session-Expires: %s', (value, expected) => {
    expect(parseSessionExpires(value)).toEqual(expected);
  });

  it('formats what it parses', () => {
    expect(formatSessionExpires({ interval: 90, refresher: 'uas' })).toBe('90;refresher=uas');
    expect(formatSessionExpires({ interval: 1800 })).toBe('1800');
    expect([parseMinSE('90'), parseMinSE('120;ext'), parseMinSE('x')]).toEqual([90, 120, null]);
  });

  it('reads the compact form x', () => {
    const request = headers(['x', '300;refresher=uac'], ['k', 'timer']);
    const decision = negotiateAsUas(request);
    expect(decision.accept && decision.timer).toMatchObject({ interval: 300, refresher: 'remote' });
  });
});

describe('we are the UAS', () => {
  it('keeps the caller as refresher when it asked to refresh', () => {
    const decision = negotiateAsUas(
      headers(['Supported', 'timer'], ['Session-Expires', '1800;refresher=uac']),
    );
    expect(decision).toEqual({
      accept: true,
      timer: { interval: 1800, refresher: 'remote', refreshAfterMs: null, expireAfterMs: 1_768_000 },
      headers: [
        ['Session-Expires', '1800;refresher=uac'],
        ['Require', 'timer'],
      ],
    });
  });

  it('refreshes at half the interval when the caller names us refresher', () => {
    const decision = negotiateAsUas(
      headers(['Supported', 'timer'], ['Session-Expires', '600;refresher=uas']),
    );
    expect(decision.accept && decision.timer).toEqual({
      interval: 600,
      refresher: 'local',
      refreshAfterMs: 300_000,
      expireAfterMs: 568_000,
    });
  });

  it('lets a timer-capable caller refresh when it named nobody', () => {
    const decision = negotiateAsUas(headers(['Supported', '100rel, timer'], ['Session-Expires', '900']));
    expect(decision.accept && decision.headers).toContainEqual(['Session-Expires', '900;refresher=uac']);
  });

  it('refreshes itself, without Require, for a caller that does not support timers', () => {
    const decision = negotiateAsUas(headers(['Supported', '100rel']));
    expect(decision).toMatchObject({
      accept: true,
      timer: { interval: 1800, refresher: 'local', refreshAfterMs: 900_000 },
      headers: [['Session-Expires', '1800;refresher=uas']],
    });
  });

  it('runs no timer for a caller without one when told not to insert it', () => {
    expect(negotiateAsUas(headers(), { insertWhenAbsent: false })).toEqual({
      accept: true,
      timer: null,
      headers: [],
    });
  });

  it('answers 422 with our Min-SE to an interval below it', () => {
    expect(negotiateAsUas(headers(['Session-Expires', '60']))).toEqual({
      accept: false,
      status: 422,
      headers: [['Min-SE', '90']],
    });
    expect(negotiateAsUas(headers(['Session-Expires', '200']), { minSE: 300 })).toMatchObject({
      accept: false,
      headers: [['Min-SE', '300']],
    });
  });

  it('shortens a long interval to ours but never below the caller’s Min-SE', () => {
    const shortened = negotiateAsUas(headers(['Session-Expires', '7200']), { interval: 1800 });
    expect(shortened.accept && shortened.timer?.interval).toBe(1800);
    const bounded = negotiateAsUas(headers(['Session-Expires', '7200'], ['Min-SE', '3600']), {
      interval: 1800,
    });
    expect(bounded.accept && bounded.timer?.interval).toBe(3600);
  });

  it('gives up 32 s before expiry on long intervals and a third early on short ones', () => {
    const short = negotiateAsUas(headers(['Session-Expires', '90;refresher=uac']));
    expect(short.accept && short.timer?.expireAfterMs).toBe(60_000);
  });
});

describe('we are the UAC', () => {
  it('asks for our interval and lets the UAS pick the refresher', () => {
    expect(uacRequestHeaders(initialUacRequest({ interval: 1200 }))).toEqual([
      ['Session-Expires', '1200'],
      ['Min-SE', '90'],
      ['Supported', 'timer'],
    ]);
  });

  it('names itself refresher in a refresh', () => {
    expect(uacRequestHeaders({ interval: 600, minSE: 90 }, 'uac')[0]).toEqual([
      'Session-Expires',
      '600;refresher=uac',
    ]);
  });

  it('retries a 422 with the far end’s Min-SE, and gives up on a 422 that asks for nothing more', () => {
    const first = initialUacRequest({ interval: 300 });
    const retry = retryAfter422(first, headers(['Min-SE', '1800']));
    expect(retry).toEqual({ interval: 1800, minSE: 1800 });
    expect(uacRequestHeaders(retry!)).toContainEqual(['Min-SE', '1800']);
    expect(retryAfter422(retry!, headers(['Min-SE', '1800']))).toBeNull();
    expect(retryAfter422(first, headers())).toBeNull();
  });

  it.each([
    ['1800;refresher=uac', { refresher: 'local', refreshAfterMs: 900_000 }],
    ['1800;refresher=uas', { refresher: 'remote', refreshAfterMs: null }],
    // A proxy inserted the header for a UAS without timers: we must refresh (§7.2).
    ['1800', { refresher: 'local', refreshAfterMs: 900_000 }],
  ])('reads a 2xx with Session-Expires %s', (value, expected) => {
    expect(timerFromUacResponse(headers(['Session-Expires', value]))).toMatchObject({
      interval: 1800,
      ...expected,
    });
  });

  it('runs no timer when the 2xx has no Session-Expires', () => {
    expect(timerFromUacResponse(headers(['Supported', 'timer']))).toBeNull();
  });
});
