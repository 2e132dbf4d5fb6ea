import { randomUUID } from 'node:crypto';
import { type AssistantConfig, assistantConfig } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser } from '../../test/helpers';
import type { DatabaseHandle } from '../db/client';
import { assistants, assistantVersions, calls } from '../db/schema';
import type { Dialer } from '../engine/dialer/dialer';
import {
  callsOf,
  insertContacts,
  insertTask,
  taskState,
  testDialerStore,
  testSettings,
  waitFor,
} from '../engine/dialer/test-support';
import { createSimCarrier } from '../engine/telephony/sim/sim-carrier';
import { ASSISTANT_TEMPLATES } from '../modules/assistants/assistants.templates';
import { CallEventHub } from '../modules/calls/call-events';
import { CallRepository } from '../modules/calls/call-repository';
import { createCallPorts } from './call-ports';
import { scaledClock } from './runtime';
import { taskDialer } from './task-dialer';

const SCALE = 100;

let handle: DatabaseHandle;
let projectId: string;
let dialer: Dialer | undefined;

beforeEach(async () => {
  handle = await createTestDatabase();
  projectId = (await seedUser(handle.db, { email: `td${Date.now()}@example.com` })).projectId;
});

afterEach(async () => {
  dialer?.kill();
  await handle.close();
});

async function seedAssistant(): Promise<string> {
  const template = ASSISTANT_TEMPLATES.find((t) => t.use === 'outbound') ?? ASSISTANT_TEMPLATES[0];
  if (!template) throw new Error('no assistant template');
  const config: AssistantConfig = assistantConfig.parse(template.config);
  const id = randomUUID();
  await handle.db
    .insert(assistants)
    .values({ id, projectId, name: template.name, use: 'outbound', config, publishedVersion: 1 });
  await handle.db.insert(assistantVersions).values({
    assistantId: id,
    version: 1,
    projectId,
    name: template.name,
    use: 'outbound',
    config,
    draftRevision: 1,
  });
  return id;
}

const quietLog = { warn: () => {}, info: () => {}, error: () => {} } as unknown as FastifyBaseLogger;

describe('taskDialer: a slot is the line', () => {
  it('dials the next contact at the hang-up, before the call’s post-call work ends, and completes the task after it', async () => {
    const assistantId = await seedAssistant();
    // Real time sped up as SIM_TIME_SCALE does (a virtual clock would stand still while the held
    // post-call work below is in flight, as it does for any database work of a call).
    const clock = scaledClock(SCALE);
    const carrier = createSimCarrier({ clock, seed: 'task-dialer-slot' });
    const repository = new CallRepository(handle.db, new CallEventHub(), {
      owner: 'task-dialer-test',
      singleProcess: true,
    });
    const real = createCallPorts({
      db: handle.db,
      repository,
      resolveProvider: async () => null,
      resolveRecognizer: async () => null,
      resolveSynthesizer: async () => null,
      embedderFor: async () => undefined,
      onError: () => {},
    });
    // The post-call pipeline's last step before the recording is held until the test lets it go,
    // standing in for a slow analysis or SMS follow-up: it must not hold the slot.
    const held: Array<{ callId: string; release: () => void }> = [];
    const ports = {
      ...real,
      actions: {
        ...real.actions,
        afterCall: async (call: { projectId: string; callId: string }) => {
          await new Promise<void>((release) => held.push({ callId: call.callId, release }));
          await real.actions.afterCall(call);
        },
      },
    };
    const taskId = await insertTask(handle.db, projectId, testSettings({ concurrency: 1 }), { assistantId });
    await insertContacts(handle.db, projectId, taskId, 2);
    dialer = taskDialer({
      store: testDialerStore(handle),
      database: handle,
      ports,
      clock,
      processId: 'task-dialer-test',
      log: quietLog,
      retryTimeScale: 1,
      ownsTask: () => true,
      onTaskChanged: () => {},
      run: (_job, place) =>
        place(
          { ports, clock, carrier, onError: () => {} },
          { signal: new AbortController().signal, shutdown: new AbortController().signal },
        ),
    });
    dialer.start();

    // Concurrency 1: the second contact's call can only start once the first call's slot is free.
    await waitFor(async () => (await callsOf(handle.db, taskId)).length === 2, 20_000, 'the second call');
    const [first] = held;
    expect(first).toBeDefined();
    const [firstCall] = await handle.db
      .select()
      .from(calls)
      .where(eq(calls.id, first?.callId ?? ''));
    // The first call was over (the record says so) and its post-call work still waiting.
    expect(firstCall?.status).toBe('ended');
    expect(firstCall?.recording).toBe('none');
    expect(held).toHaveLength(1);
    const second = (await callsOf(handle.db, taskId)).find((c) => c.id !== first?.callId);
    const gapMs = ((second?.startedAt.getTime() ?? 0) - (firstCall?.endedAt?.getTime() ?? 0)) / SCALE;
    // Hang-up → next call, in real ms: a tick's few queries, not the post-call pipeline.
    expect(gapMs).toBeGreaterThanOrEqual(0);
    expect(gapMs).toBeLessThan(2000);

    await waitFor(() => held.length === 2, 20_000, 'the second call to end');
    // Every contact is final, yet the task stays 进行中 while a call's work is unfinished.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await taskState(handle.db, taskId)).toBe('running');
    for (const h of held) h.release();
    await waitFor(async () => (await taskState(handle.db, taskId)) === 'completed', 20_000, 'completed');
    const ended = await callsOf(handle.db, taskId);
    expect(ended.map((c) => c.status)).toEqual(['ended', 'ended']);
    expect(ended.every((c) => c.analysisBy !== null)).toBe(true);
    await carrier.close();
  });
});
