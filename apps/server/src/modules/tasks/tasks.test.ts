import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TaskEvent } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { callTasks, projectLimits, projectNumbers } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { insertContacts, waitFor } from '../../engine/dialer/test-support';
import { seedDemoContent } from '../demo/demo-content';
import { TaskEventHub } from './task-events';

async function setup(clock: VirtualClock) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tasks-'));
  const t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const email = 'ops@example.com';
  const user = await seedUser(t.db, { email });
  const headers = await loginAs(t.app, email);
  const demo = await seedDemoContent(t.db, user.projectId, user.userId);
  return { t, dataDir, projectId: user.projectId, assistantId: demo.publishedAssistantId, headers };
}

const settings = (assistantId: string, overrides: Record<string, unknown> = {}) => ({
  name: '回访任务',
  assistantId,
  startDate: '2026-03-01',
  endDate: '2026-03-31',
  windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
  concurrency: 3,
  ...overrides,
});

describe('tasks over HTTP: settings, state machine, preflight, isolation', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  // Sunday evening: running tasks wait for Monday's window, so no call starts under these tests.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-08T21:00:00+08:00') });

  beforeAll(async () => {
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => {
    await s?.t.app.close();
    if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  });

  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
    const res = await s.t.app.inject({
      method,
      url: `/api/project/${s.projectId}${url}`,
      headers: s.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const create = async (overrides: Record<string, unknown> = {}) => {
    const res = await call('POST', '/tasks', settings(s.assistantId, overrides));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id as string;
  };
  const act = (taskId: string, action: string) => call('POST', `/tasks/${taskId}/actions/${action}`);

  it('walks every legal transition and refuses illegal ones with a Chinese reason', async () => {
    const taskId = await create();
    expect((await call('GET', `/tasks/${taskId}`)).body.data).toMatchObject({
      state: 'draft',
      assistantVersion: null,
    });

    // No contacts: the preflight says so and start refuses.
    const refused = await act(taskId, 'start');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('没有待呼叫的联系人');
    expect((await act(taskId, 'pause')).body.message).toBe('草稿任务尚未开始，不能暂停');
    expect((await act(taskId, 'stop')).status).toBe(409);

    await insertContacts(s.t.db, s.projectId, taskId, 10);
    const preflight = (await call('GET', `/tasks/${taskId}/preflight`)).body.data;
    // Default retry rules: at most 2 retries, so 10 × 3 calls at most.
    expect(preflight).toMatchObject({
      contacts: 10,
      maxCalls: 30,
      concurrency: 3,
      balanceOk: true,
      problems: [],
    });
    expect(preflight.expectedCalls).toBeGreaterThanOrEqual(10);
    expect(preflight.expectedCalls).toBeLessThanOrEqual(30);
    expect(preflight.expectedSeconds).toBe(Math.ceil((preflight.expectedCalls * 60) / 3));
    // Counted in window time only: the first window opens Monday 09:00.
    expect(Date.parse(preflight.expectedFinishAt)).toBe(
      Date.parse('2026-03-09T09:00:00+08:00') + preflight.expectedSeconds * 1000,
    );
    expect(preflight.notes[0]).toContain('02160880000');

    // Settings may change while a draft.
    expect(
      (await call('PUT', `/tasks/${taskId}`, settings(s.assistantId, { name: '回访任务（改）' }))).status,
    ).toBe(200);

    const started = await act(taskId, 'start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data).toMatchObject({
      state: 'running',
      assistantVersion: 1,
      name: '回访任务（改）',
    });
    // Outside the window: the task says until when it waits.
    expect(started.body.data.waitingUntil).toBe(new Date('2026-03-09T09:00:00+08:00').toISOString());
    expect((await act(taskId, 'start')).body.message).toBe('任务已在进行中');
    expect((await act(taskId, 'resume')).body.message).toBe('任务正在进行中，无需继续');
    const running = await call('PUT', `/tasks/${taskId}`, settings(s.assistantId));
    expect(running.status).toBe(409);
    expect(running.body.message).toContain('不能修改设置');
    expect((await call('DELETE', `/tasks/${taskId}`)).body.message).toContain('只能删除草稿任务');

    expect((await act(taskId, 'pause')).body.data.state).toBe('paused');
    expect((await act(taskId, 'pause')).body.message).toBe('任务已暂停');
    expect((await act(taskId, 'start')).body.message).toBe('任务已暂停，请使用继续');
    expect((await call('PUT', `/tasks/${taskId}`, settings(s.assistantId, { concurrency: 2 }))).status).toBe(
      200,
    );
    expect((await act(taskId, 'resume')).body.data.state).toBe('running');
    const stopped = await act(taskId, 'stop');
    expect(stopped.body.data.state).toBe('stopped');
    expect(stopped.body.data.finishedAt).not.toBeNull();
    for (const action of ['start', 'pause', 'resume', 'stop']) {
      const res = await act(taskId, action);
      expect(res.status).toBe(409);
      expect(res.body.message).toContain('任务已停止');
    }

    // Copy: a new draft with the contacts, their statuses reset.
    const copy = (await call('POST', `/tasks/${taskId}/copy`)).body.data;
    expect(copy).toMatchObject({ state: 'draft', name: '回访任务 副本' });
    expect(copy.counts).toMatchObject({ total: 10, waiting: 10, finished: 0 });
    const contacts = (await call('GET', `/tasks/${copy.id}/contacts?pageSize=5`)).body.data;
    expect(contacts.total).toBe(10);
    expect(contacts.items[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await call('DELETE', `/tasks/${copy.id}`)).status).toBe(200);
    expect((await call('GET', `/tasks/${copy.id}`)).status).toBe(404);

    // Completed tasks refuse everything.
    await s.t.db.update(callTasks).set({ state: 'completed' }).where(eq(callTasks.id, taskId));
    expect((await act(taskId, 'pause')).body.message).toBe('任务已完成，不能暂停');
  });

  it('starts a task dated in the future as pending, which can only be stopped', async () => {
    const taskId = await create({ name: '下周任务', startDate: '2026-03-16' });
    await insertContacts(s.t.db, s.projectId, taskId, 2);
    const started = (await act(taskId, 'start')).body.data;
    expect(started.state).toBe('pending');
    expect(started.waitingUntil).toBe(new Date('2026-03-16T09:00:00+08:00').toISOString());
    expect((await act(taskId, 'pause')).status).toBe(409);
    expect((await act(taskId, 'stop')).body.data.state).toBe('stopped');
  });

  it('validates settings against the project: assistant, numbers, concurrency cap, balance', async () => {
    const unknownNumber = await call(
      'POST',
      '/tasks',
      settings(s.assistantId, { callerNumbers: ['02188886666'] }),
    );
    expect(unknownNumber.status).toBe(400);
    expect(unknownNumber.body.message).toContain('外显号码 02188886666');
    await s.t.db.insert(projectNumbers).values({ projectId: s.projectId, number: '02188886666' });
    expect(
      (await call('POST', '/tasks', settings(s.assistantId, { callerNumbers: ['02188886666'] }))).status,
    ).toBe(200);
    expect((await call('POST', '/tasks', settings('missing'))).body.message).toBe('小助手不存在或已删除');
    const badDates = await call('POST', '/tasks', settings(s.assistantId, { endDate: '2026-02-01' }));
    expect(badDates.status).toBe(400);

    await s.t.db
      .update(projectLimits)
      .set({ hasBalance: true, balanceFen: 0, concurrentCallout: 2 })
      .where(eq(projectLimits.projectId, s.projectId));
    const over = await call('POST', '/tasks', settings(s.assistantId, { concurrency: 3 }));
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('并发数不能超过项目的呼出并发上限（2）');
    const taskId = await create({ concurrency: 2 });
    await insertContacts(s.t.db, s.projectId, taskId, 1);
    const preflight = (await call('GET', `/tasks/${taskId}/preflight`)).body.data;
    expect(preflight).toMatchObject({ balanceOk: false, projectConcurrency: 2, problems: ['账户余额不足'] });
    const refused = await act(taskId, 'start');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('无法开始：账户余额不足');
    await s.t.db
      .update(projectLimits)
      .set({ hasBalance: false })
      .where(eq(projectLimits.projectId, s.projectId));
  });

  it('lists with filters and keeps other projects out (403)', async () => {
    const list = (await call('GET', '/tasks?state=stopped&pageSize=50')).body.data;
    expect(list.items.every((t: { state: string }) => t.state === 'stopped')).toBe(true);
    expect(list.total).toBeGreaterThanOrEqual(1);
    const named = (await call('GET', `/tasks?name=${encodeURIComponent('下周')}`)).body.data;
    expect(named.items.map((t: { name: string }) => t.name)).toEqual(['下周任务']);

    const taskId = list.items[0].id as string;
    const outsider = await seedUser(s.t.db, { email: 'outsider@example.com' });
    const headers = await loginAs(s.t.app, 'outsider@example.com');
    for (const [method, url] of [
      ['GET', `/api/project/${s.projectId}/tasks`],
      ['GET', `/api/project/${s.projectId}/tasks/${taskId}`],
      ['POST', `/api/project/${s.projectId}/tasks/${taskId}/actions/pause`],
      ['GET', `/api/project/${s.projectId}/tasks/${taskId}/contacts`],
      ['GET', `/api/project/${s.projectId}/dashboard`],
    ] as const) {
      expect((await s.t.app.inject({ method, url, headers })).statusCode, url).toBe(403);
    }
    // Their own project does not reach the task either.
    const own = await s.t.app.inject({
      method: 'GET',
      url: `/api/project/${outsider.projectId}/tasks/${taskId}`,
      headers,
    });
    expect(own.statusCode).toBe(404);
  });
});

describe('a task dialled by the server through the real engine', () => {
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

  it('runs to completion, announces progress live and shows on the dashboard', async () => {
    const url = `/api/project/${s.projectId}`;
    const created = await s.t.app.inject({
      method: 'POST',
      url: `${url}/tasks`,
      headers: s.headers,
      payload: settings(s.assistantId, { concurrency: 2, retryRules: {} }),
    });
    const taskId = created.json().data.id as string;
    await insertContacts(s.t.db, s.projectId, taskId, 6);
    const events: TaskEvent[] = [];
    const unsubscribe = s.t.app.runtime.taskEvents.subscribe(s.projectId, (e) => events.push(e), taskId);
    const started = await s.t.app.inject({
      method: 'POST',
      url: `${url}/tasks/${taskId}/actions/start`,
      headers: s.headers,
    });
    expect(started.json().data.state).toBe('running');
    const detail = async () =>
      (await s.t.app.inject({ method: 'GET', url: `${url}/tasks/${taskId}`, headers: s.headers })).json()
        .data;
    await waitFor(async () => (await detail()).state === 'completed', 60_000, 'the task to complete');
    unsubscribe();
    const done = await detail();
    expect(done.counts).toMatchObject({ total: 6, finished: 6, waiting: 0, dialing: 0, calls: 6 });
    expect(done.progress).toBe(1);
    expect(done.finishedAt).not.toBeNull();
    expect(events.length).toBeGreaterThan(0);
    expect(events.at(-1)?.task.id).toBe(taskId);

    const callList = (
      await s.t.app.inject({ method: 'GET', url: `${url}/calls?taskId=${taskId}`, headers: s.headers })
    ).json().data;
    expect(callList.total).toBe(6);
    for (const c of callList.items) {
      expect(c.id).toMatch(/\.1$/);
      expect(c).toMatchObject({ taskId, assistantVersion: 1, status: 'ended' });
    }
    // The home page reads the report rollups, which follow ended calls after a short debounce.
    await s.t.app.runtime.settleReports();
    const dashboard = (
      await s.t.app.inject({ method: 'GET', url: `${url}/dashboard`, headers: s.headers })
    ).json().data;
    expect(dashboard.today.calls).toBe(6);
    expect(dashboard.last7Days.calls).toBe(6);
  }, 90_000);
});

describe('TaskEventHub', () => {
  it('sends at most one event per task per interval, and the last change always', async () => {
    let loads = 0;
    const hub = new TaskEventHub(async (_p, taskId) => {
      loads++;
      return { type: 'task', task: { id: taskId, loads } } as unknown as TaskEvent;
    }, 100);
    const got: TaskEvent[] = [];
    hub.subscribe('p', (e) => got.push(e));
    for (let i = 0; i < 20; i++) hub.changed('p', 't1');
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toHaveLength(1);
    for (let i = 0; i < 20; i++) hub.changed('p', 't1');
    await new Promise((r) => setTimeout(r, 150));
    expect(got).toHaveLength(2);
    hub.close();
  });
});
