import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_WINDOWS } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../test/helpers';
import { calls } from '../db/schema';
import { chinaDate, chinaMidnight, inCallingWindow } from '../engine/dialer/calendar';
import { ensureDemo } from '../modules/demo/demo.service';
import {
  DEMO_INBOUND_MINUTES,
  DEMO_OUTBOUND_HOURS,
  demoAssistant,
  ensureDemoNumber,
  findDemoProject,
  knowledgeSettled,
  seedDemoCalls,
} from './demo-calls';

let t: Awaited<ReturnType<typeof createTestApp>> | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.app.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  t = undefined;
});

/** HH:mm in Asia/Shanghai, as a user of the console reads it. */
const shanghai = (ms: number) =>
  new Intl.DateTimeFormat('zh-CN', {
    timeZone: 'Asia/Shanghai',
    dateStyle: 'short',
    timeStyle: 'short',
    weekday: 'short',
  }).format(ms);

describe('demo call history hours', () => {
  it("starts every outbound call inside the demo tasks' calling windows (Asia/Shanghai), and customers call in at daytime hours", async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-hours-'));
    t = await createTestApp({ env: { DATA_DIR: dataDir } });
    await t.app.ready();
    await ensureDemo(t.db, { email: 'demo@example.com', password: 'demo-password' });
    const demo = (await findDemoProject(t.db, 'demo@example.com'))!;
    const assistant = (await demoAssistant(t.db, demo.projectId))!;
    // A fixed "now" makes the history the same on every run; 50 calls cover every kind of day.
    const now = Date.parse('2026-10-16T15:00:00+08:00');
    await ensureDemoNumber(t.db, demo.projectId, assistant.id);
    await knowledgeSettled(t.db, demo.projectId);
    expect(
      await seedDemoCalls(t.app.runtime.engine, t.db, demo.projectId, assistant.id, { count: 50, now }),
    ).toBe(50);

    const rows = await t.db
      .select({ id: calls.id, direction: calls.direction, taskId: calls.taskId, startedAt: calls.startedAt })
      .from(calls)
      .where(eq(calls.projectId, demo.projectId));
    const outbound = rows.filter((c) => c.direction === 'outbound');
    const inbound = rows.filter((c) => c.direction === 'inbound');
    expect(outbound).toHaveLength(40);
    expect(inbound).toHaveLength(10);
    // The demo tasks are given the same windows (demo-tasks.ts), which the dialer keeps to.
    expect(DEMO_OUTBOUND_HOURS.windows).toEqual(DEFAULT_WINDOWS);

    const outside = outbound
      .filter((c) => {
        const ms = new Date(c.startedAt).getTime();
        return !inCallingWindow(DEMO_OUTBOUND_HOURS, ms) || ms > now - 3600_000;
      })
      .map((c) => `${c.id} at ${shanghai(new Date(c.startedAt).getTime())}`);
    expect(outside).toEqual([]);

    // Customers call the service line any day, but not in the night.
    const lateInbound = inbound
      .filter((c) => {
        const ms = new Date(c.startedAt).getTime();
        const minute = (ms - chinaMidnight(chinaDate(ms))) / 60_000;
        return minute < DEMO_INBOUND_MINUTES.start || minute >= DEMO_INBOUND_MINUTES.end;
      })
      .map((c) => `${c.id} at ${shanghai(new Date(c.startedAt).getTime())}`);
    expect(lateInbound).toEqual([]);
  }, 240_000);
});
