import { describe, expect, it } from 'vitest';
import { formatDtmfRelay, parseDtmfInfo } from './dtmf-info';

describe('parseDtmfInfo', () => {
  it.each([
    ['application/dtmf-relay', 'Signal=5\r\nDuration=160\r\n', '5', 160],
    ['Application/DTMF-Relay; charset=utf-8', 'signal = #\nduration= 250', '#', 250],
    ['application/dtmf-relay', 'Signal=*\r\n', '*', null],
    ['application/dtmf-relay', 'Signal=10\r\nDuration=100', '*', 100],
    ['application/dtmf-relay', 'Signal=11', '#', null],
    ['application/dtmf-relay', 'Signal=d', 'D', null],
    ['application/dtmf', '5', '5', null],
    ['application/dtmf', '#\r\n', '#', null],
    ['application/dtmf', 'Signal=7\r\nDuration=80', '7', 80],
  ])('%s %j → %s', (type, body, digit, durationMs) => {
    expect(parseDtmfInfo(type, Buffer.from(body))).toEqual({ ok: true, digit, durationMs });
  });

  it.each([
    ['application/dtmf-relay', 'Signal=X', 'malformed'],
    ['application/dtmf-relay', 'Duration=160', 'malformed'],
    ['application/dtmf-relay', 'Signal=16', 'malformed'],
    ['application/dtmf', '55', 'malformed'],
    ['application/dtmf', '', 'malformed'],
    ['application/media_control+xml', '<media_control/>', 'unsupported_type'],
    [undefined, 'Signal=5', 'unsupported_type'],
  ])('%s %j is refused as %s', (type, body, reason) => {
    expect(parseDtmfInfo(type, body)).toEqual({ ok: false, reason });
  });
});

describe('formatDtmfRelay', () => {
  it('writes a body the parser reads back', () => {
    const { contentType, body } = formatDtmfRelay('#', 200);
    expect(body).toBe('Signal=#\r\nDuration=200\r\n');
    expect(parseDtmfInfo(contentType, body)).toEqual({ ok: true, digit: '#', durationMs: 200 });
  });

  it('refuses what is not one digit', () => {
    expect(() => formatDtmfRelay('12')).toThrow();
    expect(() => formatDtmfRelay('x')).toThrow();
  });
});
