import { describe, expect, it } from 'vitest';
import {
  hangupReason,
  outcomeOfFinalResponse,
  outcomeOfLocalEnd,
  outcomeOfQ850,
  parseReason,
  refusalFor,
} from './causes';

describe('final responses to our INVITE', () => {
  it.each([
    [486, 'Busy Here', 'busy'],
    [600, 'Busy Everywhere', 'busy'],
    [480, 'Temporarily Unavailable', 'no_answer'],
    [408, 'Request Timeout', 'no_answer'],
    [487, 'Request Terminated', 'no_answer'],
    [404, 'Not Found', 'vacant'],
    [604, 'Does Not Exist Anywhere', 'vacant'],
    [484, 'Address Incomplete', 'vacant'],
    [410, 'Gone', 'vacant'],
    [603, 'Decline', 'rejected'],
    [433, 'Anonymity Disallowed', 'rejected'],
    [403, 'Forbidden', 'failed'],
    [488, 'Not Acceptable Here', 'failed'],
    [500, 'Server Internal Error', 'failed'],
    [502, 'Bad Gateway', 'failed'],
    [503, 'Service Unavailable', 'failed'],
    [504, 'Server Time-out', 'failed'],
    [302, 'Moved Temporarily', 'failed'],
    [606, 'Not Acceptable', 'failed'],
  ])('%i %s → %s', (status, phrase, outcome) => {
    expect(outcomeOfFinalResponse(status, phrase)).toEqual({
      outcome,
      detail: `对端返回 ${status} ${phrase}`,
    });
  });

  it.each([
    // China carriers: one 480 for 关机 and 未接听, told apart only by the cause.
    [480, 'Q.850;cause=20;text="Subscriber absent"', 'powered_off'],
    [480, 'Q.850;cause=19', 'no_answer'],
    [480, 'Q.850;cause=18', 'no_answer'],
    [503, 'Q.850;cause=17;text="User busy"', 'busy'],
    [404, 'Q.850;cause=1', 'vacant'],
    [503, 'Q.850;cause=1', 'vacant'],
    [503, 'Q.850;cause=22', 'vacant'],
    [500, 'Q.850;cause=21', 'rejected'],
    [404, 'Q.850;cause=27', 'failed'],
    [480, 'Q.850;cause=38', 'failed'],
    [486, 'Q.850;cause=41', 'failed'],
    // Causes that explain nothing leave it to the status.
    [486, 'Q.850;cause=16', 'busy'],
    [404, 'Q.850;cause=31', 'vacant'],
    [603, 'Q.850;cause=127', 'rejected'],
    // A B2BUA relaying the status it got.
    [503, 'SIP;cause=486;text="Busy Here"', 'busy'],
    // Malformed Reason ignored.
    [486, 'Q.850;cause=abc', 'busy'],
  ])('%i with Reason %s → %s', (status, reason, outcome) => {
    expect(outcomeOfFinalResponse(status, 'x', [reason]).outcome).toBe(outcome);
  });

  it('prefers the Q.850 reason over a SIP one in the same response', () => {
    expect(
      outcomeOfFinalResponse(503, 'Service Unavailable', ['SIP;cause=486', 'Q.850;cause=20']).outcome,
    ).toBe('powered_off');
  });

  it('names the cause in the detail, keeping remote text printable and short', () => {
    expect(outcomeOfFinalResponse(480, 'Temporarily Unavailable', ['Q.850;cause=20']).detail).toBe(
      '对端返回 480 Temporarily Unavailable（Q.850 原因 20 Subscriber absent）',
    );
    const hostile = outcomeOfFinalResponse(486, 'Busy\u0007', [
      `Q.850;cause=17;text="${'x'.repeat(200)}"`,
    ]).detail;
    expect(hostile.includes('\u0007')).toBe(false);
    expect(hostile.length).toBeLessThan(120);
  });

  it('reports our own ends without a final response', () => {
    expect(outcomeOfLocalEnd('ring_timeout').outcome).toBe('no_answer');
    expect(outcomeOfLocalEnd('no_response').outcome).toBe('failed');
    expect(outcomeOfLocalEnd('auth_failed').detail).toContain('密码');
  });

  it('treats unknown causes by class: normal events defer to the status, the rest failed', () => {
    expect([outcomeOfQ850(26), outcomeOfQ850(34), outcomeOfQ850(102)]).toEqual([
      undefined,
      'failed',
      'failed',
    ]);
  });
});

describe('what we send', () => {
  it.each([
    ['busy', 486, 'Busy Here', 17],
    ['unavailable', 480, 'Temporarily Unavailable', 18],
  ] as const)('refusing an inbound call as %s: %i with Q.850 %i', (cause, status, phrase, q850) => {
    const refusal = refusalFor(cause);
    expect([refusal.status, refusal.reasonPhrase]).toEqual([status, phrase]);
    expect(parseReason(refusal.reason)).toMatchObject({ protocol: 'Q.850', cause: q850 });
    // The far end maps it back to the same outcome we meant.
    expect(outcomeOfFinalResponse(refusal.status, refusal.reasonPhrase, [refusal.reason]).outcome).toBe(
      cause === 'busy' ? 'busy' : 'no_answer',
    );
  });

  it.each([
    ['normal', 'Q.850;cause=16;text="Normal call clearing"'],
    ['ring_timeout', 'Q.850;cause=19;text="No answer from user"'],
    ['media_timeout', 'Q.850;cause=41;text="RTP timeout"'],
    ['session_expired', 'Q.850;cause=102;text="Session timer expired"'],
  ] as const)('Reason on BYE/CANCEL for %s', (cause, header) => {
    expect(hangupReason(cause)).toBe(header);
  });
});

describe('parseReason', () => {
  it.each([
    ['Q.850;cause=16;text="Terminated"', { protocol: 'Q.850', cause: 16, text: 'Terminated' }],
    ['Q.850 ; cause=200 ; text="a \\"b\\""', { protocol: 'Q.850', cause: 200, text: 'a "b"' }],
    ['SIP;cause=200;text="Call completed elsewhere"', { protocol: 'SIP', cause: 200 }],
    ['Q.850;text="no cause"', null],
    ['Q.850', null],
    ['Q.850;cause=1234', null],
  ])('%s', (value, expected) => {
    const parsed = parseReason(value);
    if (expected === null) expect(parsed).toBeNull();
    else expect(parsed).toMatchObject(expected);
  });
});
