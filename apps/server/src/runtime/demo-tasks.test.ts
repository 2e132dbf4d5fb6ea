import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs } from '../../test/helpers';
import { ensureDemo } from '../modules/demo/demo.service';
import { findDemoProject } from './demo-calls';
import { DEMO_TASKS } from './demo-tasks';

let t: Awaited<ReturnType<typeof createTestApp>> | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.app.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  t = undefined;
});

describe('demo call tasks', () => {
  it('seeds a completed, a paused and a draft task, dialled by the real dialer, once', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-tasks-'));
    t = await createTestApp({ env: { DATA_DIR: dataDir } });
    await t.app.ready();
    await ensureDemo(t.db, { email: 'demo@example.com', password: 'demo-password' });
    const demo = (await findDemoProject(t.db, 'demo@example.com'))!;
    expect(await t.app.runtime.ensureDemoTasks('demo@example.com')).toBe(5);
    expect(await t.app.runtime.ensureDemoTasks('demo@example.com')).toBe(0);

    const headers = await loginAs(t.app, 'demo@example.com', 'demo-password');
    const url = `/api/project/${demo.projectId}`;
    const tasks = (await t.app.inject({ method: 'GET', url: `${url}/tasks`, headers })).json().data.items;
    const byName = new Map(tasks.map((task: { name: string }) => [task.name, task]));
    type Task = { id: string; counts: { finished: number; total: number; waiting: number } };
    const [done, paused, draft] = DEMO_TASKS.map((plan) => byName.get(plan.name) as Task);
    expect(done).toMatchObject({ state: 'completed', progress: 1 });
    expect(paused).toMatchObject({ state: 'paused' });
    expect(draft).toMatchObject({ state: 'draft', counts: { total: 15, calls: 0 } });
    const pausedCounts = (paused as Task).counts;
    expect(pausedCounts.finished).toBeGreaterThanOrEqual(20);
    expect(pausedCounts.waiting).toBeGreaterThan(0);
    // The calls are in the past, made for the task's contacts with the attempt's id.
    const calls = (
      await t.app.inject({
        method: 'GET',
        url: `${url}/calls?pageSize=100&taskId=${(done as Task).id}`,
        headers,
      })
    ).json().data;
    expect(calls.total).toBeGreaterThanOrEqual(24);
    for (const call of calls.items) {
      expect(call.id).toMatch(/-c\d{3}\.\d$/);
      expect(Date.parse(call.startedAt)).toBeLessThan(Date.now() - 24 * 3600_000);
    }
    expect(new Set(calls.items.map((c: { endReason: string }) => c.endReason)).size).toBeGreaterThan(2);
  }, 180_000);
});
