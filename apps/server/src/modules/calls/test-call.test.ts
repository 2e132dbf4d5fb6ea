import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CallEvent, type EndReason, SIM_PERSONA_LABELS, type SimPersona } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { knowledgeDocuments } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { readWav } from '../../engine/speech/wav';
import { seedDemoContent } from '../demo/demo-content';
import { isOnDoNotCall } from '../do-not-call/do-not-call.service';

/** What each simulated callee must end as, through the real engine, store and analysis. */
const EXPECTED: Record<SimPersona, EndReason> = {
  interested: 'completed',
  hesitant: 'completed',
  refuses: 'opt_out',
  asks_question: 'completed',
  asks_human: 'transferred',
  silent: 'silence',
  hangs_up: 'callee_hangup',
  busy: 'busy',
  no_answer: 'no_answer',
  powered_off: 'powered_off',
  vacant: 'vacant',
  rejected: 'rejected',
  voicemail: 'voicemail',
};

let t: Awaited<ReturnType<typeof createTestApp>>;
let stopClock: () => void;
let dataDir: string;
let projectId: string;
let assistantId: string;
let headers: Record<string, string>;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-call-'));
  const clock = new VirtualClock({ startAt: Date.now() });
  stopClock = clock.autoAdvance();
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const user = await seedUser(t.db, { email: 'ops@example.com' });
  projectId = user.projectId;
  headers = await loginAs(t.app, 'ops@example.com');
  const demo = await seedDemoContent(t.db, projectId, user.userId);
  assistantId = demo.publishedAssistantId;
  // The FAQ is indexed by the app's own background worker.
  for (let i = 0; i < 200; i++) {
    const docs = await t.db
      .select()
      .from(knowledgeDocuments)
      .where(eq(knowledgeDocuments.knowledgeBaseId, demo.knowledgeBaseId));
    if (docs.every((d) => d.status === 'ready')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(async () => {
  stopClock?.();
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function testCall(persona: SimPersona, extra: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/project/${projectId}/calls/test`,
    headers,
    payload: { assistantId, persona, version: 1, ...extra },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.callId as string;
}

const detail = async (callId: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls/${callId}`, headers })).json()
    .data;

describe('simulated test calls through the API', () => {
  it('ends every persona with its end reason, grades it, and announces it live', async () => {
    const events: CallEvent[] = [];
    const unsubscribe = t.app.runtime.hub.subscribe(projectId, (e) => events.push(e));
    const ids = new Map<SimPersona, string>();
    for (const persona of Object.keys(EXPECTED) as SimPersona[]) ids.set(persona, await testCall(persona));
    await t.app.runtime.idle();
    unsubscribe();

    for (const [persona, callId] of ids) {
      const call = await detail(callId);
      expect(call.endReason, `${SIM_PERSONA_LABELS[persona]} (${persona})`).toBe(EXPECTED[persona]);
      expect(call.status).toBe('ended');
      expect(call.persona).toBe(persona);
      expect(call.assistantVersion).toBe(1);
      const answered = !['busy', 'no_answer', 'powered_off', 'vacant', 'rejected', 'voicemail'].includes(
        EXPECTED[persona],
      );
      if (answered) {
        expect(call.answeredAt).not.toBeNull();
        expect(call.turns.length).toBeGreaterThan(1);
        expect(call.turns[0].speaker).toBe('assistant');
        expect(call.machineGrade).not.toBeNull();
        expect(call.summary).not.toBe('');
        // Offsets only move forward.
        for (let i = 1; i < call.turns.length; i++)
          expect(call.turns[i].startMs).toBeGreaterThanOrEqual(call.turns[i - 1].startMs);
      } else if (EXPECTED[persona] !== 'voicemail') {
        expect(call).toMatchObject({ answeredAt: null, talkSeconds: 0, turnCount: 0, intentGrade: null });
      }
    }
    const refused = await detail(ids.get('refuses')!);
    expect(refused.intentGrade).toBe('D');
    expect(await isOnDoNotCall(t.db, projectId, refused.calleeNumber)).toBe(true);
    const transferred = await detail(ids.get('asks_human')!);
    expect(transferred.transferNumber).toBe('400-800-6688');
    const asked = await detail(ids.get('asks_question')!);
    const used = asked.turns.flatMap((turn: { segments: unknown[] }) => turn.segments);
    expect(used.length).toBeGreaterThan(0);
    const replies = asked.turns.filter((turn: { latency: unknown }) => turn.latency);
    expect(replies[0].latency).toMatchObject({
      recognitionMs: expect.any(Number),
      brainMs: expect.any(Number),
    });

    const interested = ids.get('interested')!;
    const seen = events.filter((e) => ('call' in e ? e.call.id : e.callId) === interested).map((e) => e.type);
    expect(seen[0]).toBe('started');
    expect(seen).toContain('answered');
    expect(seen).toContain('turn');
    expect(seen.indexOf('ended')).toBeGreaterThan(seen.lastIndexOf('turn'));
    expect(seen.at(-1)).toBe('updated');

    // Listed, newest first, findable by number.
    const list = (
      await t.app.inject({
        method: 'GET',
        url: `/api/project/${projectId}/calls?number=${refused.calleeNumber}`,
        headers,
      })
    ).json().data;
    expect(list.items.map((c: { id: string }) => c.id)).toContain(refused.id);
  }, 60_000);

  it('mixes a real two-voice recording for an answered call, with turns moved to where they are heard', async () => {
    const callId = await testCall('interested', { calleeNumber: '13912345678' });
    await t.app.runtime.idle();
    await t.app.runtime.drainRecordings();
    const call = await detail(callId);
    expect(call.recording).toBe('ready');
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/project/${projectId}/calls/${callId}/recording`,
      headers,
    });
    expect(res.statusCode).toBe(200);
    const wav = readWav(res.rawPayload);
    expect(wav.durationMs).toBeGreaterThan(3000);
    expect(Math.abs(wav.durationMs - call.recordingDurationMs)).toBeLessThan(50);
    const last = call.turns.at(-1);
    expect(last.endMs).toBeLessThanOrEqual(wav.durationMs + 50);
    expect(fs.existsSync(path.join(dataDir, 'recordings', projectId, `${callId}.wav`))).toBe(true);
  }, 60_000);

  it('streams a call live as server-sent events, to members only', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await seedUser(t.db, { email: 'outsider@example.com' });
    const foreign = await fetch(`${address}/api/project/${projectId}/calls/events`, {
      headers: await loginAs(t.app, 'outsider@example.com'),
    });
    expect(foreign.status).toBe(403);

    const abort = new AbortController();
    const res = await fetch(`${address}/api/project/${projectId}/calls/events`, {
      headers,
      signal: abort.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    // The subscription exists once the first comment arrives.
    expect(decoder.decode((await reader.read()).value)).toContain(': connected');
    const callId = await testCall('interested');
    const types: string[] = [];
    let buffer = '';
    while (!types.includes('updated')) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const messages = buffer.split('\n\n');
      buffer = messages.pop() ?? '';
      for (const message of messages) {
        if (!message.startsWith('data: ')) continue;
        const event = JSON.parse(message.slice(6)) as CallEvent;
        if (('call' in event ? event.call.id : event.callId) === callId) types.push(event.type);
      }
    }
    abort.abort();
    expect(types[0]).toBe('started');
    expect(types).toEqual(expect.arrayContaining(['answered', 'turn', 'ended', 'updated']));
    await t.app.runtime.idle();
  }, 60_000);

  it('refuses a bad test call with a Chinese message and creates nothing', async () => {
    const before = (
      await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls`, headers })
    ).json().data.total;
    const bad = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'robot' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('模拟客户类型不支持');
    const badNumber = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'busy', calleeNumber: '12345' },
    });
    expect(badNumber.json().message).toContain('被叫号码须为 11 位手机号');
    const missingVersion = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'busy', version: 9 },
    });
    expect(missingVersion.statusCode).toBe(404);
    const after = (
      await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls`, headers })
    ).json().data.total;
    expect(after).toBe(before);
  });
});
