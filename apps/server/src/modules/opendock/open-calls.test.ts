import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openCallDetail } from '@callpilot/contracts';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { assistants, calls, callTurns, projectLimits, projectNumbers } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';

let t: Awaited<ReturnType<typeof createTestApp>>;
let stopClock: () => void;
let dataDir: string;
const a = { projectId: '', assistantId: '', key: '' };
const b = { projectId: '', assistantId: '' };

const VARIABLES = { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-calls-'));
  const clock = new VirtualClock({ startAt: Date.now() });
  stopClock = clock.autoAdvance();
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const owner = await seedUser(t.db, { email: 'crm@example.com' });
  a.projectId = owner.projectId;
  a.assistantId = (await seedDemoContent(t.db, owner.projectId, owner.userId)).publishedAssistantId;
  a.key = (await seedApiKey(t.db, { projectId: a.projectId })).secret;
  const other = await seedUser(t.db, { email: 'other@example.com' });
  b.projectId = other.projectId;
  b.assistantId = (await seedDemoContent(t.db, other.projectId, other.userId)).publishedAssistantId;
}, 60_000);

afterAll(async () => {
  stopClock?.();
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const api = async (method: 'GET' | 'POST', url: string, payload?: object, key = a.key) => {
  const res = await t.app.inject({
    method,
    url: `/opendock/v1${url}`,
    headers: bearer(key),
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
};

const callCount = async (projectId: string) =>
  (await t.db.select({ n: sql<number>`count(*)::int` }).from(calls).where(eq(calls.projectId, projectId)))[0]!
    .n;

describe('POST /opendock/v1/calls: a single call from a customer system', () => {
  it('answers with the call id at once, runs the call in the engine, and the detail has turns, analysis and a signed recording', async () => {
    const placed = await api('POST', '/calls', {
      assistantId: a.assistantId,
      phone: '+86 138-0013-8000',
      variables: { ...VARIABLES, 无关变量: '忽略' },
      simulatedPersona: 'interested',
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    expect(placed.body.data).toMatchObject({ status: 'ringing' });
    const callId = placed.body.data.callId as string;
    await t.app.runtime.idle();
    await t.app.runtime.drainRecordings();

    const detail = await api('GET', `/calls/${callId}`);
    expect(detail.status).toBe(200);
    const call = detail.body.data;
    expect(call).toMatchObject({
      id: callId,
      direction: 'outbound',
      status: 'ended',
      endReason: 'completed',
      calleeNumber: '13800138000',
      callerNumber: '02160880000',
      assistantId: a.assistantId,
      assistantVersion: 1,
      taskId: null,
      persona: 'interested',
      // Only the assistant's own variables reach the call.
      variables: VARIABLES,
      recording: 'ready',
    });
    expect(call.turns.length).toBeGreaterThan(2);
    expect(call.turns[0].speaker).toBe('assistant');
    // The opening line was filled with the variables.
    expect(call.turns[0].text).toContain('张先生');
    expect(call.intentGrade).toMatch(/^[ABCD]$/);
    expect(call.summary).not.toBe('');
    expect(call.gradeReason).not.toBe('');

    // The recording downloads from the signed address without any key.
    expect(call.recordingUrl).toMatch(/^http:\/\/localhost(:\d+)?\/api\/recordings\//);
    expect(Date.parse(call.recordingUrlExpiresAt)).toBeGreaterThan(Date.now());
    const url = new URL(call.recordingUrl);
    const wav = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(wav.statusCode).toBe(200);
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(wav.rawPayload.subarray(0, 4).toString()).toBe('RIFF');
  });

  it('without a simulated persona the call is an ordinary one of the simulated carrier', async () => {
    const placed = await api('POST', '/calls', {
      assistantId: a.assistantId,
      assistantVersion: 1,
      phone: '13800138001',
      variables: VARIABLES,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    await t.app.runtime.idle();
    const call = (await api('GET', `/calls/${placed.body.data.callId}`)).body.data;
    expect(call).toMatchObject({ status: 'ended', persona: null, calleeNumber: '13800138001' });
    expect(call.recordingUrl === null).toBe(call.recording !== 'ready');
  });

  it('uses a caller number of the project and refuses one that is not', async () => {
    await t.db
      .insert(projectNumbers)
      .values({ projectId: a.projectId, number: '02160881234', label: '客服' });
    await t.db
      .insert(projectNumbers)
      .values({ projectId: a.projectId, number: '02160885678', label: '停用', enabled: false });
    const placed = await api('POST', '/calls', {
      assistantId: a.assistantId,
      phone: '13800138002',
      callerNumber: '02160881234',
      variables: VARIABLES,
      simulatedPersona: 'busy',
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    await t.app.runtime.idle();
    const call = (await api('GET', `/calls/${placed.body.data.callId}`)).body.data;
    expect(call).toMatchObject({ callerNumber: '02160881234', endReason: 'busy', answeredAt: null });

    const before = await callCount(a.projectId);
    for (const callerNumber of ['02160885678', '02199999999']) {
      const refused = await api('POST', '/calls', {
        assistantId: a.assistantId,
        phone: '13800138002',
        callerNumber,
        variables: VARIABLES,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(`外显号码 ${callerNumber} 不是本项目已启用的号码`);
    }
    expect(await callCount(a.projectId)).toBe(before);
  });

  it('refuses what the console and the dialer refuse, in Chinese, and places nothing', async () => {
    await t.app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/do-not-call`,
      headers: await loginAs(t.app, 'crm@example.com'),
      payload: { phone: '13900139000', reason: '投诉' },
    });
    const draftOnly = (
      await t.app.inject({
        method: 'GET',
        url: `/api/project/${a.projectId}/assistants?pageSize=50`,
        headers: await loginAs(t.app, 'crm@example.com'),
      })
    )
      .json()
      .data.items.find((item: { publishedVersion: number | null }) => item.publishedVersion === null);
    const body = { assistantId: a.assistantId, phone: '13800138003', variables: VARIABLES };
    const cases: [object, number, string | RegExp][] = [
      [{ ...body, phone: '139 0013 9000' }, 409, '号码在免打扰名单中'],
      [{ ...body, phone: '1380013800' }, 400, '字段 phone：号码位数不正确'],
      [{ ...body, phone: '+1 415 555 0100' }, 400, /^字段 phone：不是中国大陆号码/],
      [{ ...body, phone: '4008001234' }, 400, '字段 phone：不支持呼叫 400/800/95 等服务号码'],
      [{ ...body, variables: { 客户姓名: '张先生', 公司名称: '星河宽带' } }, 400, /产品名称/],
      [{ ...body, assistantVersion: 9 }, 400, '字段 assistantVersion：小助手版本 v9 不存在'],
      [{ ...body, assistantId: draftOnly.id }, 400, '小助手尚未发布，请先在控制台发布后再发起呼叫'],
      [{ ...body, assistantId: randomUUID() }, 404, '小助手不存在或已删除'],
      // Another project's assistant is not found, whatever it is.
      [{ ...body, assistantId: b.assistantId }, 404, '小助手不存在或已删除'],
      [{ ...body, simulatedPersona: 'robot' }, 400, /simulatedPersona/],
      [{ assistantId: a.assistantId }, 400, /字段 phone/],
    ];
    const before = await callCount(a.projectId);
    for (const [payload, status, message] of cases) {
      const res = await api('POST', '/calls', payload);
      expect(res.status, JSON.stringify(payload)).toBe(status);
      expect(res.body).toMatchObject({ success: false, status });
      if (typeof message === 'string') expect(res.body.message).toBe(message);
      else expect(res.body.message).toMatch(message);
    }
    expect(await callCount(a.projectId)).toBe(before);
    expect(await callCount(b.projectId)).toBe(0);

    await t.db.update(assistants).set({ status: 'disabled' }).where(eq(assistants.id, a.assistantId));
    const disabled = await api('POST', '/calls', body);
    expect(disabled).toMatchObject({
      status: 409,
      body: { message: '小助手已停用，请在控制台启用后再发起呼叫' },
    });
    await t.db.update(assistants).set({ status: 'enabled' }).where(eq(assistants.id, a.assistantId));
    expect(await callCount(a.projectId)).toBe(before);
  });

  it("holds to the project's balance and outbound concurrency, counting calls in progress", async () => {
    await t.db
      .update(projectLimits)
      .set({ hasBalance: true, balanceFen: 10_000, concurrentCallout: 1 })
      .where(eq(projectLimits.projectId, a.projectId));
    const live = randomUUID();
    await t.db.insert(calls).values({
      id: live,
      projectId: a.projectId,
      direction: 'outbound',
      callerNumber: '02160880000',
      calleeNumber: '13700137000',
      status: 'in_progress',
      startedAt: new Date(),
    });
    const body = { assistantId: a.assistantId, phone: '13800138004', variables: VARIABLES };
    const full = await api('POST', '/calls', body);
    expect(full.status).toBe(429);
    expect(full.headers['retry-after']).toBe('10');
    expect(full.body.message).toBe('项目的呼出并发已满（上限 1 路），请 10 秒后重试');

    await t.db.update(calls).set({ status: 'ended', endedAt: new Date() }).where(eq(calls.id, live));
    await t.db.update(projectLimits).set({ balanceFen: 0 }).where(eq(projectLimits.projectId, a.projectId));
    const broke = await api('POST', '/calls', body);
    expect(broke.status).toBe(403);
    expect(broke.body).toMatchObject({ code: 'LIMIT_REACHED', message: '账户余额不足，无法发起呼叫' });

    await t.db.update(projectLimits).set({ balanceFen: 100 }).where(eq(projectLimits.projectId, a.projectId));
    const placed = await api('POST', '/calls', { ...body, simulatedPersona: 'no_answer' });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    await t.app.runtime.idle();
    await t.db
      .update(projectLimits)
      .set({ hasBalance: false })
      .where(eq(projectLimits.projectId, a.projectId));
  });

  it('carries a refused knowledge turn as recorded: the nearest candidate marked unused, the model times', async () => {
    const id = randomUUID();
    const startedAt = new Date(Date.parse('2030-04-01T02:00:00Z'));
    await t.db.insert(calls).values({
      id,
      projectId: a.projectId,
      direction: 'inbound',
      callerNumber: '13800138000',
      calleeNumber: '02160880001',
      status: 'ended',
      endReason: 'completed',
      startedAt,
      endedAt: new Date(startedAt.getTime() + 20_000),
      talkSeconds: 20,
    });
    const nearest = {
      id: 'seg-near',
      knowledgeBaseId: 'kb-1',
      documentName: 'faq.csv',
      content: '报修热线 24 小时受理',
      score: 0.14,
      used: false,
    };
    await t.db.insert(callTurns).values([
      {
        callId: id,
        index: 0,
        speaker: 'callee',
        text: '你们周末营业吗',
        startMs: 0,
        endMs: 900,
        segments: [],
      },
      {
        callId: id,
        index: 1,
        speaker: 'assistant',
        text: '抱歉，这个问题我需要确认一下，稍后会有专人联系您。',
        startMs: 1000,
        endMs: 3000,
        latency: {
          recognitionMs: 100,
          retrievalMs: 520,
          brainMs: 5,
          firstTokenMs: 5,
          synthesisMs: 150,
          rewriteMs: 180,
          rerankMs: 320,
        },
        segments: [nearest],
      },
    ]);
    const res = await api('GET', `/calls/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(openCallDetail.parse(res.body.data).turns[1]).toMatchObject({
      segments: [nearest],
      latency: { rewriteMs: 180, rerankMs: 320 },
    });
  });

  it('never shows another project the call', async () => {
    const [own] = await t.db.select({ id: calls.id }).from(calls).where(eq(calls.projectId, a.projectId));
    const bKey = (await seedApiKey(t.db, { projectId: b.projectId })).secret;
    const res = await api('GET', `/calls/${own!.id}`, undefined, bKey);
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('通话记录不存在');
    const list = await api('GET', '/calls?limit=100', undefined, bKey);
    expect(list.body.data).toEqual({ items: [], nextCursor: null });
  });
});

describe('GET /opendock/v1/calls: the record list with cursor pagination', () => {
  let p: { projectId: string; key: string };

  beforeAll(async () => {
    const owner = await seedUser(t.db, { email: 'list@example.com' });
    p = { projectId: owner.projectId, key: (await seedApiKey(t.db, { projectId: owner.projectId })).secret };
    const base = Date.parse('2030-05-01T08:00:00Z');
    // 45 calls, in groups of three that start in the same millisecond: the id breaks the ties.
    await t.db.insert(calls).values(
      Array.from({ length: 45 }, (_, i) => ({
        id: `call-${String(i).padStart(3, '0')}`,
        projectId: owner.projectId,
        direction: i % 5 === 0 ? ('inbound' as const) : ('outbound' as const),
        callerNumber: '02160880000',
        calleeNumber: `1380000${String(i).padStart(4, '0')}`,
        status: 'ended' as const,
        endReason: 'completed' as const,
        intentGrade: (['A', 'B', 'C'] as const)[i % 3],
        startedAt: new Date(base + Math.floor(i / 3) * 60_000),
        endedAt: new Date(base + Math.floor(i / 3) * 60_000 + 30_000),
        talkSeconds: 30,
      })),
    );
  });

  const page = async (query: string) => {
    const res = await api('GET', `/calls?${query}`, undefined, p.key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { items: { id: string; startedAt: string }[]; nextCursor: string | null };
  };

  async function walk(query: string, between?: () => Promise<void>) {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const data = await page(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...data.items.map((item) => item.id));
      cursor = data.nextCursor;
      pages++;
      await between?.();
    } while (cursor);
    return { ids, pages };
  }

  it('walks every call exactly once, newest first, and ends with a null cursor', async () => {
    const { ids, pages } = await walk('limit=10');
    expect(pages).toBe(5);
    expect(ids).toHaveLength(45);
    expect(new Set(ids).size).toBe(45);
    const expected = Array.from({ length: 45 }, (_, i) => `call-${String(i).padStart(3, '0')}`).sort(
      (x, y) => {
        const [gx, gy] = [Math.floor(Number(x.slice(5)) / 3), Math.floor(Number(y.slice(5)) / 3)];
        return gy - gx || (y < x ? -1 : 1);
      },
    );
    expect(ids).toEqual(expected);
    // Oldest first too.
    const ascending = await walk('limit=7&order=asc');
    expect(ascending.ids).toEqual([...expected].reverse());
    // A page exactly at the end has no next cursor.
    expect((await page('limit=45')).nextCursor).toBeNull();
  });

  it('is stable while new calls arrive between pages', async () => {
    let added = 0;
    const { ids } = await walk('limit=10', async () => {
      added++;
      await t.db.insert(calls).values({
        id: `new-${added}`,
        projectId: p.projectId,
        direction: 'outbound',
        callerNumber: '02160880000',
        calleeNumber: '13900000000',
        status: 'ringing',
        startedAt: new Date(Date.parse('2030-06-01T00:00:00Z') + added),
      });
    });
    expect(ids).toHaveLength(45);
    expect(new Set(ids).size).toBe(45);
    expect(ids.some((id) => id.startsWith('new-'))).toBe(false);
    await t.db.delete(calls).where(sql`${calls.id} like 'new-%'`);
  });

  it("applies the record list's filters", async () => {
    const inbound = await walk('limit=4&direction=inbound');
    expect(inbound.ids).toHaveLength(9);
    const graded = await walk('limit=100&intentGrade=A,B&direction=outbound');
    expect(graded.ids).toHaveLength(24);
    const window = await page(
      `limit=100&from=${encodeURIComponent('2030-05-01T08:01:00Z')}&to=${encodeURIComponent('2030-05-01T08:02:00Z')}`,
    );
    expect(window.items.map((item) => item.id).sort()).toEqual([
      'call-003',
      'call-004',
      'call-005',
      'call-006',
      'call-007',
      'call-008',
    ]);
    expect((await page('limit=100&number=13800000044')).items.map((item) => item.id)).toEqual(['call-044']);
  });

  it('refuses a bad limit or cursor with the field and the rule', async () => {
    const bad = async (query: string) => (await api('GET', `/calls?${query}`, undefined, p.key)).body;
    expect(await bad('limit=0')).toMatchObject({ status: 400, message: '字段 limit：每页条数至少为 1' });
    expect((await bad('limit=101')).message).toBe('字段 limit：每页条数不能超过 100');
    expect((await bad('cursor=not-a-cursor')).message).toBe(
      '字段 cursor：游标无效，请使用上一页应答中的 nextCursor',
    );
    const { nextCursor } = await page('limit=2');
    expect((await bad(`limit=2&order=asc&cursor=${nextCursor}`)).message).toContain('另一排序方向');
    expect((await bad('from=2030-06-01T00:00:00Z&to=2030-05-01T00:00:00Z')).message).toBe(
      '字段 to：结束时间不能早于开始时间',
    );
  });
});
