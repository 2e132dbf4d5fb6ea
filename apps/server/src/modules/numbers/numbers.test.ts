import { randomUUID } from 'node:crypto';
import { DEFAULT_WINDOWS, taskSettings } from '@callpilot/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { callTasks, memberships, projectNumbers } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  current = await createTestApp();
  const { app, db } = current;
  const a = await seedUser(db, { email: 'owner@example.com' });
  const m = await seedUser(db, { email: 'member@example.com', project: null });
  await db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
  const b = await seedUser(db, { email: 'other@example.com' });
  return {
    ...current,
    a,
    b,
    url: `/api/project/${a.projectId}/numbers`,
    owner: await loginAs(app, 'owner@example.com'),
    member: await loginAs(app, 'member@example.com'),
    outsider: await loginAs(app, 'other@example.com'),
  };
}

describe('caller numbers (外显号码)', () => {
  it('adds normalised numbers, refuses duplicates and bad ones, edits and deletes', async () => {
    const { app, db, url, owner } = await setup();
    const added = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { number: '+86 138-0013-8000', label: '销售一组' },
    });
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json().data).toMatchObject({ number: '13800138000', label: '销售一组', enabled: true });
    await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { number: '010 8888 6666', enabled: false },
    });

    const dup = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { number: '0086 13800138000' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe('号码 13800138000 已存在');
    for (const [number, message] of [
      ['12345', '字段 number：号码位数不正确'],
      ['+1 415 555 0100', '字段 number：不是中国大陆号码（仅支持 +86 号码）'],
      ['abc', '字段 number：号码格式不正确'],
    ]) {
      const res = await app.inject({ method: 'POST', url, headers: owner, payload: { number } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(message);
    }

    const list = (await app.inject({ method: 'GET', url, headers: owner })).json().data;
    expect(list.map((n: { number: string; enabled: boolean }) => [n.number, n.enabled])).toEqual([
      ['13800138000', true],
      ['01088886666', false],
    ]);

    const put = await app.inject({
      method: 'PUT',
      url: `${url}/010-88886666`,
      headers: owner,
      payload: { enabled: true },
    });
    expect(put.json().data).toMatchObject({ number: '01088886666', enabled: true, label: '' });
    const missing = await app.inject({
      method: 'PUT',
      url: `${url}/13900139000`,
      headers: owner,
      payload: { label: 'x' },
    });
    expect(missing.statusCode).toBe(404);

    const del = await app.inject({ method: 'DELETE', url: `${url}/01088886666`, headers: owner });
    expect(del.statusCode).toBe(200);
    expect((await db.select().from(projectNumbers)).map((r) => r.number)).toEqual(['13800138000']);
  });

  it('rests a number (休息) and puts it back; resting again keeps when it started; members may not', async () => {
    const { app, url, owner, member, outsider, b } = await setup();
    await app.inject({ method: 'POST', url, headers: owner, payload: { number: '02160880001' } });
    const rest = (headers: Record<string, string>, resting: unknown, at = url) =>
      app.inject({ method: 'PUT', url: `${at}/02160880001`, headers, payload: { resting } });

    const rested = await rest(owner, true);
    expect(rested.statusCode, rested.body).toBe(200);
    const since = rested.json().data.restingSince as string;
    expect(Date.parse(since)).toBeGreaterThan(Date.now() - 60_000);
    expect(rested.json().data).toMatchObject({ enabled: true });
    expect((await rest(owner, true)).json().data.restingSince).toBe(since);
    const listed = (await app.inject({ method: 'GET', url, headers: owner })).json().data;
    expect(listed[0].restingSince).toBe(since);

    const bad = await rest(owner, 'yes');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('是否休息须为布尔值');
    expect((await rest(member, false)).statusCode).toBe(403);
    expect((await rest(outsider, false)).statusCode).toBe(403);
    expect((await rest(outsider, false, `/api/project/${b.projectId}/numbers`)).statusCode).toBe(404);

    const back = await rest(owner, false);
    expect(back.json().data.restingSince).toBeNull();
  });

  it('keeps a number an unfinished task shows to callees', async () => {
    const { app, db, a, url, owner } = await setup();
    await app.inject({ method: 'POST', url, headers: owner, payload: { number: '13800138000' } });
    const settings = taskSettings.parse({
      name: '回访',
      assistantId: 'x',
      callerNumbers: ['13800138000'],
      startDate: '2025-05-01',
      endDate: '2025-05-02',
      windows: DEFAULT_WINDOWS,
      concurrency: 1,
    });
    const taskId = randomUUID();
    await db
      .insert(callTasks)
      .values({ id: taskId, projectId: a.projectId, name: '回访', state: 'paused', settings });
    const refused = await app.inject({ method: 'DELETE', url: `${url}/13800138000`, headers: owner });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('任务“回访”');
    const { eq } = await import('drizzle-orm');
    await db.update(callTasks).set({ state: 'completed' }).where(eq(callTasks.id, taskId));
    expect(
      (await app.inject({ method: 'DELETE', url: `${url}/13800138000`, headers: owner })).statusCode,
    ).toBe(200);
  });

  it('lets members read but only owners and admins write; outsiders get 403 everywhere', async () => {
    const { app, db, url, owner, member, outsider } = await setup();
    await app.inject({ method: 'POST', url, headers: owner, payload: { number: '13800138000' } });
    expect((await app.inject({ method: 'GET', url, headers: member })).json().data).toHaveLength(1);
    const writes = [
      { method: 'POST' as const, url, payload: { number: '13900139000' } },
      { method: 'PUT' as const, url: `${url}/13800138000`, payload: { label: '改' } },
      { method: 'DELETE' as const, url: `${url}/13800138000` },
    ];
    for (const request of writes) {
      const res = await app.inject({ ...request, headers: member });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理外显号码');
    }
    for (const request of [{ method: 'GET' as const, url }, ...writes]) {
      expect((await app.inject({ ...request, headers: outsider })).statusCode).toBe(403);
    }
    expect(await db.select().from(projectNumbers)).toHaveLength(1);
  });
});
