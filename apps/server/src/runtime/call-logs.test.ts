import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../test/helpers';
import { VirtualClock } from '../engine/clock';
import { seedDemoContent } from '../modules/demo/demo-content';

describe('log lines about a call', () => {
  const lines: string[] = [];
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let dataDir: string;
  let stopClock: () => void;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'call-logs-'));
    const clock = new VirtualClock({ startAt: Date.now() });
    stopClock = clock.autoAdvance();
    t = await createTestApp({
      env: { DATA_DIR: dataDir },
      clock,
      logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
    });
    await t.app.ready();
  }, 60_000);

  afterAll(async () => {
    stopClock?.();
    await t?.app.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('every line mentioning the call carries its callId and projectId', async () => {
    const user = await seedUser(t.db, { email: 'ops@example.com' });
    const { projectId } = user;
    const headers = await loginAs(t.app, 'ops@example.com');
    const { publishedAssistantId: assistantId } = await seedDemoContent(t.db, projectId, user.userId);
    // A model nobody listens at: the brain fails on the first turn and the call logs why.
    const profile = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/llm-providers`,
      headers,
      payload: { name: '不可达模型', baseUrl: 'http://127.0.0.1:9/v1', model: 'nobody' },
    });
    expect(profile.statusCode, profile.body).toBe(200);
    const url = `/api/project/${projectId}/assistants/${assistantId}`;
    const assistant = (await t.app.inject({ method: 'GET', url, headers })).json().data;
    const saved = await t.app.inject({
      method: 'PUT',
      url,
      headers,
      payload: {
        name: assistant.name,
        config: {
          ...assistant.config,
          brain: { ...assistant.config.brain, providerId: profile.json().data.id },
        },
      },
    });
    expect(saved.statusCode, saved.body).toBe(200);

    const from = lines.length;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'interested' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const callId = res.json().data.callId as string;
    await t.app.runtime.idle();

    const about = lines
      .slice(from)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => JSON.stringify(entry).includes(callId));
    expect(about.length, 'the failed turn is logged').toBeGreaterThan(0);
    expect(about.some((entry) => entry.msg === 'call step failed')).toBe(true);
    for (const entry of about) expect(entry).toMatchObject({ callId, projectId });
  }, 60_000);
});
