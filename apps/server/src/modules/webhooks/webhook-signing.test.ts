import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookEventId } from './event-id';
import { generateWebhookSecret, signWebhook, webhookHeaders } from './webhook-signing';

// The Standard Webhooks specification's published vector (its libraries' "sign function works" test).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signatures', () => {
  it('match the specification test vector, with and without the whsec_ prefix', () => {
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.payload)).toBe(VECTOR.signature);
    expect(signWebhook(VECTOR.secret.slice(6), VECTOR.id, VECTOR.timestamp, VECTOR.payload)).toBe(
      VECTOR.signature,
    );
  });

  it('verify with the standardwebhooks package, and fail it when the body changes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({
      type: 'call.ended',
      timestamp: new Date().toISOString(),
      data: { id: 'c1' },
    });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secret], webhookEventId(), now, body);
    expect(headers['user-agent']).toBe('CallPilot-Webhooks/1.0');
    expect(headers['content-type']).toBe('application/json');
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('c1', 'c2'), headers)).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('sign with both secrets during a roll, so a receiver holding either one verifies', () => {
    const [old, next] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = '{"type":"task.finished"}';
    const headers = webhookHeaders([next, old], 'msg_x', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(old).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(next).verify(body, headers)).not.toThrow();
  });
});

describe('webhook event ids', () => {
  it('are msg_ and a ULID, sorting in the order they were made', () => {
    const ids = Array.from({ length: 500 }, (_, i) =>
      webhookEventId(1_700_000_000_000 + Math.floor(i / 100)),
    );
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
