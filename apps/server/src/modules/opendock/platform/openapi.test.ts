import { envelope } from '@callpilot/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ok } from '../../../lib/reply';
import { bearer, opendockApp, seedApiKey, type TestApp } from './opendock.test-helper';

let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
  description?: string;
  'x-scope'?: string;
  'x-description'?: string;
  'x-codeSamples'?: { lang: string; label: string; source: string }[];
};

describe('the open API document and /docs', () => {
  it('serves an OpenAPI 3.1 document of /opendock/v1 only, with scopes, idempotency, limits and samples', async () => {
    const t = await opendockApp({
      routes: (app) =>
        app.post(
          '/opendock/v1/test-calls/:callId/notes',
          {
            config: { apiScope: { resource: 'calls', access: 'write' } },
            schema: {
              summary: '测试：给通话加备注',
              params: z.object({ callId: z.string() }),
              body: z.object({ note: z.string(), urgent: z.boolean(), phone: z.string() }),
              response: { 200: envelope(z.object({ saved: z.boolean() })) },
            },
          },
          async () => ok({ saved: true }),
        ),
    });
    current = t;
    const { app } = t;

    const res = await app.inject({ url: '/opendock/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: '/' }]);
    const paths = Object.keys(doc.paths);
    expect(paths.length).toBeGreaterThan(1);
    expect(paths.every((p) => p.startsWith('/opendock/v1/'))).toBe(true);
    expect(paths).not.toContain('/opendock/v1/openapi.json');
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'cp_live_…',
    });
    // Only what the open API references: no console schema leaks in.
    expect(Object.keys(doc.components.schemas)).toContain('ErrorEnvelope');
    expect(JSON.stringify(doc)).not.toContain('/api/project');

    const me: Operation = doc.paths['/opendock/v1/me'].get;
    expect(me['x-scope']).toBe('any');
    expect(me.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(me.parameters?.some((p) => p.name === 'Idempotency-Key')).toBeFalsy();

    const notes: Operation = doc.paths['/opendock/v1/test-calls/{callId}/notes'].post;
    expect(notes['x-scope']).toBe('calls:write');
    expect(notes.description).toContain('`calls:write`（通话（发起单通外呼） · 读写）');
    expect(notes.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
    expect(Object.keys(notes.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429']));
    expect(notes.responses['429']!.headers).toHaveProperty('Retry-After');
    expect(notes.responses['200']!.headers).toHaveProperty('RateLimit');
    expect(doc.components.headers.RateLimit).toBeDefined();

    const samples = notes['x-codeSamples']!;
    expect(samples.map((s) => s.label)).toEqual(['curl', 'Node.js', 'Python']);
    const [curl, node, python] = samples.map((s) => s.source) as [string, string, string];
    expect(curl).toContain('curl -X POST "$CALLPILOT_URL/opendock/v1/test-calls/CALL_ID/notes"');
    expect(curl).toContain('-H "Authorization: Bearer $CALLPILOT_API_KEY"');
    expect(curl).toContain('Idempotency-Key');
    expect(curl).toContain('"phone": "13800138000"');
    expect(node).toContain("method: 'POST'");
    expect(node).toContain("'Idempotency-Key': crypto.randomUUID()");
    expect(python).toContain('requests.post(');
    expect(python).toContain('"urgent": True');
    // The samples are in the description too: swagger-ui shows that.
    expect(notes.description).toContain('```python');
    // The console's API 文档 shows the route's own words and renders scope and samples itself.
    expect(notes['x-description']).not.toContain('```');
    expect(notes['x-description']).not.toContain('所需权限');

    // The document is served without a key and describes a key that works.
    const key = await seedApiKey(t.db, { projectId: t.a.projectId });
    expect((await app.inject({ url: '/opendock/v1/me', headers: bearer(key.secret) })).statusCode).toBe(200);
  });

  it('offers both documents in /docs, the open API first, and keeps the console document whole', async () => {
    const t = await opendockApp();
    current = t;
    const { app } = t;
    const init = await app.inject({ url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    const config = JSON.parse(/const config = (\{.*\})/.exec(init.body)![1]!);
    expect(config.urls).toEqual([
      { url: '/opendock/v1/openapi.json', name: '开放接口 /opendock/v1' },
      { url: '/docs/json', name: '控制台 API' },
    ]);
    expect(config['urls.primaryName']).toBe('开放接口 /opendock/v1');
    expect(config.persistAuthorization).toBe(true);

    const consoleDoc = (await app.inject({ url: '/docs/json' })).json();
    expect(Object.keys(consoleDoc.paths)).toEqual(
      expect.arrayContaining(['/auth/login', '/api/project/{projectId}/api-keys', '/opendock/v1/me']),
    );
    expect(consoleDoc.paths['/opendock/v1/me'].get.security).toEqual([{ ApiKeyAuth: [] }]);
  });
});
