import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';

// A clock moved by hand: a call stays exactly where the test left it until the test advances it.
let t: Awaited<ReturnType<typeof createTestApp>>;
let clock: VirtualClock;
let dataDir: string;
let projectId: string;
let assistantId: string;
let headers: Record<string, string>;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangup-'));
  clock = new VirtualClock({ startAt: Date.now() });
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const user = await seedUser(t.db, { email: 'ops@example.com' });
  projectId = user.projectId;
  headers = await loginAs(t.app, 'ops@example.com');
  assistantId = (await seedDemoContent(t.db, projectId, user.userId)).publishedAssistantId;
}, 60_000);

afterAll(async () => {
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const call = async (callId: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls/${callId}`, headers })).json()
    .data;
const hangUp = (callId: string) =>
  t.app.inject({ method: 'POST', url: `/api/project/${projectId}/calls/${callId}/hangup`, headers });
const start = async (persona: string) =>
  (
    await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona, version: 1 },
    })
  ).json().data.callId as string;

describe('挂断 a 模拟通话', () => {
  it('hangs up as the callee once answered, cancels while ringing, and refuses an ended call', async () => {
    const talking = await start('silent');
    // Ringing: nothing answered until the clock moves.
    expect((await call(talking)).status).toBe('ringing');
    for (let i = 0; i < 40 && (await call(talking)).status !== 'in_progress'; i++) await clock.advance(1000);
    expect((await call(talking)).status).toBe('in_progress');
    expect((await hangUp(talking)).json().data).toEqual({ hungUp: true });
    await clock.advance(1000);
    await t.app.runtime.idle();
    expect(await call(talking)).toMatchObject({
      status: 'ended',
      endReason: 'callee_hangup',
      hangupBy: 'callee',
    });

    const ringing = await start('no_answer');
    expect((await hangUp(ringing)).statusCode).toBe(200);
    await t.app.runtime.idle();
    expect(await call(ringing)).toMatchObject({ status: 'ended', endReason: 'failed', answeredAt: null });

    const again = await hangUp(ringing);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('通话已结束');
  }, 60_000);
});
