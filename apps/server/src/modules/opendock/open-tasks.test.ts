import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, seedUser } from '../../../test/helpers';
import { callTasks, doNotCall, taskContacts } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { waitFor } from '../../engine/dialer/test-support';
import { seedDemoContent } from '../demo/demo-content';

const VARIABLES = { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };

async function setup(clock: VirtualClock) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-tasks-'));
  const t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const owner = await seedUser(t.db, { email: 'crm@example.com' });
  const demo = await seedDemoContent(t.db, owner.projectId, owner.userId);
  const { secret } = await seedApiKey(t.db, { projectId: owner.projectId });
  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url: `/opendock/v1${url}`,
      headers: bearer(secret),
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  return { t, dataDir, projectId: owner.projectId, assistantId: demo.publishedAssistantId, api };
}

const settings = (assistantId: string, overrides: Record<string, unknown> = {}) => ({
  name: '接口回访任务',
  assistantId,
  startDate: '2026-03-01',
  endDate: '2026-03-31',
  windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
  concurrency: 2,
  ...overrides,
});

describe('tasks through the open API: create, contacts, state machine', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  // Sunday evening: a started task waits for Monday's window, so nothing is dialled here.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-08T21:00:00+08:00') });

  beforeAll(async () => {
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => {
    await s?.t.app.close();
    if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  });

  const create = async (overrides: Record<string, unknown> = {}) => {
    const res = await s.api('POST', '/tasks', settings(s.assistantId, overrides));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { id: string; state: string };
  };

  it('creates a draft with the console rules and no creator', async () => {
    const task = await create();
    expect(task).toMatchObject({ state: 'draft', name: '接口回访任务', concurrency: 2 });
    const [row] = await s.t.db.select().from(callTasks).where(eq(callTasks.id, task.id));
    expect(row).toMatchObject({ projectId: s.projectId, createdBy: null });

    const bad = await s.api('POST', '/tasks', settings(s.assistantId, { endDate: '2026-02-01' }));
    expect(bad).toMatchObject({ status: 400, body: { message: '字段 endDate：结束日期不能早于开始日期' } });
    const unknown = await s.api('POST', '/tasks', settings('nope'));
    expect(unknown.body.message).toBe('小助手不存在或已删除');
    const listed = await s.api('GET', '/tasks?pageSize=100');
    expect(listed.body.data.items.map((item: { id: string }) => item.id)).toContain(task.id);
  });

  it('adds contacts and answers each refused row with its index and reason, as the console import classifies them', async () => {
    const task = await create();
    await s.t.db.insert(doNotCall).values({ projectId: s.projectId, phone: '13900139000', source: 'manual' });
    const first = await s.api('POST', `/tasks/${task.id}/contacts`, {
      contacts: [
        { phone: '13800138000', name: '张三', variables: VARIABLES },
        {
          phone: '+86 138 0013 8001',
          name: '李四',
          variables: { ...VARIABLES, 客户姓名: '李四', 多余: 'x' },
        },
        { phone: '12345', name: '号码错', variables: VARIABLES },
        { phone: '13800138000', name: '重复', variables: VARIABLES },
        { phone: '139-0013-9000', name: '免打扰', variables: VARIABLES },
        { phone: '13800138002', name: '缺变量', variables: { 客户姓名: '王五' } },
      ],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toEqual({
      accepted: 2,
      rejected: [
        { index: 2, phone: '12345', reason: 'invalid', message: '号码位数不正确' },
        { index: 3, phone: '13800138000', reason: 'duplicate', message: '与 contacts[0] 号码重复' },
        { index: 4, phone: '13900139000', reason: 'do_not_call', message: '号码在免打扰名单中' },
        { index: 5, phone: '13800138002', reason: 'invalid', message: '缺少必填变量“公司名称”' },
      ],
    });
    // A second batch: numbers already in the task are duplicates, new ones follow the first batch.
    const second = await s.api('POST', `/tasks/${task.id}/contacts`, {
      contacts: [
        { phone: '13800138001', variables: VARIABLES },
        { phone: '13800138003', name: '赵六', variables: VARIABLES },
      ],
    });
    expect(second.body.data).toEqual({
      accepted: 1,
      rejected: [{ index: 0, phone: '13800138001', reason: 'duplicate', message: '任务中已有该号码' }],
    });

    const contacts = await s.api('GET', `/tasks/${task.id}/contacts`);
    expect(contacts.status).toBe(200);
    expect(contacts.body.data.total).toBe(3);
    expect(
      contacts.body.data.items.map((c: { phone: string; name: string; variables: object }) => [
        c.phone,
        c.name,
        c.variables,
      ]),
    ).toEqual([
      ['13800138000', '张三', VARIABLES],
      // Only the assistant's variables are kept.
      ['13800138001', '李四', { ...VARIABLES, 客户姓名: '李四' }],
      ['13800138003', '赵六', VARIABLES],
    ]);
    expect(contacts.body.data.items[0]).toMatchObject({ status: 'pending', attempts: 0, lastCallId: null });

    const progress = await s.api('GET', `/tasks/${task.id}`);
    expect(progress.body.data).toMatchObject({
      state: 'draft',
      progress: 0,
      counts: { total: 3, waiting: 3 },
    });
  });

  it('refuses a malformed request whole and adds nothing', async () => {
    const task = await create();
    const cases: [object, string][] = [
      [{ contacts: [] }, '字段 contacts：请至少提供 1 个联系人'],
      [{ contacts: [{ name: '无号码' }] }, '字段 contacts.0.phone：号码须为文本'],
      [
        { contacts: [{ phone: '13800138000', variables: { 客户姓名: 'x'.repeat(201) } }] },
        '字段 contacts.0.variables.客户姓名：变量值不能超过 200 个字符',
      ],
      [
        { contacts: Array.from({ length: 10_001 }, () => ({ phone: '13800138000' })) },
        '字段 contacts：每次最多添加 10000 个联系人',
      ],
    ];
    for (const [payload, message] of cases) {
      const res = await s.api('POST', `/tasks/${task.id}/contacts`, payload);
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
      expect(res.body.message).toBe(message);
    }
    const [count] = await s.t.db
      .select({ n: sql<number>`count(*)::int` })
      .from(taskContacts)
      .where(eq(taskContacts.taskId, task.id));
    expect(count?.n).toBe(0);
  });

  it('adds 10,000 contacts in one request well within the request timeout', async () => {
    const task = await create();
    const contacts = Array.from({ length: 10_000 }, (_, i) => ({
      phone: `138${String(i).padStart(8, '0')}`,
      name: `客户${i}`,
      variables: { ...VARIABLES, 客户姓名: `客户${i}` },
    }));
    const started = performance.now();
    const res = await s.api('POST', `/tasks/${task.id}/contacts`, { contacts });
    const took = performance.now() - started;
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.data).toEqual({ accepted: 10_000, rejected: [] });
    expect(took).toBeLessThan(20_000);
    const detail = await s.api('GET', `/tasks/${task.id}`);
    expect(detail.body.data.counts.total).toBe(10_000);
  }, 60_000);

  it("moves through start, pause, resume and stop with the console's refusals", async () => {
    const task = await create();
    const start = () => s.api('POST', `/tasks/${task.id}/start`);
    const empty = await start();
    expect(empty.status).toBe(409);
    expect(empty.body.message).toContain('没有待呼叫的联系人');
    expect((await s.api('POST', `/tasks/${task.id}/pause`)).body.message).toBe('草稿任务尚未开始，不能暂停');

    await s.api('POST', `/tasks/${task.id}/contacts`, {
      contacts: [{ phone: '13700137000', variables: VARIABLES }],
    });
    const started = await start();
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data).toMatchObject({ state: 'running', assistantVersion: 1 });
    expect(started.body.data.waitingUntil).toBe(new Date('2026-03-09T09:00:00+08:00').toISOString());
    expect((await start()).body.message).toBe('任务已在进行中');

    const refusedContacts = await s.api('POST', `/tasks/${task.id}/contacts`, {
      contacts: [{ phone: '13700137001', variables: VARIABLES }],
    });
    expect(refusedContacts.status).toBe(409);
    expect(refusedContacts.body.message).toContain('不能导入联系人');

    expect((await s.api('POST', `/tasks/${task.id}/pause`)).body.data.state).toBe('paused');
    expect((await s.api('POST', `/tasks/${task.id}/resume`)).body.data.state).toBe('running');
    const stopped = await s.api('POST', `/tasks/${task.id}/stop`);
    expect(stopped.body.data).toMatchObject({ state: 'stopped' });
    expect(stopped.body.data.finishedAt).not.toBeNull();
    for (const action of ['start', 'pause', 'resume', 'stop']) {
      const res = await s.api('POST', `/tasks/${task.id}/${action}`);
      expect(res.status).toBe(409);
      expect(res.body.message).toContain('任务已停止');
    }
  });
});

describe('a task created and filled through the open API, dialled by the engine', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  let stopClock: () => void;
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-09T10:00:00+08:00') });

  beforeAll(async () => {
    stopClock = clock.autoAdvance();
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => {
    stopClock?.();
    await s?.t.app.close();
    if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  });

  it('runs to completion; progress and each contact’s last call are readable', async () => {
    const task = (await s.api('POST', '/tasks', settings(s.assistantId, { retryRules: {} }))).body.data;
    const added = await s.api('POST', `/tasks/${task.id}/contacts`, {
      contacts: Array.from({ length: 4 }, (_, i) => ({
        phone: `1370000000${i}`,
        variables: VARIABLES,
      })),
    });
    expect(added.body.data.accepted).toBe(4);
    expect((await s.api('POST', `/tasks/${task.id}/start`)).body.data.state).toBe('running');
    await waitFor(
      async () => (await s.api('GET', `/tasks/${task.id}`)).body.data.state === 'completed',
      60_000,
      'the task to complete',
    );
    const done = (await s.api('GET', `/tasks/${task.id}`)).body.data;
    expect(done).toMatchObject({
      progress: 1,
      etaSeconds: null,
      counts: { total: 4, finished: 4, calls: 4 },
    });
    const contacts = (await s.api('GET', `/tasks/${task.id}/contacts`)).body.data.items;
    for (const contact of contacts) {
      expect(contact.lastCallId).not.toBeNull();
      const call = await s.api('GET', `/calls/${contact.lastCallId}`);
      expect(call.body.data).toMatchObject({ taskId: task.id, calleeNumber: contact.phone, status: 'ended' });
    }
  }, 90_000);
});
