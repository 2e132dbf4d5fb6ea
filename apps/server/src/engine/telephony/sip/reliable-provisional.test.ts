import { describe, expect, it } from 'vitest';
import { SipHeaders } from './message';
import {
  formatRAck,
  parseRAck,
  parseRSeq,
  provisionalMode,
  ReliableProvisionalTracker,
  RSeqCounter,
  rackMatches,
  requires100rel,
  supports100rel,
  unsupportedRequirements,
} from './reliable-provisional';

const headers = (...entries: [string, string][]) => new SipHeaders(entries);

describe('100rel option tag', () => {
  it.each([
    [[['Require', '100rel']], true, true, 'reliable', 'reliable'],
    [[['Supported', 'timer, 100REL']], false, true, 'reliable', 'unreliable'],
    [[['k', '100rel']], false, true, 'reliable', 'unreliable'],
    [
      [
        ['Supported', 'timer'],
        ['Require', 'timer'],
      ],
      false,
      false,
      'unreliable',
      'unreliable',
    ],
    [[], false, false, 'unreliable', 'unreliable'],
  ] as const)('%j', (entries, required, supported, whenPreferred, whenNotPreferred) => {
    const request = headers(...(entries as unknown as [string, string][]));
    expect(requires100rel(request)).toBe(required);
    expect(supports100rel(request)).toBe(supported);
    expect(provisionalMode(request, true)).toBe(whenPreferred);
    expect(provisionalMode(request, false)).toBe(whenNotPreferred);
  });

  it('lists the Require tags we do not know, for a 420', () => {
    const request = headers(
      ['Require', '100rel, precondition'],
      ['Proxy-Require', 'sec-agree'],
      ['Require', 'timer'],
    );
    expect(unsupportedRequirements(request, ['100rel', 'timer', 'replaces'])).toEqual([
      'precondition',
      'sec-agree',
    ]);
    expect(unsupportedRequirements(headers(['Supported', 'foo']), ['100rel'])).toEqual([]);
  });
});

describe('RSeq and RAck', () => {
  it('starts RSeq in [1, 2^31 - 1] and counts up by one', () => {
    const low = new RSeqCounter(() => 0);
    expect([low.next(), low.next()]).toEqual([1, 2]);
    const high = new RSeqCounter(() => 0.999999999999);
    const first = high.next();
    expect(first).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(high.next()).toBe(first + 1);
  });

  it.each([
    ['776656 1 INVITE', { rseq: 776656, cseq: 1, method: 'INVITE' }],
    ['  5   314159  invite ', { rseq: 5, cseq: 314159, method: 'INVITE' }],
    ['0 1 INVITE', null],
    ['5 1', null],
    ['5 x INVITE', null],
    ['4294967296 1 INVITE', null],
    ['5 1 INVITE extra', null],
  ])('RAck: %s', (value, expected) => {
    expect(parseRAck(value)).toEqual(expected);
  });

  it('matches a PRACK to the provisional it acknowledges', () => {
    const sent = { rseq: 776656, cseq: 1, method: 'INVITE' };
    const rack = parseRAck(formatRAck(sent))!;
    expect(rackMatches(rack, sent)).toBe(true);
    expect(rackMatches({ ...rack, rseq: 776657 }, sent)).toBe(false);
    expect(rackMatches({ ...rack, cseq: 2 }, sent)).toBe(false);
  });

  it.each([
    ['988789', 988789],
    ['0', null],
    ['-1', null],
    ['abc', null],
  ])('RSeq: %s', (value, expected) => {
    expect(parseRSeq(value)).toBe(expected);
  });
});

describe('UAC: which reliable provisionals to PRACK', () => {
  it('takes the first, then only the next in sequence', () => {
    const tracker = new ReliableProvisionalTracker();
    expect(tracker.receive(1000)).toBe('new');
    expect(tracker.receive(1000)).toBe('duplicate');
    expect(tracker.receive(1002)).toBe('out_of_order');
    expect(tracker.receive(1001)).toBe('new');
    expect(tracker.receive(1002)).toBe('new');
    expect(ReliableProvisionalTracker.rackFor(1002, { cseq: 7 })).toBe('1002 7 INVITE');
  });
});
