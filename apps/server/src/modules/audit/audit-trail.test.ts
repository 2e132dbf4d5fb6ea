import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { auditLog, memberships } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';

const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';
const LLM_KEY = 'sk-live-audit-trail-secret-9876';

/** One representative change of each group the audit log records, as a user would make it. */
describe('changes on record', () => {
  // Sunday evening: a started task waits for Monday's window, so nothing is dialled here.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-08T21:00:00+08:00') });
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let dataDir: string;
  let projectId: string;
  let assistantId: string;
  let owner: Record<string, string>;
  let member: Record<string, string>;
  let apiSecret: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-trail-'));
    t = await createTestApp({ env: { DATA_DIR: dataDir, APP_SECRET }, clock });
    await t.app.ready();
    const seeded = await seedUser(t.db, { email: 'boss@example.com' });
    projectId = seeded.projectId;
    assistantId = (await seedDemoContent(t.db, projectId, seeded.userId)).publishedAssistantId;
    apiSecret = (await seedApiKey(t.db, { projectId, name: 'CRM 同步' })).secret;
    const m = await seedUser(t.db, { email: 'staff@example.com', project: null });
    await t.db.insert(memberships).values({ projectId, userId: m.userId, role: 'member' });
    owner = await loginAs(t.app, 'boss@example.com');
    member = await loginAs(t.app, 'staff@example.com');
  }, 60_000);
  afterAll(async () => {
    await t?.app.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const entries = (action: string) => t.db.select().from(auditLog).where(eq(auditLog.action, action));
  const base = () => `/api/project/${projectId}`;

  it('assistant publish names the assistant, the version and who did it', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `${base()}/assistants/${assistantId}/publish`,
      headers: owner,
      payload: { note: '上线' },
      remoteAddress: '192.0.2.10',
    });
    expect(res.statusCode, res.body).toBe(200);
    const [entry] = await entries('assistant.published');
    expect(entry).toMatchObject({
      projectId,
      actor: 'boss@example.com',
      ip: '192.0.2.10',
      targetType: 'assistant',
      targetId: assistantId,
      summary: `发布 ${res.json().data.name} v${res.json().data.publishedVersion}`,
    });
  });

  it('tasks started through the open API name the key, never its secret; paused in the console, the user', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/opendock/v1/tasks',
      headers: bearer(apiSecret),
      payload: {
        name: '审计任务',
        assistantId,
        startDate: '2026-03-01',
        endDate: '2026-03-31',
        windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
        concurrency: 1,
      },
    });
    const taskId = created.json().data.id as string;
    await t.app.inject({
      method: 'POST',
      url: `/opendock/v1/tasks/${taskId}/contacts`,
      headers: bearer(apiSecret),
      payload: {
        contacts: [
          {
            phone: '13800138000',
            name: '张三',
            variables: { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' },
          },
        ],
      },
    });
    const started = await t.app.inject({
      method: 'POST',
      url: `/opendock/v1/tasks/${taskId}/start`,
      headers: bearer(apiSecret),
    });
    expect(started.statusCode, started.body).toBe(200);
    const [start] = await entries('task.started');
    expect(start).toMatchObject({
      projectId,
      userId: null,
      actor: 'API 密钥：CRM 同步',
      targetId: taskId,
      summary: '开始 审计任务',
    });

    const paused = await t.app.inject({
      method: 'POST',
      url: `${base()}/tasks/${taskId}/actions/pause`,
      headers: member,
    });
    expect(paused.statusCode, paused.body).toBe(200);
    const [pause] = await entries('task.paused');
    expect(pause).toMatchObject({ actor: 'staff@example.com', targetId: taskId, summary: '暂停 审计任务' });

    // A refused action changed nothing, so it records nothing.
    const again = await t.app.inject({
      method: 'POST',
      url: `${base()}/tasks/${taskId}/actions/pause`,
      headers: member,
    });
    expect(again.statusCode).toBe(409);
    expect(await entries('task.paused')).toHaveLength(1);
  });

  it('API keys and provider settings are recorded without their secrets; a refused change is not', async () => {
    const key = await t.app.inject({
      method: 'POST',
      url: `${base()}/api-keys`,
      headers: owner,
      payload: { name: '工单系统', scopes: { calls: 'read' }, ipAllowlist: [], rateLimitPerMinute: 60 },
    });
    expect(key.statusCode, key.body).toBe(200);
    const { key: created, secret } = key.json().data;
    const [createdEntry] = await entries('api_key.created');
    expect(createdEntry).toMatchObject({
      actor: 'boss@example.com',
      targetId: created.id,
      summary: '创建 工单系统',
    });

    const refused = await t.app.inject({
      method: 'POST',
      url: `${base()}/llm-providers`,
      headers: member,
      payload: {
        name: '通义千问',
        baseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
        model: 'qwen-plus',
        apiKey: LLM_KEY,
      },
    });
    expect(refused.statusCode).toBe(403);
    expect(await entries('provider.changed')).toHaveLength(0);
    const llm = await t.app.inject({
      method: 'POST',
      url: `${base()}/llm-providers`,
      headers: owner,
      payload: {
        name: '通义千问',
        baseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
        model: 'qwen-plus',
        apiKey: LLM_KEY,
      },
    });
    expect(llm.statusCode, llm.body).toBe(200);
    const [provider] = await entries('provider.changed');
    expect(provider).toMatchObject({ targetType: 'llm_provider', summary: '新增大模型 通义千问' });

    const revoked = await t.app.inject({
      method: 'POST',
      url: `${base()}/api-keys/${created.id}/revoke`,
      headers: owner,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(await entries('api_key.revoked')).toMatchObject([{ targetId: created.id }]);

    const everything = JSON.stringify(await t.db.select().from(auditLog));
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(LLM_KEY);
    expect(everything).not.toContain(apiSecret);
  });

  it('a call-record export is recorded with the filter used', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `${base()}/calls/export?format=csv&answered=yes&callee=138`,
      headers: member,
    });
    expect(res.statusCode, res.body).toBe(200);
    const [entry] = await entries('calls.exported');
    expect(entry).toMatchObject({ actor: 'staff@example.com', projectId, summary: '导出通话记录（CSV）' });
    expect(entry!.detail).toMatchObject({ format: 'csv', filters: { answered: 'yes' } });
  });
});
