import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/helpers';
import { DEMO_MOCK_BILL_PATH, DEMO_MOCK_LIMIT } from './demo-mock.routes';

let t: Awaited<ReturnType<typeof createTestApp>>;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.app.close());

const bill = (phone: string, remoteAddress = '198.51.100.7') =>
  t.app.inject({
    method: 'GET',
    url: `${DEMO_MOCK_BILL_PATH}?phone=${encodeURIComponent(phone)}`,
    remoteAddress,
  });

describe('the demo mock bill endpoint', () => {
  it("answers a caller's bill without a login, as a business's own system would", async () => {
    const res = await bill('13800138000');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      code: 0,
      data: { amount: '128.00', dueDate: '2026-12-05', plan: '500M 光宽带' },
    });
  });

  it('refuses a malformed phone naming the field, and a flood from one address', async () => {
    const bad = await bill('abc', '198.51.100.8');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('phone');

    const address = '198.51.100.9';
    const allowed = await Promise.all(
      Array.from({ length: DEMO_MOCK_LIMIT }, () => bill('13800138000', address)),
    );
    expect(allowed.map((r) => r.statusCode)).toEqual(Array(DEMO_MOCK_LIMIT).fill(200));
    const limited = await bill('13800138000', address);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().message).toBe('请求过于频繁，请稍后再试');
    // Other addresses are not held back by one that floods.
    expect((await bill('13800138000', '198.51.100.10')).statusCode).toBe(200);
  });
});
