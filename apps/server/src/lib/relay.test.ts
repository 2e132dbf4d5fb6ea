import { randomUUID } from 'node:crypto';
import type { CallEvent } from '@callpilot/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser, testEnv } from '../../test/helpers';
import { buildApp } from '../app';
import type { DatabaseHandle } from '../db/client';
import { startRelay } from './relay';

const onPostgres = process.env.TEST_DB === 'pg';
let database: DatabaseHandle | undefined;
const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await database?.close();
  database = undefined;
});

const until = async (check: () => boolean, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('live event relay between server processes', () => {
  it('is a no-op on the embedded database, which is one process', async () => {
    const sent: string[] = [];
    const relay = await startRelay(
      { kind: 'pglite', listen: async () => async () => {}, notify: async (_c, p) => void sent.push(p) },
      'x',
      () => {},
    );
    relay.send('hello');
    await relay.stop();
    expect(sent).toEqual([]);
  });

  it.skipIf(!onPostgres)(
    'shows a call made in one process, turn by turn, to a console connected to another (PostgreSQL)',
    async () => {
      database = await createTestDatabase();
      for (let i = 0; i < 2; i++) {
        const app = await buildApp({ database, env: testEnv(), logger: false });
        await app.ready();
        apps.push(app);
      }
      const [a, b] = apps as [(typeof apps)[0], (typeof apps)[0]];
      const { projectId } = await seedUser(database.db, { email: 'relay@example.com' });
      const seenByB: CallEvent[] = [];
      const seenByA: CallEvent[] = [];
      b.runtime.hub.subscribe(projectId, (e) => seenByB.push(e));
      a.runtime.hub.subscribe(projectId, (e) => seenByA.push(e));

      const callId = randomUUID();
      const store = a.runtime.calls;
      const startedAt = new Date();
      await store.create({
        id: callId,
        projectId,
        direction: 'outbound',
        callerNumber: '02160880000',
        calleeNumber: '13800000001',
        assistantId: null,
        assistantName: '回访助手',
        assistantVersion: 1,
        startedAt,
      });
      await store.answered(projectId, callId, new Date(startedAt.getTime() + 3000));
      await store.turn(projectId, callId, {
        index: 0,
        speaker: 'assistant',
        text: '您好，这里是星河宽带。',
        dtmf: null,
        startMs: 0,
        endMs: 2000,
        interrupted: false,
        latency: null,
        segments: [],
      });
      await store.end(projectId, callId, {
        endReason: 'completed',
        hangupBy: 'assistant',
        endedAt: new Date(),
      });

      await until(() => seenByB.some((e) => e.type === 'ended'), 'the ended event in the other process');
      expect(seenByB.map((e) => e.type)).toEqual(['started', 'answered', 'turn', 'ended']);
      const turn = seenByB.find((e) => e.type === 'turn');
      expect(turn?.type === 'turn' && turn.turn.text).toBe('您好，这里是星河宽带。');
      const ended = seenByB.find((e) => e.type === 'ended');
      expect(ended?.type === 'ended' && ended.call).toMatchObject({
        id: callId,
        endReason: 'completed',
        status: 'ended',
      });
      // The process that made the call hears each event once: its own notifications are not replayed.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seenByA.map((e) => e.type)).toEqual(['started', 'answered', 'turn', 'ended']);
    },
  );
});
