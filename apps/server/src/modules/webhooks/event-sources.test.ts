import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WEBHOOK_EVENT_CATALOGUE, type WebhookEventType, webhookEventType } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { VirtualClock } from '../../engine/clock';
import { insertContacts } from '../../engine/dialer/test-support';
import { seedDemoContent } from '../demo/demo-content';
import { eventually, type Received, startReceiver } from './webhooks.test-helper';

type Event = { type: WebhookEventType; timestamp: string; data: Record<string, unknown> };

const AVAILABLE = webhookEventType.options.filter((type) => WEBHOOK_EVENT_CATALOGUE[type].available);

/** A project with the demo assistant and an endpoint receiving every event, on a local receiver. */
async function setup(clock: VirtualClock) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-events-'));
  const receiver = await startReceiver();
  const t = await createTestApp({ env: { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true' }, clock });
  await t.app.ready();
  const user = await seedUser(t.db, { email: 'ops@example.com' });
  const headers = await loginAs(t.app, 'ops@example.com');
  const demo = await seedDemoContent(t.db, user.projectId, user.userId);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/project/${user.projectId}/webhooks`,
    headers,
    payload: { url: receiver.url, events: AVAILABLE },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { t, dataDir, receiver, headers, projectId: user.projectId, assistantId: demo.publishedAssistantId };
}

async function teardown(s: Awaited<ReturnType<typeof setup>> | undefined) {
  if (!s) return;
  await s.t.app.close();
  await s.receiver.close();
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}

/** Events as received, in event order (webhook-ids are ULIDs: they sort by when they were made). */
const events = (received: Received[], where: (e: Event) => boolean) =>
  received
    .map((r) => ({ id: String(r.headers['webhook-id']), event: JSON.parse(r.body) as Event }))
    .filter((x) => where(x.event))
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((x) => x.event);

describe('call events', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  let stopClock: () => void;

  beforeAll(async () => {
    const clock = new VirtualClock({ startAt: Date.now() });
    stopClock = clock.autoAdvance();
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => {
    stopClock?.();
    await teardown(s);
  });

  const testCall = async (persona: string) => {
    const res = await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/calls/test`,
      headers: s.headers,
      payload: { assistantId: s.assistantId, persona, version: 1 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const callId = res.json().data.callId as string;
    await s.t.app.runtime.idle();
    return callId;
  };
  const ofCall = (callId: string) => (e: Event) => e.data.id === callId || e.data.callId === callId;

  it('a simulated call is started, rings, is answered, ends, is analysed and its recording is ready, in order', async () => {
    const callId = await testCall('interested');
    await s.t.app.runtime.drainRecordings();
    await eventually(
      () => events(s.receiver.received, ofCall(callId)).some((e) => e.type === 'call.recording_ready'),
      15_000,
      'call.recording_ready',
    );
    const got = events(s.receiver.received, ofCall(callId));
    expect(got.map((e) => e.type)).toEqual([
      'call.started',
      'call.ringing',
      'call.answered',
      'call.ended',
      'call.analyzed',
      'call.recording_ready',
    ]);
    const [started, ringing, answered, ended, analyzed, recording] = got;
    expect(started!.data).toMatchObject({ id: callId, status: 'ringing', direction: 'outbound' });
    expect(started!.data).not.toHaveProperty('persona');
    expect(ringing!.data).toMatchObject({ status: 'ringing' });
    expect(answered!.data).toMatchObject({ status: 'in_progress' });
    expect(answered!.data.answeredAt).toBe(answered!.timestamp);
    expect(ended!.data).toMatchObject({ status: 'ended', endReason: 'completed' });
    expect(ended!.data.endedAt).toBe(ended!.timestamp);
    expect(analyzed!.data).toMatchObject({ id: callId, analysisBy: 'rules' });
    expect(typeof analyzed!.data.gradeReason).toBe('string');
    expect(analyzed!.data.intentGrade).toMatch(/^[A-D]$/);
    // The recording link works for the receiver, without a key.
    const url = new URL(String(recording!.data.recordingUrl));
    const wav = await s.t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(wav.statusCode).toBe(200);
    expect(wav.headers['content-type']).toContain('audio/wav');
    expect(Date.parse(String(recording!.data.recordingUrlExpiresAt))).toBeGreaterThan(
      Date.now() + 23 * 3600_000,
    );
  });

  it('a busy number is started and ended, never rings and is never answered', async () => {
    const callId = await testCall('busy');
    await eventually(() => events(s.receiver.received, ofCall(callId)).some((e) => e.type === 'call.ended'));
    const got = events(s.receiver.received, ofCall(callId)).filter((e) => e.type !== 'call.analyzed');
    expect(got.map((e) => e.type)).toEqual(['call.started', 'call.ended']);
    expect(got[1]!.data).toMatchObject({ endReason: 'busy' });
  });

  it('a human grade that changes the call sends call.analyzed again', async () => {
    const callId = await testCall('hesitant');
    await eventually(() =>
      events(s.receiver.received, ofCall(callId)).some((e) => e.type === 'call.analyzed'),
    );
    const res = await s.t.app.inject({
      method: 'PUT',
      url: `/api/project/${s.projectId}/calls/${callId}/grade`,
      headers: s.headers,
      payload: { grade: 'A' },
    });
    expect(res.statusCode, res.body).toBe(200);
    await eventually(
      () => events(s.receiver.received, (e) => ofCall(callId)(e) && e.type === 'call.analyzed').length === 2,
    );
    const analyses = events(s.receiver.received, (e) => ofCall(callId)(e) && e.type === 'call.analyzed');
    expect(analyses[1]!.data).toMatchObject({ humanGrade: 'A', intentGrade: 'A' });
  });

  it('a callee who opts out, and a number added in the console, are contact.opted_out', async () => {
    const callId = await testCall('refuses');
    await eventually(() => events(s.receiver.received, (e) => e.type === 'contact.opted_out').length === 1);
    const [fromCall] = events(s.receiver.received, (e) => e.type === 'contact.opted_out');
    expect(fromCall!.data).toMatchObject({ source: 'call', callId, taskId: null, contactId: null });

    const added = await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/do-not-call`,
      headers: s.headers,
      payload: { phone: '+86 139-0000-1234', reason: '客户来电要求' },
    });
    expect(added.statusCode, added.body).toBe(200);
    // Added again: already there, no new event.
    await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/do-not-call`,
      headers: s.headers,
      payload: { phone: '13900001234', reason: '重复' },
    });
    await eventually(() => events(s.receiver.received, (e) => e.type === 'contact.opted_out').length === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const optOuts = events(s.receiver.received, (e) => e.type === 'contact.opted_out');
    expect(optOuts).toHaveLength(2);
    expect(optOuts[1]!.data).toMatchObject({ phone: '13900001234', source: 'console', callId: null });
  });
});

describe('task events', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  // Sunday evening: a running task waits for Monday's window, so no call starts under this test.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-08T21:00:00+08:00') });

  beforeAll(async () => {
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => teardown(s));

  it('start, pause, resume and stop are task.state_changed; stop is also task.finished', async () => {
    const created = await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/tasks`,
      headers: s.headers,
      payload: {
        name: '回访任务',
        assistantId: s.assistantId,
        startDate: '2026-03-01',
        endDate: '2026-03-31',
        windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
        concurrency: 3,
      },
    });
    const taskId = created.json().data.id as string;
    await insertContacts(s.t.db, s.projectId, taskId, 4);
    for (const action of ['start', 'pause', 'resume', 'stop']) {
      const res = await s.t.app.inject({
        method: 'POST',
        url: `/api/project/${s.projectId}/tasks/${taskId}/actions/${action}`,
        headers: s.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const ofTask = (e: Event) => e.data.id === taskId;
    await eventually(() => events(s.receiver.received, ofTask).length === 5);
    const got = events(s.receiver.received, ofTask);
    expect(got.map((e) => [e.type, e.data.previousState, e.data.state])).toEqual([
      ['task.state_changed', 'draft', 'running'],
      ['task.state_changed', 'running', 'paused'],
      ['task.state_changed', 'paused', 'running'],
      ['task.state_changed', 'running', 'stopped'],
      ['task.finished', 'running', 'stopped'],
    ]);
    expect(got[4]!.data).toMatchObject({ name: '回访任务', counts: { total: 4 } });
    expect(got[4]!.data.finishedAt).toBe(new Date(clock.now()).toISOString());
  });
});

describe('a task dialled to the end', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  let stopClock: () => void;
  // Monday morning, inside the calling window: the dialer calls at once.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-09T10:00:00+08:00') });

  beforeAll(async () => {
    stopClock = clock.autoAdvance();
    s = await setup(clock);
  }, 60_000);
  afterAll(async () => {
    stopClock?.();
    await teardown(s);
  });

  it('completing is task.state_changed and task.finished, and its calls carry the task and contact', async () => {
    const created = await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/tasks`,
      headers: s.headers,
      payload: {
        name: '完成任务',
        assistantId: s.assistantId,
        startDate: '2026-03-01',
        endDate: '2026-03-31',
        windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
        concurrency: 2,
        retryRules: {},
      },
    });
    const taskId = created.json().data.id as string;
    await insertContacts(s.t.db, s.projectId, taskId, 2);
    const started = await s.t.app.inject({
      method: 'POST',
      url: `/api/project/${s.projectId}/tasks/${taskId}/actions/start`,
      headers: s.headers,
    });
    expect(started.statusCode, started.body).toBe(200);
    const ofTask = (e: Event) => e.data.id === taskId;
    await eventually(
      () => events(s.receiver.received, ofTask).some((e) => e.type === 'task.finished'),
      60_000,
    );
    const got = events(s.receiver.received, ofTask);
    expect(got.map((e) => [e.type, e.data.previousState, e.data.state])).toEqual([
      ['task.state_changed', 'draft', 'running'],
      ['task.state_changed', 'running', 'completed'],
      ['task.finished', 'running', 'completed'],
    ]);
    expect(got[2]!.data).toMatchObject({ progress: 1, counts: { total: 2, finished: 2 } });
    const ended = events(s.receiver.received, (e) => e.type === 'call.ended' && e.data.taskId === taskId);
    expect(ended).toHaveLength(2);
    for (const call of ended)
      expect(call.data).toMatchObject({ taskName: '完成任务', contactId: expect.any(String) });
  }, 90_000);
});
