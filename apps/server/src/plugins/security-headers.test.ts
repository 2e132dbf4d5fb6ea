import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../test/helpers';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

/** The policy's directives by name, e.g. { 'script-src': "'self'" }. */
const directives = (header: unknown) =>
  Object.fromEntries(
    String(header ?? '')
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const [name, ...values] = d.split(/\s+/);
        return [name!, values.join(' ')];
      }),
  );

const expectSecurityHeaders = (headers: Record<string, unknown>) => {
  const csp = directives(headers['content-security-policy']);
  expect(csp['script-src']).toBe("'self'");
  expect(csp['frame-ancestors']).toBe("'none'");
  expect(csp['connect-src']).toBe("'self'");
  expect(csp['img-src']).toContain('data:');
  expect(csp['media-src']).toContain('blob:');
  expect(csp).not.toHaveProperty('upgrade-insecure-requests');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
};

describe('security headers', () => {
  it('come with the console page, API JSON, and refusals, without HSTS over plain HTTP', async () => {
    const webDist = fs.mkdtempSync(path.join(os.tmpdir(), 'headers-web-'));
    fs.writeFileSync(path.join(webDist, 'index.html'), '<!doctype html><title>控制台</title>');
    current = await createTestApp({ env: { WEB_DIST: webDist } });
    const page = await current.app.inject({ method: 'GET', url: '/call-record' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expectSecurityHeaders(page.headers);

    const json = await current.app.inject({ method: 'GET', url: '/api/oem/localhost' });
    expect(json.statusCode).toBe(200);
    expectSecurityHeaders(json.headers);

    const anonymous = await current.app.inject({ method: 'GET', url: '/api/user/current' });
    expect(anonymous.statusCode).toBe(401);
    expectSecurityHeaders(anonymous.headers);

    const missing = await current.app.inject({ method: 'GET', url: '/api/no-such-thing' });
    expect(missing.statusCode).toBe(404);
    expectSecurityHeaders(missing.headers);

    expect(page.headers['strict-transport-security']).toBeUndefined();
    expect(json.headers['strict-transport-security']).toBeUndefined();
  });

  it('add HSTS when the request came over TLS through a trusted proxy, not on a forged header', async () => {
    current = await createTestApp({ env: { TRUST_PROXY: 'true' } });
    const tls = await current.app.inject({
      method: 'GET',
      url: '/api/oem/localhost',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(tls.headers['strict-transport-security']).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
    await current.app.close();

    // Without TRUST_PROXY the header is anyone's to forge, and the connection was plain HTTP.
    current = await createTestApp();
    const forged = await current.app.inject({
      method: 'GET',
      url: '/api/oem/localhost',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(forged.statusCode).toBe(200);
    expect(forged.headers['strict-transport-security']).toBeUndefined();
  });
});
