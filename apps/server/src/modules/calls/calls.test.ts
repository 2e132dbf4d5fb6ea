import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallTurn, EndReason } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { calls } from '../../db/schema';
import type { NewCallRecord as NewCall } from '../../engine/call/ports';
import { iterateCalls, listCalls } from './calls.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await current?.app.close();
  current = undefined;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function setup() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'calls-test-'));
  dirs.push(dataDir);
  current = await createTestApp({ env: { DATA_DIR: dataDir } });
  const { app, db } = current;
  const a = await seedUser(db, { email: 'a@example.com' });
  const b = await seedUser(db, { email: 'b@example.com' });
  return {
    ...current,
    a,
    b,
    headersA: await loginAs(app, 'a@example.com'),
    headersB: await loginAs(app, 'b@example.com'),
  };
}

const DAY = 24 * 3600 * 1000;

/** A finished call written through the engine's own store, as a call would leave it. */
async function recordCall(
  t: TestApp,
  projectId: string,
  over: Partial<NewCall> & {
    endReason?: EndReason;
    talkSeconds?: number;
    grade?: 'A' | 'B' | 'C' | 'D' | null;
    turns?: Pick<CallTurn, 'speaker' | 'text'>[];
  } = {},
) {
  const store = t.app.runtime.calls;
  const id = randomUUID();
  const startedAt = over.startedAt ?? new Date(Date.now() - DAY);
  await store.create({
    id,
    projectId,
    direction: 'outbound',
    callerNumber: '02160880000',
    calleeNumber: '13800000000',
    assistantId: null,
    assistantName: '回访助手',
    assistantVersion: 1,
    ...over,
    startedAt,
  });
  const endReason = over.endReason ?? 'completed';
  const answered = ![
    'busy',
    'no_answer',
    'powered_off',
    'vacant',
    'rejected',
    'failed',
    'voicemail',
  ].includes(endReason);
  const talk = over.talkSeconds ?? (answered ? 60 : 0);
  if (answered) await store.answered(projectId, id, new Date(startedAt.getTime() + 5000));
  let offset = 0;
  for (const [index, turn] of (over.turns ?? []).entries()) {
    await store.turn(projectId, id, {
      index,
      speaker: turn.speaker,
      text: turn.text,
      dtmf: null,
      startMs: offset,
      endMs: offset + 1500,
      interrupted: false,
      latency: null,
      segments: [],
    });
    offset += 2000;
  }
  await store.end(projectId, id, {
    endReason,
    hangupBy: answered ? 'assistant' : 'system',
    endedAt: new Date(startedAt.getTime() + 5000 + talk * 1000),
  });
  await store.analysis(projectId, id, {
    grade: answered ? (over.grade === undefined ? 'C' : over.grade) : null,
    reason: '测试',
    summary: answered ? '客户已接听' : '未接通',
    fields: {},
    by: 'rules',
  });
  return id;
}

describe('call records', () => {
  it('lists with server-side filters, sorting and pagination', async () => {
    const t = await setup();
    const { app, a, headersA } = t;
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      ids.push(
        await recordCall(t, a.projectId, {
          startedAt: new Date(now - (i + 1) * 3600_000),
          calleeNumber: `1390000${String(i).padStart(4, '0')}`,
          endReason: i % 5 === 0 ? 'busy' : 'completed',
          talkSeconds: i * 10,
          grade: i % 2 ? 'A' : 'C',
        }),
      );
    }
    await recordCall(t, a.projectId, { startedAt: new Date(now - 20 * DAY), calleeNumber: '13999999999' });
    const url = `/api/project/${a.projectId}/calls`;
    const get = async (query: string) => {
      const res = await app.inject({ method: 'GET', url: `${url}?${query}`, headers: headersA });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    const from = new Date(now - 7 * DAY).toISOString();
    const page1 = await get(`from=${from}`);
    expect(page1.total).toBe(25);
    expect(page1.items).toHaveLength(20);
    // Newest first by default.
    expect(page1.items[0].id).toBe(ids[0]);
    const page2 = await get(`from=${from}&page=2`);
    expect(page2.items.map((c: { id: string }) => c.id)).toEqual(ids.slice(20));

    const busy = await get(`from=${from}&endReason=busy`);
    expect(busy.total).toBe(5);
    expect(busy.items.every((c: { endReason: string; intentGrade: null }) => c.endReason === 'busy')).toBe(
      true,
    );
    expect(busy.items[0].intentGrade).toBeNull();

    const byNumber = await get('number=00012');
    expect(byNumber.items.map((c: { calleeNumber: string }) => c.calleeNumber)).toEqual(['13900000012']);

    const longest = await get(`from=${from}&sort=talkSeconds&order=desc&pageSize=3`);
    expect(longest.items.map((c: { talkSeconds: number }) => c.talkSeconds)).toEqual([240, 230, 220]);

    const talkRange = await get(`from=${from}&talkMin=100&talkMax=150`);
    expect(talkRange.total).toBe(4); // 110, 120, 130, 140 (100 and 150 are busy: 0 s)
    const gradeA = await get(`from=${from}&intentGrade=A`);
    expect(gradeA.total).toBe(10); // odd hours, except the busy ones (5, 15)
    const noGrade = await get(`from=${from}&intentGrade=none`);
    expect(noGrade.total).toBe(5);

    // A report's drill-down by version: calls without one count as version 0 (draft test calls).
    await recordCall(t, a.projectId, { startedAt: new Date(now - 30 * 60_000), assistantVersion: 3 });
    await recordCall(t, a.projectId, { startedAt: new Date(now - 40 * 60_000), assistantVersion: null });
    expect((await get(`from=${from}&assistantVersion=3`)).total).toBe(1);
    expect((await get(`from=${from}&assistantVersion=0`)).total).toBe(1);
    expect((await get(`from=${from}&assistantVersion=1`)).total).toBe(25);

    const bad = await app.inject({ method: 'GET', url: `${url}?endReason=nope`, headers: headersA });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('结束原因');
    const badRange = await app.inject({
      method: 'GET',
      url: `${url}?talkMin=50&talkMax=10`,
      headers: headersA,
    });
    expect(badRange.statusCode).toBe(400);
    expect(badRange.json().message).toContain('最长通话时长不能小于最短通话时长');
  });

  it('shows a call turn by turn, re-grades and tags it, and walks previous / next in the filter', async () => {
    const t = await setup();
    const { app, a, headersA } = t;
    const now = Date.now();
    const older = await recordCall(t, a.projectId, { startedAt: new Date(now - 3 * 3600_000) });
    const middle = await recordCall(t, a.projectId, {
      startedAt: new Date(now - 2 * 3600_000),
      turns: [
        { speaker: 'assistant', text: '您好，这里是星河宽带。' },
        { speaker: 'callee', text: '你好，有什么事？' },
      ],
    });
    const newer = await recordCall(t, a.projectId, { startedAt: new Date(now - 3600_000) });
    const base = `/api/project/${a.projectId}/calls/${middle}`;
    const detail = (await app.inject({ method: 'GET', url: base, headers: headersA })).json().data;
    expect(detail.turns.map((turn: CallTurn) => [turn.speaker, turn.text])).toEqual([
      ['assistant', '您好，这里是星河宽带。'],
      ['callee', '你好，有什么事？'],
    ]);
    expect(detail).toMatchObject({ turnCount: 2, talkSeconds: 60, machineGrade: 'C', intentGrade: 'C' });

    const neighbors = (
      await app.inject({ method: 'GET', url: `${base}/neighbors`, headers: headersA })
    ).json().data;
    expect(neighbors).toEqual({ previousId: newer, nextId: older });
    const ascending = (
      await app.inject({ method: 'GET', url: `${base}/neighbors?order=asc`, headers: headersA })
    ).json().data;
    expect(ascending).toEqual({ previousId: older, nextId: newer });

    const graded = await app.inject({
      method: 'PUT',
      url: `${base}/grade`,
      headers: headersA,
      payload: { grade: 'A' },
    });
    expect(graded.statusCode).toBe(200);
    expect(graded.json().data).toMatchObject({
      machineGrade: 'C',
      humanGrade: 'A',
      intentGrade: 'A',
      humanGradedBy: 'a',
    });
    const cleared = await app.inject({
      method: 'PUT',
      url: `${base}/grade`,
      headers: headersA,
      payload: { grade: null },
    });
    expect(cleared.json().data).toMatchObject({ humanGrade: null, intentGrade: 'C', humanGradedBy: null });
    const badGrade = await app.inject({
      method: 'PUT',
      url: `${base}/grade`,
      headers: headersA,
      payload: { grade: 'E' },
    });
    expect(badGrade.statusCode).toBe(400);

    const tagged = await app.inject({
      method: 'PUT',
      url: `${base}/tags`,
      headers: headersA,
      payload: { tags: ['高意向', '回访', '高意向'] },
    });
    expect(tagged.json().data.tags).toEqual(['高意向', '回访']);
    const tags = (
      await app.inject({ method: 'GET', url: `/api/project/${a.projectId}/calls/tags`, headers: headersA })
    ).json().data;
    expect(tags.sort()).toEqual(['回访', '高意向']);
    const byTag = (
      await app.inject({
        method: 'GET',
        url: `/api/project/${a.projectId}/calls?tags=回访`,
        headers: headersA,
      })
    ).json().data;
    expect(byTag.items.map((c: { id: string }) => c.id)).toEqual([middle]);
  });

  it('walks the filtered list batch by batch in any order, ties included, without repeating a row', async () => {
    const t = await setup();
    const { a } = t;
    const base = Date.now() - 3600_000;
    const ids: string[] = [];
    // Pairs of calls share a start time and a talk time, so only the id breaks the tie.
    for (let i = 0; i < 10; i++) {
      ids.push(
        await recordCall(t, a.projectId, {
          startedAt: new Date(base - Math.floor(i / 2) * 60_000),
          talkSeconds: 30 + (i % 3),
        }),
      );
    }
    for (const f of [
      { sort: 'startedAt', order: 'desc' },
      { sort: 'startedAt', order: 'asc' },
      { sort: 'talkSeconds', order: 'desc' },
      { sort: 'turnCount', order: 'asc' },
    ] as const) {
      const walked: string[] = [];
      for await (const batch of iterateCalls(t.db, a.projectId, f, 3)) walked.push(...batch.map((r) => r.id));
      const listed = (await listCalls(t.db, a.projectId, { ...f, page: 1, pageSize: 100 })).items.map(
        (c) => c.id,
      );
      expect(walked, `${f.sort} ${f.order}`).toEqual(listed);
      expect(new Set(walked).size).toBe(10);
    }
    expect(new Set(ids).size).toBe(10);
  });

  it('exports the filtered set as CSV and XLSX with formula cells escaped', async () => {
    const t = await setup();
    const { app, a, headersA } = t;
    await recordCall(t, a.projectId, {
      contactName: '=HYPERLINK("http://evil")',
      calleeNumber: '13700000001',
    });
    await recordCall(t, a.projectId, { contactName: '张三, "老客户"', calleeNumber: '13700000002' });
    await recordCall(t, a.projectId, { endReason: 'busy', calleeNumber: '13700000003' });
    const url = `/api/project/${a.projectId}/calls/export?endReason=completed`;
    const csv = await app.inject({ method: 'GET', url, headers: headersA });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toContain('attachment');
    const text = csv.body;
    expect(text.startsWith('\uFEFF开始时间,')).toBe(true);
    const lines = text.trim().split('\r\n');
    expect(lines).toHaveLength(3);
    expect(text).toContain(`'=HYPERLINK(""http://evil"")`);
    expect(text).toContain('"张三, ""老客户"""');
    expect(text).not.toContain('13700000003');

    const xlsx = await app.inject({ method: 'GET', url: `${url}&format=xlsx`, headers: headersA });
    expect(xlsx.statusCode).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(3);
    const values = sheet.getSheetValues().flat().map(String);
    expect(values).toContain(`'=HYPERLINK("http://evil")`);
  });

  it('serves a recording with Range requests, to members and signed URLs only', async () => {
    const t = await setup();
    const { app, a, headersA, headersB } = t;
    const id = await recordCall(t, a.projectId, { turns: [{ speaker: 'assistant', text: '您好' }] });
    const wav = Buffer.alloc(1044);
    wav.write('RIFF', 0, 'ascii');
    wav.write('WAVE', 8, 'ascii');
    for (let i = 44; i < wav.length; i++) wav[i] = i % 251;
    const key = `${a.projectId}/${id}.wav`;
    await app.runtime.recordings.put(key, wav);
    // A recording as the worker leaves it (the worker itself is tested in test-call.test.ts).
    await t.db
      .update(calls)
      .set({ recording: 'ready', recordingKey: key, recordingDurationMs: 30 })
      .where(eq(calls.id, id));

    const base = `/api/project/${a.projectId}/calls/${id}`;
    const whole = await app.inject({ method: 'GET', url: `${base}/recording`, headers: headersA });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('audio/wav');
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.rawPayload.equals(wav)).toBe(true);

    const part = await app.inject({
      method: 'GET',
      url: `${base}/recording`,
      headers: { ...headersA, range: 'bytes=100-199' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${wav.length}`);
    expect(part.rawPayload.equals(wav.subarray(100, 200))).toBe(true);
    const tail = await app.inject({
      method: 'GET',
      url: `${base}/recording`,
      headers: { ...headersA, range: 'bytes=-44' },
    });
    expect(tail.rawPayload.equals(wav.subarray(wav.length - 44))).toBe(true);
    const beyond = await app.inject({
      method: 'GET',
      url: `${base}/recording`,
      headers: { ...headersA, range: 'bytes=5000-' },
    });
    expect(beyond.statusCode).toBe(416);

    const signed = (
      await app.inject({ method: 'GET', url: `${base}/recording-url`, headers: headersA })
    ).json().data;
    const viaUrl = await app.inject({ method: 'GET', url: signed.url, headers: { range: 'bytes=0-9' } });
    expect(viaUrl.statusCode).toBe(206);
    expect(viaUrl.rawPayload.equals(wav.subarray(0, 10))).toBe(true);
    const tampered = await app.inject({
      method: 'GET',
      url: signed.url.replace(/signature=.{4}/, 'signature=AAAA'),
    });
    expect(tampered.statusCode).toBe(403);
    const otherCall = await app.inject({ method: 'GET', url: signed.url.replace(id, randomUUID()) });
    expect(otherCall.statusCode).toBe(403);

    // The other project's member gets nothing: list, detail, export, recording, its URL, grade, tags.
    const list = await app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/calls`,
      headers: headersB,
    });
    expect(list.statusCode).toBe(403);
    for (const [method, url, payload] of [
      ['GET', base, undefined],
      ['GET', `${base}/recording`, undefined],
      ['GET', `${base}/recording-url`, undefined],
      ['GET', `${base}/neighbors`, undefined],
      ['GET', `/api/project/${a.projectId}/calls/export`, undefined],
      ['PUT', `${base}/grade`, { grade: 'D' }],
      ['PUT', `${base}/tags`, { tags: ['x'] }],
    ] as const) {
      const res = await app.inject({ method, url, headers: headersB, payload });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    // ... and through their own project, a foreign call id is simply not there.
    const viaOwn = await app.inject({
      method: 'GET',
      url: `/api/project/${t.b.projectId}/calls/${id}/recording`,
      headers: headersB,
    });
    expect(viaOwn.statusCode).toBe(404);
    const ownList = (
      await app.inject({ method: 'GET', url: `/api/project/${t.b.projectId}/calls`, headers: headersB })
    ).json().data;
    expect(ownList.total).toBe(0);
    const unchanged = (await app.inject({ method: 'GET', url: base, headers: headersA })).json().data;
    expect(unchanged).toMatchObject({ humanGrade: null, tags: [] });
  });
});
