// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, seedUser } from '../../../test/helpers';
import { smsMessages, smsSignatures, smsTemplates } from '../../db/schema';

let t: Awaited<ReturnType<typeof createTestApp>>;
let projectId: string;
let key: string;
let otherKey: string;
let callsOnlyKey: string;
const signatureId = randomUUID();
const templateId = randomUUID();

beforeAll(async () => {
  t = await createTestApp();
  await t.app.ready();
  const a = await seedUser(t.db, { email: 'crm-sms@example.com' });
  const b = await seedUser(t.db, { email: 'other-sms@example.com' });
  projectId = a.projectId;
  key = (await seedApiKey(t.db, { projectId })).secret;
  otherKey = (await seedApiKey(t.db, { projectId: b.projectId })).secret;
  callsOnlyKey = (await seedApiKey(t.db, { projectId, scopes: { calls: 'write' } })).secret;
  await t.db
    .insert(smsSignatures)
    .values({ id: signatureId, projectId, name: '星河宽带', source: 'enterprise', status: 'approved' });
  await t.db.insert(smsTemplates).values({
    id: templateId,
    projectId,
    name: '验证码',
    type: 'verification',
    content: '您的验证码为${code}，5 分钟内有效。',
    variables: ['code'],
    status: 'approved',
  });
});
afterAll(async () => {
  await t?.app.close();
});

const post = (payload: object, headers: Record<string, string> = {}, secret = key) =>
  t.app.inject({
    method: 'POST',
    url: '/opendock/v1/sms',
    headers: { ...bearer(secret), ...headers },
    payload,
  });

describe('SMS through the open API', () => {
  it('queues an SMS with 201, and a replayed Idempotency-Key returns the same record', async () => {
    const body = { phone: '+86 139-1234-5678', signatureId, templateId, variables: { code: '482913' } };
    const first = await post(body, { 'idempotency-key': 'order-1001' });
    expect(first.statusCode, first.body).toBe(201);
    const sms = first.json().data;
    expect(sms).toMatchObject({
      phone: '13912345678',
      source: 'api',
      status: 'queued',
      content: '【星河宽带】您的验证码为482913，5 分钟内有效。',
    });
    const again = await post(body, { 'idempotency-key': 'order-1001' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.id).toBe(sms.id);
    expect(await t.db.select().from(smsMessages).where(eq(smsMessages.projectId, projectId))).toHaveLength(1);

    const read = await t.app.inject({ url: `/opendock/v1/sms/${sms.id}`, headers: bearer(key) });
    expect(read.statusCode).toBe(200);
    expect(read.json().data.id).toBe(sms.id);
    // Another project's key does not find it; a key without the SMS scope is refused.
    expect(
      (await t.app.inject({ url: `/opendock/v1/sms/${sms.id}`, headers: bearer(otherKey) })).statusCode,
    ).toBe(404);
    expect((await post(body, {}, callsOnlyKey)).statusCode).toBe(403);
  });

  it('refuses a bad phone, naming 手机号, and a missing variable, sending nothing', async () => {
    const before = (await t.db.select().from(smsMessages)).length;
    const bad = await post({ phone: '12345', signatureId, templateId, variables: { code: '1' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('手机号');
    const missing = await post({ phone: '13912345678', signatureId, templateId });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('code');
    const foreign = await post({ phone: '13912345678', signatureId, templateId }, {}, otherKey);
    expect(foreign.statusCode).toBe(404);
    expect((await t.db.select().from(smsMessages)).length).toBe(before);
  });
});
