import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs } from '../../test/helpers';
import { ensureDemo } from '../modules/demo/demo.service';
import { DEMO_FLOW_CALL_COUNT, demoCallCount, findDemoProject } from './demo-calls';

let t: Awaited<ReturnType<typeof createTestApp>> | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.app.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  t = undefined;
});

describe('demo call history', () => {
  it('runs 200 assistant calls and the hotline flow calls of the real engine over the last 30 days, and resumes an interrupted seeding', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-calls-'));
    t = await createTestApp({ env: { DATA_DIR: dataDir } });
    await t.app.ready();
    await ensureDemo(t.db, { email: 'demo@example.com', password: 'demo-password' });
    const demo = (await findDemoProject(t.db, 'demo@example.com'))!;
    const made = await t.app.runtime.ensureDemoCalls('demo@example.com');
    expect(made).toBe(200 + DEMO_FLOW_CALL_COUNT);
    expect(await t.app.runtime.ensureDemoCalls('demo@example.com')).toBe(0);

    const headers = await loginAs(t.app, 'demo@example.com', 'demo-password');
    const list = async (query: string) =>
      (
        await t!.app.inject({
          method: 'GET',
          url: `/api/project/${demo.projectId}/calls?pageSize=100&${query}`,
          headers,
        })
      ).json().data;
    const all = await list('');
    expect(all.total).toBe(200 + DEMO_FLOW_CALL_COUNT);
    const now = Date.now();
    const starts = all.items.map((c: { startedAt: string }) => Date.parse(c.startedAt));
    expect(Math.min(...starts)).toBeGreaterThan(now - 31 * 24 * 3600_000);
    expect(Math.max(...starts)).toBeLessThan(now);
    // A realistic spread: answered conversations of every grade and unanswered outcomes.
    const reasons = new Set<string>();
    const grades = new Set<string>();
    for (let page = 1; page <= 2; page++) {
      for (const c of (await list(`page=${page}`)).items) {
        reasons.add(c.endReason);
        if (c.intentGrade) grades.add(c.intentGrade);
      }
    }
    expect(reasons.size).toBeGreaterThanOrEqual(6);
    expect(grades.size).toBeGreaterThanOrEqual(3);
    expect(reasons.has('completed')).toBe(true);
    // Customers call in too: a fifth of the assistant's history to its service line, and the
    // hotline's callers, answered by its flow.
    const inbound = await list('direction=inbound');
    expect(inbound.total).toBe(40 + DEMO_FLOW_CALL_COUNT);
    expect(new Set(inbound.items.map((c: { calleeNumber: string }) => c.calleeNumber))).toEqual(
      new Set(['02160881000', '02160881001']),
    );
    expect(inbound.items.filter((c: { answeredAt: string | null }) => c.answeredAt).length).toBe(
      40 + DEMO_FLOW_CALL_COUNT,
    );
    const lastWeek = await list(`from=${new Date(now - 7 * 24 * 3600_000).toISOString()}`);
    expect(lastWeek.total).toBeGreaterThan(20);
    expect(lastWeek.total).toBeLessThan(200);

    // An interrupted seeding (calls lost) is completed on the next start, without duplicates.
    await t.db.execute(`delete from calls where id like 'demo-19%'`);
    expect(await demoCallCount(t.db, demo.projectId)).toBe(190);
    expect(await t.app.runtime.ensureDemoCalls('demo@example.com')).toBe(10);
    expect(await demoCallCount(t.db, demo.projectId)).toBe(200);
  }, 120_000);
});
