import { WEBHOOK_EVENT_SAMPLES } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships, webhookDeliveries, webhookEndpoints } from '../../db/schema';
import { WEBHOOK_URL_PRIVATE_REFUSED } from './webhooks.service';
import { type Received, startReceiver } from './webhooks.test-helper';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

const verifyWith = (secret: string, r: Received) =>
  new Webhook(secret).verify(
    r.body,
    Object.fromEntries(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(r.headers[h])]),
    ),
  );

describe('webhook endpoints in the console', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let answer = 200;
  let a: { projectId: string; userId: string };
  let b: { projectId: string; userId: string };
  let owner: Record<string, string>;
  let member: Record<string, string>;
  let outsider: Record<string, string>;

  beforeAll(async () => {
    receiver = await startReceiver(() => ({ status: answer, body: answer === 200 ? 'received' : 'nope' }));
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    await t.app.ready();
    a = await seedUser(t.db, { email: 'owner@example.com' });
    b = await seedUser(t.db, { email: 'other@example.com' });
    const m = await seedUser(t.db, { email: 'member@example.com', project: null });
    await t.db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
    owner = await loginAs(t.app, 'owner@example.com');
    member = await loginAs(t.app, 'member@example.com');
    outsider = await loginAs(t.app, 'other@example.com');
  }, 60_000);

  afterAll(async () => {
    await t?.app.close();
    await receiver?.close();
  });

  const api = async (
    headers: Record<string, string>,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    payload?: object,
    projectId = a.projectId,
  ) => {
    const res = await t.app.inject({
      method,
      url: `/api/project/${projectId}/webhooks${path}`,
      headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };

  const create = async (payload: object = {}) => {
    const res = await api(owner, 'POST', '', {
      url: receiver.url,
      description: 'CRM',
      events: ['call.ended', 'call.analyzed'],
      ...payload,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { id: string; url: string };
  };

  it('creates, lists, changes, disables and deletes an endpoint; the secret is only shown on request', async () => {
    const endpoint = await create();
    expect(endpoint).toMatchObject({
      url: receiver.url,
      description: 'CRM',
      events: ['call.ended', 'call.analyzed'],
      enabled: true,
      disabledReason: null,
      recent: { succeeded: 0, failed: 0, pending: 0 },
    });
    expect(JSON.stringify(endpoint)).not.toContain('whsec_');
    const secret = (await api(owner, 'GET', `/${endpoint.id}/secret`)).body.data.secret as string;
    expect(secret).toMatch(/^whsec_/);
    // Stored sealed, not as the receiver's key.
    const [row] = await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(row!.secret).not.toContain(secret.slice(6));

    const list = await api(member, 'GET', '');
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(endpoint.id);

    const changed = await api(owner, 'PUT', `/${endpoint.id}`, {
      events: ['task.finished'],
      description: 'ERP',
    });
    expect(changed.body.data).toMatchObject({ events: ['task.finished'], description: 'ERP' });
    const off = await api(owner, 'PUT', `/${endpoint.id}`, { enabled: false });
    // Only what is sent changes.
    expect(off.body.data).toMatchObject({ enabled: false, disabledReason: 'manual', description: 'ERP' });
    const on = await api(owner, 'PUT', `/${endpoint.id}`, { enabled: true });
    expect(on.body.data).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });

    expect((await api(owner, 'DELETE', `/${endpoint.id}`)).body.data).toEqual({ deleted: true });
    expect((await api(owner, 'GET', `/${endpoint.id}`)).status).toBe(404);
  });

  it('refuses bad input with a Chinese message naming the field, and stores nothing', async () => {
    const before = (await t.db.select().from(webhookEndpoints)).length;
    const cases: [object, RegExp][] = [
      [{ url: 'ftp://example.com/x' }, /接收地址须为 http:\/\/ 或 https:\/\//],
      [{ url: 'https://user:pw@example.com/x' }, /不含用户名密码/],
      [{ events: [] }, /订阅事件：至少选择一个事件/],
      [{ events: ['call.exploded'] }, /events/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(owner, 'POST', '', { url: receiver.url, events: ['call.ended'], ...payload });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect(await t.db.select().from(webhookEndpoints)).toHaveLength(before);
    // SMS receipts are wired (modules/sms/sms-receipts.ts): the event can be subscribed to.
    const sms = await api(owner, 'POST', '', { url: receiver.url, events: ['sms.delivered'] });
    expect(sms.status, JSON.stringify(sms.body)).toBe(200);
    expect((await api(owner, 'DELETE', `/${sms.body.data.id}`)).status).toBe(200);
  });

  it('members read endpoints and the log but change nothing and never see a secret', async () => {
    const endpoint = await create();
    const refused = '仅项目所有者或管理员可以管理 Webhook';
    const attempts = [
      await api(member, 'POST', '', { url: receiver.url, events: ['call.ended'] }),
      await api(member, 'PUT', `/${endpoint.id}`, { description: '改' }),
      await api(member, 'DELETE', `/${endpoint.id}`),
      await api(member, 'GET', `/${endpoint.id}/secret`),
      await api(member, 'POST', `/${endpoint.id}/secret/roll`, { graceHours: 24 }),
      await api(member, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(refused);
    }
    expect((await api(member, 'GET', `/${endpoint.id}`)).status).toBe(200);
    expect((await api(member, 'GET', `/${endpoint.id}/deliveries`)).status).toBe(200);
    expect((await api(owner, 'GET', `/${endpoint.id}`)).body.data.description).toBe('CRM');
  });

  it('keeps projects apart: another project reaches no endpoint, secret or delivery of this one', async () => {
    const endpoint = await create();
    const test = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    const deliveryId = test.body.data.id as string;
    // Through their own project, with this project's ids: not found.
    const viaOwn = [
      await api(outsider, 'GET', `/${endpoint.id}`, undefined, b.projectId),
      await api(outsider, 'PUT', `/${endpoint.id}`, { url: 'http://127.0.0.1:1/x' }, b.projectId),
      await api(outsider, 'DELETE', `/${endpoint.id}`, undefined, b.projectId),
      await api(outsider, 'GET', `/${endpoint.id}/secret`, undefined, b.projectId),
      await api(outsider, 'POST', `/${endpoint.id}/secret/roll`, { graceHours: 0 }, b.projectId),
      await api(outsider, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' }, b.projectId),
      await api(outsider, 'GET', `/${endpoint.id}/deliveries`, undefined, b.projectId),
      await api(outsider, 'GET', `/${endpoint.id}/deliveries/${deliveryId}`, undefined, b.projectId),
      await api(outsider, 'POST', `/${endpoint.id}/deliveries/${deliveryId}/replay`, undefined, b.projectId),
    ];
    for (const res of viaOwn) expect(res.status).toBe(404);
    expect((await api(outsider, 'GET', '', undefined, b.projectId)).body.data).toEqual([]);
    // Through this project's path: not a member.
    const viaTheirs = [
      await api(outsider, 'GET', ''),
      await api(outsider, 'GET', `/${endpoint.id}/secret`),
      await api(outsider, 'POST', `/${endpoint.id}/deliveries/${deliveryId}/replay`),
    ];
    for (const res of viaTheirs) expect(res.status).toBe(403);
    const after = (await api(owner, 'GET', `/${endpoint.id}`)).body.data;
    expect(after).toMatchObject({ url: receiver.url, enabled: true });
    const detail = (await api(owner, 'GET', `/${endpoint.id}/deliveries/${deliveryId}`)).body.data;
    expect(detail.attemptLog).toHaveLength(1);
  });

  it('发送测试事件 sends the catalogue sample, signed, through the outbox, and shows it in the log', async () => {
    const endpoint = await create({ events: ['call.ended'] });
    const secret = (await api(owner, 'GET', `/${endpoint.id}/secret`)).body.data.secret as string;
    const sent = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'task.finished' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data).toMatchObject({
      eventType: 'task.finished',
      status: 'succeeded',
      attempts: 1,
      lastStatusCode: 200,
      test: true,
    });
    const got = receiver.received.find((r) => r.headers['webhook-id'] === sent.body.data.eventId)!;
    expect(got.headers['user-agent']).toBe('CallPilot-Webhooks/1.0');
    const body = verifyWith(secret, got) as { type: string; data: unknown };
    expect(body.type).toBe('task.finished');
    expect(body.data).toEqual(WEBHOOK_EVENT_SAMPLES['task.finished']);
    expect(Object.keys(JSON.parse(got.body))).toEqual(['type', 'timestamp', 'data']);

    const log = await api(owner, 'GET', `/${endpoint.id}/deliveries?eventType=task.finished`);
    expect(log.body.data).toMatchObject({ total: 1, items: [{ id: sent.body.data.id, test: true }] });
    const detail = (await api(owner, 'GET', `/${endpoint.id}/deliveries/${sent.body.data.id}`)).body.data;
    expect(detail.payload).toEqual(JSON.parse(got.body));
    expect(detail.attemptLog[0]).toMatchObject({
      trigger: 'auto',
      statusCode: 200,
      responseBody: 'received',
    });
    expect(detail.attemptLog[0].requestHeaders['webhook-id']).toBe(sent.body.data.eventId);
    expect(
      (await api(owner, 'GET', '')).body.data.find((e: { id: string }) => e.id === endpoint.id).recent,
    ).toEqual({
      succeeded: 1,
      failed: 0,
      pending: 0,
      dropped: 0,
    });

    await api(owner, 'PUT', `/${endpoint.id}`, { enabled: false });
    const whileOff = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    expect(whileOff.status).toBe(409);
    expect(whileOff.body.message).toContain('接收地址已停用');
  });

  it('replays a delivery re-signed with a fresh timestamp and the same webhook-id; a success settles it', async () => {
    const endpoint = await create();
    const secret = (await api(owner, 'GET', `/${endpoint.id}/secret`)).body.data.secret as string;
    answer = 500;
    const sent = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    expect(sent.body.data).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
    const { id, eventId } = sent.body.data as { id: string; eventId: string };
    const [before] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));

    // Timestamps are in seconds: let one pass so the re-signing shows.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    answer = 200;
    const replayed = await api(owner, 'POST', `/${endpoint.id}/deliveries/${id}/replay`);
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200);
    expect(replayed.body.data).toMatchObject({ status: 'succeeded', lastStatusCode: 200, attempts: 1 });
    expect(replayed.body.data.attemptLog.map((x: { trigger: string }) => x.trigger)).toEqual([
      'auto',
      'replay',
    ]);

    const copies = receiver.received.filter((r) => r.headers['webhook-id'] === eventId);
    expect(copies).toHaveLength(2);
    expect(Number(copies[1]!.headers['webhook-timestamp'])).toBeGreaterThan(
      Number(copies[0]!.headers['webhook-timestamp']),
    );
    expect(copies[1]!.body).toBe(copies[0]!.body);
    expect(() => verifyWith(secret, copies[1]!)).not.toThrow();
    const [after] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    expect(after).toMatchObject({ status: 'succeeded', nextAttemptAt: null });
    expect(before!.nextAttemptAt).not.toBeNull();

    // A failed replay leaves the schedule alone.
    answer = 500;
    const again = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    const pending = (
      await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, again.body.data.id))
    )[0]!;
    const failedReplay = await api(owner, 'POST', `/${endpoint.id}/deliveries/${again.body.data.id}/replay`);
    expect(failedReplay.body.data).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
    expect(failedReplay.body.data.nextAttemptAt).toBe(pending.nextAttemptAt!.toISOString());
    answer = 200;
  });

  it('rolls a secret: both sign during the grace period, only the new one without', async () => {
    const endpoint = await create();
    const old = (await api(owner, 'GET', `/${endpoint.id}/secret`)).body.data.secret as string;
    const rolled = await api(owner, 'POST', `/${endpoint.id}/secret/roll`, { graceHours: 24 });
    const next = rolled.body.data.secret as string;
    expect(next).not.toBe(old);
    expect((await api(owner, 'GET', `/${endpoint.id}/secret`)).body.data.secret).toBe(next);
    expect((await api(owner, 'GET', `/${endpoint.id}`)).body.data.previousSecretUntil).not.toBeNull();
    const during = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    const got = receiver.received.find((r) => r.headers['webhook-id'] === during.body.data.eventId)!;
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verifyWith(old, got)).not.toThrow();
    expect(() => verifyWith(next, got)).not.toThrow();

    const bad = await api(owner, 'POST', `/${endpoint.id}/secret/roll`, { graceHours: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('宽限期');
    const final = (await api(owner, 'POST', `/${endpoint.id}/secret/roll`, { graceHours: 0 })).body.data
      .secret;
    const after = await api(owner, 'POST', `/${endpoint.id}/test`, { eventType: 'call.ended' });
    const last = receiver.received.find((r) => r.headers['webhook-id'] === after.body.data.eventId)!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verifyWith(final, last)).not.toThrow();
    expect(() => verifyWith(next, last)).toThrow();
  });
});

describe('private addresses when the operator has not allowed them', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.ready();
    ({ projectId } = await seedUser(t.db, { email: 'owner@example.com' }));
    headers = await loginAs(t.app, 'owner@example.com');
  }, 60_000);
  afterAll(async () => t?.app.close());

  it('refuses loopback, private, link-local and names resolving to them when an endpoint is saved', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://10.1.2.3/hooks',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:8080/hooks',
      'http://localhost:8080/hooks',
      'http://192.168.1.20/hooks',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/project/${projectId}/webhooks`,
        headers,
        payload: { url, events: ['call.ended'] },
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toBe(WEBHOOK_URL_PRIVATE_REFUSED);
    }
    expect(await t.db.select().from(webhookEndpoints)).toHaveLength(0);
  });

  it('refuses changing a stored endpoint to a private address', async () => {
    // Stored while a public address (as an operator could have, before): the change is refused.
    const [row] = await t.db
      .insert(webhookEndpoints)
      .values({
        id: 'ep-public',
        projectId,
        url: 'https://hooks.example.com/x',
        events: ['call.ended'],
        secret: 'sealed',
      })
      .returning();
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/project/${projectId}/webhooks/${row!.id}`,
      headers,
      payload: { url: 'http://10.0.0.5/x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(WEBHOOK_URL_PRIVATE_REFUSED);
    const [after] = await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, 'ep-public'));
    expect(after!.url).toBe('https://hooks.example.com/x');
  });
});
