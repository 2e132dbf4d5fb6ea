import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkedTaskOutcome,
  openProjectApi,
  startRetryingTask,
  taskCompleted,
  taskUnderWay,
} from '../support/project-api';
import { type RunningServer, startServer, stopServer, tempDir } from '../support/server';

const running: RunningServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of running) await stopServer(s, 'SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('the dialer survives kill -9 of the server', () => {
  it('restarts, closes cut-off calls as 系统中断, retries them, and never exceeds any contact’s attempts', async () => {
    const dir = tempDir('dialer-crash');
    dirs.push(dir);
    // Simulated calls run 50× faster, so a task of minutes of calls takes seconds.
    const env = { DATA_DIR: dir, DEMO_PASSWORD: 'crash-pass', SIM_TIME_SCALE: '50' };
    const first = await startServer(env);
    running.push(first);
    const api = await openProjectApi(first.url, 'demo@example.com', 'crash-pass');
    const taskId = await startRetryingTask(api, '崩溃恢复', '1390000');

    // Kill the server while calls are live and some are already done.
    await taskUnderWay(api, taskId);
    await stopServer(first, 'SIGKILL');

    const second = await startServer({ ...env, PORT: String(first.port) });
    running.push(second);
    const again = await openProjectApi(second.url, 'demo@example.com', 'crash-pass');
    await taskCompleted(again, taskId, 120_000);
    const { contacts, calls } = await checkedTaskOutcome(again, taskId);
    const interrupted = calls.filter((c) => c.endReason === 'interrupted');
    expect(interrupted.length).toBeGreaterThanOrEqual(1);
    // Each cut-off first attempt was called again, unless the callee had opted out before the cut:
    // then the number is on the do-not-call list and the retry is skipped, as it must be.
    for (const c of interrupted.filter((c) => c.id.endsWith('.1'))) {
      const contact = contacts.find((x) => x.id === c.contactId)!;
      if (contact.status === 'skipped') {
        expect(contact.skipReason).toBe('免打扰号码');
        continue;
      }
      expect(calls.some((other) => other.id === `${c.contactId}.2`)).toBe(true);
    }
  }, 240_000);
});
