import { describe, expect, it } from 'vitest';
import { formatUri, SipHeaders } from './message';
import {
  formatReferTo,
  isReferEvent,
  parseReferTo,
  parseSipfrag,
  parseSubscriptionState,
  readReferNotify,
} from './sipfrag';

describe('sipfrag bodies', () => {
  it.each([
    ['SIP/2.0 100 Trying\r\n', { status: 100, reason: 'Trying' }],
    ['SIP/2.0 200 OK', { status: 200, reason: 'OK' }],
    ['\r\nSIP/2.0 486 Busy Here\r\nContent-Length: 0\r\n\r\n', { status: 486, reason: 'Busy Here' }],
    ['sip/2.0 603 Declined\n', { status: 603, reason: 'Declined' }],
    ['SIP/2.0 180', { status: 180, reason: '' }],
    ['INVITE sip:bob@example.com SIP/2.0\r\n', null],
    ['SIP/2.0 99 Odd', null],
    ['', null],
  ])('%j', (body, expected) => {
    expect(parseSipfrag(Buffer.from(body))).toEqual(expected);
  });
});

const notify = (state: string, body: string, type = 'message/sipfrag;version=2.0') =>
  readReferNotify(
    new SipHeaders([
      ['Event', 'refer'],
      ['Subscription-State', state],
      ['Content-Type', type],
    ]),
    body,
  );

describe('REFER progress', () => {
  it.each([
    ['active;expires=60', 'SIP/2.0 100 Trying', { state: 'trying', done: false }],
    ['active;expires=60', 'SIP/2.0 180 Ringing', { state: 'trying', done: false }],
    ['terminated;reason=noresource', 'SIP/2.0 200 OK', { state: 'succeeded', done: true }],
    ['terminated;reason=noresource', 'SIP/2.0 486 Busy Here', { state: 'failed', done: true }],
    ['terminated;reason=timeout', 'SIP/2.0 180 Ringing', { state: 'failed', done: true }],
    ['terminated;reason=rejected', '', { state: 'failed', done: true }],
    ['pending', '', { state: 'trying', done: false }],
  ])('%s with %j', (state, body, expected) => {
    expect(notify(state, body)).toMatchObject({ ok: true, ...expected });
  });

  it('refuses NOTIFYs it cannot read', () => {
    expect(notify('active', 'SIP/2.0 200 OK', 'text/plain')).toMatchObject({ ok: false });
    expect(notify('active', 'garbage')).toMatchObject({ ok: false });
    expect(readReferNotify(new SipHeaders(), 'SIP/2.0 200 OK')).toMatchObject({ ok: false });
  });

  it('matches NOTIFYs to their REFER by the Event id', () => {
    expect(isReferEvent('refer', 2)).toBe(true);
    expect(isReferEvent('refer;id=2', 2)).toBe(true);
    expect(isReferEvent('Refer ; id=3', 2)).toBe(false);
    expect(isReferEvent('dialog', 2)).toBe(false);
  });

  it('parses Subscription-State', () => {
    expect(parseSubscriptionState('Terminated;Reason=NoResource')).toEqual({
      state: 'terminated',
      reason: 'noresource',
    });
    expect(parseSubscriptionState('active;expires=60')).toEqual({ state: 'active', expires: 60 });
    expect(parseSubscriptionState('')).toBeNull();
  });
});

describe('Refer-To', () => {
  it('builds a header the far end reads back to the same target', () => {
    const uri = formatUri({
      scheme: 'sip',
      user: '13800138000',
      host: 'trunk.example.cn',
      params: new Map([['user', 'phone']]),
      headers: new Map(),
    });
    const header = formatReferTo(uri, '人工 "坐席"');
    expect(header).toBe('"人工 \\"坐席\\"" <sip:13800138000@trunk.example.cn;user=phone>');
    const parsed = parseReferTo(header);
    expect(parsed?.displayName).toBe('人工 "坐席"');
    expect(parsed?.target).toMatchObject({ user: '13800138000', host: 'trunk.example.cn' });
    expect(parsed?.target?.params.get('user')).toBe('phone');
  });

  it('keeps URI headers (Replaces) inside the brackets', () => {
    const parsed = parseReferTo(
      '<sip:carol@c.example?Replaces=12345%40192.0.2.1%3Bto-tag%3D1%3Bfrom-tag%3D2>;method=INVITE',
    );
    expect(parsed?.target?.headers.get('Replaces')).toBe('12345@192.0.2.1;to-tag=1;from-tag=2');
    expect(parsed?.params.get('method')).toBe('INVITE');
  });

  it.each(['tel:+8613800138000', 'sip:1001@pbx.local'])('reads the addr-spec form %s', (value) => {
    expect(parseReferTo(value)?.target).not.toBeNull();
  });

  it('reports other schemes as not callable and garbage as malformed', () => {
    expect(parseReferTo('<mailto:a@b.example>')?.target).toBeNull();
    expect(parseReferTo('<sip:unterminated')).toBeNull();
  });
});
