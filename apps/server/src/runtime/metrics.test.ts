import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WEBHOOK_EVENT_CATALOGUE, webhookEventType } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../test/helpers';
import { VirtualClock } from '../engine/clock';
import { insertContacts } from '../engine/dialer/test-support';
import { parseEnv } from '../env';
import { seedDemoContent } from '../modules/demo/demo-content';
import { createDialerStore } from '../modules/tasks/dialer-store';
import { eventually, startReceiver } from '../modules/webhooks/webhooks.test-helper';
import { parseExposition } from './metrics.test-helper';

type App = Awaited<ReturnType<typeof createTestApp>>['app'];

async function scrape(app: App, init: { remoteAddress?: string; headers?: Record<string, string> } = {}) {
  const res = await app.inject({ method: 'GET', url: '/metrics', ...init });
  expect(res.statusCode, res.body).toBe(200);
  return parseExposition(res.body);
}

describe('/metrics of a process running calls', () => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let dataDir: string;
  let projectId: string;
  let assistantId: string;
  let headers: Record<string, string>;
  let stopClock: (() => void) | undefined;
  // Monday morning, inside the task's calling window. The clock stands still until a test lets it run.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-09T10:00:00+08:00') });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-'));
    receiver = await startReceiver();
    t = await createTestApp({ env: { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true' }, clock });
    await t.app.ready();
    const user = await seedUser(t.db, { email: 'ops@example.com' });
    projectId = user.projectId;
    headers = await loginAs(t.app, 'ops@example.com');
    assistantId = (await seedDemoContent(t.db, projectId, user.userId)).publishedAssistantId;
    const endpoint = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/webhooks`,
      headers,
      payload: {
        url: receiver.url,
        events: webhookEventType.options.filter((type) => WEBHOOK_EVENT_CATALOGUE[type].available),
      },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
  }, 60_000);

  afterAll(async () => {
    stopClock?.();
    await t?.app.close();
    await receiver?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('speaks the Prometheus text format with the metric types and process metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parseExposition(res.body);
    expect(Object.fromEntries([...m.types].filter(([name]) => name.startsWith('callpilot_')))).toEqual({
      callpilot_calls_in_flight: 'gauge',
      callpilot_dialer_claims_total: 'counter',
      callpilot_dialer_claimed_contacts_total: 'counter',
      callpilot_dialer_lease_renewals_total: 'counter',
      callpilot_webhook_outbox_pending: 'gauge',
      callpilot_webhook_outbox_oldest_pending_seconds: 'gauge',
      callpilot_sip_registrations: 'gauge',
      callpilot_sip_invites_total: 'counter',
      callpilot_provider_latency_seconds: 'histogram',
      callpilot_http_request_duration_seconds: 'histogram',
    });
    expect(m.types.get('process_resident_memory_bytes')).toBe('gauge');
    expect(m.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    // Without SIP lines every state is there, at 0: a dashboard's query never comes back empty.
    for (const state of ['unregistered', 'registering', 'registered', 'failed'])
      expect(m.value('callpilot_sip_registrations', { state })).toBe(0);
  });

  it('counts a simulated call in flight, then its provider times and its queued webhooks', async () => {
    const before = await scrape(t.app);
    expect(before.value('callpilot_calls_in_flight', { direction: 'outbound' })).toBe(0);
    expect(before.value('callpilot_webhook_outbox_pending')).toBe(0);
    expect(before.value('callpilot_webhook_outbox_oldest_pending_seconds')).toBe(0);
    // Nothing delivers from here on: the call's events stay queued in the outbox.
    await t.app.runtime.webhooks.dispatcher.stop();

    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'interested', version: 1 },
    });
    expect(res.statusCode, res.body).toBe(200);
    // The clock stands still: the call is ringing.
    const ringing = await scrape(t.app);
    expect(ringing.value('callpilot_calls_in_flight', { direction: 'outbound' })).toBe(1);
    expect(ringing.value('callpilot_calls_in_flight', { direction: 'inbound' })).toBe(0);

    stopClock = clock.autoAdvance();
    await t.app.runtime.idle();
    const after = await scrape(t.app);
    expect(after.value('callpilot_calls_in_flight', { direction: 'outbound' })).toBe(0);
    // The offline script brain answered every turn of the simulated callee.
    const brainTurns = after.value('callpilot_provider_latency_seconds_count', {
      kind: 'llm',
      provider: 'script',
    });
    expect(brainTurns).toBeGreaterThan(0);
    expect(
      after.value('callpilot_provider_latency_seconds_count', { kind: 'asr', provider: 'simulated' }),
    ).toBe(brainTurns);
    // started, ringing, answered, ended, analysed at least; the first has waited the call's length.
    expect(after.value('callpilot_webhook_outbox_pending')).toBeGreaterThanOrEqual(5);
    expect(after.value('callpilot_webhook_outbox_oldest_pending_seconds')).toBeGreaterThan(0);
  }, 60_000);

  it("counts the dialer's claims of a task's contacts and its lease renewals", async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/tasks`,
      headers,
      payload: {
        name: '指标任务',
        assistantId,
        startDate: '2026-03-01',
        endDate: '2026-03-31',
        windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
        concurrency: 2,
        retryRules: {},
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const taskId = created.json().data.id as string;
    await insertContacts(t.db, projectId, taskId, 3);
    const started = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/tasks/${taskId}/actions/start`,
      headers,
    });
    expect(started.statusCode, started.body).toBe(200);
    await eventually(
      async () =>
        (await scrape(t.app)).value('callpilot_dialer_claimed_contacts_total') === 3 &&
        (
          await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/tasks/${taskId}`, headers })
        ).json().data.state === 'completed',
      60_000,
      'task completed',
    );
    await t.app.runtime.idle();
    const m = await scrape(t.app);
    expect(m.value('callpilot_dialer_claims_total', { outcome: 'claimed' })).toBeGreaterThanOrEqual(1);
    expect(m.value('callpilot_dialer_claims_total', { outcome: 'failed' })).toBe(0);

    // A heartbeat through the same instrumentation the runtime's dialer uses, on the real store.
    const store = t.app.runtime.metrics.instrumentDialerStore(
      createDialerStore(t.db, { calls: t.app.runtime.calls }),
    );
    const renewed = m.value('callpilot_dialer_lease_renewals_total', { outcome: 'ok' })!;
    await store.renewLeases(t.app.runtime.processId, [], new Date(clock.now() + 60_000));
    expect((await scrape(t.app)).value('callpilot_dialer_lease_renewals_total', { outcome: 'ok' })).toBe(
      renewed + 1,
    );
  }, 90_000);

  it('times HTTP requests by route pattern, never by the ids in the URL', async () => {
    const list = await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls`, headers });
    expect(list.statusCode).toBe(200);
    const missing = await t.app.inject({ method: 'GET', url: `/api/no-such-thing/${projectId}`, headers });
    expect(missing.statusCode).toBe(404);
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.body).not.toContain(projectId);
    const m = parseExposition(res.body);
    expect(
      m.value('callpilot_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/project/:projectId/calls',
        status_class: '2xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    const routes = new Set(
      m.samples
        .filter((s) => s.name === 'callpilot_http_request_duration_seconds_count')
        .map((s) => s.labels.route),
    );
    expect([...routes].every((route) => route === 'unmatched' || route?.startsWith('/'))).toBe(true);
  });
});

describe('who may read /metrics', () => {
  const apps: App[] = [];
  const app = async (env: Record<string, string> = {}) => {
    const t = await createTestApp({ env });
    apps.push(t.app);
    return t.app;
  };
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  it('without METRICS_TOKEN: loopback and private addresses only, the client address behind a trusted proxy', async () => {
    const a = await app();
    for (const remoteAddress of ['127.0.0.1', '10.1.2.3', '192.168.0.9', '::1', '::ffff:172.16.5.4']) {
      const res = await a.inject({ method: 'GET', url: '/metrics', remoteAddress });
      expect(res.statusCode, remoteAddress).toBe(200);
    }
    for (const remoteAddress of ['93.184.216.34', '::ffff:8.8.8.8', '2001:4860::8888', '172.32.0.1']) {
      const res = await a.inject({ method: 'GET', url: '/metrics', remoteAddress });
      expect(res.statusCode, remoteAddress).toBe(403);
    }
    const outside = await a.inject({ method: 'GET', url: '/metrics', remoteAddress: '93.184.216.34' });
    expect(outside.json().message).toContain('METRICS_TOKEN');

    const proxied = await app({ TRUST_PROXY: 'true' });
    const forwarded = await proxied.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '93.184.216.34' },
    });
    expect(forwarded.statusCode).toBe(403);
    // Without TRUST_PROXY the header is anyone's to send: it must not open the door either way.
    const spoofed = await a.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '93.184.216.34',
      headers: { 'x-forwarded-for': '127.0.0.1' },
    });
    expect(spoofed.statusCode).toBe(403);
  });

  it('with METRICS_TOKEN: the bearer token from anywhere, nothing without it', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const a = await app({ METRICS_TOKEN: token });
    const right = await a.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '93.184.216.34',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('# TYPE callpilot_calls_in_flight gauge');
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${token}`]) {
      const res = await a.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress: '127.0.0.1',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json().message).toContain('METRICS_TOKEN');
      expect(res.body).not.toContain('callpilot_');
    }
  });

  it('refuses a METRICS_TOKEN too short to be secret, without echoing it', () => {
    expect(() => parseEnv({ METRICS_TOKEN: 'short-secret' })).toThrow(
      /METRICS_TOKEN: must be at least 16 characters/,
    );
    expect(() => parseEnv({ METRICS_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
    expect(parseEnv({ METRICS_TOKEN: 'metrics-token-0123456789abcdef' }).METRICS_TOKEN).toBe(
      'metrics-token-0123456789abcdef',
    );
  });
});
